/// Owns the conversation: sending messages (or queueing them in the outbox
/// while offline), streaming text, reasoning and tool calls into the
/// transcript, turn endings, and the server's authoritative history.
public struct ChatInteractor: Interactor {
    public init() {}

    public func interact(_ state: inout AppState, _ input: Input) -> Emission {
        switch input {
        case .action(.sendMessage(let text)):
            return send(&state, text: text)
        case .action(.interrupt):
            guard state.session.isProcessing else { return .note("interrupt: no turn is running") }
            return state.request(.cancel)
        case .action(.clearConversation):
            guard state.connection.canSend else {
                state.showError("Connect to the server to clear the conversation.")
                return .none
            }
            state.transcript.removeAll()
            state.endTurnLocally()
            return state.request(.clear)
        case .server(let event):
            return handle(&state, event)
        default:
            return .none
        }
    }

    // MARK: - Sending

    private func send(_ state: inout AppState, text: String?) -> Emission {
        let fromDraft = text == nil
        let content = (text ?? state.draft).trimmingSpaces()
        let attachments = state.attachments
        guard !content.isEmpty || !attachments.isEmpty else { return .note("send_message: nothing to send") }
        guard state.selectedServer != nil else {
            state.showError("Pair with a jcode server before sending messages.")
            return .none
        }
        if state.session.isProcessing && attachments.isEmpty && state.connection.canSend {
            // A turn is running: what the person types joins it as a soft interrupt.
            if fromDraft { state.draft = "" }
            return .action(.queueInterrupt(text: content, urgent: false))
        }
        if fromDraft { state.draft = "" }
        state.attachments = []
        let message = OutboxMessage(id: "o" + String(state.nextOutboxID), text: content, attachments: attachments)
        state.nextOutboxID &+= 1
        guard state.connection.canSend, state.session.historyLoaded, !state.session.isProcessing, state.outbox.isEmpty else {
            // Offline, still loading, or behind earlier messages: it waits its turn.
            state.outbox.append(message)
            return .note("message queued in the outbox")
        }
        return deliver(&state, message)
    }

    /// Puts a message in the transcript and sends it.
    private func deliver(_ state: inout AppState, _ message: OutboxMessage) -> Emission {
        state.transcript.finishStreaming()
        state.transcript.beginTurn()
        state.transcript.append(role: .user, text: message.text, imageCount: message.attachments.count)
        state.session.isProcessing = true
        state.session.tokens = nil
        let images = message.attachments.map {
            GatewayRequest.ImagePayload(mediaType: $0.mediaType, dataBase64: $0.dataBase64)
        }
        return state.request(.message(content: message.text, images: images))
    }

    /// Sends the oldest outbox message when the connection is ready for it.
    private func flushOutbox(_ state: inout AppState) -> Emission {
        guard !state.outbox.isEmpty, state.connection.canSend, state.session.historyLoaded, !state.session.isProcessing
        else { return .none }
        let message = state.outbox.removeFirst()
        return deliver(&state, message)
    }

    // MARK: - Server events

    private func handle(_ state: inout AppState, _ event: ServerEvent) -> Emission {
        switch event {
        case .textDelta(let text):
            let index = state.transcript.streamingAssistant()
            state.transcript.appendText(text, at: index)
            if !state.session.isProcessing { state.session.isProcessing = true }
            return .none
        case .textReplace(let text):
            let index = state.transcript.streamingAssistant()
            state.transcript.setText(text, at: index)
            return .none
        case .reasoningDelta(let text):
            let index = state.transcript.streamingAssistant()
            state.transcript.appendReasoning(text, at: index)
            if !state.session.isReasoning { state.session.isReasoning = true }
            if !state.session.isProcessing { state.session.isProcessing = true }
            return .none
        case .reasoningDone(let secs):
            state.session.isReasoning = false
            if let index = state.transcript.streamingIndex, secs != nil {
                state.transcript.setReasoningSecs(secs, at: index)
            }
            return .none
        case .messageEnd:
            state.transcript.finishStreaming()
            return .none
        case .retryRollback(let attempt, let max):
            state.transcript.discardStreaming()
            state.session.isReasoning = false
            state.session.statusDetail = "Retrying (\(attempt)/\(max))"
            return .none

        case .toolStart(let id, let name):
            let index = state.transcript.streamingAssistant()
            state.transcript.addToolCall(ToolCall(id: id, name: name, status: .pending), at: index)
            return .none
        case .toolInput(let delta):
            return state.transcript.appendToLatestToolInput(delta) ? .none : .note("tool_input with no tool call; ignored")
        case .toolExec(let id, let name):
            let found = state.transcript.updateToolCall(id) { $0.status = .running }
            if !found {
                let index = state.transcript.streamingAssistant()
                state.transcript.addToolCall(ToolCall(id: id, name: name, status: .running), at: index)
            }
            return .none
        case .toolDone(let id, let name, let output, let error):
            let status: ToolCall.Status = error == nil ? .succeeded : .failed
            let found = state.transcript.updateToolCall(id) {
                $0.output = output
                $0.status = status
                $0.error = error
            }
            if !found {
                let index = state.transcript.streamingAssistant()
                state.transcript.addToolCall(
                    ToolCall(id: id, name: name, output: output, status: status, error: error), at: index)
            }
            return .none

        case .done(let id):
            if let id, id == state.connection.subscribeRequestID { return .note("done for subscribe") }
            state.endTurnLocally()
            return flushOutbox(&state)
        case .interrupted:
            state.endTurnLocally()
            state.addNotice(.info, "Interrupted")
            return flushOutbox(&state)
        case .error(_, let message, let retryAfterSecs):
            if state.session.isProcessing { state.endTurnLocally() }
            state.showError(message, retryAfterSecs: retryAfterSecs)
            return .none
        case .sessionCloseRequested:
            state.endTurnLocally()
            return .none

        case .tokens(let input, let output):
            state.session.tokens = TokenUsage(input: input, output: output)
            return .none
        case .statusDetail(let detail):
            state.session.statusDetail = detail.isEmpty ? nil : detail
            return .none
        case .connectionPhase(let phase):
            state.session.serverPhase = phase.isEmpty ? nil : phase
            return .none

        case .history(let history):
            state.transcript.replaceAll(with: Self.entries(from: history.messages))
            state.session.isProcessing = history.isProcessing ?? false
            state.session.isReasoning = false
            state.session.historyLoaded = true
            return flushOutbox(&state)

        default:
            return .none
        }
    }

    /// The transcript of a `history` event: user, assistant and system
    /// messages with their tool calls; empty placeholders are skipped.
    static func entries(from messages: [ServerEvent.History.Message]) -> [TranscriptEntry] {
        var entries: [TranscriptEntry] = []
        entries.reserveCapacity(messages.count)
        for (n, message) in messages.enumerated() {
            guard let role = TranscriptEntry.Role(rawValue: message.role) else { continue }
            var calls: [ToolCall] = []
            if let data = message.toolData {
                let status: ToolCall.Status = data.error != nil ? .failed : (data.output != nil ? .succeeded : .running)
                calls.append(
                    ToolCall(id: data.id, name: data.name, input: data.input, output: data.output ?? "", status: status, error: data.error))
            } else {
                for (k, name) in message.toolCalls.enumerated() {
                    calls.append(ToolCall(id: "history.\(n).\(k)", name: name, status: .succeeded))
                }
            }
            if message.content.isEmpty && calls.isEmpty { continue }
            entries.append(TranscriptEntry(serial: 0, role: role, text: message.content, toolCalls: calls))
        }
        return entries
    }
}
