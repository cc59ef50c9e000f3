/// Owns what the agent asks of the person: tool approvals
/// (`permission_request`) and typed input (`stdin_request`). Several pending
/// requests are kept in the order they came; the oldest is shown first.
/// They end with the turn, the session or the server.
public struct ApprovalsInteractor: Interactor {
    public init() {}

    static let expired = "That approval request ended with the previous connection; the agent will ask again if it still needs it."
    static let notSent = "Not connected: your answer was not sent. It will be waiting when the connection is back."

    /// What the approvals feature acts on.
    public enum Input: Equatable, Sendable {
        // Actions
        case respondPermission(requestID: String, approved: Bool, remember: Bool)
        case respondStdin(requestID: String, input: String)
        // Server events
        case permissionRequest(PermissionRequest)
        case stdinRequest(StdinRequest)
        // Other features' outputs
        case socketOpened
        /// The turn ended (chat), or the session (session) or the server
        /// (servers) changed: no tool is waiting any more.
        case nothingWaits
    }

    public func interact(_ state: inout ApprovalsState, _ input: Input, _ facts: Facts) -> Emission {
        switch input {
        case .permissionRequest(let request):
            switch Self.keep(request, in: &state.permissionRequests) {
            case .added:
                state.askedOnThisSocket.insert(request.requestID)
                return .effect(.device(.haptic(style: .warning)))
                    + .tell(.permissionAsked(action: request.action, sessionID: request.sessionID))
            case .refreshed:
                state.askedOnThisSocket.insert(request.requestID)
                return .none
            case .full:
                return Self.overflow(&state, dropping: "permission_request \(request.requestID)")
            }

        case .stdinRequest(let request):
            switch Self.keep(request, in: &state.stdinRequests) {
            case .added: return .tell(.inputAsked(prompt: request.prompt))
            case .refreshed: return .none
            case .full: return Self.overflow(&state, dropping: "stdin_request \(request.requestID)")
            }

        case .respondPermission(let requestID, let approved, let remember):
            if facts.connection.canSend, !state.askedOnThisSocket.contains(requestID),
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

        case .respondStdin(let requestID, let text):
            return Self.answer(requestID, in: &state.stdinRequests, what: "respond_stdin", facts) {
                .stdinResponse(requestID: requestID, input: text)
            }

        case .socketOpened:
            state.askedOnThisSocket = []
            return .none
        case .nothingWaits:
            // No tool is waiting any more.
            state.permissionRequests = []
            state.stdinRequests = []
            state.overflowNoticed = false
            return .none
        }
    }

    enum Kept { case added, refreshed, full }

    /// Adds a request, or refreshes the one with the same id; refuses a new
    /// one when `ApprovalsState.limit` are pending (so the search is bounded too).
    private static func keep<R: AgentRequest>(_ request: R, in requests: inout [R]) -> Kept {
        if let i = requests.firstIndex(where: { $0.requestID == request.requestID }) {
            requests[i] = request
            return .refreshed
        }
        guard requests.count < ApprovalsState.limit else { return .full }
        requests.append(request)
        return .added
    }

    /// A request beyond the limit: dropped, logged, and said once.
    private static func overflow(_ state: inout ApprovalsState, dropping what: String) -> Emission {
        let note = Emission.note("\(what) dropped: \(ApprovalsState.limit) requests are already pending", .dropped)
        guard !state.overflowNoticed else { return note }
        state.overflowNoticed = true
        return note + .internal(.notice(.warning, "The agent asked for more than \(ApprovalsState.limit) answers at once; later requests were dropped."))
    }

    /// Sends the answer to a pending request and closes it. While offline
    /// the request stays (nothing the person decided is lost).
    private static func answer<R: AgentRequest>(
        _ requestID: String, in requests: inout [R], what: String, _ facts: Facts, _ response: () -> GatewayRequest
    ) -> Emission {
        guard let i = requests.firstIndex(where: { $0.requestID == requestID }) else {
            return .note("\(what): no pending request \(requestID)")
        }
        guard facts.connection.canSend else { return .internal(.showError(ErrorBanner(message: notSent))) }
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
