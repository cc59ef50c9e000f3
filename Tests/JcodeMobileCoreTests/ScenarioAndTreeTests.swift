import XCTest
@testable import JcodeMobileCore
@testable import JcodeMobileJSON

/// Every scenario on every screen it can reach, each reached the way a host
/// would (`navigate`); screens an unpaired app cannot show are left out.
private func everyReachableScreen() -> [(name: String, store: Store)] {
    var result: [(name: String, store: Store)] = []
    for scenario in Scenario.allCases {
        let start = Store(state: scenario.build().state)
        for screen in Screen.allCases {
            var store = start
            let transition = store.send(.action(.navigate(screen)))
            if transition.notes.map(\.text) == ["navigate: \(screen.rawValue) needs a paired server"] { continue }
            XCTAssertEqual(transition.notes.map(\.text), [], "\(scenario.rawValue)/\(screen.rawValue)")
            XCTAssertEqual(store.state.json.at("/screen"), .string(screen.rawValue), "\(scenario.rawValue)/\(screen.rawValue)")
            result.append(("\(scenario.rawValue)/\(screen.rawValue)", store))
        }
    }
    return result
}

final class ScenarioTests: XCTestCase {
    func testEveryScenarioBuildsAsWrittenIntoAConsistentState() {
        for scenario in Scenario.allCases {
            let (state, problems) = scenario.build()
            let name = scenario.rawValue
            XCTAssertEqual(problems, [], name)
            let json = state.json
            XCTAssertEqual(json.at("/revision"), 0, name)
            let entries = json.at("/transcript")?.arrayValue ?? []
            let ids = entries.compactMap { $0["id"]?.stringValue }
            XCTAssertEqual(ids.count, entries.count, "\(name): every entry has an id")
            XCTAssertEqual(Set(ids).count, ids.count, "\(name): unique entry ids")
            let streaming = entries.indices.filter { entries[$0]["is_streaming"] == true }
            XCTAssertLessThanOrEqual(streaming.count, 1, "\(name): at most one entry streams")
            if let index = streaming.first {
                XCTAssertEqual(index, entries.count - 1, "\(name): only the newest entry streams")
                XCTAssertEqual(json.at("/session/is_processing"), true, "\(name): a streaming entry means a turn is running")
            }
            let queued = entries.filter { $0["is_queued"] == true }.count
            XCTAssertEqual(json.at("/soft_interrupts")?.arrayValue?.count, queued, "\(name): one queued entry per soft interrupt")
            if json.at("/connection/socket_open") == true {
                XCTAssertEqual(json.at("/connection/phase"), "connected", name)
                let pending = json.at("/pending_effects")?.arrayValue ?? []
                XCTAssertTrue(pending.contains { $0["type"] == "websocket_connect" }, "\(name): the socket's connect is pending")
            }
            if json.at("/screen") != "onboarding" {
                let selected = json.at("/selected_server_id") ?? .null
                XCTAssertNotEqual(selected, .null, name)
                XCTAssertTrue(json.at("/servers")?.arrayValue?.contains { $0["id"] == selected } == true, "\(name): the selected server is saved")
            }
            XCTAssertFalse(json.jsonString.contains("fixture-token"), "\(name): no token in state")
        }
    }

    func testEachScenarioShowsWhatItsNameSays() {
        func at(_ scenario: Scenario, _ pointer: String) -> JSONValue? { SpecStore(scenario)[pointer] }
        XCTAssertEqual(at(.onboarding, "/screen"), "onboarding")
        XCTAssertEqual(at(.onboarding, "/servers"), [])
        XCTAssertEqual(at(.pairingReady, "/pairing/can_submit"), true)
        XCTAssertEqual(at(.pairingReady, "/pairing/errors"), ["host": nil, "port": nil, "pair_code": nil, "device_name": nil, "working_dir": nil])
        XCTAssertEqual(at(.pairingInvalidCode, "/banners/error/message"), "Invalid or expired pairing code")
        XCTAssertEqual(
            at(.serverUnreachable, "/banners/error/message"),
            "Could not reach devbox.local:7643 (Connection refused). Check that jcode is running there with the gateway enabled and that this device is on the same network."
        )
        XCTAssertEqual(at(.connectedEmptyChat, "/transcript"), [])
        XCTAssertEqual(at(.connectedEmptyChat, "/screen"), "chat")
        XCTAssertEqual(
            at(.connectedChat, "/transcript")?.arrayValue?.compactMap { $0["id"] }, ["m1", "m2", "m3"],
            "the empty assistant placeholder is skipped")
        XCTAssertEqual(at(.chatStreaming, "/session/is_processing"), true)
        XCTAssertEqual(at(.chatStreaming, "/transcript/4/is_streaming"), true)
        XCTAssertEqual(at(.chatStreaming, "/transcript/4/reasoning_secs"), 1.4)
        XCTAssertEqual(
            at(.toolApprovalRequired, "/permission_requests"),
            [["request_id": "perm-1", "session_id": "session-fox", "action": "bash", "detail": "cargo test -p jcode-mobile-core", "tier": "medium"]])
        XCTAssertEqual(at(.toolFailed, "/transcript/4/tool_calls/0/status"), "failed")
        XCTAssertEqual(at(.toolFailed, "/transcript/4/tool_calls/0/error"), "exit status 101")
        XCTAssertEqual(at(.networkReconnect, "/connection/phase"), "reconnecting")
        XCTAssertEqual(at(.networkReconnect, "/connection/reconnect_delay_ms"), 1000)
        XCTAssertEqual(at(.offlineQueuedMessage, "/outbox"), [outboxJSON("o1", "Run the tests when you're back online", delivery: "waiting")])
        XCTAssertEqual(at(.offlineQueuedMessage, "/connection/phase"), "offline")
        XCTAssertEqual(at(.offlineQueuedMessage, "/lifecycle/network_reachable"), false)
        XCTAssertEqual(at(.longRunningTask, "/session/status_detail"), "Running make bench (2m 14s)")
        XCTAssertEqual(at(.longRunningTask, "/transcript/4/tool_calls/0/status"), "running")
        XCTAssertEqual(at(.longRunningTask, "/session/tokens"), ["input": 18234, "output": 912, "cache_read_input": nil, "cache_creation_input": nil])
        XCTAssertEqual(
            at(.stdinRequestPending, "/stdin_requests"),
            [["request_id": "stdin-1", "prompt": "[sudo] password for dev:", "is_password": true, "tool_call_id": "call_apt"]])
        XCTAssertEqual(at(.modelSwitchFailed, "/banners/error/message"), "Couldn't switch model: unknown model")
        XCTAssertEqual(at(.pushToolApprovalOpened, "/screen"), "chat")
        XCTAssertEqual(at(.pushToolApprovalOpened, "/permission_requests/0/request_id"), "perm-1")
        XCTAssertEqual(at(.pushToolApprovalOpened, "/lifecycle/is_foreground"), true)
    }

    func testLoadingAScenarioReplacesTheStateAndKeepsRevisionsAndEffectIDsMovingForward() {
        var store = SpecStore.turnRunning()
        XCTAssertEqual(store["/revision"], 1)
        XCTAssertEqual(store.lastEffectIDs, [EffectID(9)])
        // Leaving the connected state closes the socket and cancels its keep-alive timer.
        store.send(.loadScenario("onboarding"), effects: [.webSocket(.close), .timer(.cancel(timerID: "keepalive.1"))]) {
            // The whole first-launch state; only the device id is kept.
            $0.json = json(
                #"""
                {"revision":0,"screen":"onboarding","focused_node_id":null,"messages_scroll":null,"screen_scroll":0,"expanded_nodes":[],
                 "connection":{"phase":"disconnected","attempt":0,"reason":null,"socket_open":false,"reconnect_delay_ms":null},
                 "pairing":{"host":"","port":"","pair_code":"","has_held_code":false,"device_name":"","working_dir":"","is_submitting":false,"awaiting_identity":false,"can_submit":false,
                            "errors":{"host":null,"port":null,"pair_code":null,"device_name":null,"working_dir":null},"health":null},
                 "servers":[],"selected_server_id":null,
                 "session":{"id":null,"title":null,"all_sessions":[],"model":null,"pending_model":null,"provider":null,"available_models":[],
                            "reasoning_effort":null,"pending_reasoning_effort":null,"server_version":null,"tokens":null,"total_tokens":null,
                            "connection_type":null,"upstream_provider":null,"was_interrupted":false,"is_processing":false,"is_reasoning":false,"server_phase":null,"status_detail":null,"history_loaded":false,"is_compacting":false,
                            "rename_draft":null,"pending_rename":null,"is_clearing":false},
                 "transcript":[],"images":[],"run_status":null,"interrupted_turn":null,"older_history":null,"soft_interrupts":[],"outbox":[],"permission_requests":[],"stdin_requests":[],"notices":[],
                 "banners":{"error":null,"status":null},"draft":"","attachments":[],"voice":{"is_listening":false},
                 "lifecycle":{"is_foreground":true,"network_reachable":true,"push_registered":false,"device_id":"fixture-device","appearance":"light"},
                 "pending_effects":[]}
                """#)
        }
        XCTAssertEqual(store["/revision"], 2, "the revision moves on from the old state's")
        XCTAssertEqual(store.lastEffectIDs, [EffectID(10), EffectID(11)], "the close and the cancel take the old state's next effect ids")
        XCTAssertEqual(store["/pending_effects"], [])
        store.send(.reset)
        XCTAssertEqual(store["/revision"], 2, "reset of a first-launch state changes nothing")
    }
}

final class SemanticTreeTests: XCTestCase {
    func testEveryReachableScreenOfEveryScenarioHasUniqueNodeIds() {
        for (name, store) in everyReachableScreen() {
            let ids = SemanticTree.build(store.state).allNodes().map(\.id)
            XCTAssertEqual(Set(ids).count, ids.count, "\(name): \(ids.filter { id in ids.filter { $0 == id }.count > 1 })")
        }
    }

    func testEveryTappableNodeOfEveryReachableScreenDoesSomethingWhenTapped() {
        for (name, store) in everyReachableScreen() {
            let tree = SemanticTree.build(store.state)
            for node in tree.allNodes() where node.supportedActions.contains("tap") {
                let target = SemanticTree.tapTarget(of: node.id, in: store.state)
                switch target {
                case .none: XCTAssertFalse(isVisible(node.id, in: tree), "\(name): \(node.id) is visible but not tappable")
                case .disabled: XCTAssertFalse(node.enabled, "\(name): \(node.id)")
                case .focus: XCTAssertTrue(node.role == .textField || node.role == .secureField, "\(name): \(node.id)")
                case .action(let action):
                    var tapped = store
                    let transition = tapped.send(.action(.tapNode(id: node.id)))
                    XCTAssertTrue(
                        transition.changed || !transition.effects.isEmpty,
                        "\(name): tapping \(node.id) (\(action)) did nothing: \(transition.notes)")
                }
            }
        }
    }

    private func isVisible(_ id: String, in node: SemanticNode) -> Bool {
        guard node.visible else { return false }
        if node.id == id { return true }
        return node.children.contains { isVisible(id, in: $0) }
    }

    func testTheOnboardingTreeShowsTheFormWithValidationAndAccessibility() {
        var store = SpecStore()
        store.send(.setPairCode("12")) {
            $0["/pairing/pair_code"] = "12"
            $0["/pairing/errors/pair_code"] = "The pairing code is 6 digits."
        }
        let tree = SemanticTree.build(store.state)
        XCTAssertEqual(tree.id, "root")
        XCTAssertEqual(tree.find("pair.host")?.role, .textField)
        XCTAssertEqual(tree.find("pair.host")?.supportedActions, ["tap", "set_host"])
        XCTAssertEqual(tree.find("pair.host")?.accessibilityValue, "my-computer.local")
        XCTAssertEqual(tree.find("pair.code.error")?.label, "The pairing code is 6 digits.")
        XCTAssertNil(tree.find("pair.host.error"), "an untouched field shows no error")
        XCTAssertEqual(tree.find("pair.submit")?.label, "Pair")
        XCTAssertEqual(tree.find("pair.submit")?.enabled, true, "an incomplete form can be submitted to show what is missing")
        XCTAssertEqual(tree.find("banner.error")?.visible, false)
    }

    func testTheChatTreeShowsMessagesToolsAndComposer() {
        let tree = SemanticTree.build(Scenario.chatStreaming.build().state)
        let messages = tree.find("chat.messages")
        XCTAssertEqual(messages?.children.map(\.id), ["message.m1", "message.m2", "message.m3", "message.m4", "message.m5"])
        let streaming = messages?.children.last
        XCTAssertEqual(streaming?.label, "jcode")
        XCTAssertEqual(streaming?.variant, "typing", "a typing indicator, not words")
        XCTAssertEqual(streaming?.value, "The build has two stages. First, `swift build` compiles")
        XCTAssertEqual(streaming?.find("message.m5.reasoning")?.label, "Thought for 1.4 s")
        XCTAssertEqual(streaming?.find("message.m5.reasoning")?.role, .reasoning)
        XCTAssertEqual(streaming?.find("message.m5.reasoning")?.expanded, false, "done thinking: closed")
        XCTAssertNil(streaming?.find("message.m5.reasoning")?.value)
        XCTAssertEqual(streaming?.find("message.m5.reasoning")?.supportedActions, ["tap"])
        XCTAssertEqual(tree.find("chat.interrupt")?.visible, true)
        XCTAssertEqual(tree.find("chat.send")?.enabled, false, "nothing typed")
        XCTAssertEqual(tree.find("chat.draft")?.placeholder, "Queue a message…")
        XCTAssertEqual(tree.find("chat.activity")?.visible, true)
        XCTAssertEqual(tree.find("tool.m2.call_grep")?.value, "Done")
    }

    func testBoundsStackTopToBottomWithinTheViewport() {
        let tree = SemanticTree.build(Scenario.connectedChat.build().state, viewport: .init(width: 400, height: 800))
        XCTAssertEqual(tree.bounds, .init(x: 0, y: 0, width: 400, height: 800))
        var lastY = -1
        for node in tree.children where node.visible {
            XCTAssertGreaterThanOrEqual(node.bounds.y, lastY, node.id)
            XCTAssertLessThanOrEqual(node.bounds.x + node.bounds.width, 400, node.id)
            lastY = node.bounds.y + node.bounds.height
        }
    }

    func testTappingATextFieldFocusesItAndTappingANodeOfAnotherScreenDoesNothing() {
        var store = SpecStore()
        store.send(.tapNode(id: "pair.code"), followUps: ["focus"]) { $0["/focused_node_id"] = "pair.code" }
        XCTAssertEqual(store.node("pair.code")?.focused, true)
        store.send(.tapNode(id: "chat.send"), notes: ["tap_node: no tappable node \"chat.send\" on this screen"])
    }

    /// `"tap"` is the tree's name for `tap_node` (hosts and the C and Python
    /// suites rely on it); every other entry is an action type hosts can
    /// dispatch with the node's value.
    func testEverySupportedActionOfEveryNodeOfEveryScenarioIsAnActionType() {
        let actionTypes = Set(Action.wire.members.map(\.type))
        XCTAssertTrue(actionTypes.contains("tap_node"), "\"tap\" stands for tap_node")
        for (name, store) in everyReachableScreen() {
            for node in SemanticTree.build(store.state).allNodes() {
                for action in node.supportedActions where action != "tap" {
                    XCTAssertTrue(actionTypes.contains(action), "\(name): \(node.id) supports \"\(action)\", not an action type")
                }
            }
        }
    }
}
