import XCTest
@testable import JcodeMobileCore

/// Cases of a session as a person lives it against today's jcode (issue 35):
/// a phone joining mid-turn, notices that belong to one session.
final class SessionLivedTests: XCTestCase {
    /// jcode sends connection_phase only inside a turn (turn_streaming_mpsc.rs): a phone that
    /// joined during another client's turn may see it first; the turn's done clears it.
    func testAPhaseSeenBeforeAnyTextShowsATurnAndItsDoneClearsIt() {
        var store = SpecStore(.connectedChat)
        store.server(#"{"type":"connection_phase","phase":"waiting for response"}"#) {
            $0["/session/server_phase"] = "waiting for response"
            $0["/session/is_processing"] = true
        }
        store.doneOfATurnStartedElsewhere(id: 41) { $0["/session/server_phase"] = nil }
    }

    /// jcode's TUI clears its notices on a session switch and a clear (server_events.rs).
    func testInterruptedAndCompactedNoticesDoNotFollowTheSwitchToAnotherSession() {
        var store = SpecStore.turnRunning()
        store.server(#"{"type":"interrupted"}"#, followUps: ["notice", "turn_ended"]) {
            $0["/session/is_processing"] = false
            $0["/outbox"] = []
            $0.append("/notices", ["id": "n1", "kind": "info", "text": "Interrupted"])
        }
        store.server(#"{"type":"compaction","trigger":"manual","tokens_saved":1200}"#, followUps: ["notice"]) {
            $0.append("/notices", ["id": "n2", "kind": "info", "text": "Context compacted (1200 tokens saved)"])
        }
        store.resumeTheOwlSession(request: 4) { $0["/notices"] = [] }
    }

    func testAnAcceptedClearTakesTheInterruptedNoticeWithIt() {
        var store = SpecStore.turnRunning()
        store.server(#"{"type":"interrupted"}"#, followUps: ["notice", "turn_ended"]) {
            $0["/session/is_processing"] = false
            $0["/outbox"] = []
            $0.append("/notices", ["id": "n1", "kind": "info", "text": "Interrupted"])
        }
        store.send(.clearConversation, effects: [.webSocket(.send(#"{"id":4,"type":"clear"}"#))], followUps: ["send"]) {
            $0["/session/is_clearing"] = true
        }
        store.server(#"{"type":"done","id":4}"#, notes: ["done for clear"], followUps: ["clear_answered"]) {
            $0["/transcript"] = []
            $0["/session/is_clearing"] = false
            $0["/session/total_tokens"] = nil
            $0["/notices"] = []
        }
    }

    /// Found by the resume property test (seed 10): a switch while the link is coming back is
    /// not refused; the reconnect's subscribe names the session chosen, which resumes it.
    func testASwitchWhileReconnectingIsResumedByTheReconnectsSubscribe() {
        var store = SpecStore(.connectedChat)
        store.loseTheConnection()
        store.send(.resumeSession(id: "session-owl"), notes: ["session session-owl is resumed when the connection is up"],
                   followUps: ["open_chat", "session_switched"]) {
            $0.showsTheOwlSessionLoading()
        }
        store.fireTheReconnect()
        store.resubscribe(keepalive: "keepalive.3", session: "session-owl")
    }

    /// Found by the resume property test (seed 5): a message written in one session, lost with its
    /// socket, is not sent into the session the person switched to before its history came; it
    /// waits for Retry (which sends it where the chat is then) or Discard.
    func testAMessageWrittenInOneSessionIsNeverSentIntoAnother() {
        var store = SpecStore.turnRunning()
        store.loseTheConnectionMidTurn()
        store.reconnect()
        // Before the reconnect's history: the chat was already loading.
        store.resumeTheOwlSession { $0["/session/history_loaded"] = false }
        // fox's history (the subscribe's) does not hold "go": it would go again, after the resume's history.
        store.server(
            #"{"type":"history","id":1,"session_id":"session-fox","messages":[{"role":"user","content":"Why does test_reconnect fail on CI?"}]}"#,
            notes: ["message o1 is not in the server's history: it goes again", "history answering request 1; the outbox waits for get_history"],
            followUps: nil
        ) {
            $0["/transcript"] = [entryJSON("m5", "user", text: "Why does test_reconnect fail on CI?")]
            $0["/outbox/0/delivery"] = "waiting"
            $0["/connection/attempt"] = 0
            $0["/session/id"] = "session-fox"
            $0["/session/title"] = "Fix the flaky test"
        }
        store.server(
            #"{"type":"history","id":3,"session_id":"session-owl","messages":[]}"#,
            notes: ["message o1 failed: written in session session-fox, and the chat now shows session-owl"], followUps: nil
        ) {
            $0["/transcript"] = []
            $0["/outbox/0/delivery"] = "failed"
            $0["/session/id"] = "session-owl"
            $0["/session/title"] = "Release notes"
            $0["/session/history_loaded"] = true
            $0["/banners/status"] = nil
            $0["/banners/error"] = [
                "message": "A message could not be delivered. It is kept: tap Retry to send it again.", "retry_after_secs": nil,
                "text": "A message could not be delivered. It is kept: tap Retry to send it again.",
            ]
        }
    }

    /// Another client's turn streams on the phone without its prompt (its ack is not fanned out):
    /// when it ends, the phone asks for the history and shows the turn whole, once.
    func testATurnStartedInTheTerminalIsShownWholeOnceItEnds() {
        var store = SpecStore(.connectedEmptyChat)
        store.server(#"{"type":"history","id":2,"session_id":"session-fox","messages":[]}"#) { _ in }
        store.server(#"{"type":"text_delta","text":"All 42 tests pass."}"#) {
            $0["/transcript"] = [entryJSON("m1", "assistant", text: "All 42 tests pass.", isStreaming: true)]
            $0["/session/is_processing"] = true
        }
        store.server(
            #"{"type":"done","id":41}"#, effects: [.webSocket(.send(#"{"id":3,"type":"get_history"}"#))],
            notes: ["a turn this device did not start ended: asking for its history to show it whole"], followUps: ["turn_ended", "send"]
        ) {
            $0["/transcript/0/is_streaming"] = false
            $0["/session/is_processing"] = false
        }
        store.server(
            #"{"type":"history","id":3,"session_id":"session-fox","messages":[{"role":"user","content":"Run the tests"},{"role":"assistant","content":"All 42 tests pass."}]}"#
        ) {
            $0["/transcript"] = [entryJSON("m2", "user", text: "Run the tests"), entryJSON("m3", "assistant", text: "All 42 tests pass.")]
        }
    }
}
