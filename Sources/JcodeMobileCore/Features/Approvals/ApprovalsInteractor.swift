/// Owns what the agent asks of the person: tool approvals
/// (`permission_request`) and typed input (`stdin_request`). Several pending
/// requests are kept in the order they came; the oldest is shown first.
/// They end with the turn, the session or the server.
public struct ApprovalsInteractor: Interactor {
    public init() {}

    static let expired = "That approval request ended with the previous connection; the agent will ask again if it still needs it."
    static let notSent = "Not connected: your answer was not sent. It will be waiting when the connection is back."

    public func interact(_ state: inout ApprovalsState, _ input: Input, _ facts: Facts) -> Emission {
        switch input {
        case .server(.permissionRequest(let request)):
            state.askedOnThisSocket.insert(request.requestID)
            let isNew = Self.keep(request, in: &state.permissionRequests)
            return isNew ? .effect(.device(.haptic(style: .warning))) : .none

        case .server(.stdinRequest(let request)):
            Self.keep(request, in: &state.stdinRequests)
            return .none

        case .action(.respondPermission(let requestID, let approved, let remember)):
            if facts.canSend, !state.askedOnThisSocket.contains(requestID),
               let i = state.permissionRequests.firstIndex(where: { $0.requestID == requestID })
            {
                // Asked on an earlier connection: this server may not know the request (or the message).
                state.permissionRequests.remove(at: i)
                return .internal(.showError(ErrorBanner(message: Self.expired)))
                    + .note("permission_response not sent: no permission_request arrived on this connection")
            }
            return Self.answer(requestID, in: &state.permissionRequests, what: "respond_permission", facts) {
                .permissionResponse(requestID: requestID, approved: approved, remember: remember)
            }

        case .action(.respondStdin(let requestID, let text)):
            return Self.answer(requestID, in: &state.stdinRequests, what: "respond_stdin", facts) {
                .stdinResponse(requestID: requestID, input: text)
            }

        case .internal(.socketOpened):
            state.askedOnThisSocket = []
            return .none
        case .internal(.turnEnded), .internal(.serverChanged), .internal(.sessionSwitched):
            // No tool is waiting any more.
            state.permissionRequests = []
            state.stdinRequests = []
            return .none
        default:
            return .none
        }
    }

    /// Adds a request, or refreshes the one with the same id; true when it is new.
    @discardableResult
    private static func keep<R: AgentRequest>(_ request: R, in requests: inout [R]) -> Bool {
        if let i = requests.firstIndex(where: { $0.requestID == request.requestID }) {
            requests[i] = request
            return false
        }
        requests.append(request)
        return true
    }

    /// Sends the answer to a pending request and closes it. While offline
    /// the request stays (nothing the person decided is lost).
    private static func answer<R: AgentRequest>(
        _ requestID: String, in requests: inout [R], what: String, _ facts: Facts, _ response: () -> GatewayRequest
    ) -> Emission {
        guard let i = requests.firstIndex(where: { $0.requestID == requestID }) else {
            return .note("\(what): no pending request \(requestID)")
        }
        guard facts.canSend else { return .internal(.showError(ErrorBanner(message: notSent))) }
        requests.remove(at: i)
        return .send(response())
    }
}

/// A request from the agent that waits for the person's answer.
protocol AgentRequest {
    var requestID: String { get }
}

extension PermissionRequest: AgentRequest {}
extension StdinRequest: AgentRequest {}
