import XCTest
@testable import JcodeMobileCore

/// One history per session switch, a history that never arrives on the
/// first connect or a switch, a failed message the person discards, and a
/// notification opened offline (docs/PROTOCOL.md "One history per connect",
/// docs/LIFECYCLE.md "The outbox", docs/LIMITS.md "A history too large").
final class SwitchHistoryAndDiscardTests: XCTestCase {
    // MARK: - A session switch

    func testTheHistoryAnsweringResumeSessionIsTheOneTheOutboxWaitsFor() {
        var store = SpecStore(.connectedChat)
        store.resumeTheOwlSession()
        store.send(.sendMessage(text: "notes?"), notes: ["message queued in the outbox"]) {
            $0.append("/outbox", outboxJSON("o1", "notes?", delivery: "waiting"))
        }
        store.server(
            #"{"type":"history","id":3,"session_id":"session-owl","messages":[]}"#,
            effects: [.webSocket(.send(#"{"id":5,"type":"message","content":"notes?"}"#))], followUps: ["send"]
        ) {
            $0["/transcript"] = [entryJSON("m4", "user", text: "notes?")]
            $0["/outbox/0/delivery"] = "awaiting_ack"
            $0["/session/history_loaded"] = true
            $0["/session/is_processing"] = true
            $0["/banners/status"] = nil
        }
        // The check's pong comes after the history: nothing more is asked.
        store.server(#"{"type":"pong","id":4}"#)
    }

    func testASubscribesHistoryArrivingAfterASwitchWasSentDoesNotReleaseTheOutbox() {
        var store = SpecStore.reconnectedAndSubscribed()
        store.send(.resumeSession(id: "session-owl"), effects: [
            .webSocket(.send(#"{"id":3,"type":"resume_session","session_id":"session-owl","client_instance_id":"fixture-device"}"#)),
            .webSocket(.send(#"{"id":4,"type":"ping"}"#)),
        ], followUps: ["open_chat", "session_switched", "send"]) {
            $0["/transcript"] = []
            $0["/session/id"] = "session-owl"
            $0["/session/title"] = "Release notes"
            $0["/session/total_tokens"] = nil
        }
        store.send(.sendMessage(text: "notes?"), notes: ["message queued in the outbox"]) {
            $0.append("/outbox", outboxJSON("o1", "notes?", delivery: "waiting"))
        }
        // The subscribe's answer (request 1) comes first: the outbox waits for the resume's.
        store.server(
            #"{"type":"history","id":1,"session_id":"session-fox","messages":[]}"#,
            notes: ["history answering request 1; the outbox waits for get_history"], followUps: nil
        ) {
            $0["/connection/attempt"] = 0
            $0["/session/id"] = "session-fox"
            $0["/session/title"] = "Fix the flaky test"
        }
        store.server(#"{"type":"pong","id":2}"#)
        store.server(
            #"{"type":"history","id":3,"session_id":"session-owl","messages":[]}"#,
            effects: [.webSocket(.send(#"{"id":5,"type":"message","content":"notes?"}"#))], followUps: ["send"]
        ) {
            $0["/transcript"] = [entryJSON("m4", "user", text: "notes?")]
            $0["/outbox/0/delivery"] = "awaiting_ack"
            $0["/session/id"] = "session-owl"
            $0["/session/title"] = "Release notes"
            $0["/session/history_loaded"] = true
            $0["/session/is_processing"] = true
            $0["/banners/status"] = nil
        }
    }

    func testAResumeTheServerRefusesIsFollowedByGetHistoryOfTheSessionItKept() {
        var store = SpecStore(.connectedChat)
        store.resumeTheOwlSession()
        // jcode answers a refused resume with an error on the event channel, which can come after the pong.
        store.pongWithoutHistory(4)
        store.server(#"{"type":"error","id":3,"message":"Session 'session-owl' is already live but could not be shared safely with this connection.","retry_after_secs":1}"#, followUps: ["show_error"]) {
            $0["/banners/error"] = [
                "message": "Session 'session-owl' is already live but could not be shared safely with this connection.", "retry_after_secs": 1,
                "text": "Session 'session-owl' is already live but could not be shared safely with this connection. (retry in 1 s)",
            ]
        }
        store.server(#"{"type":"history","id":5,"session_id":"session-fox","messages":[{"role":"user","content":"Why does it fail?"}]}"#, followUps: nil) {
            $0["/transcript"] = [entryJSON("m4", "user", text: "Why does it fail?")]
            $0["/session/id"] = "session-fox"
            $0["/session/title"] = "Fix the flaky test"
            $0["/session/history_loaded"] = true
            $0["/banners/status"] = nil
        }
        store.server(#"{"type":"pong","id":6}"#)
    }

    func testASessionSwitchWhoseHistoryNeverArrivesLeavesTheChatUsable() {
        var store = SpecStore(.connectedChat)
        store.resumeTheOwlSession()
        // The history frame was refused by the host (too_large): only the pongs arrive.
        store.pongWithoutHistory(4)
        historyLost(atPong: 6, row: "m4", &store)
        store.send(.sendMessage(text: "hello"), effects: [.webSocket(.send(#"{"id":7,"type":"message","content":"hello"}"#))], followUps: ["send"]) {
            $0.append("/transcript", entryJSON("m5", "user", text: "hello"))
            $0.append("/outbox", outboxJSON("o1", "hello", delivery: "awaiting_ack"))
            $0["/session/is_processing"] = true
        }
    }

    // MARK: - The first connect

    func testOnTheFirstConnectTheKeepAlivesPongBeforeTheHistoryEndsTheLoading() {
        var store = SpecStore.paired()
        store.openTheFirstSocket()
        // The answer to get_history (request 2) was refused by the host; the keep-alive's ping follows it.
        store.event(#"{"type":"timer_fired","timer_id":"keepalive.1"}"#, effects: [
            .webSocket(.send(#"{"id":3,"type":"ping"}"#)),
            .timer(.schedule(timerID: "keepalive.2", afterMS: 20000, purpose: "keepalive")),
        ])
        historyLost(atPong: 3, row: "m1", &store)
    }

    func testOnTheFirstConnectAPongAfterTheHistoryChangesNothing() {
        var store = SpecStore.paired()
        store.openTheFirstSocket()
        store.server(#"{"type":"history","id":2,"session_id":"session-fox","messages":[]}"#, followUps: nil) {
            $0["/session/id"] = "session-fox"
            $0["/session/history_loaded"] = true
            $0["/banners/status"] = nil
        }
        store.event(#"{"type":"timer_fired","timer_id":"keepalive.1"}"#, effects: [
            .webSocket(.send(#"{"id":3,"type":"ping"}"#)),
            .timer(.schedule(timerID: "keepalive.2", afterMS: 20000, purpose: "keepalive")),
        ])
        store.server(#"{"type":"pong","id":3}"#)
    }

    // MARK: - A failed message the person gives up

    /// `turn_running` whose message o1 was refused twice (failed), the
    /// running turn then ended, and "next" waits behind o1.
    static func failedMessageWithOneBehind(file: StaticString = #filePath, line: UInt = #line) -> SpecStore {
        var store = SpecStore.turnRunning(file: file, line: line)
        store.server(#"{"type":"error","id":3,"message":"Already processing a message"}"#, notes: nil, followUps: nil, file: file, line: line) {
            $0.remove("/transcript/3")
            $0["/outbox/0/delivery"] = "waiting"
            $0.append("/notices", ["id": "n1", "kind": "info", "text": "jcode is still busy with a turn: your message goes when it ends"])
        }
        store.server(
            #"{"type":"done","id":30}"#, effects: [.webSocket(.send(#"{"id":4,"type":"message","content":"go"}"#))], followUps: ["turn_ended", "send"],
            file: file, line: line
        ) {
            $0.append("/transcript", entryJSON("m5", "user", text: "go"))
            $0["/outbox/0/delivery"] = "awaiting_ack"
        }
        store.server(#"{"type":"error","id":4,"message":"Already processing a message"}"#, notes: nil, followUps: nil, file: file, line: line) {
            $0.remove("/transcript/3")
            $0["/outbox/0/delivery"] = "failed"
            $0["/banners/error"] = [
                "message": .string(ChatInteractor.failedMessage), "retry_after_secs": nil, "text": .string(ChatInteractor.failedMessage),
            ]
        }
        store.server(#"{"type":"done","id":30}"#, followUps: ["turn_ended"], file: file, line: line) { $0["/session/is_processing"] = false }
        store.send(.sendMessage(text: "next"), notes: ["message queued in the outbox"], file: file, line: line) {
            $0.append("/outbox", outboxJSON("o2", "next", delivery: "waiting"))
        }
        return store
    }

    func testAFailedMessageOffersDiscardAndTheMessagesBehindItWait() {
        let store = Self.failedMessageWithOneBehind()
        XCTAssertEqual(store.node("outbox.o1.retry")?.label, "Retry")
        XCTAssertEqual(store.node("outbox.o1.discard")?.label, "Discard")
        XCTAssertEqual(store.node("outbox.o1.discard")?.accessibilityLabel, "Discard this message; its text goes back to the message field")
        XCTAssertEqual(store.node("outbox.o2")?.variant, "waiting")
        XCTAssertNil(store.node("outbox.o2.discard"), "only a failed message is discarded")
    }

    func testDiscardingAFailedMessagePutsItsTextInTheEmptyDraftAndTheNextOneGoes() {
        var store = Self.failedMessageWithOneBehind()
        store.discardTheFailedMessage(draftAfter: "go")
    }

    func testDiscardingWithADraftTypedKeepsBothOnePerLine() {
        var store = Self.failedMessageWithOneBehind()
        store.send(.setDraft("half typed")) { $0["/draft"] = "half typed" }
        store.discardTheFailedMessage(draftAfter: "half typed\ngo")
    }

    func testDiscardingAMessageThatHasNotFailedOrIsUnknownIsLogged() {
        var store = Self.failedMessageWithOneBehind()
        store.dispatch(#"{"type":"discard_message","message_id":"o2"}"#, notes: ["discard_message: message o2 has not failed"])
        store.dispatch(#"{"type":"discard_message","message_id":"o9"}"#, notes: ["discard_message: no message o9 in the outbox"])
    }

    // MARK: - A notification opened offline

    func testAMessageUnconfirmedInTheSessionLeftBehindFailsWhenTheOtherSessionsHistoryComes() {
        var store = SpecStore.turnRunning()
        store.loseTheConnection { $0["/outbox/0/delivery"] = "unconfirmed"; $0["/session/is_processing"] = false }
        store.openTheOwlNotificationOffline()
        store.resubscribe(keepalive: "keepalive.3", session: "session-owl")
        // Only session-fox's history could say whether "go" arrived: it waits for Retry or Discard.
        store.server(
            #"{"type":"history","id":1,"session_id":"session-owl","messages":[]}"#,
            notes: ["message o1 failed: sent to session-fox, and the history is of session-owl: whether it arrived is unknown"],
            followUps: ["show_error"]
        ) {
            $0["/outbox/0/delivery"] = "failed"
            $0["/connection/attempt"] = 0
            $0["/session/history_loaded"] = true
            $0["/banners/status"] = nil
            $0["/banners/error"] = [
                "message": .string(ChatInteractor.failedMessage), "retry_after_secs": nil, "text": .string(ChatInteractor.failedMessage),
            ]
        }
    }
}

extension SpecStore {
    /// After `failedMessageWithOneBehind()`: Discard on the failed o1 puts
    /// "go" back in the draft (`draftAfter`: the draft then) and "next",
    /// behind it, goes out as request 5.
    fileprivate mutating func discardTheFailedMessage(draftAfter: String, file: StaticString = #filePath, line: UInt = #line) {
        dispatch(
            #"{"type":"discard_message","message_id":"o1"}"#,
            effects: [.webSocket(.send(#"{"id":5,"type":"message","content":"next"}"#))],
            notes: ["message o1 discarded: its text is back in the draft"], followUps: ["keep_in_draft", "send"], file: file, line: line
        ) {
            $0["/draft"] = .string(draftAfter)
            $0.remove("/outbox/0")
            $0["/outbox/0/delivery"] = "awaiting_ack"
            $0.append("/transcript", entryJSON("m6", "user", text: "next"))
            $0["/session/is_processing"] = true
        }
    }
}

/// The pong of request `id` comes and still no history came before it:
/// the chat says the history did not reach the app (row `row`) and is usable.
private func historyLost(atPong id: Int, row: String, _ store: inout SpecStore, file: StaticString = #filePath, line: UInt = #line) {
    store.server(
        #"{"type":"pong","id":\#(id)}"#,
        notes: ["asked again and still no history before the pong: it did not reach the core"], followUps: ["history_lost"],
        file: file, line: line
    ) {
        $0["/transcript"] = [entryJSON(row, "system", text: ChatInteractor.historyTooLarge)]
        $0["/session/history_loaded"] = true
        $0["/banners/status"] = nil
    }
}
