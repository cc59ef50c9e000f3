/// What the host reported about the app and the device.
public struct LifecycleState: Equatable, Sendable {
    public var isForeground = true
    public var isNetworkReachable = true
    /// The push token, once the OS issued one (sent with `http_pair`).
    public var pushToken: String?
    /// Identifies this device to the server (from `app_new`'s `device_id`).
    public var deviceID = "jcode-mobile-device"

    public init() {}

    var json: JSONValue {
        [
            "is_foreground": .bool(isForeground), "network_reachable": .bool(isNetworkReachable),
            "push_registered": .bool(pushToken != nil), "device_id": .string(deviceID),
        ]
    }
}
