import XCTest
@testable import JcodeMobileCore

/// Journeys many specifications walk through on the way to what they specify:
/// pairing, opening and reopening the socket, the history arriving, a turn's
/// reply streaming in and ending. Each is a named fixture that still checks
/// every step as `SpecStore` does (literal state edits, effects, notes and
/// follow-ups) and reports failures at the caller's `file:line:`. Parameters
/// are only what really differs between callers; `also` closures add the
/// edits a caller's situation brings to a step (they are part of that step's
/// expected state, so they are asserted too).
extension SpecStore {
    // MARK: - Pairing

    /// `pairing_ready` submitted and paired: `pair_finished` hands over the
    /// token "tok", which goes to the secure store and opens a socket to
    /// devbox (the server is saved with the form's working directory); the
    /// socket is waiting to open.
    static func paired(file: StaticString = #filePath, line: UInt = #line) -> SpecStore {
        var store = SpecStore(.pairingReady, file: file, line: line)
        store.submitTheReadyForm(file: file, line: line)
        let pair = store.pendingID("http_pair", file: file, line: line)
        store.event(#"{"type":"pair_finished","effect_id":\#(pair),"ok":true,"token":"tok","server_name":"devbox"}"#, effects: [
            .secureStore(.write(key: "jcode.token.devbox.local:7643", value: "tok")),
            .webSocket(.connect(url: "ws://devbox.local:7643/ws", authToken: "tok")),
            .device(.haptic(style: .success)), .device(.registerPushNotifications),
        ], followUps: ["paired", "server_changed", "server_selected"], file: file, line: line) {
            $0["/pairing/is_submitting"] = false
            $0["/pairing/has_held_code"] = false
            $0["/servers"] = [[
                "id": "devbox.local:7643", "name": "devbox", "host": "devbox.local", "port": 7643, "use_tls": false, "server_version": nil,
                "working_dir": "/home/me/jcode", "last_session_id": nil, "working_dir_error": nil,
            ]]
            $0["/selected_server_id"] = "devbox.local:7643"
            $0["/connection/phase"] = "connecting"
            $0["/banners/status"] = "Connecting to devbox…"
        }
        return store
    }

    /// From `pairing_ready` after `submitTheReadyForm()`: the server refuses
    /// the code (401 "Invalid or expired pairing code"); an error haptic and
    /// banner, and the code is forgotten (`has_held_code` false).
    mutating func pairingRejected(file: StaticString = #filePath, line: UInt = #line) {
        let id = pendingID("http_pair", file: file, line: line)
        event(
            #"{"type":"pair_finished","effect_id":\#(id),"ok":false,"status":401,"error":"Invalid or expired pairing code"}"#,
            effects: [.device(.haptic(style: .error))], followUps: ["pairing_failed", "show_error"], file: file, line: line
        ) {
            $0["/pairing/is_submitting"] = false
            $0["/pairing/has_held_code"] = false
            $0["/connection/phase"] = "disconnected"
            $0["/banners/status"] = nil
            $0["/banners/error"] = ["message": "Invalid or expired pairing code", "retry_after_secs": nil, "text": "Invalid or expired pairing code"]
        }
    }

    /// From `pairing_ready` after `submitTheReadyForm()`: pairing fails for a
    /// reason other than the code (`answer`: the fields of `pair_finished`
    /// after `"ok":false`); an error haptic, the error banner `banner`, and
    /// the code is kept for a retry (the form can be submitted again).
    mutating func pairingFails(_ answer: String, banner: String, file: StaticString = #filePath, line: UInt = #line) {
        let id = pendingID("http_pair", file: file, line: line)
        event(
            #"{"type":"pair_finished","effect_id":\#(id),"ok":false,\#(answer)}"#,
            effects: [.device(.haptic(style: .error))], followUps: ["pairing_failed", "show_error"], file: file, line: line
        ) {
            $0["/pairing/is_submitting"] = false
            $0["/pairing/can_submit"] = true
            $0["/connection/phase"] = "disconnected"
            $0["/banners/status"] = nil
            $0["/banners/error"] = ["message": .string(banner), "retry_after_secs": nil, "text": .string(banner)]
        }
    }

    // MARK: - The socket

    /// After `paired()`: the first socket opens. It subscribes with the
    /// working directory and this device as the client instance (no session
    /// yet, so no `target_session_id`), asks for the history (requests 1 and
    /// 2), starts the keep-alive (`keepalive.1`, 20 s) and shows the chat,
    /// "Loading conversation…".
    mutating func openTheFirstSocket(file: StaticString = #filePath, line: UInt = #line) {
        let socket = pendingID("websocket_connect", file: file, line: line)
        event(#"{"type":"websocket_opened","effect_id":\#(socket)}"#, effects: [
            .webSocket(.send(#"{"id":1,"type":"subscribe","working_dir":"/home/me/jcode","client_instance_id":"fixture-device"}"#)),
            .webSocket(.send(#"{"id":2,"type":"get_history"}"#)),
            .timer(.schedule(timerID: "keepalive.1", afterMS: 20000, purpose: "keepalive")),
        ], followUps: ["socket_opened"], file: file, line: line) {
            $0["/screen"] = "chat"
            $0["/connection/phase"] = "connected"
            $0["/connection/socket_open"] = true
            $0["/banners/status"] = "Loading conversation…"
        }
    }

    /// The scheduled reconnect `timerID` fires: the socket to devbox is
    /// opened again with the fixture's token, and the banner says which
    /// `attempt` this is.
    mutating func fireTheReconnect(
        _ timerID: String = "reconnect.2", attempt: Int = 1, file: StaticString = #filePath, line: UInt = #line
    ) {
        event(
            #"{"type":"timer_fired","timer_id":"\#(timerID)"}"#,
            effects: [.webSocket(.connect(url: "ws://devbox.local:7643/ws", authToken: "fixture-token"))], file: file, line: line
        ) {
            $0["/connection/reconnect_delay_ms"] = nil
            $0["/banners/status"] = .string("Reconnecting to devbox (attempt \(attempt))…")
        }
    }

    /// A socket to a known session (`session`, by default `session-fox`) opens again: it subscribes
    /// to that session in `workingDir` (request 1), which brings the history
    /// (no `get_history`: one history per reconnect), checks with a `ping`
    /// (request 2) that the history came before its `pong`, and starts the
    /// keep-alive `keepalive`; connected, with the reason of the last drop
    /// cleared, the history not loaded yet and "Loading conversation…". The
    /// attempt count stays until the history arrives. `also`: what else the
    /// opened socket changes in the caller's situation (a notice that passes).
    mutating func resubscribe(
        keepalive: String, workingDir: String = "/home/me/jcode", session: String = "session-fox",
        file: StaticString = #filePath, line: UInt = #line,
        also: (inout ExpectedState) -> Void = { _ in }
    ) {
        let socket = pendingID("websocket_connect", file: file, line: line)
        event(#"{"type":"websocket_opened","effect_id":\#(socket)}"#, effects: [
            .webSocket(.send(#"{"id":1,"type":"subscribe","working_dir":"\#(workingDir)","target_session_id":"\#(session)","client_instance_id":"fixture-device"}"#)),
            .webSocket(.send(#"{"id":2,"type":"ping"}"#)),
            .timer(.schedule(timerID: keepalive, afterMS: 20000, purpose: "keepalive")),
        ], followUps: ["socket_opened"], file: file, line: line) {
            $0["/connection/phase"] = "connected"
            $0["/connection/socket_open"] = true
            $0["/connection/reason"] = nil
            $0["/session/history_loaded"] = false
            $0["/banners/status"] = "Loading conversation…"
            also(&$0)
        }
    }

    /// After `loseTheConnection()` (or `loseTheConnectionMidTurn()`): the
    /// reconnect `reconnect.2` fires (attempt 1) and the new socket opens and
    /// resubscribes, as `fireTheReconnect()` then `resubscribe(keepalive: "keepalive.3")`.
    mutating func reconnect(file: StaticString = #filePath, line: UInt = #line) {
        fireTheReconnect(file: file, line: line)
        resubscribe(keepalive: "keepalive.3", file: file, line: line)
    }

    /// `connected_chat` whose socket dropped and reconnected once: the new
    /// socket is open (its keep-alive is `keepalive.3`), `subscribe` went out
    /// as request 1 and the history has not arrived (attempt 1).
    static func reconnectedAndSubscribed(file: StaticString = #filePath, line: UInt = #line) -> SpecStore {
        var store = SpecStore(.connectedChat, file: file, line: line)
        store.loseTheConnection(file: file, line: line)
        store.reconnect(file: file, line: line)
        return store
    }

    /// The connection drops right after the server announced a reload: the
    /// keep-alive `keepalive.1` is cancelled and the reconnect (`reconnect.2`)
    /// comes after 0.5 s instead of the backoff's 1 s.
    mutating func loseTheConnectionAfterAReload(file: StaticString = #filePath, line: UInt = #line) {
        closeTheSocket(keepalive: "keepalive.1", reconnect: "reconnect.2", afterMS: 500, shown: "0.5 s", file: file, line: line) { _ in }
    }

    /// After `resubscribe(…)` to `session-fox`: the history answering the
    /// subscribe (request 1) arrives with no messages; the connection proved healthy, so the
    /// attempt count starts over, the history is loaded and the status banner
    /// goes. `also` states what else the empty history changes (the
    /// transcript it empties, for one).
    mutating func answerWithAnEmptyHistory(
        file: StaticString = #filePath, line: UInt = #line, also: (inout ExpectedState) -> Void = { _ in }
    ) {
        server(#"{"type":"history","id":1,"session_id":"session-fox","messages":[]}"#, file: file, line: line) {
            $0["/connection/attempt"] = 0
            $0["/session/history_loaded"] = true
            $0["/banners/status"] = nil
            also(&$0)
        }
    }

    // MARK: - Sessions

    /// `connected_chat` resumes `session-owl` ("Release notes"): this device
    /// is named as the client instance of `resume_session` (request 3),
    /// which brings the history itself (no `get_history`: one history per
    /// switch); a `ping` (request 4) checks that it came. The transcript
    /// empties and waits for that history, "Loading conversation…".
    /// `request`: the id `resume_session` takes (the ping takes the next); `also` states what else
    /// the switch changes (a turn shown ending, notices of the session left going).
    mutating func resumeTheOwlSession(
        request: Int = 3, notes: [String] = [], file: StaticString = #filePath, line: UInt = #line,
        also: (inout ExpectedState) -> Void = { _ in }
    ) {
        send(.resumeSession(id: "session-owl"), effects: [
            .webSocket(.send(#"{"id":\#(request),"type":"resume_session","session_id":"session-owl","client_instance_id":"fixture-device"}"#)),
            .webSocket(.send(#"{"id":\#(request + 1),"type":"ping"}"#)),
        ], notes: notes, followUps: ["open_chat", "session_switched", "send"], file: file, line: line) {
            $0.showsTheOwlSessionLoading()
            $0["/banners/status"] = "Loading conversation…"
            also(&$0)
        }
    }

    /// `clear_conversation` as request `request`; jcode answers with its
    /// fresh session's id (`session_otter_…`, listed, untitled: the chat
    /// calls it "Otter"), then `done` (client_session.rs,
    /// `handle_clear_session`): the transcript empties and the tokens are gone.
    mutating func clearIntoAFreshSession(
        request: Int = 3, file: StaticString = #filePath, line: UInt = #line, also: (inout ExpectedState) -> Void = { _ in }
    ) {
        send(.clearConversation, effects: [.webSocket(.send(#"{"id":\#(request),"type":"clear"}"#))], followUps: ["send"],
             file: file, line: line) {
            $0["/session/is_clearing"] = true
        }
        server(#"{"type":"session","session_id":"session_otter_1700000000001_0000000000000001"}"#, file: file, line: line) {
            $0["/session/id"] = "session_otter_1700000000001_0000000000000001"
            $0["/session/title"] = nil
            $0.append("/session/all_sessions", ["id": "session_otter_1700000000001_0000000000000001", "title": nil])
        }
        server(#"{"type":"done","id":\#(request)}"#, notes: ["done for clear"], followUps: ["clear_answered"], file: file, line: line) {
            $0["/transcript"] = []
            $0["/session/is_clearing"] = false
            $0["/session/total_tokens"] = nil
            also(&$0)
        }
    }

    /// Offline (after `loseTheConnection()`), a notification about
    /// session-owl is opened: the chat switches to it at once and the
    /// reconnect is tried now; its `subscribe` names the session, which
    /// resumes it.
    mutating func openTheOwlNotificationOffline(
        file: StaticString = #filePath, line: UInt = #line, also: (inout ExpectedState) -> Void = { _ in }
    ) {
        event(
            #"{"type":"push_notification_opened","payload":{"session_id":"session-owl"}}"#,
            effects: [
                .timer(.cancel(timerID: "reconnect.2")),
                .webSocket(.connect(url: "ws://devbox.local:7643/ws", authToken: "fixture-token")),
            ],
            notes: ["session session-owl is resumed when the connection is up"],
            followUps: ["open_chat", "session_asked_offline", "session_switched", "reconnect_asked"], file: file, line: line
        ) {
            $0.showsTheOwlSessionLoading()
            $0["/connection/reconnect_delay_ms"] = nil
            $0["/banners/status"] = "Reconnecting to devbox (attempt 1)…"
            also(&$0)
        }
    }

    /// The pong of ping `pong` came and no history before it: the core
    /// asks for the history (request `pong + 1`) and pings again (`pong + 2`).
    mutating func pongWithoutHistory(_ pong: Int, file: StaticString = #filePath, line: UInt = #line) {
        server(
            #"{"type":"pong","id":\#(pong)}"#,
            effects: [.webSocket(.send(#"{"id":\#(pong + 1),"type":"get_history"}"#)), .webSocket(.send(#"{"id":\#(pong + 2),"type":"ping"}"#))],
            notes: ["no history before the pong: asking for it"], file: file, line: line)
    }

    /// `connected_chat`: `clear_conversation` goes out (request 3), and "go",
    /// sent while the clear is unanswered, waits in the outbox (it would
    /// land in either session).
    static func clearingWithAMessageWaiting(file: StaticString = #filePath, line: UInt = #line) -> SpecStore {
        var store = SpecStore(.connectedChat, file: file, line: line)
        store.send(.clearConversation, effects: [.webSocket(.send(#"{"id":3,"type":"clear"}"#))], followUps: ["send"], file: file, line: line) {
            $0["/session/is_clearing"] = true
        }
        store.send(.sendMessage(text: "go"), notes: ["message queued in the outbox"], file: file, line: line) {
            $0.append("/outbox", outboxJSON("o1", "go", delivery: "waiting"))
        }
        return store
    }

    /// `input` answers perm-1, the only request waiting: its
    /// `permission_response` goes out as request `request` and the sheet
    /// closes; `followUps` are the ones the log names.
    mutating func answerTheOnlyPermission(
        _ input: Action, request: Int = 4, approved: Bool, remember: Bool, followUps: [String],
        file: StaticString = #filePath, line: UInt = #line
    ) {
        let response = #"{"id":\#(request),"type":"permission_response","request_id":"perm-1","approved":\#(approved),"remember":\#(remember)}"#
        send(input, effects: [.webSocket(.send(response))], followUps: followUps, file: file, line: line) {
            $0["/permission_requests"] = []
        }
    }

    // MARK: - A turn

    /// `turn_running` whose message o1 ("go", request 3) the server acked:
    /// it is received.
    static func turnRunningAndReceived(file: StaticString = #filePath, line: UInt = #line) -> SpecStore {
        var store = SpecStore.turnRunning(file: file, line: line)
        store.server(#"{"type":"ack","id":3}"#, file: file, line: line) { $0["/outbox/0/delivery"] = "received" }
        return store
    }

    /// The `done` (request `id` of another connection) of a turn this device
    /// did not start: the turn ends, and the core asks for the history
    /// (request `history`) to show it whole.
    mutating func doneOfATurnStartedElsewhere(
        id: Int, history: Int = 3, file: StaticString = #filePath, line: UInt = #line, also: (inout ExpectedState) -> Void = { _ in }
    ) {
        server(
            #"{"type":"done","id":\#(id)}"#, effects: [.webSocket(.send(#"{"id":\#(history),"type":"get_history"}"#))],
            notes: ["a turn this device did not start ended: asking for its history to show it whole"], followUps: ["turn_ended", "send"],
            file: file, line: line
        ) {
            $0["/session/is_processing"] = false
            also(&$0)
        }
    }

    /// After `turnRunning()`: the reply starts streaming, `text` its first
    /// delta; a streaming assistant entry `m5` is appended.
    mutating func startTheReply(_ text: String, file: StaticString = #filePath, line: UInt = #line) {
        server(#"{"type":"text_delta","text":"\#(text)"}"#, file: file, line: line) {
            $0.append("/transcript", entryJSON("m5", "assistant", text: text, isStreaming: true))
        }
    }

    /// After `turnRunning()`: the server's `done` for the message (request 3)
    /// ends the turn; `is_processing` goes false and the message leaves the
    /// outbox. `also` states what else the ended turn changes (a streaming
    /// entry closing, queued interrupts draining).
    mutating func finishTheTurn(
        file: StaticString = #filePath, line: UInt = #line, also: (inout ExpectedState) -> Void = { _ in }
    ) {
        server(#"{"type":"done","id":3}"#, followUps: ["turn_ended"], file: file, line: line) {
            $0["/session/is_processing"] = false
            $0["/outbox"] = []
            also(&$0)
        }
    }

    /// After `turnRunning()`, its turn over: the next message `text` goes out
    /// as request 4; the user entry `m5` and the outbox entry `o2` (awaiting
    /// its ack) are appended and a turn runs again. `also` states what else
    /// the new turn changes (the last turn's tokens clearing, for one).
    mutating func sendTheNextMessage(
        _ text: String, file: StaticString = #filePath, line: UInt = #line, also: (inout ExpectedState) -> Void = { _ in }
    ) {
        send(.sendMessage(text: text), effects: [.webSocket(.send(#"{"id":4,"type":"message","content":"\#(text)"}"#))], followUps: ["send"], file: file, line: line) {
            $0.append("/transcript", entryJSON("m5", "user", text: text))
            $0.append("/outbox", outboxJSON("o2", text, delivery: "awaiting_ack"))
            $0["/session/is_processing"] = true
            also(&$0)
        }
    }

    /// After `turnRunning()`, before anything else is queued: `text` is
    /// queued as a soft interrupt (request 4, not urgent); its bubble `m5`
    /// is appended, queued, and it is the one pending soft interrupt.
    mutating func queueTheFirstInterrupt(_ text: String, file: StaticString = #filePath, line: UInt = #line) {
        send(
            .queueInterrupt(text: text, urgent: false),
            effects: [.webSocket(.send(#"{"id":4,"type":"soft_interrupt","content":"\#(text)","urgent":false}"#))], followUps: ["send"],
            file: file, line: line
        ) {
            $0.append("/transcript", entryJSON("m5", "user", text: text, isQueued: true))
            $0["/soft_interrupts"] = [["entry_id": "m5", "content": .string(text), "urgent": false]]
        }
    }
}

extension SimulatedWorld {
    /// A simulated app and server, paired and connected: the person paired
    /// through the form (`pair()`), the socket opened and subscribed, and the
    /// connection phase is `connected`.
    static func connected(file: StaticString = #filePath, line: UInt = #line) -> SimulatedWorld {
        let world = SimulatedWorld()
        world.pair()
        XCTAssertEqual(world.driver.state.at("/connection/phase"), "connected", file: file, line: line)
        return world
    }
}

extension SpecStore {
    /// The person names the device and the server's working directory, then
    /// scans a complete pairing link (code 654321): the form fills from it
    /// and pairing starts at once, with the address the link gave.
    mutating func scanACompletePairingLink(
        _ payload: String, workingDir: String, pairs address: ServerAddress, form host: String, port: String,
        status: String, file: StaticString = #filePath, line: UInt = #line
    ) {
        send(.setDeviceName("Test iPhone"), file: file, line: line) { $0["/pairing/device_name"] = "Test iPhone" }
        send(.setWorkingDir(workingDir, serverID: nil), file: file, line: line) { $0["/pairing/working_dir"] = .string(workingDir) }
        event(
            #"{"type":"qr_payload_scanned","payload":"\#(payload)"}"#,
            effects: [.http(.pair(
                host: address.host, port: address.port, useTLS: address.useTLS, code: "654321", deviceID: "fixture-device",
                deviceName: "Test iPhone", apnsToken: nil))],
            followUps: ["pairing_link_scanned", "pairing_started"], file: file, line: line
        ) {
            $0["/pairing/host"] = .string(host)
            $0["/pairing/port"] = .string(port)
            $0["/pairing/has_held_code"] = true
            $0["/pairing/is_submitting"] = true
            $0["/connection/phase"] = "pairing"
            $0["/banners/status"] = .string(status)
        }
    }
}
