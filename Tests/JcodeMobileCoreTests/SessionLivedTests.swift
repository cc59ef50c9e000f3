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
        store.server(#"{"type":"done","id":41}"#, followUps: ["turn_ended"]) {
            $0["/session/server_phase"] = nil
            $0["/session/is_processing"] = false
        }
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
        store.send(.resumeSession(id: "session-owl"), effects: [
            .webSocket(.send(#"{"id":4,"type":"resume_session","session_id":"session-owl","client_instance_id":"fixture-device"}"#)),
            .webSocket(.send(#"{"id":5,"type":"ping"}"#)),
        ], followUps: ["open_chat", "session_switched", "send"]) {
            $0["/transcript"] = []
            $0["/session/id"] = "session-owl"
            $0["/session/title"] = "Release notes"
            $0["/session/history_loaded"] = false
            $0["/session/total_tokens"] = nil
            $0["/banners/status"] = "Loading conversation…"
            $0["/notices"] = []
        }
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
}
