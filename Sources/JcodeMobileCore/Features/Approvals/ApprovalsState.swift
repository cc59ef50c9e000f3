/// What the agent waits for the person to answer, oldest first.
public struct ApprovalsState: Equatable, Sendable {
    public var permissionRequests: [PermissionRequest] = []
    public var stdinRequests: [StdinRequest] = []
    /// A `permission_request` arrived on the open socket. Today's jcode has
    /// no permission flow and answers `permission_response` with an error,
    /// so an answer goes out only on a connection whose server asked.
    public var serverAskedPermissionOnThisSocket = false

    public init() {}
}
