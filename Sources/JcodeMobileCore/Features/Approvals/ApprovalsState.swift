/// What the agent waits for the person to answer, oldest first.
public struct ApprovalsState: Equatable, Sendable {
    public var permissionRequests: [PermissionRequest] = []
    public var stdinRequests: [StdinRequest] = []
    /// The permission requests that arrived on the open socket. Today's
    /// jcode has no permission flow and answers `permission_response` with an
    /// error, so an answer goes out only for a request asked on this connection.
    public var askedOnThisSocket: Set<String> = []
    /// The agent asked more than `limit` at once and was told so (a notice)
    /// since the lists were last emptied.
    public var overflowNoticed = false

    /// Pending requests kept at most, of each kind: a person answers them one
    /// by one, so more is a runaway or hostile server. Requests beyond it are
    /// dropped with one notice and a log note each.
    public static let limit = 64

    public init() {}
}
