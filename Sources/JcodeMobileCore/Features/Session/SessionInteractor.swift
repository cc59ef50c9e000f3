/// Owns the session and the server's metadata: which session this is, its
/// title, the other sessions, the model and reasoning effort, token usage,
/// compaction, and the server's notices about itself.
public struct SessionInteractor: Interactor {
    public init() {}

    public func interact(_ state: inout AppState, _ input: Input) -> Emission {
        switch input {
        case .action(let action):
            return handle(&state, action)
        case .server(let event):
            return handle(&state, event)
        default:
            return .none
        }
    }

    // MARK: - Actions

    private func handle(_ state: inout AppState, _ action: Action) -> Emission {
        switch action {
        case .resumeSession(let id):
            guard state.connection.canSend else {
                state.showError("Connect to the server to switch sessions.")
                return .none
            }
            state.screen = .chat
            guard id != state.session.id else { return .none }
            state.transcript.removeAll()
            state.endTurnLocally()
            state.softInterrupts = []
            state.permissionRequests = []
            state.stdinRequests = []
            state.session.id = id
            state.session.title = state.session.title(of: id)
            state.session.historyLoaded = false
            state.session.tokens = nil
            state.session.totalTokens = nil
            let resume = state.request(.resumeSession(sessionID: id))
            state.connection.historyRequestID = state.nextRequestID
            return resume + state.request(.getHistory)

        case .setModel(let model):
            guard state.connection.canSend else {
                state.showError("Connect to the server to change the model.")
                return .none
            }
            guard model != state.session.model || state.session.pendingModel != nil else {
                state.screen = .chat
                return .none
            }
            state.session.pendingModel = model
            if state.screen == .modelPicker { state.screen = .chat }
            return state.request(.setModel(model))

        case .setReasoningEffort(let effort):
            guard state.connection.canSend else {
                state.showError("Connect to the server to change the reasoning effort.")
                return .none
            }
            state.session.pendingReasoningEffort = effort
            return state.request(.setReasoningEffort(effort))

        case .compact:
            guard state.connection.canSend else {
                state.showError("Connect to the server to compact the conversation.")
                return .none
            }
            guard !state.session.isCompacting else { return .note("compaction already requested") }
            state.session.isCompacting = true
            return state.request(.compact)

        case .renameSession(let title):
            let trimmed = title.trimmingSpaces()
            guard !trimmed.isEmpty else { return .note("rename_session: empty title") }
            guard state.connection.canSend, let id = state.session.id else {
                state.showError("Connect to the server to rename the session.")
                return .none
            }
            state.session.setTitle(trimmed, for: id)
            return state.request(.renameSession(title: trimmed))

        default:
            return .none
        }
    }

    // MARK: - Server events

    private func handle(_ state: inout AppState, _ event: ServerEvent) -> Emission {
        switch event {
        case .session(let id):
            if id != state.session.id {
                state.session.id = id
                state.session.title = state.session.title(of: id)
            }
            return .none

        case .state(_, let sessionID, _, let isProcessing):
            if let sessionID, sessionID != state.session.id {
                state.session.id = sessionID
                state.session.title = state.session.title(of: sessionID)
            }
            if let isProcessing, isProcessing != state.session.isProcessing {
                if isProcessing { state.session.isProcessing = true } else { state.endTurnLocally() }
            }
            return .none

        case .sessionRenamed(let id, let title):
            state.session.setTitle(title, for: id)
            return .none

        case .history(let history):
            state.session.id = history.sessionID
            if let sessions = history.allSessions {
                // Keep titles learnt from session_renamed for sessions the list leaves untitled.
                state.session.allSessions = sessions.map { summary in
                    var s = summary
                    if s.title == nil { s.title = state.session.title(of: s.id) }
                    return s
                }
            }
            if let title = history.displayTitle {
                state.session.setTitle(title, for: history.sessionID)
            } else {
                state.session.title = state.session.title(of: history.sessionID)
            }
            if let model = history.providerModel { state.session.model = model }
            if let provider = history.providerName { state.session.provider = provider }
            if let models = history.availableModels { state.session.availableModels = models }
            if let total = history.totalTokens { state.session.totalTokens = total }
            if let version = history.serverVersion { state.session.serverVersion = version }
            if let effort = history.reasoningEffort { state.session.reasoningEffort = effort }
            return .none

        case .modelChanged(_, let model, let provider, let error):
            state.session.pendingModel = nil
            if let error {
                state.showError("Couldn't switch model: \(error)")
            } else {
                state.session.model = model
                if let provider { state.session.provider = provider }
            }
            return .none

        case .reasoningEffortChanged(_, let effort, let error):
            state.session.pendingReasoningEffort = nil
            if let error {
                state.showError("Couldn't change reasoning effort: \(error)")
            } else {
                state.session.reasoningEffort = effort
            }
            return .none

        case .availableModelsUpdated(let models, let providerModel):
            state.session.availableModels = models
            if let providerModel { state.session.model = providerModel }
            return .none

        case .compactResult(_, let message, let success):
            state.session.isCompacting = false
            if success {
                state.addNotice(.info, message.isEmpty ? "Conversation compacted" : message)
            } else {
                state.showError(message.isEmpty ? "Compaction failed" : message)
            }
            return .none

        case .compaction(let trigger, let tokensSaved):
            guard trigger != "background" else { return .none }
            state.addNotice(.info, tokensSaved.map { "Context compacted (\($0) tokens saved)" } ?? "Context compacted")
            return .none

        case .notification(let fromName, let message):
            let text = fromName.map { $0.isEmpty ? message : "\($0): \(message)" } ?? message
            state.addNotice(.notification, text)
            return .none

        case .reloading:
            state.addNotice(.info, "Server is updating, reconnecting shortly")
            return .none

        case .sessionCloseRequested(let reason):
            state.showError(reason.isEmpty ? "Server closed this session" : reason)
            return .none

        default:
            return .none
        }
    }
}
