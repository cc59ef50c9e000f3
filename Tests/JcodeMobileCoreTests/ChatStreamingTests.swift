import XCTest
@testable import JcodeMobileCore

final class ChatStreamingTests: XCTestCase {
    func testSendingTheDraftPutsItInTheTranscriptAndSendsAMessageRequestAndKeepsItInTheOutboxUntilAcknowledged() {
        var store = SpecStore(.connectedChat)
        store.send(.setDraft("  Run the tests  ")) { $0["/draft"] = "  Run the tests  " }
        store.send(.sendMessage(text: nil), effects: [.webSocket(.send(#"{"id":3,"type":"message","content":"Run the tests"}"#))], followUps: ["composer_sent", "send"]) {
            $0["/draft"] = ""
            $0.append("/transcript", entryJSON("m4", "user", text: "Run the tests"))
            $0.append("/outbox", outboxJSON("o1", "Run the tests", delivery: "awaiting_ack"))
            $0["/session/is_processing"] = true
        }
    }

    func testAnEmptyDraftSendsNothing() {
        var store = SpecStore(.connectedChat)
        store.send(.setDraft("   ")) { $0["/draft"] = "   " }
        store.send(.sendMessage(text: nil), notes: ["send_message: nothing to send"])
    }

    func testTextDeltasStreamIntoOneAssistantEntryUntilDone() {
        var store = SpecStore.turnRunning()
        store.server(#"{"type":"text_delta","text":"Hel"}"#) {
            $0.append("/transcript", entryJSON("m5", "assistant", text: "Hel", isStreaming: true))
        }
        store.server(#"{"type":"text_delta","text":"lo"}"#) { $0["/transcript/4/text"] = "Hello" }
        store.server(#"{"type":"done","id":3}"#, followUps: ["turn_ended"]) {
            $0["/session/is_processing"] = false
            $0["/transcript/4/is_streaming"] = false
            $0["/outbox"] = []
        }
    }

    func testDurationsAndDelaysTheAppCannotShowAreTreatedAsAbsent() {
        var store = SpecStore.turnRunning()
        store.server(#"{"type":"reasoning_delta","text":"x"}"#) {
            $0.append("/transcript", entryJSON("m5", "assistant", reasoning: "x", isStreaming: true))
            $0["/session/is_reasoning"] = true
        }
        // A negative duration is no duration: reasoning_secs stays null.
        store.server(#"{"type":"reasoning_done","duration_secs":-5}"#) { $0["/session/is_reasoning"] = false }
        XCTAssertEqual(store.node("message.m5.reasoning")?.label, "Thinking…")
        store.server(#"{"type":"reasoning_done","duration_secs":1e300}"#) { $0["/transcript/4/reasoning_secs"] = 1e300 }
        XCTAssertEqual(store.node("message.m5.reasoning")?.label, "Thought for a long time")
        // A retry delay that does not fit is no delay: the banner names none.
        store.server(#"{"type":"error","message":"overloaded","retry_after_secs":-9223372036854775808}"#, followUps: ["show_error", "turn_ended"]) {
            $0["/session/is_processing"] = false
            $0["/outbox"] = []
            $0["/transcript/4/is_streaming"] = false
            $0["/banners/error"] = ["message": "overloaded", "retry_after_secs": nil, "text": "overloaded"]
        }
        XCTAssertEqual(ChatScreen.formatSeconds(1e19), "a long time")
        XCTAssertEqual(ChatScreen.formatSeconds(125), "2 min 5 s")
        XCTAssertEqual(ChatScreen.formatSeconds(.infinity), "a while")
    }

    func testTextReplaceReplacesTheStreamedTextOfTheCurrentEntry() {
        var store = SpecStore.turnRunning()
        store.server(#"{"type":"text_delta","text":"garbled <tool"}"#) {
            $0.append("/transcript", entryJSON("m5", "assistant", text: "garbled <tool", isStreaming: true))
        }
        store.server(#"{"type":"text_replace","text":"Clean text"}"#) { $0["/transcript/4/text"] = "Clean text" }
        // The entry still streams: the next delta extends the replaced text.
        store.server(#"{"type":"text_delta","text":"."}"#) { $0["/transcript/4/text"] = "Clean text." }
    }

    func testReasoningIsKeptApartFromTextWithAnIsReasoningFlag() {
        var store = SpecStore.turnRunning()
        store.server(#"{"type":"reasoning_delta","text":"Think"}"#) {
            $0.append("/transcript", entryJSON("m5", "assistant", reasoning: "Think", isStreaming: true))
            $0["/session/is_reasoning"] = true
        }
        store.server(#"{"type":"reasoning_done","duration_secs":2.5}"#) {
            $0["/session/is_reasoning"] = false
            $0["/transcript/4/reasoning_secs"] = 2.5
        }
        store.server(#"{"type":"text_delta","text":"Answer"}"#) { $0["/transcript/4/text"] = "Answer" }
    }

    func testMessageEndClosesTheEntrySoTheNextDeltaStartsANewOne() {
        var store = SpecStore.turnRunning()
        streamAndEndTheFirstMessage("first", &store)
        store.server(#"{"type":"text_delta","text":"second"}"#) {
            $0.append("/transcript", entryJSON("m6", "assistant", text: "second", isStreaming: true))
        }
    }

    func testRetryRollbackDropsThePartialEntryAndSaysRetrying() {
        var store = SpecStore.turnRunning()
        streamAndEndTheFirstMessage("committed", &store)
        store.server(#"{"type":"reasoning_delta","text":"partial"}"#) {
            $0.append("/transcript", entryJSON("m6", "assistant", reasoning: "partial", isStreaming: true))
            $0["/session/is_reasoning"] = true
        }
        // The committed entry m5 is kept; only the partial m6 goes.
        store.server(#"{"type":"retry_rollback","attempt":1,"max":3}"#) {
            $0.remove("/transcript/5")
            $0["/session/is_reasoning"] = false
            $0["/session/status_detail"] = "Retrying (1/3)"
        }
        XCTAssertEqual(store.node("chat.activity")?.label, "Retrying (1/3)")
    }

    func testEmptyAssistantStubsLeftByAFinishedTurnAreDropped() {
        var store = SpecStore.turnRunning()
        store.server(#"{"type":"tool_start","id":"t1","name":"bash"}"#) {
            $0.append("/transcript", entryJSON("m5", "assistant", toolCalls: [toolCallJSON("t1", "bash", status: "pending")], isStreaming: true))
        }
        store.server(#"{"type":"message_end"}"#) { $0["/transcript/4/is_streaming"] = false }
        store.server(#"{"type":"reasoning_done"}"#)
        store.server(#"{"type":"text_delta","text":""}"#) {
            $0.append("/transcript", entryJSON("m6", "assistant", isStreaming: true))
        }
        // The empty stub m6 is gone; the tool entry m5 stays.
        store.server(#"{"type":"done","id":3}"#, followUps: ["turn_ended"]) {
            $0.remove("/transcript/5")
            $0["/session/is_processing"] = false
            $0["/outbox"] = []
        }
    }

    func testInterruptSendsCancelAndInterruptedEndsTheTurnWithANotice() {
        var store = SpecStore.turnRunning()
        store.send(.interrupt, effects: [.webSocket(.send(#"{"id":4,"type":"cancel"}"#))], followUps: ["send"])
        store.server(#"{"type":"interrupted"}"#, followUps: ["notice", "turn_ended"]) {
            $0["/session/is_processing"] = false
            $0["/outbox"] = []
            $0.append("/notices", ["id": "n1", "kind": "info", "text": "Interrupted"])
        }
        store.send(.interrupt, notes: ["interrupt: no turn is running"])
    }

    func testAnErrorShowsABannerWithTheRetryDelayAndEndsTheTurn() {
        var store = SpecStore.turnRunning()
        store.server(#"{"type":"text_delta","text":"partial"}"#) {
            $0.append("/transcript", entryJSON("m5", "assistant", text: "partial", isStreaming: true))
        }
        store.server(#"{"type":"error","id":3,"message":"overloaded","retry_after_secs":15}"#, followUps: ["show_error", "turn_ended"]) {
            $0["/session/is_processing"] = false
            $0["/outbox"] = []
            $0["/transcript/4/is_streaming"] = false
            $0["/banners/error"] = ["message": "overloaded", "retry_after_secs": 15, "text": "overloaded (retry in 15 s)"]
        }
        store.send(.dismissError) { $0["/banners/error"] = nil }
    }

    func testTokensStatusDetailAndServerPhaseShowWhileTheTurnRunsAndClearWhenItEnds() {
        var store = SpecStore.turnRunning()
        // The settings' total counts the running turn too (the fixture's history said 48210 in, 3120 out).
        store.server(#"{"type":"tokens","input":1200,"output":34,"cache_read_input":900}"#) {
            $0["/session/tokens"] = ["input": 1200, "output": 34, "cache_read_input": 900, "cache_creation_input": nil]
            $0["/session/total_tokens"] = ["input": 49410, "output": 3154, "cache_read_input": 900, "cache_creation_input": nil]
        }
        store.server(#"{"type":"status_detail","detail":"Reading files"}"#) { $0["/session/status_detail"] = "Reading files" }
        store.server(#"{"type":"connection_phase","phase":"streaming"}"#) { $0["/session/server_phase"] = "streaming" }
        let activity = store.node("chat.activity")
        XCTAssertEqual(activity?.label, "Reading files")
        XCTAssertEqual(activity?.value, "1200 in · 34 out")
        store.server(#"{"type":"done","id":3}"#, followUps: ["turn_ended"]) {
            $0["/session/is_processing"] = false
            $0["/outbox"] = []
            $0["/session/status_detail"] = nil
            $0["/session/server_phase"] = nil
        }
        XCTAssertEqual(store.node("chat.activity")?.visible, false)
    }

    func testADoneWithoutAnIdEndsTheRunningTurn() {
        var store = SpecStore.turnRunning()
        store.frame(#"{"type":"text_delta","text":"Bye"}"#, #"{"type":"done"}"#, followUps: ["turn_ended"]) {
            $0.append("/transcript", entryJSON("m5", "assistant", text: "Bye"))
            $0["/session/is_processing"] = false
            $0["/outbox"] = []
        }
        XCTAssertEqual(store.node("chat.interrupt")?.visible, false)
    }

    func testAnErrorWithoutIdOrRetryDelayShowsItsMessageAloneAndEndsTheTurn() {
        var store = SpecStore.turnRunning()
        store.frame(#"{"type":"error","message":"slow down"}"#, followUps: ["show_error", "turn_ended"]) {
            $0["/session/is_processing"] = false
            $0["/outbox"] = []
            $0["/banners/error"] = ["message": "slow down", "retry_after_secs": nil, "text": "slow down"]
        }
        XCTAssertEqual(store.node("banner.error")?.label, "slow down")
    }

    func testADoneCarryingTheIdOfTheSubscribeAnsweredLongAgoIsAnotherClientsAndEndsNotTheMessageInFlight() {
        var store = SpecStore.turnRunning()
        // The subscribe (request 1) was answered by session and done: it is forgotten, so this done
        // is another client's turn ending. Nothing changes: "go" stays in flight, the turn runs on.
        store.server(#"{"type":"done","id":1}"#, notes: ["done 1 while message o1 is in flight; ignored"])
    }

    func testSendingWhileOfflineQueuesTheMessageAndItGoesOutOnceConnectedAndLeavesTheOutboxWhenItsTurnEnds() {
        var store = SpecStore(.networkReconnect)
        store.send(.sendMessage(text: "hello from the train"), notes: ["message queued in the outbox"]) {
            $0.append("/outbox", outboxJSON("o1", "hello from the train", delivery: "waiting"))
        }
        store.send(.sendMessage(text: "and another"), notes: ["message queued in the outbox"]) {
            $0.append("/outbox", outboxJSON("o2", "and another", delivery: "waiting"))
        }
        // The fixture's reconnect timer is reconnect.2 (keepalive.1 was the connection's keep-alive).
        store.event(#"{"type":"timer_fired","timer_id":"reconnect.2"}"#, effects: [.webSocket(.connect(url: "ws://devbox.local:7643/ws", authToken: "fixture-token"))]) {
            $0["/connection/reconnect_delay_ms"] = nil
            $0["/banners/status"] = "Reconnecting to devbox (attempt 1)…"
        }
        store.resubscribe(keepalive: "keepalive.3")
        // The history replaces the transcript; the first queued message goes out (new ids: m4 is never reused)
        // and stays in the outbox until acknowledged.
        store.server(#"{"type":"history","id":1,"session_id":"session-fox","messages":[]}"#, effects: [.webSocket(.send(#"{"id":3,"type":"message","content":"hello from the train"}"#))], followUps: ["send"]) {
            $0["/transcript"] = [entryJSON("m4", "user", text: "hello from the train")]
            $0["/outbox/0/delivery"] = "awaiting_ack"
            $0["/connection/attempt"] = 0
            $0["/session/history_loaded"] = true
            $0["/session/is_processing"] = true
            $0["/banners/status"] = nil
        }
        // Its turn ends (it leaves the outbox) and the next one starts at once: is_processing stays true.
        store.server(#"{"type":"done","id":3}"#, effects: [.webSocket(.send(#"{"id":4,"type":"message","content":"and another"}"#))], followUps: ["turn_ended", "send"]) {
            $0.append("/transcript", entryJSON("m5", "user", text: "and another"))
            $0["/outbox"] = [outboxJSON("o2", "and another", delivery: "awaiting_ack")]
        }
    }

    func testALostConnectionEndsTheStreamingEntryButKeepsItsText() {
        var store = SpecStore.turnRunning()
        store.server(#"{"type":"text_delta","text":"half an ans"}"#) {
            $0.append("/transcript", entryJSON("m5", "assistant", text: "half an ans", isStreaming: true))
        }
        store.loseTheConnectionMidTurn { $0["/transcript/4/is_streaming"] = false }
    }

    func testClearConversationSendsClearAndEmptiesTheTranscriptWhenTheServerAccepts() {
        var store = SpecStore(.connectedChat)
        store.clearIntoAFreshSession()
        XCTAssertEqual(store.node("chat.header")?.label, "Otter")
    }
}

/// The turn's first reply: a delta opens it (the fifth row), and
/// `message_end` closes it.
private func streamAndEndTheFirstMessage(_ text: String, _ store: inout SpecStore, file: StaticString = #filePath, line: UInt = #line) {
    store.server(#"{"type":"text_delta","text":"\#(text)"}"#, file: file, line: line) {
        $0.append("/transcript", entryJSON("m5", "assistant", text: text, isStreaming: true))
    }
    store.server(#"{"type":"message_end"}"#, file: file, line: line) { $0["/transcript/4/is_streaming"] = false }
}
