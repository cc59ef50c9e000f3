/// What the agent waits for the person to answer, oldest first.
public struct ApprovalsState: Equatable, Sendable {
    public var permissionRequests: [PermissionRequest] = []
    public var stdinRequests: [StdinRequest] = []

    public init() {}
}
