/// Owns the session and the server's metadata: which session this is, its
/// title, the other sessions, the model and reasoning effort, the session's
/// token total, compaction, and the server's notices about itself.
public struct SessionInteractor: Interactor {
    public init() {}

    /// What the session acts on.
    public enum Input: Equatable, Sendable {
        // Actions
        case resumeSession(id: String)
        /// A notification about session `id` opened while offline (lifecycle):
        /// the next `subscribe` names it.
        case resumeOnConnect(id: String)
        case setModel(String)
        case setReasoningEffort(String)
        case compact
        case renameSession(title: String)
        case setRenameDraft(String)
        case clearConversation
        // Server events
        /// A request's answer: the `done` of a `clear` or `rename_session` means accepted.
        case done(id: Int?)
        /// A request's refusal (`error` with its id): a `clear` or `rename_session` refused.
        case error(id: Int?, message: String)
        case session(sessionID: String)
        case state(sessionID: String?)
        case sessionRenamed(sessionID: String, displayTitle: String)
        case history(ServerEvent.History)
        case modelChanged(model: String, providerName: String?, error: String?)
        case reasoningEffortChanged(effort: String?, error: String?)
        case availableModelsUpdated(models: [String], providerModel: String?, providerName: String?)
        case tokens(TokenUsage)
        case connectionType(String)
        case upstreamProvider(String)
        case reloadProgress(step: String, message: String, success: Bool?)
        case compactResult(message: String, success: Bool)
        case compaction(trigger: String, tokensSaved: Int?)
        case notification(AgentNotification)
        // Other features' outputs
        case serverChanged(SavedServer?)
        case serverSelected(ServerSelection)
        /// The turn ended (chat).
        case turnOver
        /// The connection was lost: it ends the turn, and no answer to a
        /// request of the old socket will come.
        case connectionLost
    }

    /// The session list is full: logged each time, said once.
    static func listOverflow(_ state: inout SessionState, note: String) -> Emission {
        let logged = Emission.note(note, .dropped)
        guard !state.listOverflowNoticed else { return logged }
        state.listOverflowNoticed = true
        return logged + .internal(.notice(.info, "The server has more than \(SessionState.listLimit) sessions; only the first \(SessionState.listLimit) are listed."))
    }

    /// This device now shows session `id`: its title as listed, no totals yet.
    private func switched(_ state: inout SessionState, to id: String) -> Emission {
        state.id = id
        state.title = state.title(of: id)
        state.totalTokens = nil
        state.turnTokens = nil
        state.renameDraft = nil
        return .tell(.sessionSwitched(sessionID: id))
    }

    public func interact(_ state: inout SessionState, _ input: Input, _ facts: Facts) -> Emission {
        switch input {
        // What the other features did
        case .serverChanged(let server):
            // Another server: its own last session is the one to resume (subscribe's target).
            state = SessionState()
            state.id = server?.lastSessionID
            return .none
        case .turnOver:
            // The turn's `tokens`, summed, join the total.
            state.totalTokens = state.currentTotalTokens
            state.turnTokens = nil
            return .none
        case .connectionLost:
            // A lost connection ends the turn too; a clear, rename or compact it
            // carried is answered on no socket (answers belong to the socket
            // that asked; the next history says what the server did).
            state.totalTokens = state.currentTotalTokens
            state.turnTokens = nil
            var lost = Emission.none
            if state.isClearing { lost.append(.note("clear: the connection was lost before its answer")) }
            if state.pendingRename != nil { lost.append(.note("rename_session: the connection was lost before its answer")) }
            if state.isCompacting { lost.append(.note("compact: the connection was lost before its answer")) }
            state.isClearing = false
            state.pendingRename = nil
            state.isCompacting = false
            return lost
        case .serverSelected(let selection):
            if case .paired(let version) = selection.reason { state.serverVersion = version }
            return .none

        // Actions
        case .resumeSession(let id):
            if !facts.connection.canSend, facts.servers.selected != nil,
               [.connecting, .reconnecting, .offline].contains(facts.connection.phase) || facts.hasPendingConnect
            {
                // The link is coming back: the reconnect's `subscribe` names the session chosen (it resumes it).
                guard id != state.id else { return .internal(.openChat) }
                return .internal(.openChat) + switched(&state, to: id) + .note("session \(id) is resumed when the connection is up")
            }
            if let refused = facts.requireConnection(to: "switch sessions") { return refused }
            guard id != state.id else { return .internal(.openChat) }
            // `resume_session` answers with the session's history (client_session.rs,
            // `handle_resume_session`): no `get_history` (the connection checks it came).
            return .internal(.openChat) + switched(&state, to: id)
                + .send(.resumeSession(sessionID: id, clientInstanceID: facts.lifecycle.deviceID))

        case .resumeOnConnect(let id):
            // A `subscribe` naming a session resumes it and answers with its
            // history (client_lifecycle.rs, `Request::Subscribe`): the reconnect does the switch.
            guard id != state.id else { return .none }
            return switched(&state, to: id) + .note("session \(id) is resumed when the connection is up")

        case .setModel(let model):
            if let refused = facts.requireConnection(to: "change the model") { return refused }
            guard model != state.model || state.pendingModel != nil else { return .internal(.openChat) }
            state.pendingModel = model
            let close: Emission = facts.navigation.screen == .modelPicker ? .internal(.openChat) : .none
            return close + .send(.setModel(model))

        case .setReasoningEffort(let effort):
            if let refused = facts.requireConnection(to: "change the reasoning effort") { return refused }
            state.pendingReasoningEffort = effort
            return .send(.setReasoningEffort(effort))

        case .compact:
            if let refused = facts.requireConnection(to: "compact the conversation") { return refused }
            guard !state.isCompacting else { return .note("compaction already requested") }
            state.isCompacting = true
            return .send(.compact)

        case .renameSession(let title):
            let trimmed = title.trimmingSpaces()
            guard !trimmed.isEmpty else { return .note("rename_session: empty title") }
            guard facts.connection.canSend, state.id != nil else {
                return .internal(.showError(ErrorBanner(message: "Connect to the server to rename the session.")))
            }
            if let busy = Self.refuseWhileBusy(facts, "renaming the session") { return busy }
            guard state.pendingRename == nil else { return .note("rename_session: a rename is already awaiting its answer") }
            // The title changes with the server's session_renamed, not before.
            state.pendingRename = trimmed
            return .send(.renameSession(title: trimmed))

        case .setRenameDraft(let text):
            state.renameDraft = text
            return .none

        case .clearConversation:
            if let refused = facts.requireConnection(to: "clear the conversation") { return refused }
            if let busy = Self.refuseWhileBusy(facts, "clearing the conversation") { return busy }
            guard !state.isClearing else { return .note("clear: already awaiting its answer") }
            // The chat empties on the server's done, not before.
            state.isClearing = true
            return .send(.clear)

        case .done(let id):
            return answered(&state, id: id, facts)

        case .error(let id, let message):
            return refused(&state, id: id, message: message, facts)

        // Server events
        case .session(let id):
            if id != state.id {
                state.id = id
                state.title = state.title(of: id)
                state.renameDraft = nil
            }
            // A session the server names (the fresh one a clear made) is listed.
            guard state.list(id) else {
                return Self.listOverflow(&state, note: "session \(id) not listed: \(SessionState.listLimit) sessions are listed")
            }
            return .none

        case .state(let sessionID):
            if let sessionID, sessionID != state.id {
                state.id = sessionID
                state.title = state.title(of: sessionID)
            }
            return .none

        case .sessionRenamed(let id, let title):
            // The rename field follows the current session's new title.
            if id == state.id { state.renameDraft = nil }
            guard state.setTitle(title, for: id) else {
                return Self.listOverflow(&state, note: "session_renamed for \(id) not listed: \(SessionState.listLimit) sessions are listed")
            }
            return .none

        case .history(let history):
            return historyArrived(&state, history)

        case .modelChanged(let model, let provider, let error):
            state.pendingModel = nil
            if let error { return .internal(.showError(ErrorBanner(message: "Couldn't switch model: \(error)"))) }
            state.model = model
            if let provider { state.provider = provider }
            return .none

        case .reasoningEffortChanged(let effort, let error):
            state.pendingReasoningEffort = nil
            if let error { return .internal(.showError(ErrorBanner(message: "Couldn't change reasoning effort: \(error)"))) }
            state.reasoningEffort = effort
            return .none

        case .availableModelsUpdated(let models, let providerModel, let providerName):
            state.availableModels = models
            if let providerModel { state.model = providerModel }
            if let providerName { state.provider = providerName }
            return .none

        case .tokens(let usage):
            // One `tokens` per API call: a turn's calls add up.
            guard facts.chat.isTurnRunning else {
                // After the turn ended (or from a call outside a turn): straight into the total.
                state.totalTokens = state.totalTokens.map { $0 + usage } ?? usage
                return .note("tokens with no turn running: added to the total")
            }
            state.turnTokens = state.turnTokens.map { $0 + usage } ?? usage
            return .none
        case .connectionType(let type):
            state.connectionType = type.isEmpty ? nil : type
            return .none
        case .upstreamProvider(let provider):
            state.upstreamProvider = provider.isEmpty ? nil : provider
            return .none
        case .reloadProgress(let step, let message, let success):
            guard success == false else { return .note("server update: \(step)") }
            return .internal(.notice(.warning, "Server update failed (\(step)): \(message)"))

        case .compactResult(let message, let success):
            state.isCompacting = false
            if success { return .internal(.notice(.info, message.isEmpty ? "Conversation compacted" : message, passes: .sessionChange)) }
            return .internal(.showError(ErrorBanner(message: message.isEmpty ? "Compaction failed" : message)))

        case .compaction(let trigger, let tokensSaved):
            guard trigger != "background" else { return .none }
            return .internal(
                .notice(.info, tokensSaved.map { "Context compacted (\($0) tokens saved)" } ?? "Context compacted", passes: .sessionChange))

        case .notification(let notification):
            return .internal(.notice(.notification, Self.words(of: notification)))
        }
    }

    /// A `clear` or `rename_session` the server accepted: its `done`
    /// (after the `session` naming the fresh session, or `session_renamed`).
    /// A `done` for any other request, or one this socket never sent, is
    /// not the session's.
    private func answered(_ state: inout SessionState, id: Int?, _ facts: Facts) -> Emission {
        guard let id, let kind = facts.connection.sentRequests.answered(by: .done, id: id) else { return .none }
        switch kind {
        case .clear where state.isClearing && id == facts.connection.sentRequests.latest(.clear):
            state.isClearing = false
            // A fresh session: nothing said, no tokens spent.
            state.totalTokens = nil
            state.turnTokens = nil
            return .tell(.clearAnswered(accepted: true))
        case .renameSession where state.pendingRename != nil && id == facts.connection.sentRequests.latest(.renameSession):
            state.pendingRename = nil
            return .none
        default:
            return .none
        }
    }

    /// A `clear` or `rename_session` the server refused (while the session
    /// is busy, jcode answers `error` with the request's id): nothing
    /// changed, the request is no longer awaited, and the rename field
    /// keeps what was typed. The banner with the server's words is the
    /// chat's (it shows every refusal).
    private func refused(_ state: inout SessionState, id: Int?, message: String, _ facts: Facts) -> Emission {
        guard let id, let kind = facts.connection.sentRequests.answered(by: .error, id: id) else { return .none }
        switch kind {
        case .clear where state.isClearing && id == facts.connection.sentRequests.latest(.clear):
            state.isClearing = false
            return .note("clear refused: \(message)") + .tell(.clearAnswered(accepted: false))
        case .renameSession where state.pendingRename != nil && id == facts.connection.sentRequests.latest(.renameSession):
            if state.renameDraft == nil { state.renameDraft = state.pendingRename }
            state.pendingRename = nil
            return .note("rename_session refused: \(message)")
        default:
            return .none
        }
    }

    /// jcode refuses `clear` and `rename_session` while a turn runs
    /// (client_lifecycle.rs, `reject_if_agent_busy_for_request`): the app
    /// says so before asking.
    static func refuseWhileBusy(_ facts: Facts, _ task: String) -> Emission? {
        guard facts.chat.isTurnRunning else { return nil }
        return .internal(.showError(ErrorBanner(message: "Wait for the current turn to finish before \(task).")))
    }

    /// A history names the session and what the server knows of it: the
    /// session list (titles learnt from renames kept), title, model,
    /// provider, token total, version and effort.
    private func historyArrived(_ state: inout SessionState, _ history: ServerEvent.History) -> Emission {
        state.id = history.sessionID
        var overflow = Emission.none
        if let sessions = history.allSessions {
            // Keep titles learnt from session_renamed for sessions the list leaves untitled.
            var known: [String: String] = [:]
            for s in state.allSessions { if let title = s.title { known[s.id] = title } }
            // Each session once (the first place it is listed, the first title given for it).
            var unique: [SessionSummary] = []
            var position: [String: Int] = [:]
            for summary in sessions {
                if let i = position[summary.id] {
                    if unique[i].title == nil { unique[i].title = summary.title }
                    continue
                }
                position[summary.id] = unique.count
                unique.append(summary)
            }
            let listed = unique.prefix(SessionState.listLimit)
            state.allSessions = listed.map { summary in
                var s = summary
                if s.title == nil { s.title = known[s.id] }
                return s
            }
            // The history's own session is listed even when the list leaves it out.
            if !state.allSessions.contains(where: { $0.id == history.sessionID }), state.allSessions.count < SessionState.listLimit {
                state.allSessions.append(SessionSummary(id: history.sessionID, title: known[history.sessionID]))
            }
            if unique.count > listed.count {
                overflow = Self.listOverflow(
                    &state, note: "history lists \(unique.count) sessions; the first \(SessionState.listLimit) are kept")
            } else {
                state.listOverflowNoticed = false
            }
        }
        if let title = history.displayTitle {
            state.setTitle(title, for: history.sessionID)
        } else {
            state.title = state.title(of: history.sessionID)
        }
        if let model = history.providerModel { state.model = model }
        if let provider = history.providerName { state.provider = provider }
        if let models = history.availableModels { state.availableModels = models }
        if let total = history.totalTokens {
            state.totalTokens = total
            state.turnTokens = nil
        }
        if let version = history.serverVersion { state.serverVersion = version }
        if let effort = history.reasoningEffort { state.reasoningEffort = effort }
        return overflow
    }

    /// "fox: tests pass", "Background task: build finished": who sent it, then what.
    static func words(of notification: AgentNotification) -> String {
        let source: String?
        if notification.fromSession == "background_task" {
            source = "Background task"
        } else if let name = notification.fromName, !name.isEmpty {
            source = name
        } else {
            source = notification.fromSession.flatMap { $0.isEmpty ? nil : $0 }
        }
        return source.map { "\($0): \(notification.message)" } ?? notification.message
    }
}
