import XCTest
@testable import JcodeMobileCore
@testable import JcodeMobileJSON

final class ConnectionTests: XCTestCase {
    /// The effect id of the socket a fixture already has open (from `/pending_effects`).
    private func openSocket(of store: SpecStore, file: StaticString = #filePath, line: UInt = #line) -> Int {
        let pending = store["/pending_effects"]?.arrayValue ?? []
        guard let entry = pending.first(where: { $0.at("/type") == "websocket_connect" }),
              case .int(let id)? = entry.at("/effect_id")
        else {
            XCTFail("no websocket_connect in /pending_effects", file: file, line: line)
            return -1
        }
        return Int(id)
    }

    /// `network_reconnect` whose reconnect is refused with 401: the token is
    /// forgotten (in memory and in the secure store) and reconnecting stops.
    private func tokenRejected(file: StaticString = #filePath, line: UInt = #line) -> SpecStore {
        var store = SpecStore(.networkReconnect, file: file, line: line)
        store.fireTheReconnect(file: file, line: line)
        let socket = store.pendingID("websocket_connect", file: file, line: line)
        store.event(
            #"{"type":"websocket_failed","effect_id":\#(socket),"error":"Unauthorized","status":401}"#,
            // The servers feature deletes the token while the follow-up `credentials_rejected`
            // runs, which comes before the connection's haptic in the same step.
            effects: [.secureStore(.delete(key: "jcode.token.devbox.local:7643")), .device(.haptic(style: .error))],
            followUps: ["credentials_rejected", "connection_lost"], file: file, line: line
        ) {
            $0["/connection/phase"] = "failed"
            $0["/connection/reason"] = "This device is no longer paired with the server. Re-pair to reconnect."
            $0["/banners/status"] = "This device is no longer paired with the server. Re-pair to reconnect."
        }
        return store
    }

    func testOpeningTheSocketSubscribesAsksForHistoryStartsTheKeepAliveAndShowsTheChat() {
        var store = SpecStore.paired()
        // In the foreground, the keep-alive ping is scheduled every 20 s (`keepalive.1`).
        store.openTheFirstSocket()
        XCTAssertEqual(store.node("banner.status")?.label, "Loading conversation…")
        // Request 1 was the subscribe: its `done` does not end a turn.
        store.server(#"{"type":"done","id":1}"#, notes: ["done for subscribe"])
        // The next request on this socket is number 3.
        store.send(.setModel("gpt-5"), effects: [.webSocket(.send(#"{"id":3,"type":"set_model","model":"gpt-5"}"#))], followUps: ["send"]) {
            $0["/session/pending_model"] = "gpt-5"
        }
    }

    func testHistoryFillsTheChat() {
        var store = SpecStore(.connectedEmptyChat)
        store.server(
            #"{"type":"history","id":2,"session_id":"session-fox","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"Hello!","tool_calls":["grep"]},{"role":"tool","content":"found it","tool_data":{"id":"call_1","name":"grep","input":{"pattern":"x"}}},{"role":"assistant","content":""},{"role":"background_task","content":"build finished"}],"provider_model":"gpt-5","all_sessions":["session-fox","session-new"],"total_tokens":[10,20]}"#
        ) {
            $0["/transcript"] = [
                entryJSON("m1", "user", text: "hi"),
                entryJSON("m2", "assistant", text: "Hello!", toolCalls: [
                    toolCallJSON("call_1", "grep", input: #"{"pattern":"x"}"#, output: "found it", status: "succeeded")
                ]),
                entryJSON("m3", "background_task", text: "build finished"),
            ]
            $0["/session/model"] = "gpt-5"
            $0["/session/all_sessions"] = [["id": "session-fox", "title": "Fix the flaky test"], ["id": "session-new", "title": nil]]
            $0["/session/total_tokens"] = ["input": 10, "output": 20, "cache_read_input": nil, "cache_creation_input": nil]
        }
    }

    func testHistoryTokenTotalsGivenAsAnObjectAreRead() {
        // The fixture's history gave the totals as an array: [48210, 3120].
        var store = SpecStore(.connectedEmptyChat)
        store.frame(#"{"type":"history","id":2,"session_id":"session-fox","messages":[],"total_tokens":{"input":51234,"output":3456}}"#) {
            $0["/session/total_tokens"] = ["input": 51234, "output": 3456, "cache_read_input": nil, "cache_creation_input": nil]
        }
        store.send(.navigate(.settings)) { $0["/screen"] = "settings" }
        XCTAssertEqual(store.node("settings.tokens")?.value, "51234 in · 3456 out")
    }

    func testADroppedConnectionReconnectsWithExponentialBackoffCappedAt30Seconds() {
        var store = SpecStore(.connectedEmptyChat)
        let expected: [(delay: Int, shown: String)] = [
            (1000, "1 s"), (2000, "2 s"), (4000, "4 s"), (8000, "8 s"), (16000, "16 s"), (30000, "30 s"), (30000, "30 s"),
        ]
        var socket = openSocket(of: store)
        var delays: [JSONValue] = []
        for (index, step) in expected.enumerated() {
            let attempt = index + 1
            let closed = attempt == 1
                ? #"{"type":"websocket_closed","effect_id":\#(socket),"code":1006}"#
                : #"{"type":"websocket_failed","effect_id":\#(socket),"error":"timed out"}"#
            // Timer ids share one counter: the fixture's keep-alive was keepalive.1, so
            // attempt N is reconnect.N+1; the first drop cancels the keep-alive first.
            let reconnect = Effect.timer(.schedule(timerID: "reconnect.\(attempt + 1)", afterMS: step.delay, purpose: "reconnect"))
            let effects = attempt == 1 ? [.timer(.cancel(timerID: "keepalive.1")), reconnect] : [reconnect]
            store.event(closed, effects: effects, followUps: ["connection_lost"]) {
                $0["/connection/phase"] = "reconnecting"
                $0["/connection/attempt"] = .int(Int64(attempt))
                $0["/connection/socket_open"] = false
                $0["/connection/reason"] = attempt == 1 ? "Connection closed (code 1006)" : "Connection failed: timed out"
                $0["/connection/reconnect_delay_ms"] = .int(Int64(step.delay))
                $0["/banners/status"] = .string("Connection lost, retrying in \(step.shown) (attempt \(attempt))")
            }
            delays.append(store["/connection/reconnect_delay_ms"] ?? .null)
            store.fireTheReconnect("reconnect.\(attempt + 1)", attempt: attempt)
            socket = store.pendingID("websocket_connect")
        }
        XCTAssertEqual(delays, [1000, 2000, 4000, 8000, 16000, 30000, 30000])
        // An open socket is not yet a healthy connection: a server that
        // accepts and then closes must still see the backoff grow.
        store.resubscribe(keepalive: "keepalive.9")
        // The history loaded: the connection proved healthy, and the backoff starts over.
        store.answerWithAnEmptyHistory()
        // The next drop starts again at 1 s.
        store.loseTheConnection(keepalive: "keepalive.9", reconnect: "reconnect.10")
    }

    func testAfterReloadingTheReconnectComesAfterHalfASecondOnce() {
        var store = SpecStore(.connectedChat)
        store.server(#"{"type":"reloading"}"#, followUps: ["notice"]) {
            $0.append("/notices", ["id": "n1", "kind": "info", "text": "Server is updating, reconnecting shortly"])
        }
        store.loseTheConnectionAfterAReload()
        store.fireTheReconnect()
        // The short delay was for that reload only: the next failure backs off as usual.
        let retry = store.pendingID("websocket_connect")
        store.event(#"{"type":"websocket_failed","effect_id":\#(retry),"error":"timed out"}"#, effects: [.timer(.schedule(timerID: "reconnect.3", afterMS: 2000, purpose: "reconnect"))], followUps: ["connection_lost"]) {
            $0["/connection/attempt"] = 2
            $0["/connection/reason"] = "Connection failed: timed out"
            $0["/connection/reconnect_delay_ms"] = 2000
            $0["/banners/status"] = "Connection lost, retrying in 2 s (attempt 2)"
        }
    }

    func testARejectedTokenStopsReconnectingForgetsTheTokenAndAsksToRepair() {
        var store = tokenRejected()
        XCTAssertEqual(store["/connection/reason"], "This device is no longer paired with the server. Re-pair to reconnect.")
        XCTAssertEqual(store.node("banner.status")?.label, "This device is no longer paired with the server. Re-pair to reconnect.")
        XCTAssertEqual(store.node("connection.repair")?.visible, true)
        XCTAssertEqual(store.node("connection.retry")?.visible, false)
        // The token is gone from memory: retrying has to read the keychain.
        store.send(.retryConnection, effects: [.secureStore(.read(key: "jcode.token.devbox.local:7643"))], followUps: ["credentials_needed"]) {
            $0["/connection/phase"] = "reconnecting"
            $0["/banners/status"] = "Reconnecting to devbox (attempt 1)…"
        }
    }

    func testASessionClosedByTheServerClosesTheSocketAndIsNotReconnected() {
        var store = SpecStore(.connectedChat)
        let socket = openSocket(of: store)
        // Today's jcode keeps its end open and waits for the client to go.
        store.server(
            #"{"type":"session_close_requested","reason":"Session was taken over by another client"}"#,
            effects: [.webSocket(.close), .timer(.cancel(timerID: "keepalive.1"))], followUps: ["connection_lost", "show_error"]
        ) {
            $0["/connection/phase"] = "failed"
            $0["/connection/reason"] = "Session was taken over by another client"
            $0["/connection/socket_open"] = false
            $0["/banners/status"] = "Session was taken over by another client"
            $0["/banners/error"] = ["message": "Session was taken over by another client", "retry_after_secs": nil, "text": "Session was taken over by another client"]
        }
        store.event(
            #"{"type":"websocket_closed","effect_id":\#(socket)}"#,
            notes: ["websocket_closed for effect \(socket), which is not the current socket; ignored"])
        XCTAssertEqual(store.node("connection.retry")?.visible, true, "reconnecting is left to the person")
    }

    func testEventsOfAReplacedSocketAreIgnored() {
        var store = SpecStore(.connectedChat)
        let old = openSocket(of: store)
        // Effects 1 and 2 were http_pair and secure_store_write (no storage_write of the servers any more).
        XCTAssertEqual(old, 3)
        store.send(.disconnect, effects: [.webSocket(.close), .timer(.cancel(timerID: "keepalive.1"))], followUps: ["connection_lost"]) {
            $0["/connection/phase"] = "disconnected"
            $0["/connection/socket_open"] = false
            $0["/banners/status"] = "Disconnected from devbox"
        }
        store.event(
            #"{"type":"websocket_event","effect_id":\#(old),"event":{"type":"text_delta","text":"late"}}"#,
            notes: ["websocket_event for effect 3, which is not the current socket; ignored"])
        // A person who disconnected stays disconnected.
        store.event(
            #"{"type":"websocket_closed","effect_id":\#(old)}"#,
            notes: ["websocket_closed for effect 3, which is not the current socket; ignored"])
    }

    func testALostNetworkPausesReconnectingUntilItReturns() {
        var store = SpecStore(.networkReconnect)
        store.event(#"{"type":"network_reachability_changed","reachable":false}"#, effects: [.timer(.cancel(timerID: "reconnect.2"))]) {
            $0["/lifecycle/network_reachable"] = false
            $0["/connection/phase"] = "offline"
            $0["/connection/reconnect_delay_ms"] = nil
            $0["/banners/status"] = "Offline: waiting for the network"
        }
        XCTAssertEqual(store.node("banner.status")?.label, "Offline: waiting for the network")
        store.event(#"{"type":"network_reachability_changed","reachable":true}"#, effects: [.webSocket(.connect(url: "ws://devbox.local:7643/ws", authToken: "fixture-token"))]) {
            $0["/lifecycle/network_reachable"] = true
            $0["/connection/phase"] = "reconnecting"
            $0["/banners/status"] = "Reconnecting to devbox (attempt 1)…"
        }
    }

    func testRetryingNowCancelsTheScheduledReconnect() {
        var store = SpecStore(.networkReconnect)
        store.send(.retryConnection, effects: [.timer(.cancel(timerID: "reconnect.2")), .webSocket(.connect(url: "ws://devbox.local:7643/ws", authToken: "fixture-token"))]) {
            $0["/connection/reconnect_delay_ms"] = nil
            $0["/banners/status"] = "Reconnecting to devbox (attempt 1)…"
        }
        store.event(#"{"type":"timer_fired","timer_id":"reconnect.2"}"#, notes: ["stale timer reconnect.2 ignored"])
    }

    func testFramesWithSeveralEventsApplyEachAndDropOnlyTheMalformedOnes() {
        var store = SpecStore.turnRunning()
        let frame = [
            #"{"type":"text_delta","text":"one "}"#, "{not json", #"{"type":"sparkles","x":1}"#, "",
            #"{"type":"text_delta"}"#, #"{"type":"text_delta","text":"two"}"#, "   ",
        ].joined(separator: "\n")
        let line = JSONValue.string(frame).jsonString
        store.event(#"{"type":"websocket_event","line":\#(line)}"#, notes: [
            "malformed line 2 dropped: expected a string key in an object at byte 1",
            "unknown server event type \"sparkles\" ignored",
            "malformed server event dropped: missing required field \"text\"",
        ]) {
            $0.append("/transcript", entryJSON("m5", "assistant", text: "one two", isStreaming: true))
        }
    }

    func testSelectingASavedServerReadsItsTokenFromTheKeychainWhenNotInMemory() {
        // The rejected token is no longer in memory.
        var store = tokenRejected()
        store.send(.selectServer(id: "devbox.local:7643"), effects: [.secureStore(.read(key: "jcode.token.devbox.local:7643"))], followUps: ["server_selected"]) {
            $0["/connection/phase"] = "connecting"
            $0["/connection/attempt"] = 0
            $0["/connection/reason"] = nil
            $0["/banners/status"] = "Connecting to devbox…"
        }
        let read = store.pendingID("secure_store_read")
        store.event(#"{"type":"secure_store_read_finished","effect_id":\#(read),"key":"jcode.token.devbox.local:7643","ok":true,"value":"kc-token"}"#,
                    effects: [.webSocket(.connect(url: "ws://devbox.local:7643/ws", authToken: "kc-token"))], followUps: ["credentials_loaded"])
        // The token read is now in memory: a retry connects with it straight away.
        store.send(.retryConnection, effects: [.webSocket(.close), .webSocket(.connect(url: "ws://devbox.local:7643/ws", authToken: "kc-token"))])
    }

    func testForgettingTheSelectedServerClosesEverythingAndReturnsToPairing() {
        var store = SpecStore(.connectedChat)
        store.send(.forgetServer(id: "devbox.local:7643"), effects: [
            .webSocket(.close), .timer(.cancel(timerID: "keepalive.1")), .secureStore(.delete(key: "jcode.token.devbox.local:7643")),
        ], followUps: ["server_changed"]) {
            $0["/screen"] = "onboarding"
            $0["/connection"] = ["phase": "disconnected", "attempt": 0, "reason": nil, "socket_open": false, "reconnect_delay_ms": nil]
            $0["/servers"] = []
            $0["/selected_server_id"] = nil
            $0["/session"] = [
                "id": nil, "title": nil, "all_sessions": [], "model": nil, "pending_model": nil, "provider": nil,
                "available_models": [], "reasoning_effort": nil, "pending_reasoning_effort": nil, "server_version": nil,
                "tokens": nil, "total_tokens": nil, "connection_type": nil, "upstream_provider": nil, "was_interrupted": false,
                "is_processing": false, "is_reasoning": false, "server_phase": nil,
                "status_detail": nil, "history_loaded": false, "is_compacting": false,
                "rename_draft": nil, "pending_rename": nil, "is_clearing": false,
            ]
            $0["/transcript"] = []
        }
    }
}
