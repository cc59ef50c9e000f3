import XCTest
@testable import JcodeMobileCore
@testable import JcodeMobileJSON

/// Specifications of how a turn ends as today's jcode ends it (the final
/// `done` / `error` / `interrupted` goes to every client of the session with
/// the starting connection's id) and of the outbox keeping a message until
/// its turn is seen ending (docs/PROTOCOL.md "Turns and the outbox",
/// docs/LIFECYCLE.md "The outbox: exactly once").
final class TurnsAndOutboxTests: XCTestCase {
    // MARK: - Whose done it is

    func testADoneWithAnotherIdWhileOurMessageIsInFlightIsIgnored() {
        var store = SpecStore.turnRunning()
        // Another client's turn in the same session ended (its connection's id 7).
        store.server(#"{"type":"done","id":7}"#, notes: ["done 7 while message o1 is in flight; ignored"])
        XCTAssertEqual(store["/session/is_processing"], true)
        store.finishTheTurn()
    }

    func testATurnStartedInTheTerminalStreamsOnThePhoneAndEndsOnItsDone() {
        var store = SpecStore(.connectedChat)
        store.server(#"{"type":"text_delta","text":"From the terminal"}"#) {
            $0.append("/transcript", entryJSON("m4", "assistant", text: "From the terminal", isStreaming: true))
            $0["/session/is_processing"] = true
        }
        // Its done carries the terminal connection's id, which this socket never sent.
        store.doneOfATurnStartedElsewhere(id: 12) { $0["/transcript/3/is_streaming"] = false }
    }

    func testATurnRunningWhenThePhoneReconnectedEndsOnAnyDone() {
        var store = SpecStore.reconnectedAndSubscribed()
        store.server(#"{"type":"history","id":1,"session_id":"session-fox","messages":[],"activity":{"is_processing":true}}"#) {
            $0["/connection/attempt"] = 0
            $0["/session/history_loaded"] = true
            $0["/session/is_processing"] = true
            $0["/transcript"] = []
            $0["/banners/status"] = nil
        }
        store.doneOfATurnStartedElsewhere(id: 5)
    }

    func testATurnLongerThan32PingsStillEndsOnItsOwnDone() {
        var store = SpecStore.turnRunning()
        // 40 keep-alive pings (requests 4 to 43), each answered and forgotten, while the turn keeps
        // talking (a reasoning block closing between ticks: nothing quiet, so no check goes out).
        for n in 0..<40 {
            store.server(#"{"type":"reasoning_done"}"#)
            store.event(
                #"{"type":"timer_fired","timer_id":"keepalive.\#(n + 1)"}"#,
                effects: [
                    .webSocket(.send(#"{"id":\#(n + 4),"type":"ping"}"#)),
                    .timer(.schedule(timerID: "keepalive.\(n + 2)", afterMS: 20000, purpose: "keepalive")),
                ])
            store.server(#"{"type":"pong","id":\#(n + 4)}"#)
        }
        store.server(#"{"type":"done","id":7}"#, notes: ["done 7 while message o1 is in flight; ignored"])
        store.finishTheTurn()
    }

    func testADoneForATurnThePhoneNeverSawChangesNothing() {
        var store = SpecStore(.connectedChat)
        store.server(#"{"type":"done","id":9}"#, notes: ["done 9 for a turn this device did not see; nothing to end"])
    }

    func testADoneCarryingTheIdOfOurCompactIsTheTurnsEndForJcodeAnswersCompactWithCompactResultOnly() {
        var store = SpecStore(.connectedChat)
        store.server(#"{"type":"text_delta","text":"Elsewhere"}"#) {
            $0.append("/transcript", entryJSON("m4", "assistant", text: "Elsewhere", isStreaming: true))
            $0["/session/is_processing"] = true
        }
        store.send(.compact, effects: [.webSocket(.send(#"{"id":3,"type":"compact"}"#))], followUps: ["send"]) {
            $0["/session/is_compacting"] = true
        }
        // jcode answers compact with compact_result only (client_actions.rs, handle_compact): a done
        // carrying 3 is the other client's turn ending, and the turn shown ends.
        store.doneOfATurnStartedElsewhere(id: 3, history: 4) { $0["/transcript/3/is_streaming"] = false }
        XCTAssertEqual(store["/session/is_processing"], false)
    }

    func testAnErrorOfATurnStartedElsewhereEndsTheTurnShown() {
        var store = SpecStore(.connectedChat)
        store.server(#"{"type":"text_delta","text":"Trying"}"#) {
            $0.append("/transcript", entryJSON("m4", "assistant", text: "Trying", isStreaming: true))
            $0["/session/is_processing"] = true
        }
        store.server(#"{"type":"error","id":12,"message":"Provider error: overloaded"}"#, effects: [.webSocket(.send(#"{"id":3,"type":"get_history"}"#))], notes: ["a turn this device did not start ended: asking for its history to show it whole"], followUps: ["show_error", "turn_ended", "send"]) {
            $0["/transcript/3/is_streaming"] = false
            $0["/session/is_processing"] = false
            $0["/banners/error"] = ["message": "Provider error: overloaded", "retry_after_secs": nil, "text": "Provider error: overloaded"]
        }
    }

    func testAnErrorWithAForeignIdWhileOurMessageIsInFlightLeavesItsTurnRunning() {
        var store = SpecStore.turnRunning()
        store.server(#"{"type":"error","id":12,"message":"another client's turn failed"}"#, followUps: ["show_error"]) {
            $0["/banners/error"] = ["message": "another client's turn failed", "retry_after_secs": nil, "text": "another client's turn failed"]
        }
        XCTAssertEqual(store["/session/is_processing"], true)
        XCTAssertEqual(store["/outbox"], [outboxJSON("o1", "go", delivery: "awaiting_ack")])
    }

    // MARK: - ack means received

    func testAnAckMeansReceivedAndTheMessageStaysUntilItsTurnEnds() {
        var store = SpecStore.turnRunningAndReceived()
        XCTAssertEqual(store.node("outbox.o1"), nil, "shown once, as its transcript entry")
        store.finishTheTurn()
    }

    func testARefusedMessageGoesAgainWhenTheRunningTurnEnds() {
        var store = SpecStore.turnRunningAndReceived()
        // jcode's answer while this connection still processes a turn (client_lifecycle.rs).
        store.server(
            #"{"type":"error","id":3,"message":"Already processing a message"}"#,
            notes: ["message o1 refused (Already processing a message): it goes again when the running turn ends"], followUps: ["notice"]
        ) {
            $0.remove("/transcript/3")
            $0["/outbox/0/delivery"] = "waiting"
            $0.append("/notices", ["id": "n1", "kind": "info", "text": "jcode is still busy with a turn: your message goes when it ends"])
        }
        XCTAssertEqual(store.node("outbox.o1")?.label, "You")
        XCTAssertEqual(store.node("outbox.o1")?.variant, "waiting")
        // The running turn (its done names an id this socket does not know) ends: the message goes again, once.
        store.server(
            #"{"type":"done","id":30}"#, effects: [.webSocket(.send(#"{"id":4,"type":"message","content":"go"}"#))],
            followUps: ["turn_ended", "send"]
        ) {
            $0.append("/transcript", entryJSON("m5", "user", text: "go"))
            $0["/outbox/0/delivery"] = "awaiting_ack"
        }
        store.server(#"{"type":"done","id":4}"#, followUps: ["turn_ended"]) {
            $0["/session/is_processing"] = false
            $0["/outbox"] = []
        }
    }

    func testAMessageRefusedTwiceFailsAndRetrySendsIt() {
        var store = SpecStore.turnRunning()
        store.server(#"{"type":"error","id":3,"message":"Already processing a message"}"#, notes: nil, followUps: nil) {
            $0.remove("/transcript/3")
            $0["/outbox/0/delivery"] = "waiting"
            $0.append("/notices", ["id": "n1", "kind": "info", "text": "jcode is still busy with a turn: your message goes when it ends"])
        }
        store.server(
            #"{"type":"done","id":30}"#, effects: [.webSocket(.send(#"{"id":4,"type":"message","content":"go"}"#))], followUps: ["turn_ended", "send"]
        ) {
            $0.append("/transcript", entryJSON("m5", "user", text: "go"))
            $0["/outbox/0/delivery"] = "awaiting_ack"
        }
        store.server(
            #"{"type":"error","id":4,"message":"Already processing a message"}"#,
            notes: ["message o1 failed: refused again (Already processing a message)"], followUps: ["show_error"]
        ) {
            $0.remove("/transcript/3")
            $0["/outbox/0/delivery"] = "failed"
            $0["/banners/error"] = [
                "message": .string(ChatInteractor.failedMessage), "retry_after_secs": nil, "text": .string(ChatInteractor.failedMessage),
            ]
        }
        XCTAssertEqual(store.node("outbox.o1")?.label, "You")
        XCTAssertEqual(store.node("outbox.o1")?.variant, "failed")
        XCTAssertEqual(store.node("outbox.o1.retry")?.label, "Retry")
        // The running turn ends; the failed message waits for the person.
        store.server(#"{"type":"done","id":30}"#, followUps: ["turn_ended"]) { $0["/session/is_processing"] = false }
        store.dispatch(
            #"{"type":"retry_message","message_id":"o1"}"#, effects: [.webSocket(.send(#"{"id":5,"type":"message","content":"go"}"#))],
            notes: ["message o1 goes again"], followUps: ["send"]
        ) {
            $0.append("/transcript", entryJSON("m6", "user", text: "go"))
            $0["/outbox/0/delivery"] = "awaiting_ack"
            $0["/session/is_processing"] = true
        }
    }

    func testAFailedMessageSurvivesARestartWithItsRetry() {
        var store = SpecStore.turnRunning()
        store.loseTheConnectionMidTurn()
        store.reconnect()
        store.anEmptyHistorySendsTheMessageAgain()
        store.server(#"{"type":"error","id":3,"message":"Already processing a message"}"#, notes: nil, followUps: nil) {
            $0["/transcript"] = []
            $0["/outbox/0/delivery"] = "failed"
            $0["/banners/error"] = [
                "message": .string(ChatInteractor.failedMessage), "retry_after_secs": nil, "text": .string(ChatInteractor.failedMessage),
            ]
        }
        let snapshot = Snapshot(of: store.state).json
        XCTAssertEqual(snapshot.at("/outbox/messages"), [["id": "o1", "text": "go", "attachments": [], "delivery": "failed"]])
        let restored = AppDriver(#"{"snapshot":\#(snapshot.jsonString)}"#)
        XCTAssertEqual(restored.state.at("/outbox"), [outboxJSON("o1", "go", delivery: "failed")])
        XCTAssertEqual(restored.app.tree().find("outbox.o1")?.variant, "failed")
    }

    func testRetryOfAMessageThatHasNotFailedIsLogged() {
        var store = SpecStore.turnRunning()
        store.dispatch(#"{"type":"retry_message","message_id":"o1"}"#, notes: ["retry_message: message o1 has not failed"])
        store.dispatch(#"{"type":"retry_message","message_id":"o9"}"#, notes: ["retry_message: no message o9 in the outbox"])
    }

    func testReloadingAfterTheAckMakesTheMessageUnconfirmedAndTheHistoryDecides() {
        var store = SpecStore.turnRunningAndReceived()
        // jcode refuses a message while a reload starts: `reloading` instead of a turn.
        store.server(#"{"type":"reloading"}"#, notes: ["message o1 is unconfirmed: the server is reloading"], followUps: ["notice"]) {
            $0["/outbox/0/delivery"] = "unconfirmed"
            $0.append("/notices", ["id": "n1", "kind": "info", "text": "Server is updating, reconnecting shortly"])
        }
        store.closeTheSocket(keepalive: "keepalive.1", reconnect: "reconnect.2", afterMS: 500, shown: "0.5 s", file: #filePath, line: #line) {
            $0["/session/is_processing"] = false
        }
        store.fireTheReconnect()
        // The reload is over: its notice goes.
        store.resubscribe(keepalive: "keepalive.3") { $0["/notices"] = [] }
        // The history does not hold "go": it goes again (request 3 of the new socket).
        store.anEmptyHistorySendsTheMessageAgain()
    }

    func testADropAfterTheAckLeavesTheMessageToTheHistoryWhichHoldsIt() {
        var store = SpecStore.turnRunningAndReceived()
        store.loseTheConnectionMidTurn()
        store.reconnect()
        store.server(
            #"{"type":"history","id":1,"session_id":"session-fox","messages":[{"role":"user","content":"Why?"},{"role":"user","content":"go"}]}"#,
            notes: ["message o1 is in the server's history: not sent again"]
        ) {
            $0["/connection/attempt"] = 0
            $0["/session/history_loaded"] = true
            $0["/banners/status"] = nil
            $0["/transcript"] = [entryJSON("m5", "user", text: "Why?"), entryJSON("m6", "user", text: "go")]
            $0["/outbox"] = []
        }
    }

    func testAMessageMissingFromTheHistoryTwiceFails() {
        var store = SpecStore.turnRunning()
        store.loseTheConnectionMidTurn()
        store.reconnect()
        store.anEmptyHistorySendsTheMessageAgain()
        store.loseTheConnection(keepalive: "keepalive.3", reconnect: "reconnect.4") {
            $0["/session/is_processing"] = false
            $0["/outbox/0/delivery"] = "unconfirmed"
            $0["/connection/attempt"] = 1
        }
        store.fireTheReconnect("reconnect.4")
        store.resubscribe(keepalive: "keepalive.5")
        store.server(
            #"{"type":"history","id":1,"session_id":"session-fox","messages":[]}"#,
            notes: ["message o1 failed: not in the server's history after going again"], followUps: ["show_error"]
        ) {
            $0["/connection/attempt"] = 0
            $0["/session/history_loaded"] = true
            $0["/banners/status"] = nil
            $0["/transcript"] = []
            $0["/outbox/0/delivery"] = "failed"
            $0["/banners/error"] = [
                "message": .string(ChatInteractor.failedMessage), "retry_after_secs": nil, "text": .string(ChatInteractor.failedMessage),
            ]
        }
    }

    // MARK: - One history per reconnect

    func testASubscribeNamingAGoneSessionIsFollowedByGetHistory() {
        var store = SpecStore.reconnectedAndSubscribed()
        // The pong of the ping after the subscribe comes first: no history came with it.
        store.pongWithoutHistory(2)
        store.server(#"{"type":"history","id":3,"session_id":"session-new","messages":[]}"#, notes: nil, followUps: nil) {
            $0["/connection/attempt"] = 0
            $0["/session/id"] = "session-new"
            $0["/session/title"] = nil
            $0["/session/history_loaded"] = true
            $0["/banners/status"] = nil
            $0["/transcript"] = []
        }
        // Its check is answered after the history: nothing more.
        store.server(#"{"type":"pong","id":4}"#)
    }

    func testAServerThatRefusesTheCheckPingStillGetsAskedForTheHistory() {
        var store = SpecStore.reconnectedAndSubscribed()
        // An older server that does not know `ping` answers it with an error, in order all the same.
        store.server(
            #"{"type":"error","id":2,"message":"unknown request"}"#,
            effects: [.webSocket(.send(#"{"id":3,"type":"get_history"}"#)), .webSocket(.send(#"{"id":4,"type":"ping"}"#))],
            notes: ["no history before the pong: asking for it"], followUps: ["show_error"]
        ) {
            $0["/banners/error"] = ["message": "unknown request", "retry_after_secs": nil, "text": "unknown request"]
        }
    }

    // MARK: - A history too large

    func testAHistoryThatNeverArrivesLeavesTheChatUsableAndTheOutboxFlushes() {
        var store = SpecStore(.connectedChat)
        store.loseTheConnection()
        store.send(.sendMessage(text: "still there?"), notes: ["message queued in the outbox"]) {
            $0.append("/outbox", outboxJSON("o1", "still there?", delivery: "waiting"))
        }
        store.reconnect()
        // The history frame was refused by the host (too_large): only the pongs arrive.
        store.pongWithoutHistory(2)
        store.server(
            #"{"type":"pong","id":4}"#, effects: [.webSocket(.send(#"{"id":5,"type":"message","content":"still there?"}"#))],
            notes: ["asked again and still no history before the pong: it did not reach the core"], followUps: ["history_lost", "send"]
        ) {
            $0.append("/transcript", entryJSON("m4", "system", text: ChatInteractor.historyTooLarge))
            $0.append("/transcript", entryJSON("m5", "user", text: "still there?"))
            $0["/outbox/0/delivery"] = "awaiting_ack"
            $0["/session/history_loaded"] = true
            $0["/session/is_processing"] = true
            $0["/banners/status"] = nil
        }
        store.server(#"{"type":"done","id":5}"#, followUps: ["turn_ended"]) {
            $0["/session/is_processing"] = false
            $0["/outbox"] = []
        }
    }

    func testAnImageHeavyHistoryOverTheInputLimitIsRefusedAndTheChatGoesOn() {
        let driver = AppDriver(#"{"scenario":"connected_chat"}"#)
        let socket = driver.app.state.connection.socketEffectID?.rawValue ?? 0
        driver.event(#"{"type":"websocket_closed","effect_id":\#(socket)}"#)
        driver.dispatch(#"{"type":"send_message","text":"what about the screenshots?"}"#)
        driver.event(#"{"type":"timer_fired","timer_id":"reconnect.2"}"#)
        driver.event(#"{"type":"websocket_opened","effect_id":\#(driver.effectID("websocket_connect"))}"#)
        XCTAssertEqual(driver.sentTypes.suffix(2), ["subscribe", "ping"])
        // 24 screenshots of 768 KiB of base64 each: 18 MiB, over the 16 MiB input limit.
        let image = #"{"media_type":"image/png","data":""# + String(repeating: "iVBORw0KGgo", count: 768 * 1024 / 11) + #""}"#
        let rows = (0..<24).map { #"{"role":"user","content":"screenshot \#($0)","images":[\#(image)]}"# }.joined(separator: ",")
        let history = #"{"type":"history","id":1,"session_id":"session-fox","messages":[\#(rows)]}"#
        let frame = #"{"type":"websocket_event","effect_id":\#(driver.app.state.connection.socketEffectID?.rawValue ?? 0),"line":\#(JSONValue.string(history).jsonString)}"#
        XCTAssertGreaterThan(frame.utf8.count, 16 << 20)
        let answer = json(driver.app.platformEvent(json: frame).string)
        XCTAssertEqual(answer["error"]?["code"], "too_large")
        XCTAssertEqual(driver.state.at("/session/history_loaded"), false, "a refused input changes nothing")
        driver.server(#"{"type":"pong","id":2}"#)
        XCTAssertEqual(driver.sentTypes.suffix(2), ["get_history", "ping"])
        XCTAssertEqual(json(driver.app.platformEvent(json: frame).string)["error"]?["code"], "too_large")
        driver.server(#"{"type":"pong","id":4}"#)
        XCTAssertEqual(driver.state.at("/session/history_loaded"), true)
        XCTAssertEqual(driver.state.at("/banners/status"), .null, "no \"Loading conversation…\"")
        XCTAssertEqual(driver.userTexts.first.map { _ in driver.state.at("/transcript/3/role") }, "system")
        XCTAssertEqual(driver.shownMessages.last?.value, "what about the screenshots?")
        XCTAssertEqual(driver.sentMessages.last, "what about the screenshots?")
        XCTAssertEqual(driver.userTexts.last, "what about the screenshots?")
    }
}

extension SpecStore {
    /// After a reconnect mid-turn: the new socket's history (request 1) is
    /// empty, so message o1 ("go") goes again as request 3 and the turn runs.
    fileprivate mutating func anEmptyHistorySendsTheMessageAgain(file: StaticString = #filePath, line: UInt = #line) {
        server(
            #"{"type":"history","id":1,"session_id":"session-fox","messages":[]}"#,
            effects: [.webSocket(.send(#"{"id":3,"type":"message","content":"go"}"#))],
            notes: ["message o1 is not in the server's history: it goes again"], followUps: ["send"], file: file, line: line
        ) {
            $0["/connection/attempt"] = 0
            $0["/session/history_loaded"] = true
            $0["/banners/status"] = nil
            $0["/transcript"] = [entryJSON("m5", "user", text: "go")]
            $0["/outbox/0/delivery"] = "awaiting_ack"
            $0["/session/is_processing"] = true
        }
    }
}
