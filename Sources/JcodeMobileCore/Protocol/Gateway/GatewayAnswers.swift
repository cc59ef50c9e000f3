/// The answer table: for each request the core sends, the events today's
/// jcode answers it with, and which of them ends it (docs/PROTOCOL.md,
/// "Answers", is checked against this table by a test).
///
/// What jcode does, read from its server (`crates/jcode-app-core/src/server/`):
/// every request it can decode is acknowledged first (`client_lifecycle.rs`,
/// "Send ack"; `cancel`'s ack goes through the connection's event channel);
/// then each request has its own answers, carrying the request's id where
/// the event has one. Request ids are the connection's: a new socket counts
/// from 1 again, and nothing sent on an old socket is answered on a new one.
/// A `done` or `error` may also be a turn's end fanned out from another
/// client, carrying *that* client's message id: only a request whose answers
/// include that event takes it.
///
/// The connection keeps the requests of its socket not yet ended
/// (`SentRequests`) and forgets each once its ending answer arrives; every
/// feature asks `SentRequests.answered(by:id:)` which request (if any) an
/// event answers. The switch over `GatewayRequest.Kind` has no `default:`, so
/// a new request without a row does not compile.
public struct GatewayAnswer: Sendable {
    /// An event that can answer a request (by its id, or, for `session`, by
    /// arriving on the socket while the request waits).
    public enum Event: String, CaseIterable, Sendable {
        case ack, done, error, pong, history, session
        case sessionRenamed = "session_renamed"
        case modelChanged = "model_changed"
        case reasoningEffortChanged = "reasoning_effort_changed"
        case compactResult = "compact_result"
        case compactedHistory = "compacted_history"
    }

    /// When the request is over (and forgotten).
    public enum Ending: Equatable, Sendable {
        /// At the first of these events carrying its id.
        case first([Event])
        /// At the first `done` after a `session` event, or at an `error`:
        /// a `subscribe` naming an existing session is answered by the
        /// resume's `history` and `done`, then the subscribe's own `session`
        /// and `done`, both dones with its id.
        case doneAfterSession
        /// Never by id: jcode cannot decode it and answers `error` with id 0.
        case never
    }

    public let request: GatewayRequest.Kind
    /// The events jcode sends in answer, in order, as the doc shows them
    /// ("ack, history, done or error").
    public let sequence: String
    /// Every event that can carry this request's id.
    public let events: [Event]
    public let ending: Ending
    /// Where jcode does it: file and function.
    public let source: String

    /// Whether `event` carrying this request's id is one of its answers.
    public func isAnswered(by event: Event) -> Bool { events.contains(event) }

    /// The row of `kind`.
    public static func of(_ kind: GatewayRequest.Kind) -> GatewayAnswer {
        switch kind {
        case .subscribe:
            return GatewayAnswer(
                kind, "ack, [history, done,] session, done or error", [.ack, .history, .done, .error], .doneAfterSession,
                "client_lifecycle.rs `Request::Subscribe` → client_session.rs `handle_resume_session` (when the target exists), `handle_subscribe`")
        case .getHistory:
            return GatewayAnswer(kind, "ack, history", [.ack, .history, .error], .first([.history, .error]),
                                 "client_state.rs `handle_get_history` (written on the connection; no done)")
        case .message:
            return GatewayAnswer(
                kind, "ack, the turn's events, done or error (to every client of the session); error (busy, unknown skill); reloading",
                [.ack, .done, .error], .first([.done, .error]),
                "client_lifecycle.rs `start_processing_message` (the terminal event on the session fan-out)")
        case .cancel:
            return GatewayAnswer(
                kind, "ack; interrupted and done {id: the message's} to this connection only",
                [.ack], .first([.ack]), "client_lifecycle.rs `cancel_processing_message`")
        case .softInterrupt:
            return GatewayAnswer(kind, "ack, ack", [.ack], .first([.ack]), "client_lifecycle.rs `queue_soft_interrupt`")
        case .cancelSoftInterrupts:
            return GatewayAnswer(kind, "ack, ack", [.ack], .first([.ack]), "client_lifecycle.rs `clear_soft_interrupts`")
        case .resumeSession:
            return GatewayAnswer(kind, "ack, history, done or error", [.ack, .history, .done, .error], .first([.done, .error]),
                                 "client_session.rs `handle_resume_session`")
        case .setModel:
            return GatewayAnswer(kind, "ack, model_changed", [.ack, .modelChanged, .error], .first([.modelChanged, .error]),
                                 "provider_control.rs `handle_set_model`, `send_model_changed_result`")
        case .setReasoningEffort:
            return GatewayAnswer(
                kind, "ack, reasoning_effort_changed", [.ack, .reasoningEffortChanged, .error], .first([.reasoningEffortChanged, .error]),
                "provider_control.rs `handle_set_reasoning_effort`, `send_reasoning_effort_result`")
        case .compact:
            return GatewayAnswer(kind, "ack, compact_result", [.ack, .compactResult, .error], .first([.compactResult, .error]),
                                 "client_actions.rs `handle_compact`")
        case .renameSession:
            return GatewayAnswer(kind, "ack, session_renamed, done or error", [.ack, .done, .error], .first([.done, .error]),
                                 "client_actions.rs `handle_rename_session`; client_lifecycle.rs `reject_if_agent_busy_for_request`")
        case .clear:
            return GatewayAnswer(kind, "ack, session, done or error", [.ack, .done, .error], .first([.done, .error]),
                                 "client_session.rs `handle_clear_session`; client_lifecycle.rs `reject_if_agent_busy_for_request`")
        case .permissionResponse:
            return GatewayAnswer(kind, "error {id: 0} (not a jcode request)", [], .never,
                                 "client_lifecycle.rs, `decode_request` failing: \"Invalid request\"")
        case .stdinResponse:
            return GatewayAnswer(kind, "ack, done", [.ack, .done], .first([.done]), "client_actions.rs `handle_stdin_response`")
        case .ping:
            return GatewayAnswer(kind, "ack, pong", [.ack, .pong, .error], .first([.pong, .error]),
                                 "client_lifecycle.rs `Request::Ping` (and client_lightweight_control.rs before the subscribe: pong alone)")
        case .getCompactedHistory:
            return GatewayAnswer(
                kind, "ack, compacted_history", [.ack, .compactedHistory, .error], .first([.compactedHistory, .error]),
                "client_state.rs `handle_get_compacted_history`")
        }
    }

    private init(_ request: GatewayRequest.Kind, _ sequence: String, _ events: [Event], _ ending: Ending, _ source: String) {
        self.request = request
        self.sequence = sequence
        self.events = events
        self.ending = ending
        self.source = source
    }

    /// Every row, in the order of `GatewayRequest.Kind.allCases`.
    public static var all: [GatewayAnswer] { GatewayRequest.Kind.allCases.map(of) }
}

/// The requests sent on the current socket that jcode has not finished
/// answering, by id (`GatewayAnswer`): what a `done`, `error`, `history` …
/// with an id answers. A request is forgotten once its ending answer came;
/// a new socket starts empty (ids start again at 1 there).
public struct SentRequests: Equatable, Sendable {
    private var ids: [Int] = []
    private var kinds: [GatewayRequest.Kind] = []
    /// A `subscribe` whose `session` event came: its next `done` ends it.
    private var sessionSeen: Set<Int> = []
    /// How many unanswered requests are remembered at most; beyond it the
    /// oldest is forgotten (a link that answers nothing is closed by the
    /// keep-alive long before: one ping every 20 s).
    static let capacity = 64

    public init() {}

    public var isEmpty: Bool { ids.isEmpty }

    public mutating func record(_ id: Int, _ kind: GatewayRequest.Kind) {
        if ids.count == Self.capacity {
            sessionSeen.remove(ids[0])
            ids.removeFirst()
            kinds.removeFirst()
        }
        ids.append(id)
        kinds.append(kind)
    }

    /// The kind of the unanswered request `id`, if there is one.
    public func kind(of id: Int) -> GatewayRequest.Kind? {
        guard let i = ids.lastIndex(of: id) else { return nil }
        return kinds[i]
    }

    /// The request `event` carrying `id` answers: one sent on this socket,
    /// not yet ended, whose answers include that event. Nil when the event
    /// answers nothing of this socket's (a turn of another client, an id
    /// of an earlier socket, a request already answered).
    public func answered(by event: GatewayAnswer.Event, id: Int?) -> GatewayRequest.Kind? {
        guard let id, let kind = kind(of: id), GatewayAnswer.of(kind).isAnswered(by: event) else { return nil }
        return kind
    }

    /// The id of the latest unanswered request of `kind`.
    public func latest(_ kind: GatewayRequest.Kind) -> Int? {
        guard let i = kinds.lastIndex(of: kind) else { return nil }
        return ids[i]
    }

    /// `event` carrying `id` arrived: the request it ends is forgotten.
    /// Returns the kind of the request it ended, if any.
    @discardableResult
    public mutating func settle(_ event: GatewayAnswer.Event, id: Int?) -> GatewayRequest.Kind? {
        if event == .session {
            // Only a subscribe is answered by `session` (its id is not on the event).
            if let i = kinds.lastIndex(of: .subscribe) { sessionSeen.insert(ids[i]) }
            return nil
        }
        guard let id, let i = ids.lastIndex(of: id) else { return nil }
        let answer = GatewayAnswer.of(kinds[i])
        let ends: Bool
        switch answer.ending {
        case .first(let events): ends = events.contains(event)
        case .doneAfterSession: ends = event == .error || (event == .done && sessionSeen.contains(id))
        case .never: ends = false
        }
        guard ends else { return nil }
        let kind = kinds[i]
        ids.remove(at: i)
        kinds.remove(at: i)
        sessionSeen.remove(id)
        return kind
    }
}
