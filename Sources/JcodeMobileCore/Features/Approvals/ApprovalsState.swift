/// What the agent waits for the person to answer, oldest first.
public struct ApprovalsState: Equatable, Sendable {
    public var permissionRequests: [PermissionRequest] = []
    public var stdinRequests: [StdinRequest] = []
    /// The permission requests that arrived on the open socket. Today's
    /// jcode has no permission flow and answers `permission_response` with an
    /// error, so an answer goes out only for a request asked on this connection.
    public var askedOnThisSocket: Set<String> = []

    public init() {}
}
