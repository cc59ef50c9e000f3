import XCTest
@testable import JcodeMobileCore

final class ConnectionTests: XCTestCase {
    /// Paired with devbox and waiting for the socket to open.
    private func paired() -> TestStore {
        var store = TestStore(.pairingReady)
        store.submitTheReadyForm()
        let id = store.pendingID("http_pair")
        store.event(#"{"type":"pair_finished","effect_id":\#(id),"ok":true,"token":"tok","server_name":"devbox"}"#, effects: [
            .secureStore(.write(key: "jcode.token.devbox.local:7643", value: "tok")),
            .storage(.write(key: "servers", value: [["id": "devbox.local:7643", "name": "devbox", "host": "devbox.local", "port": 7643, "use_tls": false, "server_version": nil]])),
            .webSocket(.connect(url: "ws://devbox.local:7643/ws", authToken: "tok")),
            .device(.haptic(style: .success)), .device(.registerPushNotifications),
        ]) {
            $0.pairing.isSubmitting = false
            $0.pairing.heldCode = nil
            $0.servers = [SavedServer(address: ServerAddress(host: "devbox.local", port: 7643, useTLS: false), name: "devbox")]
            $0.selectedServerID = "devbox.local:7643"
            $0.credentials["devbox.local:7643"] = "tok"
            $0.connection.phase = .connecting
        }
        return store
    }

    func testOpeningTheSocketSubscribesAndAsksForHistory() {
        var store = paired()
        let socket = store.pendingID("websocket_connect")
        store.event(#"{"type":"websocket_opened","effect_id":\#(socket)}"#, effects: [
            .webSocket(.send(#"{"id":1,"type":"subscribe"}"#)), .webSocket(.send(#"{"id":2,"type":"get_history"}"#)),
        ]) {
            $0.connection.phase = .connected
            $0.connection.isSocketOpen = true
            $0.connection.socketEffectID = EffectID(socket)
            $0.connection.nextRequestID = 3
            $0.connection.subscribeRequestID = 1
            $0.connection.historyRequestID = 2
            $0.screen = .chat
        }
        XCTAssertEqual(store.state.statusBanner, "Loading conversation…")
    }

    func testHistoryFillsTheChat() {
        var store = TestStore(.connectedEmptyChat)
        store.server(
            #"{"type":"history","id":2,"session_id":"session-fox","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"Hello!"},{"role":"tool","content":"ignored"},{"role":"assistant","content":""}],"provider_model":"gpt-5","all_sessions":["session-fox","session-new"],"total_tokens":[10,20]}"#
        ) {
            $0.transcript.replaceAll(with: [
                TranscriptEntry(serial: 0, role: .user, text: "hi"), TranscriptEntry(serial: 0, role: .assistant, text: "Hello!"),
            ])
            $0.session.model = "gpt-5"
            $0.session.allSessions = [SessionSummary(id: "session-fox", title: "Fix the flaky test"), SessionSummary(id: "session-new", title: nil)]
            $0.session.totalTokens = TokenUsage(input: 10, output: 20)
            $0.connection.historyRequestID = nil
        }
    }

    func testADroppedConnectionReconnectsWithExponentialBackoffCappedAt30Seconds() {
        var store = TestStore(.connectedChat)
        var expectedDelays: [Int] = []
        var delays: [Int] = []
        for attempt in 1...7 {
            let socket = store.state.connection.socketEffectID?.rawValue ?? store.pendingID("websocket_connect")
            let closed = attempt == 1
                ? #"{"type":"websocket_closed","effect_id":\#(socket),"code":1006}"#
                : #"{"type":"websocket_failed","effect_id":\#(socket),"error":"timed out"}"#
            let delay = min(1000 << (attempt - 1), 30_000)
            expectedDelays.append(delay)
            store.event(closed, effects: [.timer(.schedule(timerID: "reconnect.\(attempt)", afterMS: delay, purpose: "reconnect"))]) {
                $0.connection.phase = .reconnecting
                $0.connection.attempt = attempt
                $0.connection.socketEffectID = nil
                $0.connection.isSocketOpen = false
                $0.connection.reason = attempt == 1 ? "Connection closed (code 1006)" : "Connection failed: timed out"
                $0.connection.reconnectTimerID = "reconnect.\(attempt)"
                $0.connection.reconnectDelayMS = delay
                $0.connection.nextTimerSerial = attempt + 1
            }
            delays.append(store.state.connection.reconnectDelayMS ?? -1)
            store.event(#"{"type":"timer_fired","timer_id":"reconnect.\#(attempt)"}"#, effects: [.webSocket(.connect(url: "ws://devbox.local:7643/ws", authToken: "fixture-token"))]) {
                $0.connection.reconnectTimerID = nil
                $0.connection.reconnectDelayMS = nil
            }
        }
        XCTAssertEqual(delays, [1000, 2000, 4000, 8000, 16000, 30000, 30000])
        XCTAssertEqual(delays, expectedDelays)
        // Success resets the backoff.
        let socket = store.pendingID("websocket_connect")
        store.event(#"{"type":"websocket_opened","effect_id":\#(socket)}"#, effects: [
            .webSocket(.send(#"{"id":1,"type":"subscribe","target_session_id":"session-fox"}"#)), .webSocket(.send(#"{"id":2,"type":"get_history"}"#)),
        ]) {
            $0.connection.phase = .connected
            $0.connection.attempt = 0
            $0.connection.reason = nil
            $0.connection.isSocketOpen = true
            $0.connection.socketEffectID = EffectID(socket)
            $0.connection.nextRequestID = 3
            $0.connection.historyRequestID = 2
            $0.session.historyLoaded = false
        }
    }

    func testAfterReloadingTheReconnectComesAfterHalfASecond() {
        var store = TestStore(.connectedChat)
        store.server(#"{"type":"reloading"}"#) {
            $0.connection.reconnectSoon = true
            $0.addNotice(.info, "Server is updating, reconnecting shortly")
        }
        let socket = store.state.connection.socketEffectID!.rawValue
        store.event(#"{"type":"websocket_closed","effect_id":\#(socket)}"#, effects: [.timer(.schedule(timerID: "reconnect.1", afterMS: 500, purpose: "reconnect"))]) {
            $0.connection.reconnectSoon = false
            $0.connection.phase = .reconnecting
            $0.connection.attempt = 1
            $0.connection.socketEffectID = nil
            $0.connection.isSocketOpen = false
            $0.connection.reason = "Connection closed"
            $0.connection.reconnectTimerID = "reconnect.1"
            $0.connection.reconnectDelayMS = 500
            $0.connection.nextTimerSerial = 2
        }
    }

    func testARejectedTokenStopsReconnectingAndAsksToRepair() {
        var store = TestStore(.networkReconnect)
        store.event(#"{"type":"timer_fired","timer_id":"reconnect.1"}"#, effects: [.webSocket(.connect(url: "ws://devbox.local:7643/ws", authToken: "fixture-token"))]) {
            $0.connection.reconnectTimerID = nil
            $0.connection.reconnectDelayMS = nil
        }
        let socket = store.pendingID("websocket_connect")
        store.event(#"{"type":"websocket_failed","effect_id":\#(socket),"error":"Unauthorized","status":401}"#, effects: [.device(.haptic(style: .error))]) {
            $0.connection.phase = .failed
            $0.connection.reason = "This device is no longer paired with the server. Re-pair to reconnect."
            $0.credentials["devbox.local:7643"] = nil
        }
        XCTAssertEqual(store.state.statusBanner, "This device is no longer paired with the server. Re-pair to reconnect.")
        XCTAssertNotNil(store.state.connection.reason)
        let tree = SemanticTree.build(store.state)
        XCTAssertEqual(tree.find("connection.repair")?.visible, true)
        XCTAssertEqual(tree.find("connection.retry")?.visible, false)
    }

    func testASessionClosedByTheServerIsNotReconnected() {
        var store = TestStore(.connectedChat)
        store.server(#"{"type":"session_close_requested","reason":"Session was taken over by another client"}"#) {
            $0.connection.closedByServer = "Session was taken over by another client"
            $0.errorBanner = ErrorBanner(message: "Session was taken over by another client")
        }
        let socket = store.state.connection.socketEffectID!.rawValue
        store.event(#"{"type":"websocket_closed","effect_id":\#(socket)}"#) {
            $0.connection.phase = .failed
            $0.connection.reason = "Session was taken over by another client"
            $0.connection.socketEffectID = nil
            $0.connection.isSocketOpen = false
        }
    }

    func testEventsOfAReplacedSocketAreIgnored() {
        var store = TestStore(.connectedChat)
        let old = store.state.connection.socketEffectID!.rawValue
        store.send(.disconnect, effects: [.webSocket(.close)]) {
            $0.connection.phase = .disconnected
            $0.connection.socketEffectID = nil
            $0.connection.isSocketOpen = false
        }
        store.event(#"{"type":"websocket_event","effect_id":\#(old),"event":{"type":"text_delta","text":"late"}}"#) { _ in }
        XCTAssertEqual(store.lastNotes, ["websocket_event for effect \(old), which is not the current socket; ignored"])
        store.event(#"{"type":"websocket_closed","effect_id":\#(old)}"#) { _ in }
        XCTAssertEqual(store.state.connection.phase, .disconnected, "a person who disconnected stays disconnected")
    }

    func testALostNetworkPausesReconnectingUntilItReturns() {
        var store = TestStore(.networkReconnect)
        store.event(#"{"type":"network_reachability_changed","reachable":false}"#, effects: [.timer(.cancel(timerID: "reconnect.1"))]) {
            $0.lifecycle.isNetworkReachable = false
            $0.connection.phase = .offline
            $0.connection.reconnectTimerID = nil
            $0.connection.reconnectDelayMS = nil
        }
        XCTAssertEqual(store.state.statusBanner, "Offline: waiting for the network")
        store.event(#"{"type":"network_reachability_changed","reachable":true}"#, effects: [.webSocket(.connect(url: "ws://devbox.local:7643/ws", authToken: "fixture-token"))]) {
            $0.lifecycle.isNetworkReachable = true
            $0.connection.phase = .reconnecting
        }
    }

    func testRetryingNowCancelsTheScheduledReconnect() {
        var store = TestStore(.networkReconnect)
        store.send(.retryConnection, effects: [.timer(.cancel(timerID: "reconnect.1")), .webSocket(.connect(url: "ws://devbox.local:7643/ws", authToken: "fixture-token"))]) {
            $0.connection.reconnectTimerID = nil
            $0.connection.reconnectDelayMS = nil
        }
        store.event(#"{"type":"timer_fired","timer_id":"reconnect.1"}"#) { _ in }
        XCTAssertEqual(store.lastNotes, ["stale timer reconnect.1 ignored"])
    }

    func testFramesWithSeveralEventsApplyEachAndDropOnlyTheMalformedOnes() {
        var store = TestStore(.connectedChat)
        store.send(.sendMessage(text: "go"), effects: [.webSocket(.send(#"{"id":3,"type":"message","content":"go"}"#))]) {
            $0.transcript.append(role: .user, text: "go")
            $0.session.isProcessing = true
            $0.connection.nextRequestID = 4
            $0.nextOutboxID += 1
        }
        let frame = [
            #"{"type":"text_delta","text":"one "}"#, "{not json", #"{"type":"sparkles","x":1}"#, "",
            #"{"type":"text_delta"}"#, #"{"type":"text_delta","text":"two"}"#, "   ",
        ].joined(separator: "\n")
        let line = JSONValue.string(frame).jsonString
        store.event(#"{"type":"websocket_event","line":\#(line)}"#) {
            let i = $0.transcript.streamingAssistant()
            $0.transcript.appendText("one ", at: i)
            $0.transcript.appendText("two", at: i)
        }
        XCTAssertEqual(store.lastNotes, [
            "malformed line 2 dropped: expected a string key in an object at byte 1",
            "unknown server event type \"sparkles\" ignored",
            "malformed server event dropped: missing required field \"text\"",
        ])
    }

    func testSelectingASavedServerReadsItsTokenFromTheKeychainWhenNotInMemory() {
        var state = Scenario.networkReconnect.state()
        state.credentials["devbox.local:7643"] = nil
        state.connection = ConnectionState()
        state.effects = EffectLedger()
        var store = TestStore(state: state)
        store.send(.selectServer(id: "devbox.local:7643"), effects: [.secureStore(.read(key: "jcode.token.devbox.local:7643"))]) {
            $0.connection.phase = .connecting
        }
        let read = store.pendingID("secure_store_read")
        store.event(#"{"type":"secure_store_read_finished","effect_id":\#(read),"key":"jcode.token.devbox.local:7643","ok":true,"value":"kc-token"}"#,
                    effects: [.webSocket(.connect(url: "ws://devbox.local:7643/ws", authToken: "kc-token"))]) {
            $0.credentials["devbox.local:7643"] = "kc-token"
        }
    }

    func testForgettingTheSelectedServerClosesEverythingAndReturnsToPairing() {
        var store = TestStore(.connectedChat)
        store.send(.forgetServer(id: "devbox.local:7643"), effects: [
            .webSocket(.close), .secureStore(.delete(key: "jcode.token.devbox.local:7643")), .storage(.write(key: "servers", value: [])),
        ]) {
            $0.servers = []
            $0.selectedServerID = nil
            $0.credentials["devbox.local:7643"] = nil
            $0.connection = ConnectionState()
            $0.resetSession()
            $0.screen = .onboarding
        }
    }
}
