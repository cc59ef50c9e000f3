import XCTest
@testable import JcodeMobileCore

/// Specifications of how the core follows today's jcode server: the working
/// directory every connection must name, the connection rules around
/// `subscribe`, `session_close_requested` and backoff, pairing links, and
/// approvals across connections. History, events and turn bookkeeping are in
/// `TodaysServerHistoryTests.swift` and `TodaysServerTurnTests.swift`.
final class TodaysServerTests: XCTestCase {
    static let notAbsolute = "The working directory must be an absolute path on the server, starting with / (e.g. /home/you/project)."
    static let missing = "Enter the folder on the server where jcode should work, e.g. /home/you/project."

    // MARK: - Working directory

    func testThePairingFormNeedsAnAbsoluteWorkingDirectory() {
        var store = SpecStore(.pairingReady)
        XCTAssertEqual(store.node("pair.working_dir")?.value, "/home/me/jcode")
        // Dispatched as hosts do: no server_id, so it edits the form.
        store.dispatch(#"{"type":"set_working_dir","value":"projects/jcode"}"#) {
            $0["/pairing/working_dir"] = "projects/jcode"
            $0["/pairing/can_submit"] = false
            $0["/pairing/errors/working_dir"] = .string(Self.notAbsolute)
        }
        XCTAssertEqual(store.node("pair.working_dir")?.value, "projects/jcode")
        XCTAssertEqual(store.node("pair.working_dir.error")?.label, Self.notAbsolute)
        // Emptied: no message until a submit attempt.
        store.dispatch(#"{"type":"set_working_dir","value":""}"#) {
            $0["/pairing/working_dir"] = ""
            $0["/pairing/errors/working_dir"] = nil
        }
        store.send(.submitPairing, notes: ["pairing form is incomplete: working_dir"]) {
            $0["/pairing/errors/working_dir"] = .string(Self.missing)
        }
        XCTAssertEqual(store.node("pair.working_dir.error")?.label, Self.missing)
        // A Windows drive path is absolute too.
        store.dispatch(#"{"type":"set_working_dir","value":"C:\\work\\jcode"}"#) {
            $0["/pairing/working_dir"] = "C:\\work\\jcode"
            $0["/pairing/can_submit"] = true
            $0["/pairing/errors/working_dir"] = nil
        }
        XCTAssertNil(store.node("pair.working_dir.error"))
    }

    func testPairingSavesTheWorkingDirectoryAndSubscribeNamesItWithTheDeviceID() {
        // `paired()` saves the server with the form's working directory (persisted
        // with the app's snapshot, no storage_write of its own); the first
        // socket's subscribe names it and this device.
        var store = SpecStore.paired()
        store.openTheFirstSocket()
    }

    func testResumingASessionNamesThisDeviceAsTheClientInstance() {
        var store = SpecStore(.connectedChat)
        store.resumeTheOwlSession()
    }

    func testARefusedWorkingDirectoryEditKeepsTheOldOneAndSaysWhyInSettings() {
        var store = SpecStore(.connectedChat)
        store.send(.navigate(.settings)) { $0["/screen"] = "settings" }
        XCTAssertEqual(store.node("settings.working_dir")?.value, "/home/me/jcode")
        XCTAssertEqual(store.node("settings.working_dir")?.supportedActions.contains("set_working_dir"), true)
        store.dispatch(
            #"{"type":"set_working_dir","value":"src/app","server_id":"devbox.local:7643"}"#,
            notes: ["set_working_dir: \(Self.notAbsolute)"]
        ) {
            $0["/servers/0/working_dir_error"] = .string(Self.notAbsolute)
        }
        XCTAssertEqual(store.node("settings.working_dir")?.value, "/home/me/jcode")
        XCTAssertEqual(store.node("settings.working_dir.error")?.label, Self.notAbsolute)
        // The same path again clears the message and changes nothing else: no save, no reconnect.
        store.dispatch(#"{"type":"set_working_dir","value":"  /home/me/jcode  ","server_id":"devbox.local:7643"}"#) {
            $0["/servers/0/working_dir_error"] = nil
        }
        XCTAssertNil(store.node("settings.working_dir.error"))
        // A server that is not saved is refused with a note.
        store.dispatch(#"{"type":"set_working_dir","value":"/srv","server_id":"elsewhere:7643"}"#, notes: ["set_working_dir: no saved server elsewhere:7643"])
    }

    func testChangingTheWorkingDirectoryOfTheServerInUseSavesItAndConnectsAgainWithIt() {
        var store = SpecStore(.connectedChat)
        store.dispatch(#"{"type":"set_working_dir","value":"/srv/api","server_id":"devbox.local:7643"}"#, effects: [
            .webSocket(.close),
            .timer(.cancel(timerID: "keepalive.1")),
            .webSocket(.connect(url: "ws://devbox.local:7643/ws", authToken: "fixture-token")),
        ], followUps: ["working_dir_changed"]) {
            $0["/servers/0/working_dir"] = "/srv/api"
            $0["/connection/phase"] = "connecting"
            $0["/connection/socket_open"] = false
            $0["/banners/status"] = "Connecting to devbox…"
        }
        // The old socket is gone; the new one subscribes with the new directory.
        store.resubscribe(keepalive: "keepalive.2", workingDir: "/srv/api")
    }

    func testChangingTheWorkingDirectoryWhileDisconnectedOnlySavesIt() {
        var store = SpecStore(.connectedChat)
        store.send(.disconnect, effects: [.webSocket(.close), .timer(.cancel(timerID: "keepalive.1"))], followUps: ["connection_lost"]) {
            $0["/connection/phase"] = "disconnected"
            $0["/connection/socket_open"] = false
            $0["/banners/status"] = "Disconnected from devbox"
        }
        // Saved in the state (the snapshot persists it); nothing connects.
        store.dispatch(#"{"type":"set_working_dir","value":"/srv/api","server_id":"devbox.local:7643"}"#, followUps: ["working_dir_changed"]) {
            $0["/servers/0/working_dir"] = "/srv/api"
        }
    }

    func testChangingTheWorkingDirectoryWhileAReconnectIsScheduledConnectsNowWithIt() {
        var store = SpecStore(.connectedChat)
        store.loseTheConnection()
        store.dispatch(#"{"type":"set_working_dir","value":"/srv/api","server_id":"devbox.local:7643"}"#, effects: [
            .timer(.cancel(timerID: "reconnect.2")),
            .webSocket(.connect(url: "ws://devbox.local:7643/ws", authToken: "fixture-token")),
        ], followUps: ["working_dir_changed"]) {
            $0["/servers/0/working_dir"] = "/srv/api"
            $0["/connection/phase"] = "connecting"
            $0["/connection/attempt"] = 0
            $0["/connection/reason"] = nil
            $0["/connection/reconnect_delay_ms"] = nil
            $0["/banners/status"] = "Connecting to devbox…"
        }
        // The cancelled timer, should it still fire, is stale.
        store.event(#"{"type":"timer_fired","timer_id":"reconnect.2"}"#, notes: ["stale timer reconnect.2 ignored"])
    }

    func testAServerWithoutAWorkingDirectoryNeverConnectsAndPointsToSettings() {
        // A server saved before the working directory existed (its token in memory).
        var state = Scenario.onboarding.state()
        state.servers.list = [
            SavedServer(address: ServerAddress(host: "devbox.local", port: 7643, useTLS: false), name: "devbox", workingDir: "")
        ]
        state.servers.credentials["devbox.local:7643"] = "tok"
        var store = SpecStore(state: state)
        store.send(.selectServer(id: "devbox.local:7643"), followUps: ["server_changed", "server_selected"]) {
            $0["/selected_server_id"] = "devbox.local:7643"
            $0["/connection/phase"] = "failed"
            $0["/connection/reason"] = "Set the working directory for devbox in Settings to connect."
            $0["/banners/status"] = "Set the working directory for devbox in Settings to connect."
        }
        XCTAssertEqual(store.node("banner.status")?.label, "Set the working directory for devbox in Settings to connect.")
        XCTAssertEqual(store.node("connection.working_dir")?.visible, true)
        // Retrying cannot help: it fails the same way, without a socket.
        store.send(.retryConnection)
        XCTAssertEqual(store["/connection/phase"], "failed")
        store.send(.tapNode(id: "connection.working_dir"), followUps: ["navigate"]) { $0["/screen"] = "settings" }
        XCTAssertEqual(store.node("settings.working_dir")?.value, "")
        store.dispatch(#"{"type":"set_working_dir","value":"/home/me/jcode","server_id":"devbox.local:7643"}"#, effects: [
            .webSocket(.connect(url: "ws://devbox.local:7643/ws", authToken: "tok")),
        ], followUps: ["working_dir_changed"]) {
            $0["/servers/0/working_dir"] = "/home/me/jcode"
            $0["/connection/phase"] = "connecting"
            $0["/connection/reason"] = nil
            $0["/banners/status"] = "Connecting to devbox…"
        }
        XCTAssertEqual(store.node("connection.working_dir")?.visible, false)
    }

    // MARK: - Connection rules

    func testAServerThatAcceptsThenClosesBacksOffUntilItsHistoryArrives() {
        var store = SpecStore(.connectedChat)
        let expected: [(delay: Int, shown: String)] = [(1000, "1 s"), (2000, "2 s"), (4000, "4 s"), (8000, "8 s"), (16000, "16 s"), (30000, "30 s"), (30000, "30 s")]
        for (index, step) in expected.enumerated() {
            let attempt = index + 1
            let socket = store.pendingID("websocket_connect")
            if attempt > 1 {
                // Accepted: subscribed, but no history yet, so the attempt count stays.
                store.resubscribe(keepalive: "keepalive.\(2 * attempt - 1)")
            }
            // … and closed. Timer ids share one counter: attempt N's socket had
            // keepalive.2N-1 (the fixture's keepalive.1 for the first), its reconnect is reconnect.2N.
            store.event(
                #"{"type":"websocket_closed","effect_id":\#(socket),"code":1011}"#,
                effects: [
                    .timer(.cancel(timerID: "keepalive.\(2 * attempt - 1)")),
                    .timer(.schedule(timerID: "reconnect.\(2 * attempt)", afterMS: step.delay, purpose: "reconnect")),
                ], followUps: ["connection_lost"]
            ) {
                $0["/connection/phase"] = "reconnecting"
                $0["/connection/attempt"] = .int(Int64(attempt))
                $0["/connection/socket_open"] = false
                $0["/connection/reason"] = "Connection closed (code 1011)"
                $0["/connection/reconnect_delay_ms"] = .int(Int64(step.delay))
                $0["/banners/status"] = .string("Connection lost, retrying in \(step.shown) (attempt \(attempt))")
            }
            store.fireTheReconnect("reconnect.\(2 * attempt)", attempt: attempt)
        }
        // This time the history arrives: the connection proved healthy.
        store.resubscribe(keepalive: "keepalive.15")
        XCTAssertEqual(store["/connection/attempt"], 7, "an accepted socket alone does not reset the backoff")
        store.answerWithAnEmptyHistory { $0["/transcript"] = [] }
        store.loseTheConnection(keepalive: "keepalive.15", reconnect: "reconnect.16")
    }

    func testASubscribeRefusedForItsWorkingDirectoryStopsReconnectingAndPointsToSettings() {
        for message in ["Subscribe requires the client's working directory", "Subscribe working_dir must be an absolute path"] {
            var store = SpecStore.reconnectedAndSubscribed()
            let socket = store.pendingID("websocket_connect")
            let reason = "The server refused the working directory (\(message)). Set it in Settings, then reconnect."
            store.server(
                #"{"type":"error","id":1,"message":"\#(message)"}"#, effects: [.webSocket(.close), .timer(.cancel(timerID: "keepalive.3"))],
                followUps: ["connection_lost"]
            ) {
                $0["/connection/phase"] = "failed"
                $0["/connection/socket_open"] = false
                $0["/connection/reason"] = .string(reason)
                $0["/banners/status"] = .string(reason)
            }
            XCTAssertEqual(store.node("banner.status")?.label, reason)
            XCTAssertEqual(store.node("connection.working_dir")?.visible, true)
            XCTAssertTrue(reason.contains("Settings"))
            // The socket's close, when the host reports it, schedules nothing.
            store.event(
                #"{"type":"websocket_closed","effect_id":\#(socket)}"#,
                notes: ["websocket_closed for effect \(socket), which is not the current socket; ignored"])
            XCTAssertEqual(store["/connection/phase"], "failed")
            // Once the person sets another directory, the app connects again.
            store.dispatch(#"{"type":"set_working_dir","value":"/home/me/other","server_id":"devbox.local:7643"}"#, effects: [
                .webSocket(.connect(url: "ws://devbox.local:7643/ws", authToken: "fixture-token")),
            ], followUps: ["working_dir_changed"]) {
                $0["/servers/0/working_dir"] = "/home/me/other"
                $0["/connection/phase"] = "connecting"
                $0["/connection/attempt"] = 0
                $0["/connection/reason"] = nil
                $0["/banners/status"] = "Connecting to devbox…"
            }
        }
    }

    func testAnyOtherSubscribeRefusalIsTheReasonWhenTheSocketClosesAndReconnectingBacksOff() {
        var store = SpecStore.reconnectedAndSubscribed()
        let socket = store.pendingID("websocket_connect")
        // The server said why; it closes the socket itself.
        store.server(#"{"type":"error","id":1,"message":"Session session-fox is owned by another user"}"#)
        store.event(
            #"{"type":"websocket_closed","effect_id":\#(socket),"code":1008}"#,
            effects: [.timer(.cancel(timerID: "keepalive.3")), .timer(.schedule(timerID: "reconnect.4", afterMS: 2000, purpose: "reconnect"))],
            followUps: ["connection_lost"]
        ) {
            $0["/connection/phase"] = "reconnecting"
            $0["/connection/attempt"] = 2
            $0["/connection/socket_open"] = false
            $0["/connection/reason"] = "The server refused the connection: Session session-fox is owned by another user"
            $0["/connection/reconnect_delay_ms"] = 2000
            $0["/banners/status"] = "Connection lost, retrying in 2 s (attempt 2)"
        }
        XCTAssertEqual(store.node("connection.working_dir")?.visible, false)
        XCTAssertEqual(store.node("connection.retry")?.visible, true)
    }

    func testASessionCloseRequestClosesTheSocketEndsTheTurnAndLeavesReconnectingToThePerson() {
        var store = SpecStore.turnRunning()
        store.startTheReply("Work")
        let reason = "Session was taken over by another client"
        store.server(
            #"{"type":"session_close_requested","reason":"\#(reason)"}"#, effects: [.webSocket(.close), .timer(.cancel(timerID: "keepalive.1"))],
            followUps: ["connection_lost", "show_error"]
        ) {
            $0["/connection/phase"] = "failed"
            $0["/connection/socket_open"] = false
            $0["/connection/reason"] = .string(reason)
            $0["/banners/status"] = .string(reason)
            $0["/banners/error"] = ["message": .string(reason), "retry_after_secs": nil, "text": .string(reason)]
            $0["/session/is_processing"] = false
            $0["/transcript/4/is_streaming"] = false
            // "go" may or may not have reached the server: the next history says.
            $0["/outbox/0/delivery"] = "unconfirmed"
        }
        XCTAssertEqual(store.node("banner.status")?.label, reason)
        XCTAssertEqual(store.node("banner.error")?.label, reason)
        XCTAssertEqual(store.node("connection.retry")?.visible, true)
        XCTAssertEqual(store.node("connection.working_dir")?.visible, false)
        // The host's report of the close schedules no reconnect.
        store.event(#"{"type":"websocket_closed","effect_id":3}"#, notes: ["websocket_closed for effect 3, which is not the current socket; ignored"])
        // The person reconnects.
        store.send(.retryConnection, effects: [.webSocket(.connect(url: "ws://devbox.local:7643/ws", authToken: "fixture-token"))]) {
            $0["/connection/phase"] = "connecting"
            $0["/banners/status"] = "Connecting to devbox…"
        }
    }

    func testASessionCloseRequestWithoutAReasonSaysTheServerClosedTheSession() {
        var store = SpecStore.reconnectedAndSubscribed()
        store.server(
            #"{"type":"session_close_requested","reason":""}"#, effects: [.webSocket(.close), .timer(.cancel(timerID: "keepalive.3"))],
            followUps: ["connection_lost", "show_error"]
        ) {
            $0["/connection/phase"] = "failed"
            $0["/connection/socket_open"] = false
            $0["/connection/reason"] = "Server closed this session"
            $0["/banners/status"] = "Server closed this session"
            $0["/banners/error"] = ["message": "Server closed this session", "retry_after_secs": nil, "text": "Server closed this session"]
        }
        store.send(.tapNode(id: "connection.retry"), effects: [.webSocket(.connect(url: "ws://devbox.local:7643/ws", authToken: "fixture-token"))], followUps: ["retry_connection"]) {
            $0["/connection/phase"] = "reconnecting"
            $0["/banners/status"] = "Reconnecting to devbox (attempt 1)…"
        }
    }

    // MARK: - Pairing link

    func testAPairingLinkWithoutAPortFillsInTheDefaultPort() {
        var store = SpecStore()
        store.scanACompletePairingLink(
            "jcode://pair?host=devbox.local&code=654321", workingDir: "/home/me/jcode",
            pairs: ServerAddress(host: "devbox.local", port: 7643, useTLS: false), form: "devbox.local", port: "7643",
            status: "Pairing with devbox.local…")
        XCTAssertEqual(store.node("pair.port")?.value, "7643")
    }

    // MARK: - Approvals across connections

    func testAnApprovalAskedOnAnEarlierConnectionIsWithdrawnWhenAnsweredAndNothingIsSent() {
        var store = SpecStore(.toolApprovalRequired)
        store.loseTheConnectionMidTurn { $0["/transcript/4/is_streaming"] = false }
        store.reconnect()
        XCTAssertEqual(store.node("permission.perm-1.approve")?.visible, true)
        let expired = "That approval request ended with the previous connection; the agent will ask again if it still needs it."
        store.send(
            .tapNode(id: "permission.perm-1.approve"),
            notes: ["permission_response not sent: no permission_request arrived on this connection"], followUps: ["respond_permission", "show_error"]
        ) {
            $0["/permission_requests"] = []
            $0["/banners/error"] = ["message": .string(expired), "retry_after_secs": nil, "text": .string(expired)]
        }
        XCTAssertNil(store.node("permission.perm-1"))
    }

    func testAnApprovalAskedAgainOnTheNewConnectionIsAnswered() {
        var store = SpecStore(.toolApprovalRequired)
        store.loseTheConnectionMidTurn { $0["/transcript/4/is_streaming"] = false }
        store.reconnect()
        // The server asks again on this socket (the same request: kept once, no second haptic).
        store.server(#"{"type":"permission_request","request_id":"perm-1","session_id":"session-fox","action":"bash","detail":"cargo test -p jcode-mobile-core","tier":"medium"}"#)
        store.answerTheOnlyPermission(.respondPermission(requestID: "perm-1", approved: true, remember: false), request: 3, approved: true, remember: false, followUps: ["send"])
    }

    func testARequestFromAnEarlierConnectionIsWithdrawnEvenWhenTheNewConnectionAsksAnother() {
        var store = SpecStore(.toolApprovalRequired)
        store.loseTheConnectionMidTurn { $0["/transcript/4/is_streaming"] = false }
        store.reconnect()
        store.server(
            #"{"type":"permission_request","request_id":"perm-2","action":"write_file","detail":"src/lib.rs","tier":"high"}"#,
            effects: [.device(.haptic(style: .warning))], followUps: ["permission_asked"]
        ) {
            $0.append("/permission_requests", ["request_id": "perm-2", "session_id": nil, "action": "write_file", "detail": "src/lib.rs", "tier": "high"])
        }
        // perm-1 was asked on the previous connection: this server does not know it.
        let expired = "That approval request ended with the previous connection; the agent will ask again if it still needs it."
        store.send(
            .respondPermission(requestID: "perm-1", approved: true, remember: false),
            notes: ["permission_response not sent: no permission_request arrived on this connection"], followUps: ["show_error"]
        ) {
            $0.remove("/permission_requests/0")
            $0["/banners/error"] = ["message": .string(expired), "retry_after_secs": nil, "text": .string(expired)]
        }
        // perm-2 was asked on this one: the answer goes out.
        store.send(.respondPermission(requestID: "perm-2", approved: false, remember: false), effects: [
            .webSocket(.send(#"{"id":3,"type":"permission_response","request_id":"perm-2","approved":false,"remember":false}"#)),
        ], followUps: ["send"]) {
            $0["/permission_requests"] = []
        }
    }
}
