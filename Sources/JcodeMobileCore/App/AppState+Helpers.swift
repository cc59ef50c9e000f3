/// Small mutations several features share. They take `inout` state rather
/// than being extra actions, so a transition stays one input.
extension AppState {
    /// Sends a gateway request on the open socket, taking the next request id.
    /// When the socket is not open nothing is sent and the log says so.
    mutating func request(_ request: GatewayRequest) -> Emission {
        guard connection.canSend else { return .note("not connected: \(request.type) not sent") }
        let id = connection.nextRequestID
        connection.nextRequestID &+= 1
        return .effect(.webSocket(.send(line: request.line(id: id), containsSecret: request.containsSecret)))
    }

    /// The id the next `request` will use.
    var nextRequestID: Int { connection.nextRequestID }

    mutating func addNotice(_ kind: Notice.Kind, _ text: String) {
        notices.append(Notice(id: "n" + String(nextNoticeID), kind: kind, text: text))
        nextNoticeID &+= 1
        if notices.count > Notice.limit { notices.removeFirst(notices.count - Notice.limit) }
    }

    mutating func showError(_ message: String, retryAfterSecs: Int? = nil) {
        errorBanner = ErrorBanner(message: message, retryAfterSecs: retryAfterSecs)
    }

    /// Ends the running turn on this side: nothing is processing or
    /// streaming any more (a finished turn, or a lost connection).
    mutating func endTurnLocally() {
        session.isProcessing = false
        session.isReasoning = false
        session.serverPhase = nil
        session.statusDetail = nil
        transcript.finishStreaming()
    }

    /// Forgets everything about the current session (switching servers).
    mutating func resetSession() {
        session = SessionState()
        transcript.removeAll()
        softInterrupts = []
        permissionRequests = []
        stdinRequests = []
    }
}
