import JcodeMobileJSON

/// Named fixtures, loadable from Swift tests, C and Python
/// (`{"scenario":"connected_chat"}`). Each is built by driving the real
/// interactors with the inputs a host would send, so every fixture is a
/// state the app can actually reach.
public enum Scenario: String, Sendable, CaseIterable {
    case onboarding
    case pairingReady = "pairing_ready"
    case connectedChat = "connected_chat"
    case pairingInvalidCode = "pairing_invalid_code"
    case serverUnreachable = "server_unreachable"
    case connectedEmptyChat = "connected_empty_chat"
    case chatStreaming = "chat_streaming"
    case toolApprovalRequired = "tool_approval_required"
    case toolFailed = "tool_failed"
    case networkReconnect = "network_reconnect"
    case offlineQueuedMessage = "offline_queued_message"
    case longRunningTask = "long_running_task"
    case stdinRequestPending = "stdin_request_pending"
    case modelSwitchFailed = "model_switch_failed"
    case pushToolApprovalOpened = "push_tool_approval_opened"
    case markdownReply = "markdown_reply"
    case codeEditReview = "code_edit_review"
    case approvalUnsupported = "approval_unsupported"

    /// What the fixture shows, for docs and the demo.
    public var summary: String {
        switch self {
        case .onboarding: return "First launch: the empty pairing form."
        case .pairingReady: return "The pairing form filled in and valid."
        case .connectedChat: return "Paired, connected, with a short conversation including a tool call."
        case .pairingInvalidCode: return "Pairing refused with 401: \"Invalid or expired pairing code\"."
        case .serverUnreachable: return "Pairing failed: the server could not be reached."
        case .connectedEmptyChat: return "Paired and connected to a new, empty session."
        case .chatStreaming: return "A reply streaming in (is_processing, is_streaming)."
        case .toolApprovalRequired: return "A tool waits for approval: the approval sheet is up."
        case .toolFailed: return "A turn where a tool call failed, then the agent explained."
        case .networkReconnect: return "The connection dropped; a reconnect is scheduled with backoff."
        case .offlineQueuedMessage: return "Offline with a message waiting in the outbox."
        case .longRunningTask: return "A long turn: reasoning done, a tool running, status and tokens shown."
        case .stdinRequestPending: return "A tool asks for a password (masked input)."
        case .modelSwitchFailed: return "Switching model failed: error banner, old model kept."
        case .pushToolApprovalOpened: return "The app was opened from a push about a tool approval."
        case .markdownReply: return "A finished reply in markdown: a heading, styled text, a task list, a code block and a table."
        case .codeEditReview: return "A turn that read, edited and tested code: the edit's card opened on its diff, the others closed."
        case .approvalUnsupported:
            return "An approval answered on a server that cannot read `permission_response`: the error in plain words, its text behind Details."
        }
    }

    /// The fixture's state (revision 0). Fixtures are built once per
    /// process (they are deterministic) and copied from then on.
    public func state() -> AppState { Scenario.built[self] ?? build().state }

    private static let built: [Scenario: AppState] = {
        var table: [Scenario: AppState] = [:]
        for scenario in Scenario.allCases { table[scenario] = scenario.build().state }
        return table
    }()

    /// The state, and anything in the script that did not go as written (a
    /// fixture bug; the tests require none).
    public func build() -> (state: AppState, problems: [String]) {
        var script = ScenarioScript()
        switch self {
        case .onboarding:
            break
        case .pairingReady:
            script.fillPairingForm()
        case .pairingInvalidCode:
            script.fillPairingForm()
            script.act(.submitPairing)
            script.answer("http_pair") { id in "{\"type\":\"pair_finished\",\"effect_id\":\(id),\"ok\":false,\"status\":401,\"error\":\"Invalid or expired pairing code\"}" }
        case .serverUnreachable:
            script.fillPairingForm()
            script.act(.submitPairing)
            script.answer("http_pair") { id in "{\"type\":\"pair_finished\",\"effect_id\":\(id),\"ok\":false,\"error\":\"Connection refused\"}" }
        case .connectedEmptyChat:
            script.connect(history: [])
        case .connectedChat:
            script.connectedChat()
        case .chatStreaming:
            script.connectedChat()
            script.act(.sendMessage(text: "Explain how the build works"))
            script.server(#"{"type":"reasoning_delta","text":"The user wants an overview of the build."}"#)
            script.server(#"{"type":"reasoning_done","duration_secs":1.4}"#)
            script.server(#"{"type":"text_delta","text":"The build has two stages. First, `swift build` compiles"}"#)
        case .toolApprovalRequired:
            script.toolApproval()
        case .toolFailed:
            script.connectedChat()
            script.act(.sendMessage(text: "Run the tests"))
            script.server(#"{"type":"text_delta","text":"Running the test suite."}"#)
            script.server(#"{"type":"tool_start","id":"call_test","name":"bash"}"#)
            script.server(#"{"type":"tool_input","delta":"{\"command\":\"cargo test\"}"}"#)
            script.server(#"{"type":"tool_exec","id":"call_test","name":"bash"}"#)
            script.server(#"{"type":"tool_done","id":"call_test","name":"bash","output":"error[E0425]: cannot find value `x`","error":"exit status 101"}"#)
            script.server(#"{"type":"message_end"}"#)
            script.server(#"{"type":"text_delta","text":"The tests failed to compile: `x` is undefined in src/lib.rs."}"#)
            script.server(#"{"type":"done","id":3}"#)
        case .networkReconnect:
            script.connectedChat()
            script.closeSocket()
        case .offlineQueuedMessage:
            script.connectedChat()
            script.closeSocket()
            script.platform(#"{"type":"network_reachability_changed","reachable":false}"#)
            script.act(.sendMessage(text: "Run the tests when you're back online"))
        case .longRunningTask:
            script.connectedChat()
            script.act(.sendMessage(text: "Build the release and run the benchmarks"))
            script.server(#"{"type":"connection_phase","phase":"streaming"}"#)
            script.server(#"{"type":"reasoning_delta","text":"A release build first, then the benchmark suite."}"#)
            script.server(#"{"type":"reasoning_done","duration_secs":3.2}"#)
            script.server(#"{"type":"text_delta","text":"Starting the release build."}"#)
            script.server(#"{"type":"tool_start","id":"call_build","name":"bash"}"#)
            script.server(#"{"type":"tool_input","delta":"{\"command\":\"make bench\"}"}"#)
            script.server(#"{"type":"tool_exec","id":"call_build","name":"bash"}"#)
            script.server(#"{"type":"connection_phase","phase":"tool_execution"}"#)
            script.server(#"{"type":"status_detail","detail":"Running make bench (2m 14s)"}"#)
            script.server(#"{"type":"tokens","input":18234,"output":912}"#)
        case .stdinRequestPending:
            script.connectedChat()
            script.act(.sendMessage(text: "Install the system dependencies"))
            script.server(#"{"type":"tool_start","id":"call_apt","name":"bash"}"#)
            script.server(#"{"type":"tool_exec","id":"call_apt","name":"bash"}"#)
            script.server(#"{"type":"stdin_request","request_id":"stdin-1","prompt":"[sudo] password for dev:","is_password":true,"tool_call_id":"call_apt"}"#)
        case .modelSwitchFailed:
            script.connectedChat()
            script.act(.setModel("gpt-5"))
            script.server(#"{"type":"model_changed","id":3,"model":"gpt-5","error":"unknown model"}"#)
        case .markdownReply:
            script.connectedChat()
            script.act(.sendMessage(text: "How do I retry the connection?"))
            for delta in ScenarioScript.markdownReply { script.server(#"{"type":"text_delta","text":\#(JSONValue.string(delta).jsonString)}"#) }
            script.server(#"{"type":"message_end"}"#)
            script.server(#"{"type":"done","id":3}"#)
        case .codeEditReview:
            script.connectedChat()
            script.act(.sendMessage(text: "Make the retry delay configurable"))
            script.server(#"{"type":"text_delta","text":"I'll read the connection code, then change the delay."}"#)
            script.tool("call_read", "read", input: #"{"file_path":"src/connection.rs"}"#, output: "1\tpub fn connect() {\n2\t    retry(500);\n3\t}")
            script.tool(
                "call_edit", "edit",
                input: #"{"file_path":"src/connection.rs","old_string":"pub fn connect() {\n    retry(500);\n}","new_string":"pub fn connect(delay_ms: u64) {\n    retry(delay_ms);\n}"}"#,
                output: "Edited src/connection.rs")
            script.tool("call_test", "bash", input: #"{"command":"cargo test -p connection"}"#, output: "test result: ok. 12 passed")
            script.server(#"{"type":"message_end"}"#)
            script.server(#"{"type":"text_delta","text":"Done: `connect` takes the delay, and the **12 tests** pass."}"#)
            script.server(#"{"type":"done","id":3}"#)
            script.act(.setExpanded(nodeID: "tool.m5.call_edit", expanded: true))
        case .approvalUnsupported:
            script.toolApproval()
            script.act(.respondPermission(requestID: "perm-1", approved: true, remember: false))
            // How jcode's decoder refuses a request type it does not know: every one it knows listed.
            let known = GatewayRequest.Kind.allCases.filter { $0 != .permissionResponse }.map { "`\($0.rawValue)`" }
            let message = "Invalid request: unknown variant `permission_response`, expected one of \(known.joined(separator: ", ")) at line 1 column 30"
            script.server(#"{"type":"error","id":0,"message":\#(JSONValue.string(message).jsonString)}"#)
        case .pushToolApprovalOpened:
            script.toolApproval()
            script.platform(#"{"type":"app_background"}"#)
            script.act(.navigate(.sessions))
            script.platform(#"{"type":"app_foreground"}"#)
            script.platform(#"{"type":"push_notification_opened","payload":{"session_id":"session-fox","request_id":"perm-1"}}"#)
        }
        var state = script.store.state
        state.revision = 0
        return (state, script.problems)
    }
}

/// Drives a store with the inputs a host would send, answering effects as a
/// well-behaved host and a jcode server would.
struct ScenarioScript {
    // A fixture is a state, not a history of writes: nothing is persisted while building it.
    var store = Store(
        state: {
            var s = AppState()
            s.lifecycle.deviceID = "fixture-device"
            return s
        }(), persists: false)
    /// The effects of the last input.
    var lastEffects: [(id: EffectID, effect: Effect)] = []
    /// Steps that could not run as written.
    var problems: [String] = []

    mutating func act(_ action: Action) {
        lastEffects = store.send(.action(action)).effects
    }

    /// Sends a platform event given as JSON (fixtures are written the way hosts write them).
    mutating func platform(_ json: String) {
        guard let value = try? JSONParser.parse(json), let event = try? PlatformEvent.wire.decode(value) else {
            problems.append("invalid fixture event: \(json)")
            return
        }
        let transition = store.send(.platform(event))
        lastEffects = transition.effects
        for note in transition.notes where note.kind != .info {
            problems.append("\(note.text) in \(json)")
        }
    }

    /// Answers the most recent effect of `type` with the event `make(effectID)`.
    mutating func answer(_ type: String, _ make: (Int) -> String) {
        guard let id = store.state.effects.pending.last(where: { $0.kind.rawValue == type })?.id else {
            problems.append("fixture expected a pending \(type)")
            return
        }
        platform(make(id.rawValue))
    }

    /// A server event on the open socket.
    mutating func server(_ eventJSON: String) {
        platform("{\"type\":\"websocket_event\",\"event\":\(eventJSON)}")
    }

    mutating func fillPairingForm() {
        act(.setHost("devbox.local"))
        act(.setPort("7643"))
        act(.setPairCode("123456"))
        act(.setDeviceName("Test iPhone"))
        act(.setWorkingDir("/home/me/jcode", serverID: nil))
    }

    mutating func connect(history messages: [String]) {
        fillPairingForm()
        act(.submitPairing)
        answer("http_pair") { id in
            "{\"type\":\"pair_finished\",\"effect_id\":\(id),\"ok\":true,\"token\":\"fixture-token\",\"server_name\":\"devbox\",\"server_version\":\"0.9.2\"}"
        }
        answer("secure_store_write") { id in
            "{\"type\":\"secure_store_write_finished\",\"effect_id\":\(id),\"key\":\"jcode.token.devbox.local:7643\",\"ok\":true}"
        }
        answer("websocket_connect") { id in "{\"type\":\"websocket_opened\",\"effect_id\":\(id)}" }
        server(#"{"type":"session","session_id":"session-fox"}"#)
        server(#"{"type":"done","id":1}"#)
        server(
            """
            {"type":"history","id":2,"session_id":"session-fox","messages":[\(messages.joined(separator: ","))],\
            "provider_name":"anthropic","provider_model":"claude-sonnet-4","available_models":["claude-sonnet-4","claude-opus-4","gpt-5"],\
            "all_sessions":[{"session_id":"session-fox","display_title":"Fix the flaky test"},{"session_id":"session-owl","display_title":"Release notes"}],\
            "total_tokens":[48210,3120],"server_version":"0.9.2","display_title":"Fix the flaky test","reasoning_effort":"medium"}
            """)
    }

    mutating func connectedChat() {
        connect(history: [
            #"{"role":"user","content":"Why does test_reconnect fail on CI?"}"#,
            #"{"role":"assistant","content":"Let me look for sleeps in the tests.","tool_calls":["grep"]}"#,
            #"{"role":"tool","content":"tests/reconnect.rs:42: sleep(100ms)","tool_data":{"id":"call_grep","name":"grep","input":{"pattern":"sleep","path":"tests/"}}}"#,
            #"{"role":"assistant","content":"It sleeps a fixed 100 ms and races the server. I replaced the sleep with a wait for the connected event."}"#,
            #"{"role":"assistant","content":""}"#,
        ])
    }

    mutating func toolApproval() {
        connectedChat()
        act(.sendMessage(text: "Run the core tests"))
        server(#"{"type":"text_delta","text":"I'll run the tests for the mobile core."}"#)
        server(#"{"type":"tool_start","id":"call_bash","name":"bash"}"#)
        server(#"{"type":"tool_input","delta":"{\"command\":\"cargo test -p jcode-mobile-core\"}"}"#)
        server(#"{"type":"permission_request","request_id":"perm-1","session_id":"session-fox","action":"bash","detail":"cargo test -p jcode-mobile-core","tier":"medium"}"#)
    }

    /// A tool call that streams its input, runs and succeeds.
    mutating func tool(_ id: String, _ name: String, input: String, output: String) {
        server(#"{"type":"tool_start","id":"\#(id)","name":"\#(name)"}"#)
        server(#"{"type":"tool_input","delta":\#(JSONValue.string(input).jsonString)}"#)
        server(#"{"type":"tool_exec","id":"\#(id)","name":"\#(name)"}"#)
        server(#"{"type":"tool_done","id":"\#(id)","name":"\#(name)","output":\#(JSONValue.string(output).jsonString)}"#)
    }

    /// A reply in markdown, as the agent streams it (deltas cut mid-construct).
    static let markdownReply = [
        "## Retrying the connection\n\nThe client retries **on its own** with _exponential_ backoff; see ",
        "[the lifecycle notes](https://example.com/lifecycle). To retry now:\n\n",
        "- [x] check the server is up\n- [ ] tap **Retry**\n- or call `retry_connection`\n\n",
        "```swift\napp.dispatch([\"type\": \"retry_connection\"])\n",
        "```\n\n| Attempt | Delay |\n|:--|--:|\n| 1 | 1 s |\n| 2 | 2 s |\n\n",
        "> The delay never passes ~~60 s~~ 30 s.",
    ]

    mutating func closeSocket() {
        guard let id = store.state.connection.socketEffectID else {
            problems.append("fixture expected an open socket")
            return
        }
        platform("{\"type\":\"websocket_closed\",\"effect_id\":\(id.rawValue),\"code\":1006,\"reason\":\"network lost\"}")
    }
}
