import XCTest
@testable import JcodeMobileCore

/// The app's life around the link: keep-alive, background and foreground,
/// and the secure store failing (docs/LIFECYCLE.md).
final class LifecycleTests: XCTestCase {
    func testWhileConnectedAPingGoesOutEveryTwentySecondsAndAMissingPongCountsAsADrop() {
        let world = SimulatedWorld.connected()
        XCTAssertEqual(world.timers.values.sorted(), ["keepalive"])
        world.fire("keepalive")
        XCTAssertEqual(world.driver.sentTypes.last, "ping")
        XCTAssertEqual(world.timers.values.sorted(), ["keepalive"], "the next tick is scheduled")
        XCTAssertEqual(world.driver.state.at("/connection/phase"), "connected", "the pong came")

        world.answersPings = false
        world.fire("keepalive")  // ping, no pong
        world.fire("keepalive")  // the pong is still missing
        XCTAssertEqual(world.lastTypes, ["websocket_close", "schedule_timer"])
        XCTAssertEqual(world.driver.state.at("/connection/phase"), "reconnecting")
        XCTAssertEqual(world.driver.state.at("/connection/reason"), "The server stopped answering")
        XCTAssertEqual(world.timers.values.sorted(), ["reconnect"])
        world.answersPings = true
        world.fire("reconnect")
        XCTAssertEqual(world.driver.state.at("/connection/phase"), "connected")
    }

    func testTheBackgroundStopsTimersAndTheForegroundReconnectsAtOnce() {
        let world = SimulatedWorld.connected()
        world.serverUp = false
        world.dropLink()
        XCTAssertEqual(world.timers.values.sorted(), ["reconnect"])
        world.event(#"{"type":"app_background"}"#)
        XCTAssertEqual(world.lastTypes, ["cancel_timer"])
        XCTAssertEqual(world.timers, [:], "no timer runs in the background")
        XCTAssertEqual(world.driver.state.at("/connection/phase"), "reconnecting")
        world.serverUp = true
        world.event(#"{"type":"app_foreground"}"#)
        XCTAssertEqual(world.lastTypes, ["websocket_connect"], "at once, without waiting out the backoff")
        XCTAssertEqual(world.driver.state.at("/connection/phase"), "connected")
        XCTAssertEqual(world.timers.values.sorted(), ["keepalive"])
    }

    func testALinkThatDropsInTheBackgroundIsRetriedWhenTheAppIsInFrontAgain() {
        let world = SimulatedWorld.connected()
        world.event(#"{"type":"app_background"}"#)
        XCTAssertEqual(world.lastTypes, ["cancel_timer"], "the keep-alive stops; the socket stays open")
        XCTAssertEqual(world.driver.state.at("/connection/phase"), "connected")
        world.dropLink()  // the OS suspended the app and the socket died
        XCTAssertEqual(world.lastTypes, [], "no reconnect timer in the background")
        XCTAssertEqual(world.driver.state.at("/connection/phase"), "reconnecting")
        world.event(#"{"type":"app_foreground"}"#)
        XCTAssertEqual(world.lastTypes, ["websocket_connect"])
        XCTAssertEqual(world.driver.state.at("/connection/phase"), "connected")
    }

    func testBackInFrontWhileConnectedThePingGoesOutAtOnce() {
        let world = SimulatedWorld.connected()
        world.event(#"{"type":"app_background"}"#)
        world.event(#"{"type":"app_foreground"}"#)
        XCTAssertEqual(world.lastTypes, ["websocket_send", "schedule_timer"])
        XCTAssertEqual(world.driver.sentTypes.last, "ping")
        world.event(#"{"type":"app_foreground"}"#)
        XCTAssertEqual(world.lastTypes, [], "already running: nothing more")
    }

    func testAForegroundAfterTheSessionWasClosedByTheServerDoesNotReconnect() {
        let world = SimulatedWorld.connected()
        world.driver.server(#"{"type":"session_close_requested","reason":"Another device took over"}"#)
        world.event(#"{"type":"app_background"}"#)
        world.event(#"{"type":"app_foreground"}"#)
        XCTAssertEqual(world.lastTypes, [])
        XCTAssertEqual(world.driver.state.at("/connection/phase"), "failed")
    }

    func testASecureStoreThatCannotBeReadLeadsToPairAgainNotALoop() {
        let world = SimulatedWorld.connected()
        world.restart()
        world.secureStoreFails = true
        world.event(#"{"type":"app_foreground"}"#)
        XCTAssertEqual(world.effectTypes, ["secure_store_read"])
        XCTAssertEqual(world.driver.state.at("/connection/phase"), "failed")
        XCTAssertEqual(world.driver.app.tree().find("connection.repair")?.visible, true)
        XCTAssertEqual(world.driver.app.tree().find("connection.retry")?.visible, false)
        world.event(#"{"type":"app_background"}"#)
        world.event(#"{"type":"app_foreground"}"#)
        XCTAssertEqual(world.effectTypes, ["secure_store_read"], "asked once; the person decides what next")
    }

    func testARefusedTokenIsDeletedFromTheSecureStoreAndThePersonIsAskedToPairAgain() {
        let world = SimulatedWorld.connected()
        world.refusesToken = true
        world.dropLink()
        world.fire("reconnect")
        XCTAssertEqual(world.driver.state.at("/connection/phase"), "failed")
        XCTAssertEqual(world.secureStore, [:])
        XCTAssertEqual(world.driver.app.tree().find("connection.repair")?.visible, true)
        XCTAssertEqual(world.timers, [:])
    }
}

/// Local notifications: while the app is in the background, a turn that
/// ends or fails and a question of the agent each ask the host for one
/// notification; opening it lands in its session (docs/LIFECYCLE.md).
extension LifecycleTests {
    /// `connected_chat` with a turn running (request 3), sent to the background:
    /// the keep-alive stops.
    private func turnRunningInTheBackground(file: StaticString = #filePath, line: UInt = #line) -> SpecStore {
        var store = SpecStore.turnRunning(file: file, line: line)
        store.event(#"{"type":"app_background"}"#, effects: [.timer(.cancel(timerID: "keepalive.1"))], file: file, line: line) {
            $0["/lifecycle/is_foreground"] = false
        }
        return store
    }

    func testATurnThatEndsInTheBackgroundAsksForOneLocalNotification() {
        var store = turnRunningInTheBackground()
        store.server(#"{"type":"done","id":3}"#, effects: [
            .device(.showLocalNotification(title: "Fix the flaky test", body: "The agent finished", sessionID: "session-fox")),
        ], followUps: ["turn_ended"]) {
            $0["/session/is_processing"] = false
            $0["/outbox"] = []
        }
        XCTAssertEqual(
            store.state.effects.pending.map(\.kind.rawValue).filter { $0 == "show_local_notification" }, [],
            "nothing answers a notification: it is not awaited")
    }

    func testATurnThatEndsInTheForegroundShowsNoNotification() {
        var store = SpecStore.turnRunning()
        store.finishTheTurn()  // no effect: the chat shows it
    }

    func testAFailedTurnInTheBackgroundSaysWhyOnOneShortLine() {
        var store = turnRunningInTheBackground()
        store.server(#"{"type":"error","id":3,"message":"Provider error:\n  overloaded"}"#, effects: [
            .device(.showLocalNotification(
                title: "Fix the flaky test", body: "The agent stopped: Provider error: overloaded", sessionID: "session-fox")),
        ], followUps: ["show_error", "turn_ended"]) {
            $0["/session/is_processing"] = false
            $0["/outbox"] = []
            $0["/banners/error"] = ["message": "Provider error:\n  overloaded", "retry_after_secs": nil, "text": "Provider error:\n  overloaded"]
        }
    }

    func testAnInterruptedTurnInTheBackgroundSaysSo() {
        var store = turnRunningInTheBackground()
        store.server(#"{"type":"interrupted"}"#, effects: [
            .device(.showLocalNotification(title: "Fix the flaky test", body: "The agent was interrupted", sessionID: "session-fox")),
        ], followUps: ["notice", "turn_ended"]) {
            $0["/session/is_processing"] = false
            $0["/outbox"] = []
            $0.append("/notices", ["id": "n1", "kind": "info", "text": "Interrupted"])
        }
    }

    func testAPermissionRequestInTheBackgroundNamesTheToolButNotWhatItWouldRun() {
        var store = turnRunningInTheBackground()
        store.server(
            #"{"type":"permission_request","request_id":"perm-1","session_id":"session-fox","action":"bash","detail":"curl -H 'Authorization: Bearer s3cret' …","tier":"high"}"#,
            effects: [
                .device(.haptic(style: .warning)),
                .device(.showLocalNotification(title: "Fix the flaky test", body: "The agent asks permission to run a command", sessionID: "session-fox")),
            ], followUps: ["permission_asked"]
        ) {
            $0["/permission_requests"] = [[
                "request_id": "perm-1", "session_id": "session-fox", "action": "bash", "detail": "curl -H 'Authorization: Bearer s3cret' …",
                "tier": "high",
            ]]
        }
        // The same request again (a refresh) is not a new question: no second notification.
        store.server(
            #"{"type":"permission_request","request_id":"perm-1","session_id":"session-fox","action":"bash","detail":"curl -H 'Authorization: Bearer s3cret' …","tier":"high"}"#)
    }

    func testAStdinRequestInTheBackgroundShowsItsPromptNeverAnAnswer() {
        var store = turnRunningInTheBackground()
        store.server(
            #"{"type":"stdin_request","request_id":"stdin-1","prompt":"[sudo] password for dev:","is_password":true,"tool_call_id":"call_apt"}"#,
            effects: [
                .device(.showLocalNotification(
                    title: "Fix the flaky test", body: "The agent waits for your answer: [sudo] password for dev:", sessionID: "session-fox")),
            ], followUps: ["input_asked"]
        ) {
            $0["/stdin_requests"] = [["request_id": "stdin-1", "prompt": "[sudo] password for dev:", "is_password": true, "tool_call_id": "call_apt"]]
        }
    }

    func testAQuestionThatCameInTheForegroundIsNotNotifiedWhenTheAppLeaves() {
        var store = SpecStore(.toolApprovalRequired)
        store.event(#"{"type":"app_background"}"#, effects: [.timer(.cancel(timerID: "keepalive.1"))]) {
            $0["/lifecycle/is_foreground"] = false
        }
    }

    func testEachTurnThatEndsInTheBackgroundAsksForItsOwnNotificationAboutTheSameSession() {
        // A turn running, and a second message waiting in the outbox behind it.
        var state = SpecStore.turnRunning().state
        state.chat.outbox.append(OutboxMessage(id: "o2", text: "and another", attachments: []))
        var store = SpecStore(state: state)
        store.event(#"{"type":"app_background"}"#, effects: [.timer(.cancel(timerID: "keepalive.1"))]) {
            $0["/lifecycle/is_foreground"] = false
        }
        // The first turn ends and the waiting message starts the next one.
        store.server(#"{"type":"done","id":3}"#, effects: [
            .device(.showLocalNotification(title: "Fix the flaky test", body: "The agent finished", sessionID: "session-fox")),
            .webSocket(.send(#"{"id":4,"type":"message","content":"and another"}"#)),
        ], followUps: ["turn_ended", "send"]) {
            $0.append("/transcript", entryJSON("m5", "user", text: "and another"))
            $0["/outbox"] = [outboxJSON("o2", "and another", delivery: "awaiting_ack")]
        }
        // The second one ends too: one more notification, with the same session_id, so the host shows the latest.
        store.server(#"{"type":"done","id":4}"#, effects: [
            .device(.showLocalNotification(title: "Fix the flaky test", body: "The agent finished", sessionID: "session-fox")),
        ], followUps: ["turn_ended"]) {
            $0["/session/is_processing"] = false
            $0["/outbox"] = []
        }
    }

    func testOneFrameAsksForOneNotificationPerSessionSayingTheLatest() {
        var store = turnRunningInTheBackground()
        // The agent asks, the person answers in the terminal, and the turn ends: all in one frame.
        store.frame(
            #"{"type":"permission_request","request_id":"perm-1","session_id":"session-fox","action":"bash","detail":"ls","tier":"low"}"#,
            #"{"type":"done","id":3}"#,
            effects: [
                .device(.haptic(style: .warning)),
                .device(.showLocalNotification(title: "Fix the flaky test", body: "The agent finished", sessionID: "session-fox")),
            ], notes: ["show_local_notification: replaces the one this call asked for earlier"],
            followUps: ["permission_asked", "turn_ended"]
        ) {
            $0["/session/is_processing"] = false
            $0["/outbox"] = []
        }
    }

    func testBackInTheForegroundATurnThatEndsShowsNoNotification() {
        var store = turnRunningInTheBackground()
        store.event(#"{"type":"app_foreground"}"#, effects: [
            .webSocket(.send(#"{"id":4,"type":"ping"}"#)),
            .timer(.schedule(timerID: "keepalive.2", afterMS: 20000, purpose: "keepalive")),
        ]) {
            $0["/lifecycle/is_foreground"] = true
        }
        store.finishTheTurn()
    }

    func testANotificationWithoutATitledSessionIsTitledJcode() {
        var state = SpecStore.turnRunning().state
        state.session.title = nil
        state.lifecycle.isForeground = false
        var store = SpecStore(state: state)
        store.server(#"{"type":"done","id":3}"#, effects: [
            .device(.showLocalNotification(title: "jcode", body: "The agent finished", sessionID: "session-fox")),
        ], followUps: ["turn_ended"]) {
            $0["/session/is_processing"] = false
            $0["/outbox"] = []
        }
    }

    func testWithoutAReasonToolOrPromptTheBodyStillSaysWhatHappened() {
        var facts = Facts()
        facts.session.id = "session-fox"
        var state = LifecycleState()
        state.isForeground = false
        var lifecycle = FeatureHarness(LifecycleInteractor(), state, context: facts)
        lifecycle.receive(.turnEnded(outcome: .error, error: " \n "), effects: [
            .device(.showLocalNotification(title: "jcode", body: "The agent stopped", sessionID: "session-fox")),
        ])
        lifecycle.receive(.permissionAsked(action: "", sessionID: "session-owl"), effects: [
            .device(.showLocalNotification(title: "jcode", body: "The agent asks permission to use a tool", sessionID: "session-owl")),
        ])
        lifecycle.receive(.inputAsked(prompt: ""), effects: [
            .device(.showLocalNotification(title: "jcode", body: "The agent waits for your answer", sessionID: "session-fox")),
        ])
    }

    func testLongTextIsCutToOneLineOfAHundredCharacters() {
        XCTAssertEqual(LifecycleInteractor.oneLine("  a\n\tb  c ", limit: 100), "a b c")
        XCTAssertEqual(LifecycleInteractor.oneLine(String(repeating: "x", count: 100), limit: 100), String(repeating: "x", count: 100))
        XCTAssertEqual(LifecycleInteractor.oneLine(String(repeating: "x", count: 101), limit: 100), String(repeating: "x", count: 99) + "…")
        XCTAssertEqual(LifecycleInteractor.oneLine("", limit: 100), "")
    }

    // MARK: Opening it

    /// `connected_chat`, a turn running, the person on the session list when
    /// the app went to the background; the turn ended there (one
    /// notification) and the app is back in front.
    /// After `notifiedAndBackInFront()`: the notification of `session`, not
    /// the current one, is opened: the chat shows, "Loading conversation…",
    /// and `resume_session` (request 5) and a ping (6) go out; `also` is
    /// what the session switch shows.
    private func openTheNotification(
        of session: String, _ store: inout SpecStore, file: StaticString = #filePath, line: UInt = #line,
        also: (inout ExpectedState) -> Void
    ) {
        store.event(#"{"type":"push_notification_opened","payload":{"session_id":"\#(session)"}}"#, effects: [
            .webSocket(.send(#"{"id":5,"type":"resume_session","session_id":"\#(session)","client_instance_id":"fixture-device"}"#)),
            .webSocket(.send(#"{"id":6,"type":"ping"}"#)),
        ], followUps: ["open_chat", "session_asked", "open_chat", "session_switched", "send"], file: file, line: line) {
            $0["/screen"] = "chat"
            $0["/banners/status"] = "Loading conversation…"
            also(&$0)
        }
    }

    private func notifiedAndBackInFront(file: StaticString = #filePath, line: UInt = #line) -> SpecStore {
        var store = SpecStore.turnRunning(file: file, line: line)
        store.send(.navigate(.sessions), file: file, line: line) { $0["/screen"] = "sessions" }
        store.event(#"{"type":"app_background"}"#, effects: [.timer(.cancel(timerID: "keepalive.1"))], file: file, line: line) {
            $0["/lifecycle/is_foreground"] = false
        }
        store.server(#"{"type":"done","id":3}"#, effects: [
            .device(.showLocalNotification(title: "Fix the flaky test", body: "The agent finished", sessionID: "session-fox")),
        ], followUps: ["turn_ended"], file: file, line: line) {
            $0["/session/is_processing"] = false
            $0["/outbox"] = []
        }
        store.event(#"{"type":"app_foreground"}"#, effects: [
            .webSocket(.send(#"{"id":4,"type":"ping"}"#)),
            .timer(.schedule(timerID: "keepalive.2", afterMS: 20000, purpose: "keepalive")),
        ], file: file, line: line) {
            $0["/lifecycle/is_foreground"] = true
        }
        return store
    }

    func testOpeningTheNotificationOfTheCurrentSessionOpensItsChat() {
        var store = notifiedAndBackInFront()
        store.event(#"{"type":"push_notification_opened","payload":{"session_id":"session-fox"}}"#, followUps: ["open_chat"]) {
            $0["/screen"] = "chat"
        }
    }

    func testOpeningTheNotificationOfAnotherSessionResumesIt() {
        var store = notifiedAndBackInFront()
        openTheNotification(of: "session-owl", &store) { $0.showsTheOwlSessionLoading() }
    }

    func testOpeningANotificationForASessionTheAppDoesNotKnowAsksTheServerForIt() {
        var store = notifiedAndBackInFront()
        // Not in the session list: the server decides (it answers with that session's history, or an error banner).
        openTheNotification(of: "session-gone", &store) {
            $0["/transcript"] = []
            $0["/session/id"] = "session-gone"
            $0["/session/title"] = nil
            $0["/session/history_loaded"] = false
            $0["/session/total_tokens"] = nil
        }
    }

    func testOpeningANotificationThatNamesNoSessionOpensTheCurrentChat() {
        var store = notifiedAndBackInFront()
        store.event(#"{"type":"push_notification_opened","payload":{"session_id":42}}"#, followUps: ["open_chat"]) {
            $0["/screen"] = "chat"
        }
    }

    func testOpeningTheNotificationOfAnotherSessionWhileTheLinkIsDownReconnectsToThatSession() {
        var store = SpecStore(.connectedChat)
        store.send(.navigate(.sessions)) { $0["/screen"] = "sessions" }
        store.loseTheConnection()
        // Offline, the session switches at once; the reconnect's subscribe names it, which resumes it.
        store.openTheOwlNotificationOffline { $0["/screen"] = "chat" }
        store.resubscribe(keepalive: "keepalive.3", session: "session-owl")
        store.server(#"{"type":"history","id":1,"session_id":"session-owl","messages":[{"role":"user","content":"Draft the notes"}]}"#) {
            $0["/transcript"] = [entryJSON("m4", "user", text: "Draft the notes")]
            $0["/connection/attempt"] = 0
            $0["/session/history_loaded"] = true
            $0["/banners/status"] = nil
        }
    }

    func testOpeningTheNotificationOfTheCurrentSessionWhileTheLinkIsDownReconnects() {
        var store = SpecStore(.connectedChat)
        store.send(.navigate(.sessions)) { $0["/screen"] = "sessions" }
        store.loseTheConnection()
        store.event(
            #"{"type":"push_notification_opened","payload":{"session_id":"session-fox"}}"#,
            effects: [
                .timer(.cancel(timerID: "reconnect.2")),
                .webSocket(.connect(url: "ws://devbox.local:7643/ws", authToken: "fixture-token")),
            ],
            followUps: ["open_chat", "reconnect_asked"]
        ) {
            $0["/screen"] = "chat"
            $0["/connection/reconnect_delay_ms"] = nil
            $0["/banners/status"] = "Reconnecting to devbox (attempt 1)…"
        }
    }
}
