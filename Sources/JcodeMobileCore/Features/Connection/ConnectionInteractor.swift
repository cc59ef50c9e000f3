/// Owns the link to the selected server: opening and closing the socket,
/// `subscribe` on connect (and `get_history` only when the subscribe brings
/// no history: see `opened` and `historyCheck`), unpacking frames into server
/// events, reconnecting with backoff, and sending every gateway request
/// (it owns the request ids).
///
/// Reconnect policy (SPEC 7): 1 s, doubling, capped at 30 s; 0.5 s after the
/// server announced `reloading`; never after a rejected token (401) or a
/// `session_close_requested`; paused while the network is unreachable.
///
/// Lifecycle (docs/LIFECYCLE.md): while connected in the foreground a
/// `ping` goes out every 20 s, and a `pong` still missing at the next tick
/// counts as a dropped connection. In the background the socket stays open
/// (the OS may suspend it) but the keep-alive and reconnect timers stop; back
/// in front, a link that dropped (or was restored from a snapshot) comes up
/// at once, and an open one is pinged at once.
public struct ConnectionInteractor: Interactor {
    public init() {}

    /// What the connection acts on. (A frame's events are unpacked by
    /// `frame`, which needs nothing but this slice.)
    public enum Input: Equatable, Sendable {
        // Actions
        case retryConnection
        case disconnect
        // Platform events
        case socketOpened(effectID: EffectID)
        case socketClosed(effectID: EffectID, code: Int?, reason: String?)
        case socketFailed(effectID: EffectID, error: String, status: Int?)
        case timerFired(timerID: String)
        case networkReachabilityChanged(reachable: Bool)
        case foreground
        case background
        // Server events
        case pong(id: Int?)
        case reloading
        /// A history arrived, answering request `requestID` (nil: none named).
        case history(requestID: Int?)
        case error(id: Int?, message: String)
        /// Another answer to a request (`ack`, `done`, `session`,
        /// `model_changed` …): the request it ends is forgotten.
        case answered(GatewayAnswer.Event, id: Int?)
        case sessionCloseRequested(reason: String)
        // Requests and other features' outputs
        case send(GatewayRequest)
        case pairingStarted
        case pairingFailed
        case serverSelected(ServerSelection)
        /// No server is selected any more (the last one was forgotten).
        case serverCleared
        case credentialsLoaded(serverID: String)
        case credentialsMissing(serverName: String)
        case workingDirChanged(serverID: String)
    }

    public func interact(_ state: inout ConnectionState, _ input: Input, _ facts: Facts) -> Emission {
        switch input {
        case .socketOpened(let id):
            return opened(&state, id, facts)
        case .socketClosed(let id, let code, let reason):
            guard facts.pending(id)?.kind == .websocketConnect else {
                return .note("websocket_closed for effect \(id), which is not the current socket; ignored", .ignored)
            }
            return .settle(id) + dropped(&state, issue: .closed(code: code, reason: reason), facts)
        case .socketFailed(let id, let error, let status):
            return failed(&state, id, error: error, status: status, facts)
        case .timerFired(let timerID):
            if timerID == state.keepAliveTimerID { return keepAliveTick(&state, facts) }
            guard timerID == state.reconnectTimerID else { return .note("stale timer \(timerID) ignored", .ignored) }
            state.reconnectTimerID = nil
            state.reconnectDelayMS = nil
            return connectSelected(&state, facts)
        case .networkReachabilityChanged(let reachable):
            return networkChanged(&state, reachable: reachable, facts)
        case .foreground:
            return foreground(&state, facts)
        case .background:
            return background(&state)
        case .retryConnection:
            guard facts.servers.selected != nil else { return .note("no server to connect to") }
            if state.phase == .connected { return .note("already connected") }
            return cancelReconnectTimer(&state) + connectSelected(&state, facts)
        case .disconnect:
            guard facts.servers.selected != nil else { return .note("no server to disconnect from") }
            let emission = closeSocket(&state, facts) + cancelReconnectTimer(&state)
            state.phase = .disconnected
            state.issue = nil
            state.attempt = 0
            state.resumesInForeground = false
            return emission + .tell(.connectionLost)
        case .send(let request):
            return send(&state, request)

        // What the other features did
        case .pairingStarted:
            if state.phase != .connected { state.phase = .pairing }
            return .none
        case .pairingFailed:
            if state.phase == .pairing { state.phase = .disconnected }
            return .none
        case .serverSelected(let selection):
            state.attempt = 0
            state.issue = nil
            guard let token = facts.servers.credentials[selection.server.id] else {
                state.phase = .connecting
                return .none
            }
            return connect(&state, to: selection.server, token: token, facts)
        case .serverCleared:
            let emission = closeSocket(&state, facts) + cancelReconnectTimer(&state)
            state = ConnectionState()
            return emission
        case .credentialsLoaded(let serverID):
            let waiting = state.phase == .connecting || state.phase == .reconnecting
            guard serverID == facts.servers.selectedID, waiting, state.socketEffectID == nil,
                  let server = facts.servers.selected, let token = facts.servers.credentials[serverID]
            else { return .none }
            return connect(&state, to: server, token: token, facts)
        case .credentialsMissing(let name):
            state.phase = .failed
            state.issue = .noCredentials(serverName: name)
            state.resumesInForeground = false
            return .none
        case .workingDirChanged(let serverID):
            // The server hears the working directory only in `subscribe`: start over.
            guard serverID == facts.servers.selectedID, state.phase != .disconnected, state.phase != .pairing else { return .none }
            state.attempt = 0
            state.issue = nil
            return cancelReconnectTimer(&state) + connectSelected(&state, facts)

        // What the server said about the link
        case .pong(let id):
            state.isPingOutstanding = false
            state.sentRequests.settle(.pong, id: id)
            guard let id, let awaited = state.awaitedHistory, id > awaited else { return .none }
            return historyCheck(&state)
        case .answered(let event, let id):
            state.sentRequests.settle(event, id: id)
            return .none
        case .reloading:
            state.reconnectSoon = true
            return .internal(.notice(.info, "Server is updating, reconnecting shortly", passes: .reconnect))
        case .history(let requestID):
            // History loaded: this connection proved healthy, so the backoff starts over.
            state.attempt = 0
            // The answer to an earlier request (a subscribe's, before a
            // session switch) is not the history awaited.
            let earlier = state.sentRequests.answered(by: .history, id: requestID) != nil
            state.sentRequests.settle(.history, id: requestID)
            if let requestID, let awaited = state.awaitedHistory, requestID < awaited, earlier { return .none }
            state.awaitedHistory = nil
            return .none
        case .error(let id, let message):
            let answered = state.sentRequests.settle(.error, id: id)
            // A server that does not know `ping` still answers it in order.
            if let id, let awaited = state.awaitedHistory, id > awaited, answered == .ping {
                return historyCheck(&state)
            }
            guard let id, id == state.subscribeRequestID else { return .none }
            return subscribeRefused(&state, message: message, facts)
        case .sessionCloseRequested(let reason):
            // The server keeps its end open and waits for this client to go:
            // close the socket, say why, and stay down until the person reconnects.
            let request = CloseRequest(reason: reason)
            let emission = closeSocket(&state, facts) + cancelReconnectTimer(&state)
            state.closeRequest = request
            state.phase = .failed
            state.issue = .closedByServer(request)
            return emission + .tell(.connectionLost) + .internal(.showError(ErrorBanner(.connection(.closedByServer(request)))))
        }
    }

    // MARK: - Requests

    /// Sends a gateway request on the open socket, taking the next request
    /// id. When the socket is not open nothing is sent and the log says so.
    private func send(_ state: inout ConnectionState, _ request: GatewayRequest) -> Emission {
        guard state.canSend else { return .note("not connected: \(request.type) not sent") }
        let id = state.nextRequestID
        state.nextRequestID &+= 1
        state.sentRequests.record(id, request.kind)
        let sent = Emission.effect(.webSocket(.send(line: request.line(id: id), containsSecret: request.containsSecret)))
        guard case .resumeSession = request else { return sent }
        // A session switch: `resume_session` answers with the session's
        // history itself (client_session.rs, `handle_resume_session`), so
        // nothing asks again; a `ping` checks that it came, as on a reconnect.
        state.awaitedHistory = id
        state.historyAskedAgain = false
        return sent + sendHistoryCheck(&state)
    }

    // MARK: - The history a subscribe brings

    /// A `ping` right after the request that brings the history: jcode
    /// handles a connection's requests one at a time and writes a history
    /// before it reads the next request (client_lifecycle.rs, the request
    /// loop; `Ping` is answered on the same writer), so its `pong` comes
    /// after the history, or tells that none reached the core.
    private func sendHistoryCheck(_ state: inout ConnectionState) -> Emission {
        send(&state, .ping)
    }

    /// The `pong` after the awaited history came, and the history did not.
    /// First the subscribe brought none (the session it named is gone, so
    /// the server made a new one): ask for it. Asked again and still none:
    /// the host refused the frame (over the input limit) or it could not be
    /// read; the chat goes on without it (docs/LIMITS.md).
    private func historyCheck(_ state: inout ConnectionState) -> Emission {
        state.awaitedHistory = nil
        guard state.historyAskedAgain else {
            state.historyAskedAgain = true
            state.awaitedHistory = state.nextRequestID
            return .note("no history before the pong: asking for it") + send(&state, .getHistory) + sendHistoryCheck(&state)
        }
        return .note("asked again and still no history before the pong: it did not reach the core", .dropped) + .tell(.historyLost)
    }

    // MARK: - Socket events

    /// A frame's events become follow-up inputs (the streaming path: it
    /// needs nothing but this slice).
    static func frame(_ state: ConnectionState, effectID id: EffectID?, items: [FrameItem]) -> Emission {
        if let id, id != state.socketEffectID {
            return .note("websocket_event for effect \(id), which is not the current socket; ignored", .ignored)
        }
        guard state.isSocketOpen else { return .note("websocket_event with no open socket; ignored", .ignored) }
        assert(acceptsFrame(state, effectID: id))
        if items.count == 1 { return emission(for: items[0]) }
        return .merge(items.map(emission))
    }

    /// Whether a frame of socket `id` (nil: the current one) is read: it is
    /// for the current socket, and that socket is open (what `frame` checks first).
    static func acceptsFrame(_ state: ConnectionState, effectID id: EffectID?) -> Bool {
        (id == nil || id == state.socketEffectID) && state.isSocketOpen
    }

    /// A decoded server event becomes a follow-up input; a dropped one, a log note.
    private static func emission(for item: FrameItem) -> Emission {
        switch item {
        case .event(let event): return .input(.server(event))
        case .dropped(let reason): return .note(reason, .dropped)
        }
    }

    private func opened(_ state: inout ConnectionState, _ id: EffectID, _ facts: Facts) -> Emission {
        guard facts.pending(id)?.kind == .websocketConnect else {
            return .note("websocket_opened for effect \(id), which is not the current socket; ignored", .ignored)
        }
        state.socketEffectID = id
        state.isSocketOpen = true
        state.phase = .connected
        state.issue = nil
        state.reconnectDelayMS = nil
        state.reconnectSoon = false
        state.closeRequest = nil
        state.nextRequestID = 1
        state.sentRequests = SentRequests()
        state.subscribeRefusal = nil
        state.awaitedHistory = nil
        state.historyAskedAgain = false
        state.subscribeRequestID = state.nextRequestID
        state.isPingOutstanding = false
        state.resumesInForeground = false
        let subscribe = GatewayRequest.subscribe(
            workingDir: facts.servers.selected?.workingDir ?? "", targetSessionID: facts.session.id,
            clientInstanceID: facts.lifecycle.deviceID)
        let keepAlive = facts.lifecycle.isForeground ? scheduleKeepAlive(&state) : .none
        // A subscribe naming an existing session resumes it and answers with
        // its history (client_lifecycle.rs, `Request::Subscribe` →
        // `handle_resume_session` in client_session.rs): asking again would
        // carry the transcript and its images twice. Without a target (or
        // when the target is gone) the subscribe brings none.
        guard facts.session.id != nil else {
            // A fresh session (its history is small): `get_history` asks for
            // it, and the next `pong` (the keep-alive's, 20 s later at the
            // latest) is the check that it came.
            let subscribed = send(&state, subscribe)
            state.awaitedHistory = state.nextRequestID
            state.historyAskedAgain = true
            return .tell(.socketOpened) + subscribed + send(&state, .getHistory) + keepAlive
        }
        state.awaitedHistory = state.subscribeRequestID
        return .tell(.socketOpened) + send(&state, subscribe) + sendHistoryCheck(&state) + keepAlive
    }

    private func failed(_ state: inout ConnectionState, _ id: EffectID, error: String, status: Int?, _ facts: Facts) -> Emission {
        guard facts.pending(id)?.kind == .websocketConnect else {
            return .note("websocket_failed for effect \(id), which is not the current socket; ignored", .ignored)
        }
        guard status == 401 else { return .settle(id) + dropped(&state, issue: .failed(error: error), facts) }
        state.socketEffectID = nil
        state.isSocketOpen = false
        state.phase = .failed
        state.issue = .tokenRejected
        var emission = Emission.settle(id) + stopKeepAlive(&state)
        if let serverID = facts.servers.selectedID { emission.append(.tell(.credentialsRejected(serverID: serverID))) }
        return emission + .tell(.connectionLost) + .effect(.device(.haptic(style: .error)))
    }

    /// The socket is gone: decide whether and when to reconnect.
    private func dropped(_ state: inout ConnectionState, issue: ConnectionIssue, _ facts: Facts) -> Emission {
        state.socketEffectID = nil
        state.isSocketOpen = false
        let lost = stopKeepAlive(&state) + .tell(.connectionLost)
        if let request = state.closeRequest {
            state.phase = .failed
            state.issue = .closedByServer(request)
            return lost
        }
        if state.phase == .disconnected { return lost }
        if let refusal = state.subscribeRefusal {
            // The server said why before it closed: that is the reason to show.
            state.subscribeRefusal = nil
            state.issue = .subscribeRefused(message: refusal)
        } else {
            state.issue = issue
        }
        if !facts.lifecycle.isNetworkReachable {
            state.phase = .offline
            return lost
        }
        if !facts.lifecycle.isForeground {
            // No timers in the background: reconnect when the app is in front again.
            state.attempt &+= 1
            state.phase = .reconnecting
            state.resumesInForeground = true
            return lost
        }
        return lost + scheduleReconnect(&state)
    }

    // MARK: - Lifecycle and keep-alive

    /// Back in front: a link that should be up comes up now, without waiting
    /// out a backoff; an open one is pinged now (it may have died while the
    /// app was suspended) and the keep-alive resumes.
    private func foreground(_ state: inout ConnectionState, _ facts: Facts) -> Emission {
        if state.canSend {
            guard state.keepAliveTimerID == nil else { return .none }
            var emission = Emission.none
            if !state.isPingOutstanding {
                state.isPingOutstanding = true
                emission = send(&state, .ping)
            }
            return emission + scheduleKeepAlive(&state)
        }
        let waiting = state.resumesInForeground || (state.phase == .reconnecting && state.reconnectTimerID != nil)
        guard waiting, !Self.hasSocket(state, facts) else { return .none }
        state.resumesInForeground = false
        guard facts.lifecycle.isNetworkReachable else {
            state.phase = .offline
            return .none
        }
        return cancelReconnectTimer(&state) + connectSelected(&state, facts)
    }

    /// To the background: the socket stays open, timers stop. A reconnect
    /// that was waiting happens when the app is in front again.
    private func background(_ state: inout ConnectionState) -> Emission {
        let emission = stopKeepAlive(&state)
        guard state.reconnectTimerID != nil else { return emission }
        state.resumesInForeground = true
        return emission + cancelReconnectTimer(&state)
    }

    /// A keep-alive tick: the last `ping` must have been answered by now.
    private func keepAliveTick(_ state: inout ConnectionState, _ facts: Facts) -> Emission {
        state.keepAliveTimerID = nil
        guard state.canSend else { return .none }
        if state.isPingOutstanding {
            // No pong for a whole interval: the link is dead even if the socket says nothing.
            let closing = closeSocket(&state, facts)
            return closing + dropped(&state, issue: .keepAliveTimeout, facts)
        }
        state.isPingOutstanding = true
        return send(&state, .ping) + scheduleKeepAlive(&state)
    }

    private func scheduleKeepAlive(_ state: inout ConnectionState) -> Emission {
        let timerID = "keepalive.\(state.nextTimerSerial)"
        state.nextTimerSerial &+= 1
        state.keepAliveTimerID = timerID
        return .effect(.timer(.schedule(timerID: timerID, afterMS: ConnectionState.keepAliveIntervalMS, purpose: "keepalive")))
    }

    private func stopKeepAlive(_ state: inout ConnectionState) -> Emission {
        state.isPingOutstanding = false
        guard let timerID = state.keepAliveTimerID else { return .none }
        state.keepAliveTimerID = nil
        return .effect(.timer(.cancel(timerID: timerID)))
    }

    private func scheduleReconnect(_ state: inout ConnectionState) -> Emission {
        state.attempt &+= 1
        let delay = state.reconnectSoon ? ConnectionState.reloadDelayMS : ConnectionState.backoffMS(attempt: state.attempt)
        state.reconnectSoon = false
        let timerID = "reconnect.\(state.nextTimerSerial)"
        state.nextTimerSerial &+= 1
        state.reconnectTimerID = timerID
        state.reconnectDelayMS = delay
        state.phase = .reconnecting
        return .effect(.timer(.schedule(timerID: timerID, afterMS: delay, purpose: "reconnect")))
    }

    private func cancelReconnectTimer(_ state: inout ConnectionState) -> Emission {
        guard let timerID = state.reconnectTimerID else { return .none }
        state.reconnectTimerID = nil
        state.reconnectDelayMS = nil
        return .effect(.timer(.cancel(timerID: timerID)))
    }

    /// What closes the link as the host sees it: the socket (open or still
    /// connecting) and the reconnect timer. The app uses it when it
    /// replaces the whole state.
    static func closingEffects(_ state: ConnectionState, _ facts: Facts) -> Emission {
        var emission = hasSocket(state, facts) ? Emission.effect(.webSocket(.close)) : .none
        if let timer = state.reconnectTimerID { emission.append(.effect(.timer(.cancel(timerID: timer)))) }
        if let timer = state.keepAliveTimerID { emission.append(.effect(.timer(.cancel(timerID: timer)))) }
        return emission
    }

    /// A socket is open, or a `websocket_connect` is still awaited.
    private static func hasSocket(_ state: ConnectionState, _ facts: Facts) -> Bool {
        state.socketEffectID != nil || facts.hasPendingConnect
    }

    /// Closes the current socket (open or still connecting), if any. Its
    /// later events are recognised as stale.
    private func closeSocket(_ state: inout ConnectionState, _ facts: Facts) -> Emission {
        let hadSocket = Self.hasSocket(state, facts)
        state.socketEffectID = nil
        state.isSocketOpen = false
        return .settleAll(.websocketConnect) + (hadSocket ? .effect(.webSocket(.close)) : .none) + stopKeepAlive(&state)
    }

    /// The server refused this socket's `subscribe` and will close it. A
    /// refused working directory needs the person: stop and point to the
    /// field. Anything else is retried with backoff once the socket closes.
    private func subscribeRefused(_ state: inout ConnectionState, message: String, _ facts: Facts) -> Emission {
        guard Self.concernsWorkingDir(message) else {
            state.subscribeRefusal = message
            return .none
        }
        let emission = closeSocket(&state, facts) + cancelReconnectTimer(&state)
        state.phase = .failed
        state.issue = .workingDirRefused(message: message)
        return emission + .tell(.connectionLost)
    }

    /// Whether a server message is about the working directory ("Subscribe
    /// requires the client's working directory", "Subscribe working_dir must
    /// be an absolute path", in `client_lifecycle.rs`).
    static func concernsWorkingDir(_ message: String) -> Bool {
        let lower = message.lowercased()
        return lower.contains("working_dir") || lower.contains("working directory")
    }

    /// Opens a socket to `server` with `token`, replacing any current one.
    /// Nothing connects without a working directory: today's jcode refuses it.
    private func connect(_ state: inout ConnectionState, to server: SavedServer, token: String, _ facts: Facts) -> Emission {
        let emission = closeSocket(&state, facts) + cancelReconnectTimer(&state)
        guard !server.workingDir.isEmpty else {
            state.phase = .failed
            state.issue = .noWorkingDir(serverName: server.name)
            return emission
        }
        state.phase = state.attempt > 0 ? .reconnecting : .connecting
        state.closeRequest = nil
        return emission + .effect(.webSocket(.connect(url: server.address.webSocketURL, authToken: token)))
    }

    /// Connects to the selected server, asking for its token from the
    /// secure store first when it is not in memory.
    private func connectSelected(_ state: inout ConnectionState, _ facts: Facts) -> Emission {
        guard let server = facts.servers.selected else { return .note("no server selected") }
        if let token = facts.servers.credentials[server.id] { return connect(&state, to: server, token: token, facts) }
        state.phase = state.attempt > 0 ? .reconnecting : .connecting
        return .tell(.credentialsNeeded)
    }

    // MARK: - Network

    private func networkChanged(_ state: inout ConnectionState, reachable: Bool, _ facts: Facts) -> Emission {
        if !reachable {
            guard state.phase == .reconnecting else { return .none }
            let emission = cancelReconnectTimer(&state)
            state.phase = .offline
            return emission
        }
        guard state.phase == .offline else { return .none }
        return connectSelected(&state, facts)
    }
}
