/// What the lifecycle lets the other features read (`Facts.lifecycle`), taken
/// before each input from its slice: the only part of it they see.
public struct LifecycleFacts: Sendable {
    /// This install's identity; nil until the host gave one.
    public var deviceID: String?
    /// The push token, once the host registered for notifications.
    public var pushToken: String?
    /// The network is reachable.
    public var isNetworkReachable: Bool = true
    /// The app is in the foreground.
    public var isForeground: Bool = true

    public init() {}

    /// Read in place from the state (no copy of the slice).
    init(_ state: UnsafePointer<AppState>) {
        deviceID = state.pointee.lifecycle.deviceID
        pushToken = state.pointee.lifecycle.pushToken
        isNetworkReachable = state.pointee.lifecycle.isNetworkReachable
        isForeground = state.pointee.lifecycle.isForeground
    }
}
