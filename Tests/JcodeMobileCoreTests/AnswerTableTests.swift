import XCTest
@testable import JcodeMobileCore

/// What an answer answers (docs/PROTOCOL.md, "Answers"): jcode answers each
/// request with its own events (`GatewayAnswer`), ids belong to the socket
/// that sent them, and a request is forgotten once answered.
final class AnswerTableTests: XCTestCase {
    // MARK: - The table

    func testJcodeAnswersPingWithPongAndGetHistoryWithHistoryNeverWithDone() {
        XCTAssertEqual(GatewayAnswer.of(.ping).sequence, "ack, pong")
        XCTAssertFalse(GatewayAnswer.of(.ping).isAnswered(by: .done))
        XCTAssertEqual(GatewayAnswer.of(.getHistory).sequence, "ack, history")
        XCTAssertFalse(GatewayAnswer.of(.getHistory).isAnswered(by: .done))
        XCTAssertFalse(GatewayAnswer.of(.compact).isAnswered(by: .done))
        XCTAssertFalse(GatewayAnswer.of(.setModel).isAnswered(by: .done))
        XCTAssertTrue(GatewayAnswer.of(.stdinResponse).isAnswered(by: .done))
    }

    func testARequestIsForgottenOnceItsEndingAnswerCame() {
        var sent = SentRequests()
        sent.record(2, .ping)
        sent.record(3, .message)
        XCTAssertEqual(sent.answered(by: .ack, id: 2), .ping)
        sent.settle(.ack, id: 2)
        XCTAssertEqual(sent.kind(of: 2), .ping)
        sent.settle(.pong, id: 2)
        XCTAssertNil(sent.kind(of: 2))
        // A done never answers a ping, even one not yet answered.
        sent.record(4, .ping)
        XCTAssertNil(sent.answered(by: .done, id: 4))
        XCTAssertEqual(sent.answered(by: .done, id: 3), .message)
        sent.settle(.done, id: 3)
        XCTAssertNil(sent.answered(by: .done, id: 3))
        XCTAssertNil(sent.latest(.message))
    }

    func testASubscribeNamingASessionIsAnsweredByTwoDonesAndEndsAtTheOneAfterSession() {
        var sent = SentRequests()
        sent.record(1, .subscribe)
        // handle_resume_session: history, done; then handle_subscribe: session, done.
        sent.settle(.history, id: 1)
        sent.settle(.done, id: 1)
        XCTAssertEqual(sent.answered(by: .done, id: 1), .subscribe)
        sent.settle(.session, id: nil)
        XCTAssertEqual(sent.settle(.done, id: 1), .subscribe)
        XCTAssertNil(sent.answered(by: .done, id: 1))
    }

    // MARK: - A turn across a reconnect

    /// jcode answers ping with pong only (client_lifecycle.rs, `Request::Ping`): the turn's done,
    /// fanned out with the number the message had on the old socket, ends the turn even when a
    /// ping of the new socket took that number.
    func testATurnAcrossAReconnectEndsWithItsDoneWhenAPingOfTheNewSocketHasItsNumber() {
        var store = SpecStore.turnRunningAndReceived()
        store.loseTheConnectionMidTurn()
        store.reconnect()
        // The history has the message, and the turn still runs (another client is attached).
        store.server(
            #"{"type":"history","id":1,"session_id":"session-fox","messages":[{"role":"user","content":"Why does test_reconnect fail on CI?"},{"role":"user","content":"go"}],"activity":{"is_processing":true}}"#,
            notes: ["message o1 is in the server's history: not sent again"]
        ) {
            $0["/transcript"] = [entryJSON("m5", "user", text: "Why does test_reconnect fail on CI?"), entryJSON("m6", "user", text: "go")]
            $0["/outbox"] = []
            $0["/connection/attempt"] = 0
            $0["/session/history_loaded"] = true
            $0["/session/is_processing"] = true
            $0["/banners/status"] = nil
        }
        store.server(#"{"type":"session","session_id":"session-fox"}"#)
        store.server(#"{"type":"done","id":1}"#, notes: ["done for subscribe"])
        store.server(#"{"type":"pong","id":2}"#)
        // The keep-alive's ping takes number 3 on this socket.
        store.event(
            #"{"type":"timer_fired","timer_id":"keepalive.3"}"#,
            effects: [
                .webSocket(.send(#"{"id":3,"type":"ping"}"#)),
                .timer(.schedule(timerID: "keepalive.4", afterMS: 20000, purpose: "keepalive")),
            ])
        // The turn's done carries the old socket's 3: it is the turn's end, not the ping's answer.
        store.doneOfATurnStartedElsewhere(id: 3, history: 4)
    }

    /// Request ids start again with every socket: a done carrying the number of a request of an
    /// earlier socket ends the turn shown, whatever that number meant there.
    func testAnIdOfAnEarlierSocketMeansNothingOnTheNewOne() {
        var store = SpecStore(.connectedChat)
        store.send(.compact, effects: [.webSocket(.send(#"{"id":3,"type":"compact"}"#))], followUps: ["send"]) {
            $0["/session/is_compacting"] = true
        }
        // Its answer (compact_result) can only come on the socket that asked.
        store.loseTheConnection(notes: ["compact: the connection was lost before its answer"]) { $0["/session/is_compacting"] = false }
        store.reconnect()
        store.answerWithAnEmptyHistory { $0["/transcript"] = [] }
        store.server(#"{"type":"text_delta","text":"From the terminal"}"#) {
            $0["/transcript"] = [entryJSON("m4", "assistant", text: "From the terminal", isStreaming: true)]
            $0["/session/is_processing"] = true
        }
        store.doneOfATurnStartedElsewhere(id: 3) { $0["/transcript/0/is_streaming"] = false }
    }
}

/// A turn left behind: jcode sends the events of a connection's own turn to that connection when
/// no other client of the turn's session is attached (state.rs, session_event_fanout_sender_with_fallback),
/// so after a switch they keep coming, with no session named.
final class LeftBehindTurnTests: XCTestCase {
    func testTheRestOfATurnLeftBehindInAnotherSessionIsNotShownInTheNewOne() {
        var store = SpecStore.turnRunningAndReceived()
        store.resumeTheOwlSession(request: 4, notes: ["the turn of request 3 goes on in the session left behind: its events are not shown here"]) {
            $0["/outbox"] = []
            $0["/session/is_processing"] = false
        }
        store.server(#"{"type":"history","id":4,"session_id":"session-owl","messages":[{"role":"user","content":"Draft the notes"}]}"#) {
            $0["/transcript"] = [entryJSON("m5", "user", text: "Draft the notes")]
            $0["/session/history_loaded"] = true
            $0["/banners/status"] = nil
        }
        // The fox turn's events reach this connection: none of them lands in owl's transcript.
        store.server(#"{"type":"text_delta","text":"Fox's answer"}"#)
        store.server(#"{"type":"tool_start","id":"call_1","name":"bash"}"#)
        store.server(#"{"type":"done","id":3}"#, notes: ["the turn of request 3, left behind in the other session, ended"])
        // What comes after it is this session's again.
        store.server(#"{"type":"text_delta","text":"Owl"}"#) {
            $0.append("/transcript", entryJSON("m6", "assistant", text: "Owl", isStreaming: true))
            $0["/session/is_processing"] = true
        }
    }

    /// Found by the resume property test (seeds 56, 70): switched away and back while the turn
    /// runs, its events are the shown session's again.
    func testSwitchingBackToTheSessionWhoseTurnWasLeftBehindShowsItsEventsAgain() {
        var store = SpecStore.turnRunningAndReceived()
        store.resumeTheOwlSession(request: 4, notes: ["the turn of request 3 goes on in the session left behind: its events are not shown here"]) {
            $0["/outbox"] = []
            $0["/session/is_processing"] = false
        }
        store.server(#"{"type":"history","id":4,"session_id":"session-owl","messages":[]}"#) {
            $0["/session/history_loaded"] = true
            $0["/banners/status"] = nil
        }
        store.send(.resumeSession(id: "session-fox"), effects: [
            .webSocket(.send(#"{"id":6,"type":"resume_session","session_id":"session-fox","client_instance_id":"fixture-device"}"#)),
            .webSocket(.send(#"{"id":7,"type":"ping"}"#)),
        ], notes: ["back in the session whose turn was left behind: its events are shown again"], followUps: ["open_chat", "session_switched", "send"]) {
            $0["/session/id"] = "session-fox"
            $0["/session/title"] = "Fix the flaky test"
            $0["/session/history_loaded"] = false
            $0["/banners/status"] = "Loading conversation…"
        }
        store.server(
            #"{"type":"history","id":6,"session_id":"session-fox","messages":[{"role":"user","content":"go"}],"activity":{"is_processing":true}}"#
        ) {
            $0["/transcript"] = [entryJSON("m5", "user", text: "go")]
            $0["/session/history_loaded"] = true
            $0["/session/is_processing"] = true
            $0["/banners/status"] = nil
        }
        store.server(#"{"type":"text_delta","text":"Fox"}"#) {
            $0.append("/transcript", entryJSON("m6", "assistant", text: "Fox", isStreaming: true))
        }
        store.doneOfATurnStartedElsewhere(id: 3, history: 8) { $0["/transcript/1/is_streaming"] = false }
    }

    /// Found by the resume property test (seed 70): the resume refused, the server kept the turn's
    /// session; its history says the connection is there again, and the turn's events show.
    func testAResumeRefusedLeavesTheConnectionInTheTurnsSessionAndItsEventsShow() {
        var store = SpecStore.turnRunningAndReceived()
        store.resumeTheOwlSession(request: 4, notes: ["the turn of request 3 goes on in the session left behind: its events are not shown here"]) {
            $0["/outbox"] = []
            $0["/session/is_processing"] = false
        }
        store.pongWithoutHistory(5)
        store.server(
            #"{"type":"history","id":6,"session_id":"session-fox","messages":[{"role":"user","content":"go"}],"activity":{"is_processing":true}}"#,
            followUps: nil
        ) {
            $0["/transcript"] = [entryJSON("m5", "user", text: "go")]
            $0["/session/id"] = "session-fox"
            $0["/session/title"] = "Fix the flaky test"
            $0["/session/history_loaded"] = true
            $0["/session/is_processing"] = true
            $0["/banners/status"] = nil
        }
        store.server(#"{"type":"text_delta","text":"Fox"}"#) {
            $0.append("/transcript", entryJSON("m6", "assistant", text: "Fox", isStreaming: true))
        }
    }
}
