import XCTest
@testable import JcodeMobileCore
@testable import JcodeMobileJSON

/// Specifications of the history and the events as today's jcode server
/// sends them: `tool` and `background_task` rows, images, stop reasons,
/// guardrails, token totals, notifications, settings facts, server updates
/// and the events the app only logs.
final class TodaysServerHistoryTests: XCTestCase {
    // MARK: - History

    func testToolRowsCompleteTheCallsTheirAssistantRowListed() {
        var store = SpecStore(.connectedEmptyChat)
        store.server(
            #"{"type":"history","id":2,"session_id":"session-fox","messages":["#
                + #"{"role":"user","content":"Find the sleeps, then run the tests"},"#
                + #"{"role":"assistant","content":"Searching first.","tool_calls":["grep","bash"]},"#
                + #"{"role":"tool","content":"tests/reconnect.rs:42: sleep(100ms)","tool_data":{"id":"call_grep","name":"grep","input":{"pattern":"sleep"}}},"#
                + #"{"role":"tool","content":"error: 1 test failed","tool_data":{"id":"call_bash","name":"bash","input":{"command":"cargo test","timeout":60},"error":"exit status 101"}},"#
                + #"{"role":"assistant","content":"One sleep, and one failing test."}]}"#
        ) {
            $0["/transcript"] = [
                entryJSON("m1", "user", text: "Find the sleeps, then run the tests"),
                entryJSON("m2", "assistant", text: "Searching first.", toolCalls: [
                    toolCallJSON("call_grep", "grep", input: #"{"pattern":"sleep"}"#, output: "tests/reconnect.rs:42: sleep(100ms)", status: "succeeded"),
                    toolCallJSON("call_bash", "bash", input: #"{"command":"cargo test","timeout":60}"#, output: "error: 1 test failed", status: "failed", error: "exit status 101"),
                ]),
                entryJSON("m3", "assistant", text: "One sleep, and one failing test."),
            ]
        }
        XCTAssertEqual(
            store.node("message.m2")?.children.map(\.id), ["message.m2.md.0", "tool.m2.call_grep", "tool.m2.call_bash"],
            "its text, then two tool cards, no placeholders left")
    }

    func testBackgroundTaskRowsAreEntriesAndRowsOfUnknownRolesAreSkippedWithADroppedNote() {
        var store = SpecStore(.connectedEmptyChat)
        let history = #"{"type":"history","id":2,"session_id":"session-fox","messages":["#
            + #"{"role":"user","content":"Build it in the background"},"#
            + #"{"role":"memory","content":"the user prefers short answers"},"#
            + #"{"role":"background_task","content":"Build finished: 0 errors"},"#
            + #"{"role":"memory","content":"another memory"},"#
            + #"{"role":"compaction_summary","content":"earlier: set up CI"},"#
            + #"{"role":"assistant","content":"The build is green."}]}"#
        XCTAssertEqual(
            noteKinds(of: store, after: history), [.dropped], "the skipped rows are input the core could not read, not stale input")
        store.server(history, notes: ["history rows with unknown roles skipped: memory, compaction_summary"]) {
            $0["/transcript"] = [
                entryJSON("m1", "user", text: "Build it in the background"),
                entryJSON("m2", "background_task", text: "Build finished: 0 errors"),
                entryJSON("m3", "assistant", text: "The build is green."),
            ]
        }
        XCTAssertEqual(store.node("message.m2")?.label, "Background task")
    }

    func testHistoryImagesAreKeptWithWhatTheyBelongTo() {
        var store = SpecStore(.connectedEmptyChat)
        store.server(
            #"{"type":"history","id":2,"session_id":"session-fox","messages":[{"role":"user","content":"What does the page look like?"}],"images":["#
                + #"{"media_type":"image/png","data":"iVBORw0KGgo=","label":"screenshot.png","anchor":{"kind":"tool_call","id":"call_shot"}},"#
                + #"{"media_type":"image/jpeg","data":"/9j/4AAQ","anchor":{"kind":"user_prompt","ordinal":0}},"#
                + #"{"media_type":"image/gif","data":"R0lGODlh"}]}"#
        ) {
            $0["/transcript"] = [entryJSON("m1", "user", text: "What does the page look like?")]
            $0["/images"] = [
                ["media_type": "image/png", "label": "screenshot.png", "anchor": ["kind": "tool_call", "id": "call_shot"], "data": "iVBORw0KGgo="],
                ["media_type": "image/jpeg", "label": nil, "anchor": ["kind": "user_prompt", "ordinal": 0], "data": "/9j/4AAQ"],
                ["media_type": "image/gif", "label": nil, "anchor": nil, "data": "R0lGODlh"],
            ]
        }
        // They belong to the transcript: a later history without images has none.
        store.server(#"{"type":"history","id":2,"session_id":"session-fox","messages":[]}"#) {
            $0["/transcript"] = []
            $0["/images"] = []
        }
    }

    func testASessionThatStoppedMidTurnSaysSo() {
        var store = SpecStore.interruptedTurnOffered()
        store.server(#"{"type":"history","id":2,"session_id":"session-fox","messages":[{"role":"user","content":"Refactor it"}]}"#) {
            $0["/transcript"] = [entryJSON("m2", "user", text: "Refactor it")]
            $0["/session/was_interrupted"] = false
            $0["/interrupted_turn"] = nil
        }
    }

    // MARK: - How a reply ends

    func testAReplyThatDidNotEndNormallyCarriesItsStopReason() {
        let cases: [(raw: String, state: String, shown: String)] = [
            ("max_tokens", "max_tokens", "Reply cut off: it reached the model's output limit."),
            ("refusal", "refusal", "The model declined to answer."),
            ("content_filter", "content_filter", "The provider's content filter stopped this reply."),
            ("pause_turn", "pause_turn", "The provider paused this turn."),
            ("a_reason_from_next_year", "other", "The reply stopped early."),
        ]
        for c in cases {
            var store = SpecStore.turnRunning()
            store.startTheReply("Partial")
            store.server(#"{"type":"message_end","stop_reason":"\#(c.raw)"}"#) {
                $0["/transcript/4/is_streaming"] = false
                $0["/transcript/4/stop_reason"] = .string(c.state)
            }
            XCTAssertEqual(store.node("message.m5.stop_reason")?.label, c.shown, c.raw)
            XCTAssertEqual(store.node("message.m5.stop_reason")?.value, c.state, c.raw)
        }
    }

    func testAReplyThatEndedNormallyCarriesNoStopReason() {
        for raw in ["end_turn", "stop", "tool_use"] {
            var store = SpecStore.turnRunning()
            store.startTheReply("Done.")
            store.server(#"{"type":"message_end","stop_reason":"\#(raw)"}"#) { $0["/transcript/4/is_streaming"] = false }
            XCTAssertNil(store.node("message.m5.stop_reason"), raw)
        }
    }

    func testAProviderGuardrailAddsASystemEntryWithItsMessage() {
        var store = SpecStore.turnRunning()
        store.server(#"{"type":"provider_guardrail","stop_reason":"refusal","message":"The provider declined to answer this request."}"#) {
            $0.append("/transcript", entryJSON("m5", "system", text: "The provider declined to answer this request."))
        }
        XCTAssertEqual(store.node("message.m5")?.label, "System")
        XCTAssertEqual(store.node("message.m5")?.value, "The provider declined to answer this request.")
    }

    // MARK: - Tokens

    func testTokensKeepTheCacheFiguresAndEachAPICallOfATurnAddsUp() {
        // connected_chat's history total: 48210 in, 3120 out. jcode sends one
        // `tokens` per API call (agent/turn_streaming_mpsc.rs): a turn with a
        // tool call makes two calls, and both count.
        var store = SpecStore.turnRunning()
        store.server(#"{"type":"tokens","input":100,"output":20,"cache_read_input":80,"cache_creation_input":5}"#) {
            $0["/session/tokens"] = ["input": 100, "output": 20, "cache_read_input": 80, "cache_creation_input": 5]
            $0["/session/total_tokens"] = ["input": 48310, "output": 3140, "cache_read_input": 80, "cache_creation_input": 5]
        }
        store.server(#"{"type":"tokens","input":150,"output":40,"cache_read_input":120,"cache_creation_input":5}"#) {
            $0["/session/tokens"] = ["input": 250, "output": 60, "cache_read_input": 200, "cache_creation_input": 10]
            $0["/session/total_tokens"] = ["input": 48460, "output": 3180, "cache_read_input": 200, "cache_creation_input": 10]
        }
        store.finishTheTurn()
        // The next turn adds to the total the finished one left.
        store.sendTheNextMessage("again") { $0["/session/tokens"] = nil }
        store.server(#"{"type":"tokens","input":10,"output":2}"#) {
            $0["/session/tokens"] = ["input": 10, "output": 2, "cache_read_input": nil, "cache_creation_input": nil]
            $0["/session/total_tokens"] = ["input": 48470, "output": 3182, "cache_read_input": 200, "cache_creation_input": 10]
        }
        store.send(.navigate(.settings)) { $0["/screen"] = "settings" }
        XCTAssertEqual(store.node("settings.tokens")?.value, "48470 in · 3182 out · 200 from cache")
    }

    func testTheTokensOfATurnEndedByAnErrorStayInTheTotal() {
        var store = SpecStore.turnRunning()
        store.server(#"{"type":"tokens","input":100,"output":20}"#) {
            $0["/session/tokens"] = ["input": 100, "output": 20, "cache_read_input": nil, "cache_creation_input": nil]
            $0["/session/total_tokens"] = ["input": 48310, "output": 3140, "cache_read_input": nil, "cache_creation_input": nil]
        }
        // The provider failed: the turn ends, its tokens were spent.
        store.server(#"{"type":"error","message":"overloaded"}"#, followUps: ["show_error", "turn_ended"]) {
            $0["/session/is_processing"] = false
            $0["/outbox"] = []
            $0["/banners/error"] = ["message": "overloaded", "retry_after_secs": nil, "text": "overloaded"]
        }
        store.sendTheNextMessage("again") { $0["/session/tokens"] = nil }
        store.server(#"{"type":"tokens","input":10,"output":2}"#) {
            $0["/session/tokens"] = ["input": 10, "output": 2, "cache_read_input": nil, "cache_creation_input": nil]
            $0["/session/total_tokens"] = ["input": 48320, "output": 3142, "cache_read_input": nil, "cache_creation_input": nil]
        }
    }

    // MARK: - Notifications, settings facts, server updates

    func testANotificationNamesItsSource() {
        var store = SpecStore(.connectedChat)
        let cases: [(event: String, shown: String)] = [
            (#"{"type":"notification","from_session":"session-owl","from_name":"owl","message":"tests pass"}"#, "owl: tests pass"),
            (#"{"type":"notification","from_session":"background_task","message":"build finished"}"#, "Background task: build finished"),
            // As today's server sends it (background_task.rs): the generic name gives way to the label.
            (#"{"type":"notification","from_session":"background_task","from_name":"background task","notification_type":{"kind":"message","scope":"background_task"},"message":"tests finished"}"#, "Background task: tests finished"),
            (#"{"type":"notification","from_session":"session-eel","notification_type":{"kind":"file_conflict"},"message":"src/lib.rs changed"}"#, "session-eel: src/lib.rs changed"),
            (#"{"type":"notification","message":"hello"}"#, "hello"),
        ]
        for (n, c) in cases.enumerated() {
            store.server(c.event, followUps: ["notice"]) {
                $0.append("/notices", ["id": .string("n\(n + 1)"), "kind": "notification", "text": .string(c.shown)])
            }
        }
        XCTAssertEqual(store.node("notice.n2")?.label, "Background task: build finished")
    }

    func testTheModelConnectionAndTheRoutedProviderShowInSettings() {
        var store = SpecStore(.connectedChat)
        store.server(#"{"type":"connection_type","connection":"websocket"}"#) { $0["/session/connection_type"] = "websocket" }
        store.server(#"{"type":"upstream_provider","provider":"fireworks"}"#) { $0["/session/upstream_provider"] = "fireworks" }
        store.send(.navigate(.settings)) { $0["/screen"] = "settings" }
        XCTAssertEqual(store.node("settings.transport")?.value, "websocket")
        XCTAssertEqual(store.node("settings.upstream")?.value, "fireworks")
        store.server(#"{"type":"connection_type","connection":"https/sse"}"#) { $0["/session/connection_type"] = "https/sse" }
        XCTAssertEqual(store.node("settings.transport")?.value, "https/sse")
    }

    func testAFailedServerUpdateStepIsAWarningNotice() {
        var store = SpecStore(.connectedChat)
        store.server(#"{"type":"reload_progress","step":"build","message":"Building jcode"}"#, notes: ["server update: build"])
        store.server(#"{"type":"reload_progress","step":"build","message":"Built","success":true}"#, notes: ["server update: build"])
        store.server(#"{"type":"reload_progress","step":"install","message":"permission denied","success":false,"output":"cp: /usr/local/bin/jcode"}"#, followUps: ["notice"]) {
            $0.append("/notices", ["id": "n1", "kind": "warning", "text": "Server update failed (install): permission denied"])
        }
    }

    func testEventsTheAppOnlyLogsAreReadAndChangeNothing() {
        let events = [
            #"{"type":"swarm_status","members":[{"session_id":"s1","status":"running"}]}"#,
            #"{"type":"kv_cache_request","hit":true,"tokens":1024}"#,
            #"{"type":"mcp_status","servers":[{"name":"git","connected":true}]}"#,
            #"{"type":"memory_activity","activity":"recall","count":2}"#,
            #"{"type":"comm_members","members":["a","b"]}"#,
        ]
        for event in events {
            var store = SpecStore.turnRunning()
            XCTAssertEqual(noteKinds(of: store, after: event).filter { $0 != .info }, [], event)
            store.server(event)
            XCTAssertEqual(store["/revision"], 1, "\(event) changed the state")
        }
    }

    // MARK: - Helpers

    /// The kinds of the notes a server event would log, on a copy of `store`.
    private func noteKinds(of store: SpecStore, after eventJSON: String, file: StaticString = #filePath, line: UInt = #line) -> [Note.Kind] {
        var copy = store.store
        do throws(CoreError) {
            let event = try PlatformEvent.wire.decode(try JSONParser.parse("{\"type\":\"websocket_event\",\"event\":\(eventJSON)}"))
            return copy.send(.platform(event)).notes.map(\.kind)
        } catch {
            XCTFail("test event does not decode: \(error.message)", file: file, line: line)
            return []
        }
    }
}
