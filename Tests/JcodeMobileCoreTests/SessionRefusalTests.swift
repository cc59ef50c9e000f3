import XCTest
@testable import JcodeMobileCore

/// `clear` and `rename_session` as today's jcode answers them: accepted
/// with their `done` (after the fresh session's `session`, or
/// `session_renamed`), refused while the session is busy with an `error`
/// carrying the request's id (`client_lifecycle.rs`,
/// `reject_if_agent_busy_for_request`).
final class SessionRefusalTests: XCTestCase {
    static let busyClear = "Cannot handle clear while the session is busy. Try again after the current turn finishes."
    static let busyRename = "Cannot handle rename_session while the session is busy. Try again after the current turn finishes."

    // MARK: - Clear

    func testAClearRefusedWhileTheSessionIsBusyLeavesTheChatAndShowsTheServersReason() {
        var store = SpecStore(.connectedChat)
        store.send(.clearConversation, effects: [.webSocket(.send(#"{"id":3,"type":"clear"}"#))], followUps: ["send"]) {
            $0["/session/is_clearing"] = true
        }
        store.server(
            #"{"type":"error","id":3,"message":"\#(Self.busyClear)","retry_after_secs":1}"#,
            notes: ["clear refused: \(Self.busyClear)"], followUps: ["clear_answered", "show_error"]
        ) {
            $0["/session/is_clearing"] = false
            $0["/banners/error"] = ["message": .string(Self.busyClear), "retry_after_secs": 1, "text": .string(Self.busyClear + " (retry in 1 s)")]
        }
        XCTAssertEqual(store["/transcript"]?.arrayValue?.count, 3, "the conversation is still shown")
        XCTAssertEqual(store["/session/id"], "session-fox")
    }

    func testAMessageSentWhileAClearIsUnansweredGoesOnceTheClearIsRefused() {
        var store = SpecStore.clearingWithAMessageWaiting()
        store.server(
            #"{"type":"error","id":3,"message":"\#(Self.busyClear)"}"#,
            effects: [.webSocket(.send(#"{"id":4,"type":"message","content":"go"}"#))],
            notes: ["clear refused: \(Self.busyClear)"], followUps: ["clear_answered", "send", "show_error"]
        ) {
            $0["/session/is_clearing"] = false
            $0.append("/transcript", entryJSON("m4", "user", text: "go"))
            $0["/outbox/0/delivery"] = "awaiting_ack"
            $0["/session/is_processing"] = true
            $0["/banners/error"] = ["message": .string(Self.busyClear), "retry_after_secs": nil, "text": .string(Self.busyClear)]
        }
    }

    func testAClearIsAskedOnceUntilItIsAnswered() {
        var store = SpecStore(.connectedChat)
        store.send(.clearConversation, effects: [.webSocket(.send(#"{"id":3,"type":"clear"}"#))], followUps: ["send"]) {
            $0["/session/is_clearing"] = true
        }
        store.send(.clearConversation, notes: ["clear: already awaiting its answer"])
        store.send(.navigate(.settings)) { $0["/screen"] = "settings" }
        XCTAssertEqual(store.node("settings.clear")?.label, "Clearing…")
        XCTAssertEqual(store.node("settings.clear")?.enabled, false)
    }

    func testAClearUnansweredWhenTheConnectionDropsIsNoLongerAwaited() {
        var store = SpecStore(.connectedChat)
        store.send(.clearConversation, effects: [.webSocket(.send(#"{"id":3,"type":"clear"}"#))], followUps: ["send"]) {
            $0["/session/is_clearing"] = true
        }
        let socket = store.state.connection.socketEffectID?.rawValue ?? -1
        store.event(
            #"{"type":"websocket_closed","effect_id":\#(socket)}"#,
            effects: [.timer(.cancel(timerID: "keepalive.1")), .timer(.schedule(timerID: "reconnect.2", afterMS: 1000, purpose: "reconnect"))],
            notes: ["clear: the connection was lost before its answer"], followUps: ["connection_lost"]
        ) {
            $0["/connection/phase"] = "reconnecting"
            $0["/connection/attempt"] = 1
            $0["/connection/reason"] = "Connection closed"
            $0["/connection/socket_open"] = false
            $0["/connection/reconnect_delay_ms"] = 1000
            $0["/banners/status"] = "Connection lost, retrying in 1 s (attempt 1)"
            $0["/session/is_clearing"] = false
        }
        XCTAssertEqual(store["/transcript"]?.arrayValue?.count, 3, "the next history says what the server did")
    }

    func testTheFreshSessionAClearMadeIsListedAndNamedFromItsId() {
        var store = SpecStore(.connectedChat)
        store.clearIntoAFreshSession()
        store.send(.navigate(.sessions)) { $0["/screen"] = "sessions" }
        XCTAssertEqual(store.node("sessions.list")?.children.map(\.label), ["Fix the flaky test", "Release notes", "Otter"])
        XCTAssertEqual(store.node("session.session_otter_1700000000001_0000000000000001")?.selected, true)
        XCTAssertEqual(store.node("session.session-fox")?.selected, false)
    }

    func testAnAcceptedClearStartsTheFreshSessionWithNoTokensAndARepeatedDoneChangesNothing() {
        var store = SpecStore.turnRunning()
        store.server(#"{"type":"tokens","input":100,"output":20}"#) {
            $0["/session/tokens"] = ["input": 100, "output": 20, "cache_read_input": nil, "cache_creation_input": nil]
            $0["/session/total_tokens"] = ["input": 48310, "output": 3140, "cache_read_input": nil, "cache_creation_input": nil]
        }
        store.finishTheTurn()
        store.clearIntoAFreshSession(request: 4) { $0["/session/tokens"] = nil }
        // The same done again (a frame sent twice): the clear was answered and is forgotten.
        store.server(#"{"type":"done","id":4}"#, notes: ["done 4 for a turn this device did not see; nothing to end"])
    }

    // MARK: - Rename

    func testARenameRefusedWhileTheSessionIsBusyKeepsTheTitleAndWhatWasTyped() {
        var store = SpecStore(.connectedChat)
        store.send(.renameSession(title: "Release"), effects: [.webSocket(.send(#"{"id":3,"type":"rename_session","title":"Release"}"#))], followUps: ["send"]) {
            $0["/session/pending_rename"] = "Release"
        }
        store.server(
            #"{"type":"error","id":3,"message":"\#(Self.busyRename)","retry_after_secs":1}"#,
            notes: ["rename_session refused: \(Self.busyRename)"], followUps: ["show_error"]
        ) {
            $0["/session/pending_rename"] = nil
            $0["/session/rename_draft"] = "Release"
            $0["/banners/error"] = ["message": .string(Self.busyRename), "retry_after_secs": 1, "text": .string(Self.busyRename + " (retry in 1 s)")]
        }
        XCTAssertEqual(store["/session/title"], "Fix the flaky test")
        store.send(.navigate(.settings)) { $0["/screen"] = "settings" }
        XCTAssertEqual(store.node("settings.rename_field")?.value, "Release", "the title typed is kept to try again")
        XCTAssertEqual(store.node("settings.rename")?.enabled, true)
    }

    func testTheRenameFieldEditsADraftAndItsButtonAsksTheServer() {
        var store = SpecStore(.connectedChat)
        store.send(.navigate(.settings)) { $0["/screen"] = "settings" }
        XCTAssertEqual(store.node("settings.rename_field")?.value, "Fix the flaky test", "the field starts from the current title")
        XCTAssertEqual(store.node("settings.rename_field")?.supportedActions, ["tap", "set_rename_draft"])
        XCTAssertEqual(store.node("settings.rename")?.enabled, false, "nothing to rename to yet")
        store.dispatch(#"{"type":"set_rename_draft","value":"Deflake CI"}"#) { $0["/session/rename_draft"] = "Deflake CI" }
        XCTAssertEqual(store.node("settings.rename")?.enabled, true)
        store.send(
            .tapNode(id: "settings.rename"), effects: [.webSocket(.send(#"{"id":3,"type":"rename_session","title":"Deflake CI"}"#))],
            followUps: ["rename_session", "send"]
        ) {
            $0["/session/pending_rename"] = "Deflake CI"
        }
        XCTAssertEqual(store.node("settings.rename")?.label, "Renaming…")
        XCTAssertEqual(store.node("settings.rename")?.enabled, false)
        store.server(#"{"type":"session_renamed","session_id":"session-fox","title":"Deflake CI","display_title":"Deflake CI"}"#) {
            $0["/session/all_sessions/0/title"] = "Deflake CI"
            $0["/session/title"] = "Deflake CI"
            $0["/session/rename_draft"] = nil
        }
        store.server(#"{"type":"done","id":3}"#, notes: ["done for rename_session"]) { $0["/session/pending_rename"] = nil }
        XCTAssertEqual(store.node("settings.rename_field")?.value, "Deflake CI")
        XCTAssertEqual(store.node("settings.rename")?.label, "Rename session")
    }

    func testASessionRenamedForAnotherSessionLeavesTheRenameAwaited() {
        var store = SpecStore(.connectedChat)
        store.send(.renameSession(title: "Release"), effects: [.webSocket(.send(#"{"id":3,"type":"rename_session","title":"Release"}"#))], followUps: ["send"]) {
            $0["/session/pending_rename"] = "Release"
        }
        store.server(#"{"type":"session_renamed","session_id":"session-owl","display_title":"Changelog"}"#) {
            $0["/session/all_sessions/1/title"] = "Changelog"
        }
        XCTAssertEqual(store["/session/title"], "Fix the flaky test")
        XCTAssertEqual(store["/session/pending_rename"], "Release")
    }

    func testARefusalOfARequestNeverSentChangesNothingOfTheSession() {
        var store = SpecStore(.connectedChat)
        store.send(.renameSession(title: "Release"), effects: [.webSocket(.send(#"{"id":3,"type":"rename_session","title":"Release"}"#))], followUps: ["send"]) {
            $0["/session/pending_rename"] = "Release"
        }
        // Request 42 was never sent on this socket: the chat shows the words, the rename stays awaited.
        store.server(#"{"type":"error","id":42,"message":"no such request"}"#, followUps: ["show_error"]) {
            $0["/banners/error"] = ["message": "no such request", "retry_after_secs": nil, "text": "no such request"]
        }
        // A done for a request never sent is nobody's either.
        store.server(#"{"type":"done","id":42}"#, notes: ["done 42 for a turn this device did not see; nothing to end"], followUps: nil)
        XCTAssertEqual(store["/session/pending_rename"], "Release")
    }

    // MARK: - While a turn runs

    func testClearAndRenameAreDisabledWhileATurnRunsAndRefusedHereIfAskedAnyway() {
        var store = SpecStore.turnRunning()
        store.send(.navigate(.settings)) { $0["/screen"] = "settings" }
        store.dispatch(#"{"type":"set_rename_draft","value":"Deflake CI"}"#) { $0["/session/rename_draft"] = "Deflake CI" }
        XCTAssertEqual(store.node("settings.clear")?.enabled, false)
        XCTAssertEqual(store.node("settings.rename")?.enabled, false)
        store.send(.clearConversation, followUps: ["show_error"]) {
            $0["/banners/error"] = [
                "message": "Wait for the current turn to finish before clearing the conversation.", "retry_after_secs": nil,
                "text": "Wait for the current turn to finish before clearing the conversation.",
            ]
        }
        store.send(.renameSession(title: "Deflake CI"), followUps: ["show_error"]) {
            $0["/banners/error"] = [
                "message": "Wait for the current turn to finish before renaming the session.", "retry_after_secs": nil,
                "text": "Wait for the current turn to finish before renaming the session.",
            ]
        }
    }
}
