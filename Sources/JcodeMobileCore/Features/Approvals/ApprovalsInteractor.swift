/// Owns what the agent asks of the person: tool approvals
/// (`permission_request`) and typed input (`stdin_request`). Several pending
/// requests are kept in the order they came; the oldest is shown first.
public struct ApprovalsInteractor: Interactor {
    public init() {}

    public func interact(_ state: inout AppState, _ input: Input) -> Emission {
        switch input {
        case .server(.permissionRequest(let request)):
            if let i = state.permissionRequests.firstIndex(where: { $0.requestID == request.requestID }) {
                state.permissionRequests[i] = request
                return .none
            }
            state.permissionRequests.append(request)
            return .effect(.device(.haptic(style: .warning)))

        case .server(.stdinRequest(let request)):
            if let i = state.stdinRequests.firstIndex(where: { $0.requestID == request.requestID }) {
                state.stdinRequests[i] = request
                return .none
            }
            state.stdinRequests.append(request)
            return .none

        case .action(.respondPermission(let requestID, let approved, let remember)):
            guard let i = state.permissionRequests.firstIndex(where: { $0.requestID == requestID }) else {
                return .note("respond_permission: no pending request \(requestID)")
            }
            guard state.connection.canSend else {
                state.showError("Not connected: your answer was not sent. It will be waiting when the connection is back.")
                return .none
            }
            state.permissionRequests.remove(at: i)
            return state.request(.permissionResponse(requestID: requestID, approved: approved, remember: remember))

        case .action(.respondStdin(let requestID, let text)):
            guard let i = state.stdinRequests.firstIndex(where: { $0.requestID == requestID }) else {
                return .note("respond_stdin: no pending request \(requestID)")
            }
            guard state.connection.canSend else {
                state.showError("Not connected: your answer was not sent. It will be waiting when the connection is back.")
                return .none
            }
            state.stdinRequests.remove(at: i)
            return state.request(.stdinResponse(requestID: requestID, input: text))

        case .server(.done(let id)) where id == nil || id != state.connection.subscribeRequestID:
            // The turn is over: no tool is waiting any more.
            state.permissionRequests = []
            state.stdinRequests = []
            return .none
        case .server(.interrupted):
            state.permissionRequests = []
            state.stdinRequests = []
            return .none
        default:
            return .none
        }
    }
}
