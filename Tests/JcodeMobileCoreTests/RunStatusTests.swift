import XCTest
@testable import JcodeMobileCore
@testable import JcodeMobileJSON

/// A turn that never hangs (issue 35): the run status a person reads, the
/// check after a quiet spell, and what a history taken mid-turn shows.
final class RunStatusTests: XCTestCase {
    /// `turnRunning()` with the agent running `cargo build` (call_build): started, its input
    /// streamed, running. The run status names it.
    private func buildRunning() -> SpecStore {
        var store = SpecStore.turnRunningAndReceived()
        store.server(#"{"type":"tool_start","id":"call_build","name":"bash"}"#) {
            $0.append("/transcript", entryJSON("m5", "assistant", toolCalls: [toolCallJSON("call_build", "bash", status: "pending")], isStreaming: true))
        }
        store.server(#"{"type":"tool_input","delta":"{\"command\":\"cargo build\"}"}"#) {
            $0["/transcript/4/tool_calls/0/input"] = #"{"command":"cargo build"}"#
        }
        store.server(#"{"type":"tool_exec","id":"call_build","name":"bash"}"#) {
            $0["/transcript/4/tool_calls/0/status"] = "running"
            $0["/run_status"] = ["kind": "running_tool", "tool": "bash", "summary": "cargo build", "elapsed_secs": 0, "text": "Running cargo build"]
        }
        return store
    }

    /// The keep-alive tick `n` (timer `keepalive.n`), its ping request `ping`, answered at once.
    /// `buildRunning()` for two spells of 20 s with nothing of the turn:
    /// the second asks the server for the history (request 6) to check on it.
    private func buildRunningUntilItIsChecked(file: StaticString = #filePath, line: UInt = #line) -> SpecStore {
        var store = buildRunning()
        tick(&store, 1, ping: 4, file: file, line: line) {
            $0["/run_status/elapsed_secs"] = 20
            $0["/run_status/text"] = "Running cargo build · 20 s"
        }
        tick(&store, 2, ping: 5, also: [.webSocket(.send(#"{"id":6,"type":"get_history"}"#))],
             notes: ["nothing of the turn for 40 s: checking with the server"], followUps: ["send"], file: file, line: line) {
            $0["/run_status"] = ["kind": "checking", "tool": nil, "summary": nil, "elapsed_secs": nil, "text": "Checking on jcode…"]
        }
        return store
    }

    private func tick(
        _ store: inout SpecStore, _ n: Int, ping: Int, also: [Effect] = [], notes: [String] = [], followUps: [String] = [],
        file: StaticString = #filePath, line: UInt = #line, _ expect: (inout ExpectedState) -> Void = { _ in }
    ) {
        store.event(
            #"{"type":"timer_fired","timer_id":"keepalive.\#(n)"}"#,
            effects: [
                .webSocket(.send(#"{"id":\#(ping),"type":"ping"}"#)),
                .timer(.schedule(timerID: "keepalive.\(n + 1)", afterMS: 20000, purpose: "keepalive")),
            ] + also, notes: notes, followUps: followUps, file: file, line: line, expect)
        store.server(#"{"type":"pong","id":\#(ping)}"#, file: file, line: line)
    }

    /// The lines a step sent on the socket.
    private func lines(_ transition: Store.Transition) -> [String] {
        transition.effects.compactMap { entry -> String? in
            if case .webSocket(.send(let line, _)) = entry.effect { return line }
            return nil
        }
    }

    /// A server event, delivered without stating what it changes (the test reads what it needs).
    private func serve(_ store: inout SpecStore, _ eventJSON: String, file: StaticString = #filePath, line: UInt = #line) {
        do throws(CoreError) {
            let event = try ServerEvent.wire.decode(try JSONParser.parse(eventJSON))
            store.store.send(.platform(.webSocket(.event(effectID: nil, items: [.event(event)]))))
        } catch {
            XCTFail("test event does not decode: \(error.message)", file: file, line: line)
        }
    }

    func testARunningToolReadsItsCommandAndHowLongItHasRun() {
        var store = buildRunning()
        XCTAssertEqual(store.node("chat.activity")?.label, "Running cargo build")
        tick(&store, 1, ping: 4) {
            $0["/run_status/elapsed_secs"] = 20
            $0["/run_status/text"] = "Running cargo build · 20 s"
        }
        XCTAssertEqual(store.node("chat.activity")?.label, "Running cargo build · 20 s")
    }

    /// A ten-minute build that prints nothing: the chat checks once per quiet spell (40 s, then
    /// doubling while the server says it still runs), never calls it stuck, and reads
    /// "Running cargo build · 10 min".
    func testATenMinuteBuildThatPrintsNothingIsCheckedOncePerQuietSpellAndNeverCalledStuck() {
        var store = buildRunning()
        let history = #"{"type":"history","id":ID,"session_id":"session-fox","messages":[{"role":"user","content":"Why does test_reconnect fail on CI?"},{"role":"user","content":"go"},{"role":"assistant","content":"","tool_calls":["bash"]}],"activity":{"is_processing":true,"current_tool_name":"bash"}}"#
        var ping = 4
        var checks: [Int] = []
        for n in 1...30 {
            let sent = lines(store.store.send(.platform(.timer(.fired(timerID: "keepalive.\(n)")))))
            XCTAssertEqual(sent.first, #"{"id":\#(ping),"type":"ping"}"#)
            if sent.count == 2 {
                XCTAssertEqual(sent[1], #"{"id":\#(ping + 1),"type":"get_history"}"#)
                checks.append(n)
                XCTAssertEqual(store["/run_status/kind"], "checking")
                serve(&store, history.replacingOccurrences(of: "ID", with: String(ping + 1)))
                XCTAssertEqual(store["/run_status/kind"], "running_tool")
            }
            serve(&store, #"{"type":"pong","id":\#(ping)}"#)
            ping += sent.count
        }
        // Quiet spells of 40, 80, 160 and 320 s: a check at 40 s, 120 s, 280 s and 600 s.
        XCTAssertEqual(checks, [2, 6, 14, 30])
        XCTAssertEqual(store["/run_status"], ["kind": "running_tool", "tool": "bash", "summary": "cargo build", "elapsed_secs": 600, "text": "Running cargo build · 10 min"])
        XCTAssertEqual(store.node("chat.activity")?.label, "Running cargo build · 10 min")
        // The card the history names without an id is this device's running call, once.
        XCTAssertEqual(store["/transcript/2/tool_calls"], [toolCallJSON("call_build", "bash", input: #"{"command":"cargo build"}"#, status: "running")])
        XCTAssertEqual(store.state.chat.transcript.count, 3)
    }

    func testACheckThatFindsTheTurnOverEndsIt() {
        var store = buildRunningUntilItIsChecked()
        XCTAssertEqual(store.node("chat.activity")?.label, "Checking on jcode…")
        // The server says nothing runs: the history holds the turn's end, and the turn ends.
        store.server(
            #"{"type":"history","id":6,"session_id":"session-fox","messages":[{"role":"user","content":"Why does test_reconnect fail on CI?"},{"role":"user","content":"go"},{"role":"assistant","content":"Built.","tool_calls":["bash"]}]}"#,
            notes: ["the check found the turn over: it ended without its done reaching this device"], followUps: ["turn_ended"]
        ) {
            $0["/transcript"] = [
                entryJSON("m6", "user", text: "Why does test_reconnect fail on CI?"), entryJSON("m7", "user", text: "go"),
                entryJSON("m8", "assistant", text: "Built.", toolCalls: [toolCallJSON("history.2.0", "bash", status: "succeeded")]),
            ]
            $0["/session/is_processing"] = false
            $0["/outbox"] = []
            $0["/run_status"] = nil
        }
    }

    func testACheckUnansweredForAWholeSpellShowsNotAnsweringWithRetry() {
        var store = buildRunningUntilItIsChecked()
        tick(&store, 3, ping: 7)
        tick(&store, 4, ping: 8, notes: ["the turn check went unanswered for 40 s: jcode is not answering"]) {
            $0["/run_status/kind"] = "not_answering"
            $0["/run_status/text"] = "jcode is not answering"
        }
        XCTAssertEqual(store.node("chat.activity")?.label, "jcode is not answering")
        XCTAssertEqual(store.node("chat.activity.retry")?.label, "Retry")
        // Retry asks again, once.
        store.send(.tapNode(id: "chat.activity.retry"), effects: [.webSocket(.send(#"{"id":9,"type":"get_history"}"#))],
                   notes: ["check_turn: checking with the server"], followUps: ["check_turn", "send"]) {
            $0["/run_status/kind"] = "checking"
            $0["/run_status/text"] = "Checking on jcode…"
        }
        // Anything of the turn arriving ends the worry.
        store.server(#"{"type":"tool_done","id":"call_build","name":"bash","output":"Finished"}"#) {
            $0["/transcript/4/tool_calls/0/status"] = "succeeded"
            $0["/transcript/4/tool_calls/0/output"] = "Finished"
        }
        XCTAssertEqual(store["/run_status/kind"], "checking")
    }

    func testTheAgentAskingThePersonReadsWaitingForYou() {
        var store = buildRunning()
        store.server(#"{"type":"stdin_request","request_id":"stdin-1","prompt":"Continue? [y/N]","is_password":false,"tool_call_id":""}"#, followUps: nil) {
            $0["/stdin_requests"] = [["request_id": "stdin-1", "prompt": "Continue? [y/N]", "is_password": false, "tool_call_id": ""]]
            $0["/run_status"] = ["kind": "waiting_for_you", "tool": nil, "summary": nil, "elapsed_secs": nil, "text": "Waiting for you"]
        }
    }

    // MARK: - The live tail

    /// After a drop mid-turn the reconnect's history lacks the text streaming now and the
    /// reasoning: they are kept after it, once, and the reply goes on streaming into them.
    func testAPartialReplyAndItsReasoningSurviveAReconnectMidTurn() {
        var store = SpecStore.turnRunningAndReceived()
        store.server(#"{"type":"reasoning_delta","text":"Look at the sleeps."}"#) {
            $0.append("/transcript", entryJSON("m5", "assistant", reasoning: "Look at the sleeps.", isStreaming: true))
            $0["/session/is_reasoning"] = true
        }
        store.server(#"{"type":"reasoning_done","duration_secs":3}"#) {
            $0["/transcript/4/reasoning_secs"] = 3.0
            $0["/session/is_reasoning"] = false
        }
        store.server(#"{"type":"text_delta","text":"The test sleeps"}"#) { $0["/transcript/4/text"] = "The test sleeps" }
        store.loseTheConnectionMidTurn {
            $0["/transcript/4/is_streaming"] = false
        }
        store.reconnect()
        store.server(
            #"{"type":"history","id":1,"session_id":"session-fox","messages":[{"role":"user","content":"Why does test_reconnect fail on CI?"},{"role":"user","content":"go"}],"activity":{"is_processing":true}}"#,
            notes: ["message o1 is in the server's history: not sent again"]
        ) {
            $0["/transcript"] = [
                entryJSON("m6", "user", text: "Why does test_reconnect fail on CI?"), entryJSON("m7", "user", text: "go"),
                entryJSON("m8", "assistant", text: "The test sleeps", reasoning: "Look at the sleeps.", reasoningSecs: 3, isStreaming: true),
            ]
            $0["/outbox"] = []
            $0["/connection/attempt"] = 0
            $0["/session/history_loaded"] = true
            $0["/session/is_processing"] = true
            $0["/banners/status"] = nil
        }
        store.server(#"{"type":"text_delta","text":" 100 ms."}"#) { $0["/transcript/2/text"] = "The test sleeps 100 ms." }
    }

    /// Switched away and back while the turn runs: the reply seen before the switch follows the
    /// history of its session again.
    func testAPartialReplySurvivesASwitchAwayAndBack() {
        var store = SpecStore(.connectedChat)
        store.server(#"{"type":"text_delta","text":"Working on it"}"#) {
            $0.append("/transcript", entryJSON("m4", "assistant", text: "Working on it", isStreaming: true))
            $0["/session/is_processing"] = true
        }
        store.resumeTheOwlSession { $0["/session/is_processing"] = false }
        store.server(#"{"type":"history","id":3,"session_id":"session-owl","messages":[]}"#) {
            $0["/session/history_loaded"] = true
            $0["/banners/status"] = nil
        }
        store.send(.resumeSession(id: "session-fox"), effects: [
            .webSocket(.send(#"{"id":5,"type":"resume_session","session_id":"session-fox","client_instance_id":"fixture-device"}"#)),
            .webSocket(.send(#"{"id":6,"type":"ping"}"#)),
        ], followUps: ["open_chat", "session_switched", "send"]) {
            $0["/session/id"] = "session-fox"
            $0["/session/title"] = "Fix the flaky test"
            $0["/session/history_loaded"] = false
            $0["/banners/status"] = "Loading conversation…"
        }
        store.server(
            #"{"type":"history","id":5,"session_id":"session-fox","messages":[{"role":"user","content":"Why does test_reconnect fail on CI?"}],"activity":{"is_processing":true}}"#
        ) {
            $0["/transcript"] = [entryJSON("m5", "user", text: "Why does test_reconnect fail on CI?"), entryJSON("m6", "assistant", text: "Working on it", isStreaming: true)]
            $0["/session/history_loaded"] = true
            $0["/session/is_processing"] = true
            $0["/banners/status"] = nil
        }
    }

    /// A reconnect while a tool runs (its API call ended: message_end closed the entry): the
    /// history names the call without an id; the card this device saw takes its place, running,
    /// and the status names its command (found by the end-to-end tests).
    func testAReconnectWhileAToolRunsKeepsItsCardOnceAndTheStatusNamesIt() {
        var store = SpecStore.turnRunningAndReceived()
        store.server(#"{"type":"text_delta","text":"Counting now."}"#) {
            $0.append("/transcript", entryJSON("m5", "assistant", text: "Counting now.", isStreaming: true))
        }
        store.server(#"{"type":"tool_start","id":"call_seq","name":"bash"}"#) {
            $0["/transcript/4/tool_calls"] = [toolCallJSON("call_seq", "bash", status: "pending")]
        }
        store.server(#"{"type":"tool_input","delta":"{\"command\":\"seq 4\"}"}"#) {
            $0["/transcript/4/tool_calls/0/input"] = #"{"command":"seq 4"}"#
        }
        store.server(#"{"type":"message_end","stop_reason":"tool_use"}"#) { $0["/transcript/4/is_streaming"] = false }
        store.server(#"{"type":"tool_exec","id":"call_seq","name":"bash"}"#) {
            $0["/transcript/4/tool_calls/0/status"] = "running"
            $0["/run_status"] = ["kind": "running_tool", "tool": "bash", "summary": "seq 4", "elapsed_secs": 0, "text": "Running seq 4"]
        }
        store.loseTheConnectionMidTurn { $0["/run_status"] = ["kind": "reconnecting", "tool": nil, "summary": nil, "elapsed_secs": nil, "text": "Reconnecting…"] }
        store.reconnect()
        store.server(
            #"{"type":"history","id":1,"session_id":"session-fox","messages":[{"role":"user","content":"Why does test_reconnect fail on CI?"},{"role":"user","content":"go"},{"role":"assistant","content":"Counting now.","tool_calls":["bash"]}],"activity":{"is_processing":true,"current_tool_name":"bash"}}"#,
            notes: ["message o1 is in the server's history: not sent again"]
        ) {
            $0["/transcript"] = [
                entryJSON("m6", "user", text: "Why does test_reconnect fail on CI?"), entryJSON("m7", "user", text: "go"),
                entryJSON("m8", "assistant", text: "Counting now.", toolCalls: [toolCallJSON("call_seq", "bash", input: #"{"command":"seq 4"}"#, status: "running")]),
            ]
            $0["/outbox"] = []
            $0["/connection/attempt"] = 0
            $0["/session/history_loaded"] = true
            $0["/session/is_processing"] = true
            $0["/banners/status"] = nil
            $0["/run_status"] = ["kind": "running_tool", "tool": "bash", "summary": "seq 4", "elapsed_secs": 0, "text": "Running seq 4"]
        }
        store.server(#"{"type":"tool_done","id":"call_seq","name":"bash","output":"1\n2\n3\n4"}"#) {
            $0["/transcript/2/tool_calls/0/status"] = "succeeded"
            $0["/transcript/2/tool_calls/0/output"] = "1\n2\n3\n4"
            $0["/run_status"] = ["kind": "working", "tool": nil, "summary": nil, "elapsed_secs": nil, "text": "jcode is working…"]
        }
    }
}
