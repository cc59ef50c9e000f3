/// Owns the link to the selected server: opening and closing the socket,
/// `subscribe` + `get_history` on connect, unpacking frames into server
/// events, reconnecting with backoff, saved servers and their tokens.
///
/// Reconnect policy (SPEC 7): 1 s, doubling, capped at 30 s; 0.5 s after the
/// server announced `reloading`; never after a rejected token (401) or a
/// `session_close_requested`; paused while the network is unreachable.
public struct ConnectionInteractor: Interactor {
    public init() {}

    static let tokenRejected = "This device is no longer paired with the server. Re-pair to reconnect."

    public func interact(_ state: inout AppState, _ input: Input) -> Emission {
        switch input {
        case .platform(.webSocket(let result)):
            return handle(&state, result)
        case .platform(.timer(.fired(let timerID))):
            guard timerID == state.connection.reconnectTimerID else { return .note("stale timer \(timerID) ignored") }
            state.connection.reconnectTimerID = nil
            state.connection.reconnectDelayMS = nil
            return Self.connectSelected(&state)
        case .platform(.secureStore(let result)):
            return handle(&state, result)
        case .platform(.lifecycle(.networkReachabilityChanged(let reachable))):
            return networkChanged(&state, reachable: reachable)
        case .platform(.lifecycle(.foreground)):
            // Back in front with a reconnect pending: try now rather than wait out the backoff.
            guard state.connection.phase == .reconnecting, state.connection.reconnectTimerID != nil else { return .none }
            return Self.cancelReconnectTimer(&state) + Self.connectSelected(&state)
        case .action(.retryConnection):
            guard state.selectedServer != nil else { return .note("no server to connect to") }
            if state.connection.phase == .connected { return .note("already connected") }
            return Self.cancelReconnectTimer(&state) + Self.connectSelected(&state)
        case .action(.disconnect):
            guard state.selectedServer != nil else { return .note("no server to disconnect from") }
            let emission = Self.closeSocket(&state) + Self.cancelReconnectTimer(&state)
            state.connection.phase = .disconnected
            state.connection.reason = nil
            state.connection.attempt = 0
            state.endTurnLocally()
            return emission
        case .action(.selectServer(let id)):
            return select(&state, serverID: id)
        case .action(.forgetServer(let id)):
            return forget(&state, serverID: id)
        case .server(.reloading):
            state.connection.reconnectSoon = true
            return .none
        case .server(.sessionCloseRequested(let reason)):
            state.connection.closedByServer = reason.isEmpty ? "Server closed this session" : reason
            return .none
        case .server(.history):
            state.connection.historyRequestID = nil
            return .none
        default:
            return .none
        }
    }

    // MARK: - Socket events

    private func handle(_ state: inout AppState, _ result: WebSocketResult) -> Emission {
        switch result {
        case .opened(let id):
            guard case .webSocket(.connect)? = state.effects.pending(id) else {
                return .note("websocket_opened for effect \(id), which is not the current socket; ignored")
            }
            state.connection.socketEffectID = id
            state.connection.isSocketOpen = true
            state.connection.phase = .connected
            state.connection.attempt = 0
            state.connection.reason = nil
            state.connection.reconnectDelayMS = nil
            state.connection.reconnectSoon = false
            state.connection.closedByServer = nil
            state.connection.nextRequestID = 1
            state.session.historyLoaded = false
            state.errorBanner = nil
            if state.screen == .onboarding { state.screen = .chat }
            state.connection.subscribeRequestID = state.nextRequestID
            let subscribe = state.request(.subscribe(targetSessionID: state.session.id))
            state.connection.historyRequestID = state.nextRequestID
            return subscribe + state.request(.getHistory)

        case .event(let id, let items):
            if let id, id != state.connection.socketEffectID {
                return .note("websocket_event for effect \(id), which is not the current socket; ignored")
            }
            guard state.connection.isSocketOpen else { return .note("websocket_event with no open socket; ignored") }
            if items.count == 1 { return Self.emission(for: items[0]) }
            return .merge(items.map(Self.emission))

        case .closed(let id, let code, let reason):
            guard case .webSocket(.connect)? = state.effects.resolve(id) else {
                return .note("websocket_closed for effect \(id), which is not the current socket; ignored")
            }
            var why = "Connection closed"
            if let reason, !reason.isEmpty { why = "Connection closed: \(reason)" } else if let code { why += " (code \(code))" }
            return dropped(&state, reason: why)

        case .failed(let id, let error, let status):
            guard case .webSocket(.connect)? = state.effects.resolve(id) else {
                return .note("websocket_failed for effect \(id), which is not the current socket; ignored")
            }
            if status == 401 {
                state.connection.socketEffectID = nil
                state.connection.isSocketOpen = false
                state.connection.phase = .failed
                state.connection.reason = Self.tokenRejected
                if let server = state.selectedServer { state.credentials[server.id] = nil }
                state.endTurnLocally()
                return .effect(.device(.haptic(style: .error)))
            }
            return dropped(&state, reason: error.isEmpty ? "Connection failed" : "Connection failed: \(error)")
        }
    }

    /// The socket is gone: decide whether and when to reconnect.
    private func dropped(_ state: inout AppState, reason: String) -> Emission {
        state.connection.socketEffectID = nil
        state.connection.isSocketOpen = false
        state.endTurnLocally()
        if let closed = state.connection.closedByServer {
            state.connection.phase = .failed
            state.connection.reason = closed
            return .none
        }
        if state.connection.phase == .disconnected { return .none }
        state.connection.reason = reason
        if !state.lifecycle.isNetworkReachable {
            state.connection.phase = .offline
            return .none
        }
        return Self.scheduleReconnect(&state)
    }

    static func scheduleReconnect(_ state: inout AppState) -> Emission {
        state.connection.attempt &+= 1
        let delay =
            state.connection.reconnectSoon
            ? ConnectionState.reloadDelayMS : ConnectionState.backoffMS(attempt: state.connection.attempt)
        state.connection.reconnectSoon = false
        let timerID = "reconnect.\(state.connection.nextTimerSerial)"
        state.connection.nextTimerSerial &+= 1
        state.connection.reconnectTimerID = timerID
        state.connection.reconnectDelayMS = delay
        state.connection.phase = .reconnecting
        return .effect(.timer(.schedule(timerID: timerID, afterMS: delay, purpose: "reconnect")))
    }

    static func cancelReconnectTimer(_ state: inout AppState) -> Emission {
        guard let timerID = state.connection.reconnectTimerID else { return .none }
        state.connection.reconnectTimerID = nil
        state.connection.reconnectDelayMS = nil
        return .effect(.timer(.cancel(timerID: timerID)))
    }

    /// Closes the current socket (open or still connecting), if any. Its
    /// later events are recognised as stale.
    static func closeSocket(_ state: inout AppState) -> Emission {
        let hadSocket = state.connection.socketEffectID != nil
            || state.effects.pending.contains(where: { if case .webSocket(.connect) = $0.effect { return true } else { return false } })
        state.effects.resolveAll { if case .webSocket(.connect) = $0 { return true } else { return false } }
        state.connection.socketEffectID = nil
        state.connection.isSocketOpen = false
        return hadSocket ? .effect(.webSocket(.close)) : .none
    }

    /// Opens a socket to `server` with `token`, replacing any current one.
    static func connect(_ state: inout AppState, to server: SavedServer, token: String) -> Emission {
        let emission = closeSocket(&state) + cancelReconnectTimer(&state)
        state.connection.phase = state.connection.attempt > 0 ? .reconnecting : .connecting
        state.connection.closedByServer = nil
        return emission + .effect(.webSocket(.connect(url: server.address.webSocketURL, authToken: token)))
    }

    /// Connects to the selected server, reading its token from the secure
    /// store first when it is not in memory.
    static func connectSelected(_ state: inout AppState) -> Emission {
        guard let server = state.selectedServer else { return .note("no server selected") }
        if let token = state.credentials[server.id] { return connect(&state, to: server, token: token) }
        state.connection.phase = state.connection.attempt > 0 ? .reconnecting : .connecting
        return .effect(.secureStore(.read(key: server.tokenKey)))
    }

    // MARK: - Frames

    /// A decoded server event becomes a follow-up input; a dropped one, a log note.
    static func emission(for item: FrameItem) -> Emission {
        switch item {
        case .event(let event): return .input(.server(event))
        case .dropped(let reason): return .note(reason)
        }
    }

    // MARK: - Secure store

    private func handle(_ state: inout AppState, _ result: SecureStoreResult) -> Emission {
        switch result {
        case .writeFinished(let id, let key, let ok):
            guard state.effects.resolve(id) != nil else { return .note("stale secure_store_write_finished ignored") }
            if !ok {
                state.addNotice(
                    .warning, "This device could not save the server's credentials; you may need to pair again after restarting the app.")
            }
            return ok ? .none : .note("secure_store_write failed for \(key)")

        case .readFinished(let id, let key, let ok, let value):
            guard case .secureStore(.read)? = state.effects.resolve(id) else {
                return .note("stale secure_store_read_finished ignored")
            }
            guard let server = state.servers.first(where: { $0.tokenKey == key }) else {
                return .note("secure_store_read_finished for an unknown key ignored")
            }
            guard ok, let token = value, !token.isEmpty else {
                if server.id == state.selectedServerID {
                    state.connection.phase = .failed
                    state.connection.reason = "No saved credentials for \(server.name). Pair again to reconnect."
                }
                return .none
            }
            state.credentials[server.id] = token
            let waiting = state.connection.phase == .connecting || state.connection.phase == .reconnecting
            guard server.id == state.selectedServerID, waiting, state.connection.socketEffectID == nil else { return .none }
            return Self.connect(&state, to: server, token: token)
        }
    }

    // MARK: - Servers

    private func select(_ state: inout AppState, serverID: String) -> Emission {
        guard state.servers.contains(where: { $0.id == serverID }) else {
            return .note("select_server: no saved server \(serverID)")
        }
        if serverID == state.selectedServerID && state.connection.phase == .connected {
            state.screen = .chat
            return .none
        }
        if serverID != state.selectedServerID {
            state.resetSession()
            state.outbox = []
        }
        state.selectedServerID = serverID
        state.connection.attempt = 0
        state.connection.reason = nil
        state.errorBanner = nil
        return Self.connectSelected(&state)
    }

    private func forget(_ state: inout AppState, serverID: String) -> Emission {
        guard let server = state.servers.first(where: { $0.id == serverID }) else {
            return .note("forget_server: no saved server \(serverID)")
        }
        state.servers.removeAll { $0.id == serverID }
        state.credentials[serverID] = nil
        var emission = Emission.effect(.secureStore(.delete(key: server.tokenKey))) + Self.persistServers(state)
        if state.selectedServerID == serverID {
            emission = Self.closeSocket(&state) + Self.cancelReconnectTimer(&state) + emission
            state.selectedServerID = nil
            state.connection = ConnectionState()
            state.resetSession()
            state.outbox = []
            state.screen = .onboarding
        }
        return emission
    }

    /// Saves the server list (never tokens) for the next launch.
    static func persistServers(_ state: AppState) -> Emission {
        .effect(.storage(.write(key: "servers", value: .array(state.servers.map(\.json)))))
    }

    // MARK: - Network

    private func networkChanged(_ state: inout AppState, reachable: Bool) -> Emission {
        state.lifecycle.isNetworkReachable = reachable
        if !reachable {
            guard state.connection.phase == .reconnecting else { return .none }
            let emission = Self.cancelReconnectTimer(&state)
            state.connection.phase = .offline
            return emission
        }
        guard state.connection.phase == .offline else { return .none }
        return Self.connectSelected(&state)
    }
}
