/// Owns the session and the server's metadata: which session this is, its
/// title, the other sessions, the model and reasoning effort, the session's
/// token total, compaction, and the server's notices about itself.
public struct SessionInteractor: Interactor {
    public init() {}

    /// What the session acts on.
    public enum Input: Equatable, Sendable {
        // Actions
        case resumeSession(id: String)
        case setModel(String)
        case setReasoningEffort(String)
        case compact
        case renameSession(title: String)
        // Server events
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
        /// The turn ended (chat) or the connection was lost (which ends it too).
        case turnOver
    }

    /// The session list is full: logged each time, said once.
    static func listOverflow(_ state: inout SessionState, note: String) -> Emission {
        let logged = Emission.note(note, .dropped)
        guard !state.listOverflowNoticed else { return logged }
        state.listOverflowNoticed = true
        return logged + .internal(.notice(.info, "The server has more than \(SessionState.listLimit) sessions; only the first \(SessionState.listLimit) are listed."))
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
            // The turn's last `tokens` joins the total (a lost connection ends the turn too).
            state.totalTokens = state.currentTotalTokens
            state.turnTokens = nil
            return .none
        case .serverSelected(let selection):
            if case .paired(let version) = selection.reason { state.serverVersion = version }
            return .none

        // Actions
        case .resumeSession(let id):
            if let refused = facts.requireConnection(to: "switch sessions") { return refused }
            guard id != state.id else { return .internal(.openChat) }
            state.id = id
            state.title = state.title(of: id)
            state.totalTokens = nil
            state.turnTokens = nil
            return .internal(.openChat) + .tell(.sessionSwitched(sessionID: id))
                + .send(.resumeSession(sessionID: id, clientInstanceID: facts.deviceID))
                + .send(.getHistory)

        case .setModel(let model):
            if let refused = facts.requireConnection(to: "change the model") { return refused }
            guard model != state.model || state.pendingModel != nil else { return .internal(.openChat) }
            state.pendingModel = model
            let close: Emission = facts.screen == .modelPicker ? .internal(.openChat) : .none
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
            guard facts.canSend, let id = state.id else {
                return .internal(.showError(ErrorBanner(message: "Connect to the server to rename the session.")))
            }
            state.setTitle(trimmed, for: id)
            return .send(.renameSession(title: trimmed))

        // Server events
        case .session(let id):
            if id != state.id {
                state.id = id
                state.title = state.title(of: id)
            }
            return .none

        case .state(let sessionID):
            if let sessionID, sessionID != state.id {
                state.id = sessionID
                state.title = state.title(of: sessionID)
            }
            return .none

        case .sessionRenamed(let id, let title):
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
            state.turnTokens = usage
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
            if success { return .internal(.notice(.info, message.isEmpty ? "Conversation compacted" : message)) }
            return .internal(.showError(ErrorBanner(message: message.isEmpty ? "Compaction failed" : message)))

        case .compaction(let trigger, let tokensSaved):
            guard trigger != "background" else { return .none }
            return .internal(.notice(.info, tokensSaved.map { "Context compacted (\($0) tokens saved)" } ?? "Context compacted"))

        case .notification(let notification):
            return .internal(.notice(.notification, Self.words(of: notification)))
        }
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
            let listed = sessions.prefix(SessionState.listLimit)
            state.allSessions = listed.map { summary in
                var s = summary
                if s.title == nil { s.title = known[s.id] }
                return s
            }
            if sessions.count > listed.count {
                overflow = Self.listOverflow(
                    &state, note: "history lists \(sessions.count) sessions; the first \(SessionState.listLimit) are kept")
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
