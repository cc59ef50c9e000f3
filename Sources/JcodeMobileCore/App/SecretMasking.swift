/// Redaction by value where text enters the core: the words a server wrote
/// (its events, its answers to HTTP requests, a socket's close reason), with
/// every secret the core holds (`SecretValues`) replaced by its mask. Ids,
/// names of models and tools, and numbers are left as they are: they are
/// matched against what the core sent, and a secret is text.
extension SecretValues {
    /// The input with the server's words masked; nil when nothing changed
    /// (or the input carries no server text).
    func masking(_ input: Input) -> Input? {
        switch input {
        case .server(let event): return masking(event).map(Input.server)
        case .platform(let event): return masking(event).map(Input.platform)
        case .action, .internal: return nil
        }
    }

    func masking(_ event: PlatformEvent) -> PlatformEvent? {
        switch event {
        case .http(.pairFinished(var result)):
            guard let error = result.error, let masked = masking(error) else { return nil }
            result.error = masked
            return .http(.pairFinished(result))
        case .http(.healthFinished(var result)):
            guard let error = result.error, let masked = masking(error) else { return nil }
            result.error = masked
            return .http(.healthFinished(result))
        case .webSocket(.event(let id, let items)):
            var copy = items
            var changed = false
            for i in items.indices {
                switch items[i] {
                case .event(let event): if let m = masking(event) { copy[i] = .event(m); changed = true }
                case .dropped(let why): if let m = masking(why) { copy[i] = .dropped(m); changed = true }
                }
            }
            return changed ? .webSocket(.event(effectID: id, items: copy)) : nil
        case .webSocket(.closed(let id, let code, let reason)):
            guard let reason, let masked = masking(reason) else { return nil }
            return .webSocket(.closed(effectID: id, code: code, reason: masked))
        case .webSocket(.failed(let id, let error, let status)):
            guard let masked = masking(error) else { return nil }
            return .webSocket(.failed(effectID: id, error: masked, status: status))
        case .webSocket(.opened), .secureStore, .timer, .device, .lifecycle:
            return nil
        }
    }

    /// The event with each of its strings of text masked; nil when none held a secret.
    func masking(_ event: ServerEvent) -> ServerEvent? {
        var changed = false
        func m(_ s: String) -> String {
            guard let masked = masking(s) else { return s }
            changed = true
            return masked
        }
        func m(_ s: String?) -> String? { s.map(m) }
        let result: ServerEvent
        switch event {
        case .ack, .reasoningDone, .toolStart, .toolExec, .messageEnd, .done, .interrupted, .tokens, .connectionPhase,
             .retryRollback, .state, .session, .availableModelsUpdated, .compaction, .connectionType, .upstreamProvider,
             .loggedOnly, .reloading, .pong, .sidePaneImages:
            return nil
        case .textDelta(let s): result = .textDelta(m(s))
        case .textReplace(let s): result = .textReplace(m(s))
        case .reasoningDelta(let s): result = .reasoningDelta(m(s))
        case .toolInput(let s): result = .toolInput(delta: m(s))
        case .toolDone(let id, let name, let output, let error):
            result = .toolDone(id: id, name: name, output: m(output), error: m(error))
        case .providerGuardrail(let reason, let message): result = .providerGuardrail(stopReason: reason, message: m(message))
        case .error(let id, let message, let retry): result = .error(id: id, message: m(message), retryAfterSecs: retry)
        case .statusDetail(let s): result = .statusDetail(m(s))
        case .softInterruptInjected(let content, let role, let point, let skipped):
            result = .softInterruptInjected(content: m(content), displayRole: role, point: point, toolsSkipped: skipped)
        case .sessionRenamed(let id, let title): result = .sessionRenamed(sessionID: id, displayTitle: m(title))
        case .history(var history):
            history.messages = history.messages.map { masked($0, &changed) }
            history.displayTitle = m(history.displayTitle)
            history.allSessions = history.allSessions?.map { SessionSummary(id: $0.id, title: m($0.title)) }
            if var recovery = history.reloadRecovery {
                recovery.reconnectNotice = m(recovery.reconnectNotice)
                recovery.continuationMessage = m(recovery.continuationMessage)
                history.reloadRecovery = recovery
            }
            result = .history(history)
        case .compactedHistory(var history):
            history.messages = history.messages.map { masked($0, &changed) }
            result = .compactedHistory(history)
        case .modelChanged(let id, let model, let provider, let error):
            result = .modelChanged(id: id, model: model, providerName: provider, error: m(error))
        case .reasoningEffortChanged(let id, let effort, let error):
            result = .reasoningEffortChanged(id: id, effort: effort, error: m(error))
        case .compactResult(let id, let message, let success): result = .compactResult(id: id, message: m(message), success: success)
        case .notification(var notification):
            notification.message = m(notification.message)
            notification.fromName = m(notification.fromName)
            result = .notification(notification)
        case .reloadProgress(let step, let message, let success): result = .reloadProgress(step: step, message: m(message), success: success)
        case .sessionCloseRequested(let reason): result = .sessionCloseRequested(reason: m(reason))
        case .permissionRequest(var request):
            request.action = m(request.action)
            request.detail = m(request.detail)
            result = .permissionRequest(request)
        case .stdinRequest(var request):
            request.prompt = m(request.prompt)
            result = .stdinRequest(request)
        case .generatedImage(let id, let path, let format, let revised):
            result = .generatedImage(id: id, path: m(path), outputFormat: format, revisedPrompt: m(revised))
        }
        return changed ? result : nil
    }

    private func masked(_ message: ServerEvent.History.Message, _ changed: inout Bool) -> ServerEvent.History.Message {
        var message = message
        if let s = masking(message.content) { message.content = s; changed = true }
        if var data = message.toolData {
            if let s = masking(data.input) { data.input = s; changed = true }
            if let s = data.output.flatMap(masking) { data.output = s; changed = true }
            if let s = data.error.flatMap(masking) { data.error = s; changed = true }
            message.toolData = data
        }
        return message
    }

    /// The effect with the words the core composed from server text masked
    /// (a local notification's title and body); nil when nothing changed.
    /// The effects that carry a secret on purpose are never masked.
    func masking(_ effect: Effect) -> Effect? {
        guard case .device(.showLocalNotification(let title, let body, let sessionID)) = effect else { return nil }
        let t = masking(title)
        let b = masking(body)
        guard t != nil || b != nil else { return nil }
        return .device(.showLocalNotification(title: t ?? title, body: b ?? body, sessionID: sessionID))
    }
}

extension PlatformEvent {
    /// A `websocket_event` (its server events are masked one by one as they run).
    var isWebSocketEvent: Bool {
        if case .webSocket(.event) = self { return true }
        return false
    }
}
