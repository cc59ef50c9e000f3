/// What the connection lets the other features read (`Facts.connection`), taken
/// before each input from its slice: the only part of it they see.
public struct ConnectionFacts: Sendable {
    /// Requests can be sent now (the socket is open and connected).
    public var canSend: Bool = false
    /// Where the connection stands.
    public var phase: ConnectionState.Phase = .disconnected
    /// The request id of this socket's `subscribe` (its `done` ends no turn).
    public var subscribeRequestID: Int?
    /// The requests sent on this socket, by id (what a `done` or `error` answers).
    public var sentRequests = SentRequests()
    /// The keep-alive's pending timer: its tick is the chat's turn watch.
    public var keepAliveTimerID: String?

    public init() {}

    /// Read in place from the state (no copy of the slice).
    init(_ state: UnsafePointer<AppState>) {
        canSend = state.pointee.connection.canSend
        phase = state.pointee.connection.phase
        subscribeRequestID = state.pointee.connection.subscribeRequestID
        sentRequests = state.pointee.connection.sentRequests
        keepAliveTimerID = state.pointee.connection.keepAliveTimerID
    }
}
