import XCTest
@testable import JcodeMobileCore
@testable import JcodeMobileJSON

final class ToolCallTests: XCTestCase {
    func testAToolCallStreamsItsInputThenRunsThenSucceeds() {
        var store = SpecStore.turnRunning()
        store.server(#"{"type":"tool_start","id":"t1","name":"bash"}"#) {
            $0.append("/transcript", entryJSON("m5", "assistant", toolCalls: [toolCallJSON("t1", "bash", status: "pending")], isStreaming: true))
        }
        store.server(#"{"type":"tool_input","delta":"{\"command\":"}"#) { $0["/transcript/4/tool_calls/0/input"] = #"{"command":"# }
        store.server(#"{"type":"tool_input","delta":"\"ls\"}"}"#) { $0["/transcript/4/tool_calls/0/input"] = #"{"command":"ls"}"# }
        store.server(#"{"type":"tool_exec","id":"t1","name":"bash"}"#) { $0["/transcript/4/tool_calls/0/status"] = "running" }
        store.server(#"{"type":"tool_done","id":"t1","name":"bash","output":"README.md"}"#) {
            $0["/transcript/4/tool_calls/0/status"] = "succeeded"
            $0["/transcript/4/tool_calls/0/output"] = "README.md"
        }
        XCTAssertEqual(
            store["/transcript/4/tool_calls"],
            [toolCallJSON("t1", "bash", input: #"{"command":"ls"}"#, output: "README.md", status: "succeeded")])
    }

    func testAnInterruptMarksTheToolsThatNeverReportedAsInterrupted() {
        var store = SpecStore.turnRunning()
        runTheFirstTool(id: "a", name: "read", output: "ok", &store)
        store.server(#"{"type":"tool_exec","id":"b","name":"bash"}"#) {
            $0.append("/transcript/4/tool_calls", toolCallJSON("b", "bash", status: "running"))
        }
        store.server(#"{"type":"tool_start","id":"c","name":"write"}"#) {
            $0.append("/transcript/4/tool_calls", toolCallJSON("c", "write", status: "pending"))
        }
        store.send(.interrupt, effects: [.webSocket(.send(#"{"id":4,"type":"cancel"}"#))], followUps: ["send"])
        store.server(#"{"type":"interrupted"}"#, followUps: ["notice", "turn_ended"]) {
            $0["/session/is_processing"] = false
            $0["/transcript/4/is_streaming"] = false
            $0["/outbox"] = []
            $0["/transcript/4/tool_calls/1/status"] = "interrupted"
            $0["/transcript/4/tool_calls/2/status"] = "interrupted"
            $0.append("/notices", ["id": "n1", "kind": "info", "text": "Interrupted"])
        }
        XCTAssertEqual(store.node("tool.m5.a")?.value, "Done")
        XCTAssertEqual(store.node("tool.m5.b")?.value, "Interrupted")
        XCTAssertEqual(store.node("tool.m5.c")?.value, "Interrupted")
    }

    func testAToolOfAFinishedTurnIsNotTouchedByALaterInterrupt() {
        var store = SpecStore.turnRunning()
        store.server(#"{"type":"tool_exec","id":"b","name":"bash"}"#) {
            $0.append("/transcript", entryJSON("m5", "assistant", toolCalls: [toolCallJSON("b", "bash", status: "running")], isStreaming: true))
        }
        store.finishTheTurn { $0["/transcript/4/is_streaming"] = false }
        // Another client's interrupt arrives later: the finished turn's card keeps what the server said.
        store.server(#"{"type":"interrupted"}"#, followUps: ["notice", "turn_ended"]) {
            $0.append("/notices", ["id": "n1", "kind": "info", "text": "Interrupted"])
        }
        XCTAssertEqual(store["/transcript/4/tool_calls/0/status"], "running")
    }

    func testARepeatedToolStartKeepsOneCard() {
        var store = SpecStore.turnRunning()
        store.server(#"{"type":"tool_start","id":"t1","name":"bash"}"#) {
            $0.append("/transcript", entryJSON("m5", "assistant", toolCalls: [toolCallJSON("t1", "bash", status: "pending")], isStreaming: true))
        }
        store.server(#"{"type":"tool_exec","id":"t1","name":"bash"}"#) { $0["/transcript/4/tool_calls/0/status"] = "running" }
        store.server(#"{"type":"tool_start","id":"t1","name":"bash"}"#, notes: ["tool_start for call t1, already shown; ignored"])
        XCTAssertEqual(store["/transcript/4/tool_calls"], [toolCallJSON("t1", "bash", status: "running")])
    }

    func testAToolIdReusedInALaterTurnIsANewCard() {
        // Tool ids are per turn (jcode's ios/TestHarness/mock_gateway.py reuses them).
        var store = SpecStore.turnRunning()
        runTheFirstTool(id: "t1", name: "bash", output: "one", &store)
        store.finishTheTurn { $0["/transcript/4/is_streaming"] = false }
        store.send(.sendMessage(text: "Again"), effects: [.webSocket(.send(#"{"id":4,"type":"message","content":"Again"}"#))], followUps: ["send"]) {
            $0.append("/transcript", entryJSON("m6", "user", text: "Again"))
            $0.append("/outbox", outboxJSON("o2", "Again", delivery: "awaiting_ack"))
            $0["/session/is_processing"] = true
        }
        store.server(#"{"type":"tool_start","id":"t1","name":"read"}"#) {
            $0.append("/transcript", entryJSON("m7", "assistant", toolCalls: [toolCallJSON("t1", "read", status: "pending")], isStreaming: true))
        }
        store.server(#"{"type":"tool_exec","id":"t1","name":"read"}"#) { $0["/transcript/6/tool_calls/0/status"] = "running" }
        store.server(#"{"type":"tool_start","id":"t1","name":"read"}"#, notes: ["tool_start for call t1, already shown; ignored"])
        store.server(#"{"type":"tool_done","id":"t1","name":"read","output":"two"}"#) {
            $0["/transcript/6/tool_calls/0/status"] = "succeeded"
            $0["/transcript/6/tool_calls/0/output"] = "two"
        }
        XCTAssertEqual(store["/transcript/4/tool_calls"], [toolCallJSON("t1", "bash", output: "one", status: "succeeded")])
    }

    func testAToolDoneWithAReusedIdBeforeItsStartIsANewCardToo() {
        var store = SpecStore.turnRunning()
        store.server(#"{"type":"tool_done","id":"t1","name":"bash","output":"one"}"#) {
            $0.append("/transcript", entryJSON("m5", "assistant", toolCalls: [toolCallJSON("t1", "bash", output: "one", status: "succeeded")], isStreaming: true))
        }
        store.finishTheTurn { $0["/transcript/4/is_streaming"] = false }
        store.send(.sendMessage(text: "Again"), effects: [.webSocket(.send(#"{"id":4,"type":"message","content":"Again"}"#))], followUps: ["send"]) {
            $0.append("/transcript", entryJSON("m6", "user", text: "Again"))
            $0.append("/outbox", outboxJSON("o2", "Again", delivery: "awaiting_ack"))
            $0["/session/is_processing"] = true
        }
        store.server(#"{"type":"tool_done","id":"t1","name":"bash","output":"two","error":"exit 1"}"#) {
            $0.append("/transcript", entryJSON("m7", "assistant", toolCalls: [toolCallJSON("t1", "bash", output: "two", status: "failed", error: "exit 1")], isStreaming: true))
        }
    }

    func testACallStillRunningInAHistoryTakenMidTurnIsCompletedNotRepeated() {
        var store = SpecStore(.connectedEmptyChat)
        store.server(
            #"{"type":"history","id":2,"session_id":"session-fox","messages":[{"role":"user","content":"Build"},{"role":"assistant","content":"","tool_data":{"id":"call_r","name":"bash"}}],"activity":{"is_processing":true}}"#
        ) {
            $0["/transcript"] = [entryJSON("m1", "user", text: "Build"), entryJSON("m2", "assistant", toolCalls: [toolCallJSON("call_r", "bash", status: "running")])]
            $0["/session/is_processing"] = true
        }
        store.server(#"{"type":"tool_start","id":"call_r","name":"bash"}"#, notes: ["tool_start for call call_r, already shown; ignored"])
        store.server(#"{"type":"tool_done","id":"call_r","name":"bash","output":"built"}"#) {
            $0["/transcript/1/tool_calls/0/status"] = "succeeded"
            $0["/transcript/1/tool_calls/0/output"] = "built"
        }
    }

    func testToolInputAppendsToTheLatestCallOnly() {
        var store = SpecStore.turnRunning()
        store.server(#"{"type":"tool_start","id":"a","name":"read"}"#) {
            $0.append("/transcript", entryJSON("m5", "assistant", toolCalls: [toolCallJSON("a", "read", status: "pending")], isStreaming: true))
        }
        store.server(#"{"type":"tool_start","id":"b","name":"write"}"#) {
            $0.append("/transcript/4/tool_calls", toolCallJSON("b", "write", status: "pending"))
        }
        store.server(#"{"type":"tool_input","delta":"x"}"#) { $0["/transcript/4/tool_calls/1/input"] = "x" }
    }

    func testToolInputWithNoCallIsIgnored() {
        var store = SpecStore.turnRunning()
        store.server(#"{"type":"tool_input","delta":"x"}"#, notes: ["tool_input with no tool call; ignored"])
    }

    func testExecAndDoneCreateTheCallWhenItWasNeverStarted() {
        var store = SpecStore.turnRunning()
        store.server(#"{"type":"tool_exec","id":"x","name":"grep"}"#) {
            $0.append("/transcript", entryJSON("m5", "assistant", toolCalls: [toolCallJSON("x", "grep", status: "running")], isStreaming: true))
        }
        store.server(#"{"type":"tool_done","id":"y","name":"edit","output":"","error":"permission denied"}"#) {
            $0.append("/transcript/4/tool_calls", toolCallJSON("y", "edit", status: "failed", error: "permission denied"))
        }
    }

    func testAFailedToolKeepsItsErrorAndOutputAndTheCardSaysFailed() {
        var store = SpecStore(.toolFailed)
        XCTAssertEqual(
            store["/transcript/4/tool_calls"],
            [toolCallJSON("call_test", "bash", input: #"{"command":"cargo test"}"#, output: "error[E0425]: cannot find value `x`", status: "failed", error: "exit status 101")])
        let card = store.node("tool.m5.call_test")
        XCTAssertEqual(card?.label, "bash")
        XCTAssertEqual(card?.value, "Failed")
        XCTAssertEqual(card?.accessibilityValue, "Failed: exit status 101")
        // Closed, the card shows its command and its error.
        XCTAssertEqual(card?.expanded, false)
        XCTAssertEqual(card?.children.map(\.id), ["tool.m5.call_test.summary", "tool.m5.call_test.error"])
        XCTAssertEqual(card?.find("tool.m5.call_test.summary")?.value, "cargo test")
        // Opened, its input and output too.
        store.send(.tapNode(id: "tool.m5.call_test"), followUps: ["set_expanded"]) {
            $0["/expanded_nodes"] = [["node_id": "tool.m5.call_test", "expanded": true]]
        }
        let opened = store.node("tool.m5.call_test")
        XCTAssertEqual(opened?.expanded, true)
        XCTAssertEqual(
            opened?.children.map(\.id),
            ["tool.m5.call_test.summary", "tool.m5.call_test.input", "tool.m5.call_test.output", "tool.m5.call_test.error"])
        XCTAssertEqual(opened?.find("tool.m5.call_test.input")?.value, #"{"command":"cargo test"}"#)
        XCTAssertEqual(opened?.find("tool.m5.call_test.output")?.value, "error[E0425]: cannot find value `x`")
    }

    func testADoneForACallInAnEarlierEntryUpdatesItInPlace() {
        // The gateway sends message_end before tool_exec/tool_done: the call
        // must be found, not duplicated.
        var store = SpecStore.turnRunning()
        store.server(#"{"type":"tool_start","id":"t1","name":"bash"}"#) {
            $0.append("/transcript", entryJSON("m5", "assistant", toolCalls: [toolCallJSON("t1", "bash", status: "pending")], isStreaming: true))
        }
        store.server(#"{"type":"message_end"}"#) { $0["/transcript/4/is_streaming"] = false }
        store.server(#"{"type":"tool_done","id":"t1","name":"bash","output":"ok"}"#) {
            $0["/transcript/4/tool_calls/0/status"] = "succeeded"
            $0["/transcript/4/tool_calls/0/output"] = "ok"
        }
    }

    func testHistoryMapsToolDataAndToolCalls() {
        var store = SpecStore(.connectedEmptyChat)
        store.server(
            #"{"type":"history","session_id":"session-fox","messages":[{"role":"assistant","content":"","tool_data":{"id":"c1","name":"bash","input":{"command":"ls"},"output":"a.txt"}},{"role":"assistant","content":"","tool_data":{"id":"c2","name":"edit","input":"{}","error":"denied"}},{"role":"assistant","content":"","tool_data":{"id":"c3","name":"bash","input":""}},{"role":"assistant","content":"Done","tool_calls":["read","grep"]}]}"#
        ) {
            $0["/transcript"] = [
                entryJSON("m1", "assistant", toolCalls: [toolCallJSON("c1", "bash", input: #"{"command":"ls"}"#, output: "a.txt", status: "succeeded")]),
                entryJSON("m2", "assistant", toolCalls: [toolCallJSON("c2", "edit", input: "{}", status: "failed", error: "denied")]),
                entryJSON("m3", "assistant", toolCalls: [toolCallJSON("c3", "bash", status: "running")]),
                entryJSON("m4", "assistant", text: "Done", toolCalls: [
                    toolCallJSON("history.3.0", "read", status: "succeeded"), toolCallJSON("history.3.1", "grep", status: "succeeded"),
                ]),
            ]
        }
    }

    func testAPatchWhoseHunkStartsAtIntMaxIsShownAndKillsNothingStreamedOrInAHistory() {
        let patch = #"--- a/x\n+++ b/x\n@@ -9223372036854775807,1 +9223372036854775807,1 @@\n-a\n+b\n"#
        var store = SpecStore.turnRunning()
        store.server(#"{"type":"tool_start","id":"p1","name":"patch"}"#) {
            $0.append("/transcript", entryJSON("m5", "assistant", toolCalls: [toolCallJSON("p1", "patch", status: "pending")], isStreaming: true))
        }
        let input = #"{"patch_text":""# + patch + #""}"#
        store.server(JSONValue.object(JSONObject([("type", "tool_input"), ("delta", .string(input))])).jsonString) {
            $0["/transcript/4/tool_calls/0/input"] = .string(input)
        }
        store.dispatch(#"{"type":"set_expanded","node_id":"tool.m5.p1","expanded":true}"#) {
            $0["/expanded_nodes"] = [["node_id": "tool.m5.p1", "expanded": true]]
        }
        XCTAssertEqual(store.node("tool.m5.p1.diff.0.0")?.label, "@@ -1 +1 @@")
        XCTAssertEqual(store.node("tool.m5.p1.diff.0")?.value, "+1 −1")

        var again = SpecStore(.connectedEmptyChat)
        let history = #"{"type":"history","session_id":"session-fox","messages":[{"role":"assistant","content":"","tool_data":{"id":"p1","name":"patch","input":{"patch_text":""# + patch + #""},"output":"ok"}}]}"#
        again.server(history) {
            $0["/transcript"] = [entryJSON("m1", "assistant", toolCalls: [
                toolCallJSON("p1", "patch", input: #"{"patch_text":""# + patch + #""}"#, output: "ok", status: "succeeded"),
            ])]
        }
        again.dispatch(#"{"type":"set_expanded","node_id":"tool.m1.p1","expanded":true}"#) {
            $0["/expanded_nodes"] = [["node_id": "tool.m1.p1", "expanded": true]]
        }
        XCTAssertEqual(again.node("tool.m1.p1.diff.0.0")?.label, "@@ -1 +1 @@")
    }

    func testTheToolCardSaysPreparingWhileTheInputStreamsAndRunningOnceTheToolRuns() {
        var store = SpecStore.turnRunning()
        store.server(#"{"type":"tool_start","id":"call_bash","name":"bash"}"#) {
            $0.append("/transcript", entryJSON("m5", "assistant", toolCalls: [toolCallJSON("call_bash", "bash", status: "pending")], isStreaming: true))
        }
        XCTAssertEqual(store.node("message.m5")?.children.map(\.id), ["tool.m5.call_bash"], "the card belongs to its message")
        XCTAssertEqual(store.node("tool.m5.call_bash")?.label, "bash")
        XCTAssertEqual(store.node("tool.m5.call_bash")?.value, "Preparing")
        XCTAssertEqual(store.node("tool.m5.call_bash")?.accessibilityValue, "Preparing")
        XCTAssertEqual(store.node("tool.m5.call_bash")?.children.map(\.id), [], "no input yet")
        // While its input streams in, the call is still being prepared.
        store.frame(#"{"type":"tool_input","delta":"{\"command\":"}"#, #"{"type":"tool_input","delta":"\"cargo test\"}"}"#) {
            $0["/transcript/4/tool_calls/0/input"] = #"{"command":"cargo test"}"#
        }
        XCTAssertEqual(store.node("tool.m5.call_bash")?.value, "Preparing")
        XCTAssertEqual(store.node("tool.m5.call_bash.summary")?.value, "cargo test")
        store.server(#"{"type":"tool_exec","id":"call_bash","name":"bash"}"#) { $0["/transcript/4/tool_calls/0/status"] = "running" }
        XCTAssertEqual(store.node("tool.m5.call_bash")?.label, "bash")
        XCTAssertEqual(store.node("tool.m5.call_bash")?.value, "Running")
        XCTAssertEqual(store.node("tool.m5.call_bash")?.accessibilityValue, "Running")
        store.server(#"{"type":"tool_done","id":"call_bash","name":"bash","output":"2 passed"}"#) {
            $0["/transcript/4/tool_calls/0/status"] = "succeeded"
            $0["/transcript/4/tool_calls/0/output"] = "2 passed"
        }
        XCTAssertEqual(store.node("tool.m5.call_bash")?.value, "Done")
        XCTAssertEqual(store.node("tool.m5.call_bash")?.children.map(\.id), ["tool.m5.call_bash.summary"], "closed until tapped")
        store.dispatch(#"{"type":"set_expanded","node_id":"tool.m5.call_bash","expanded":true}"#) {
            $0["/expanded_nodes"] = [["node_id": "tool.m5.call_bash", "expanded": true]]
        }
        XCTAssertEqual(
            store.node("tool.m5.call_bash")?.children.map(\.id),
            ["tool.m5.call_bash.summary", "tool.m5.call_bash.input", "tool.m5.call_bash.output"])
        XCTAssertEqual(store.node("tool.m5.call_bash.output")?.value, "2 passed")
    }

    func testAToolDoneWithoutOutputOrErrorSucceedsWithEmptyOutput() {
        var store = SpecStore.turnRunning()
        store.frame(#"{"type":"tool_start","id":"call_x","name":"bash"}"#, #"{"type":"tool_done","id":"call_x","name":"bash"}"#) {
            $0.append("/transcript", entryJSON("m5", "assistant", toolCalls: [toolCallJSON("call_x", "bash", output: "", status: "succeeded", error: nil)], isStreaming: true))
        }
        XCTAssertEqual(store.node("tool.m5.call_x")?.value, "Done")
        XCTAssertEqual(store.node("tool.m5.call_x")?.children.map(\.id), [], "no output and no error to show")
    }

    /// The tool card in a tree (the first one).
    private func card(in node: SemanticNode) -> SemanticNode? {
        if node.role == .toolCall { return node }
        for child in node.children { if let found = card(in: child) { return found } }
        return nil
    }

    func testAnInputStreamedInSmallDeltasShowsInTheAppsTreeWhatItsWholeInputShowsAndItsDiffWhenOpened() {
        let driver = AppDriver(#"{"scenario":"connected_empty_chat"}"#)
        _ = driver.dispatch(#"{"type":"send_message","text":"go"}"#)
        _ = driver.server(#"{"type":"tool_start","id":"w1","name":"write"}"#)
        let input = #"{"file_path":"src/a.rs","content":"fn a() {}\n\"b\"\n"}"#
        var summaries: [String] = []
        var rest = Substring(input)
        while !rest.isEmpty {
            let delta = rest.prefix(3)
            rest = rest.dropFirst(3)
            var escaped = ""
            for c in delta {
                if c == "\\" || c == "\"" { escaped.append("\\") }
                escaped.append(c)
            }
            _ = driver.server(#"{"type":"tool_input","delta":"\#(escaped)"}"#)
            // Read on by the app's tree (its cache), the card is the one its input makes from scratch.
            guard let shown = card(in: driver.app.tree()), let call = driver.app.state.chat.transcript.entries.last?.toolCalls.last
            else { return XCTFail("no card") }
            let fresh = ChatScreen.toolCard(call, id: shown.id)
            XCTAssertEqual(shown.children.map(\.id), fresh.children.map(\.id))
            XCTAssertEqual(shown.children.first?.value, fresh.children.first?.value)
            if let summary = shown.children.first?.value, summaries.last != summary { summaries.append(summary) }
        }
        XCTAssertEqual(summaries, ["s", "src/", "src/a.r", "src/a.rs", "src/a.rs +2 −0"])
        guard let closed = card(in: driver.app.tree()) else { return XCTFail("no card") }
        XCTAssertEqual(closed.children.map(\.id), [closed.id + ".summary"])
        _ = driver.dispatch(#"{"type":"set_expanded","node_id":"\#(closed.id)","expanded":true}"#)
        let opened = card(in: driver.app.tree())
        XCTAssertEqual(opened?.children.map(\.id), [closed.id + ".summary", closed.id + ".diff.0"])
        XCTAssertEqual(opened?.children.last?.children.first?.children.map(\.value), ["fn a() {}", "\"b\""])
    }
}

/// The turn's first tool call starts (a card on a new reply, the fifth row)
/// and finishes with `output`.
private func runTheFirstTool(id: String, name: String, output: String, _ store: inout SpecStore, file: StaticString = #filePath, line: UInt = #line) {
    store.server(#"{"type":"tool_start","id":"\#(id)","name":"\#(name)"}"#, file: file, line: line) {
        $0.append("/transcript", entryJSON("m5", "assistant", toolCalls: [toolCallJSON(id, name, status: "pending")], isStreaming: true))
    }
    store.server(#"{"type":"tool_done","id":"\#(id)","name":"\#(name)","output":"\#(output)"}"#, file: file, line: line) {
        $0["/transcript/4/tool_calls/0/status"] = "succeeded"
        $0["/transcript/4/tool_calls/0/output"] = .string(output)
    }
}
