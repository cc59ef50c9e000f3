import XCTest
@testable import JcodeMobileCore

final class ToolCallTests: XCTestCase {
    func testAToolCallStreamsItsInputThenRunsThenSucceeds() {
        var store = TestStore.turnRunning()
        store.server(#"{"type":"tool_start","id":"t1","name":"bash"}"#) {
            $0.transcript.addToolCall(ToolCall(id: "t1", name: "bash", status: .pending), at: $0.transcript.streamingAssistant())
        }
        store.server(#"{"type":"tool_input","delta":"{\"command\":"}"#) { $0.transcript.appendToLatestToolInput("{\"command\":") }
        store.server(#"{"type":"tool_input","delta":"\"ls\"}"}"#) { $0.transcript.appendToLatestToolInput("\"ls\"}") }
        store.server(#"{"type":"tool_exec","id":"t1","name":"bash"}"#) { $0.transcript.updateToolCall("t1") { $0.status = .running } }
        store.server(#"{"type":"tool_done","id":"t1","name":"bash","output":"README.md"}"#) {
            $0.transcript.updateToolCall("t1") {
                $0.status = .succeeded
                $0.output = "README.md"
            }
        }
        XCTAssertEqual(
            store.state.transcript.entries.last?.toolCalls,
            [ToolCall(id: "t1", name: "bash", input: #"{"command":"ls"}"#, output: "README.md", status: .succeeded)])
    }

    func testToolInputAppendsToTheLatestCallOnly() {
        var store = TestStore.turnRunning()
        store.server(#"{"type":"tool_start","id":"a","name":"read"}"#) {
            $0.transcript.addToolCall(ToolCall(id: "a", name: "read", status: .pending), at: $0.transcript.streamingAssistant())
        }
        store.server(#"{"type":"tool_start","id":"b","name":"write"}"#) {
            $0.transcript.addToolCall(ToolCall(id: "b", name: "write", status: .pending), at: $0.transcript.streamingIndex!)
        }
        store.server(#"{"type":"tool_input","delta":"x"}"#) { $0.transcript.appendToLatestToolInput("x") }
        XCTAssertEqual(store.state.transcript.entries.last?.toolCalls.map(\.input), ["", "x"])
    }

    func testToolInputWithNoCallIsIgnored() {
        var store = TestStore.turnRunning()
        store.server(#"{"type":"tool_input","delta":"x"}"#) { _ in }
        XCTAssertEqual(store.lastNotes, ["tool_input with no tool call; ignored"])
    }

    func testExecAndDoneCreateTheCallWhenItWasNeverStarted() {
        var store = TestStore.turnRunning()
        store.server(#"{"type":"tool_exec","id":"x","name":"grep"}"#) {
            $0.transcript.addToolCall(ToolCall(id: "x", name: "grep", status: .running), at: $0.transcript.streamingAssistant())
        }
        store.server(#"{"type":"tool_done","id":"y","name":"edit","output":"","error":"permission denied"}"#) {
            $0.transcript.addToolCall(ToolCall(id: "y", name: "edit", status: .failed, error: "permission denied"), at: $0.transcript.streamingIndex!)
        }
        XCTAssertEqual(store.state.transcript.entries.last?.toolCalls.map(\.status), [.running, .failed])
    }

    func testAFailedToolKeepsItsErrorAndOutputAndTheCardSaysFailed() {
        let state = Scenario.toolFailed.state()
        let call = state.transcript.entries.flatMap(\.toolCalls).first { $0.id == "call_test" }
        XCTAssertEqual(call?.status, .failed)
        XCTAssertEqual(call?.error, "exit status 101")
        XCTAssertEqual(call?.output, "error[E0425]: cannot find value `x`")
        let card = SemanticTree.build(state).find("tool.call_test")
        XCTAssertEqual(card?.label, "bash")
        XCTAssertEqual(card?.value, "Failed")
        XCTAssertEqual(card?.accessibilityValue, "Failed: exit status 101")
        XCTAssertEqual(card?.children.map(\.id), ["tool.call_test.input", "tool.call_test.output", "tool.call_test.error"])
        XCTAssertEqual(card?.find("tool.call_test.input")?.value, #"{"command":"cargo test"}"#)
    }

    func testADoneForACallInAnEarlierEntryUpdatesItInPlace() {
        // The gateway sends message_end before tool_exec/tool_done: the call
        // must be found, not duplicated.
        var store = TestStore.turnRunning()
        store.server(#"{"type":"tool_start","id":"t1","name":"bash"}"#) {
            $0.transcript.addToolCall(ToolCall(id: "t1", name: "bash", status: .pending), at: $0.transcript.streamingAssistant())
        }
        store.server(#"{"type":"message_end"}"#) { $0.transcript.finishStreaming() }
        store.server(#"{"type":"tool_done","id":"t1","name":"bash","output":"ok"}"#) {
            $0.transcript.updateToolCall("t1") {
                $0.status = .succeeded
                $0.output = "ok"
            }
        }
        XCTAssertEqual(store.state.transcript.entries.flatMap(\.toolCalls).filter { $0.id == "t1" }.count, 1)
    }

    func testHistoryMapsToolDataAndToolCalls() {
        var store = TestStore(.connectedEmptyChat)
        store.server(
            #"{"type":"history","session_id":"session-fox","messages":[{"role":"assistant","content":"","tool_data":{"id":"c1","name":"bash","input":{"command":"ls"},"output":"a.txt"}},{"role":"assistant","content":"","tool_data":{"id":"c2","name":"edit","input":"{}","error":"denied"}},{"role":"assistant","content":"","tool_data":{"id":"c3","name":"bash","input":""}},{"role":"assistant","content":"Done","tool_calls":["read","grep"]}]}"#
        ) {
            $0.transcript.replaceAll(with: [
                TranscriptEntry(serial: 0, role: .assistant, toolCalls: [ToolCall(id: "c1", name: "bash", input: #"{"command":"ls"}"#, output: "a.txt", status: .succeeded)]),
                TranscriptEntry(serial: 0, role: .assistant, toolCalls: [ToolCall(id: "c2", name: "edit", input: "{}", status: .failed, error: "denied")]),
                TranscriptEntry(serial: 0, role: .assistant, toolCalls: [ToolCall(id: "c3", name: "bash", status: .running)]),
                TranscriptEntry(serial: 0, role: .assistant, text: "Done", toolCalls: [
                    ToolCall(id: "history.3.0", name: "read", status: .succeeded), ToolCall(id: "history.3.1", name: "grep", status: .succeeded),
                ]),
            ])
            $0.connection.historyRequestID = nil
        }
    }
}
