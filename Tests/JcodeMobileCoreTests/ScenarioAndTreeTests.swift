import XCTest
@testable import JcodeMobileCore

final class ScenarioTests: XCTestCase {
    func testEveryScenarioBuildsAsWrittenIntoAConsistentState() {
        for scenario in Scenario.allCases {
            let (state, problems) = scenario.build()
            XCTAssertEqual(problems, [], scenario.rawValue)
            XCTAssertEqual(state.revision, 0, scenario.rawValue)
            let ids = state.transcript.entries.map(\.id)
            XCTAssertEqual(Set(ids).count, ids.count, "\(scenario.rawValue): unique entry ids")
            XCTAssertEqual(state.transcript.entries.filter(\.isStreaming).count, state.transcript.streamingIndex == nil ? 0 : 1, scenario.rawValue)
            XCTAssertEqual(state.softInterrupts.count, state.transcript.queuedCount, scenario.rawValue)
            if state.connection.isSocketOpen {
                XCTAssertEqual(state.connection.phase, .connected, scenario.rawValue)
                XCTAssertNotNil(state.effects.pending(state.connection.socketEffectID!), "\(scenario.rawValue): the socket's connect is pending")
            }
            if state.screen != .onboarding { XCTAssertNotNil(state.selectedServer, scenario.rawValue) }
            let text = state.json.jsonString
            XCTAssertFalse(text.contains("fixture-token"), "\(scenario.rawValue): no token in state")
        }
    }

    func testEachScenarioShowsWhatItsNameSays() {
        func state(_ s: Scenario) -> AppState { s.state() }
        XCTAssertEqual(state(.onboarding).screen, .onboarding)
        XCTAssertNotNil(state(.pairingReady).pairing.validated)
        XCTAssertEqual(state(.pairingInvalidCode).errorBanner?.message, "Invalid or expired pairing code")
        XCTAssertTrue(state(.serverUnreachable).errorBanner?.message.hasPrefix("Could not reach devbox.local:7643") == true)
        XCTAssertEqual(state(.connectedEmptyChat).transcript.count, 0)
        XCTAssertEqual(state(.connectedEmptyChat).screen, .chat)
        XCTAssertEqual(state(.connectedChat).transcript.count, 3, "the empty assistant placeholder is skipped")
        XCTAssertTrue(state(.chatStreaming).session.isProcessing)
        XCTAssertEqual(state(.chatStreaming).transcript.entries.last?.isStreaming, true)
        XCTAssertEqual(state(.toolApprovalRequired).permissionRequests.count, 1)
        XCTAssertEqual(state(.toolFailed).transcript.entries.flatMap(\.toolCalls).last?.status, .failed)
        XCTAssertEqual(state(.networkReconnect).connection.phase, .reconnecting)
        XCTAssertEqual(state(.networkReconnect).connection.reconnectDelayMS, 1000)
        XCTAssertEqual(state(.offlineQueuedMessage).outbox.map(\.text), ["Run the tests when you're back online"])
        XCTAssertEqual(state(.offlineQueuedMessage).connection.phase, .offline)
        XCTAssertEqual(state(.longRunningTask).session.statusDetail, "Running make bench (2m 14s)")
        XCTAssertEqual(state(.longRunningTask).transcript.entries.last?.toolCalls.last?.status, .running)
        XCTAssertEqual(state(.stdinRequestPending).stdinRequests.first?.isPassword, true)
        XCTAssertEqual(state(.modelSwitchFailed).errorBanner?.message, "Couldn't switch model: unknown model")
        XCTAssertEqual(state(.pushToolApprovalOpened).screen, .chat)
        XCTAssertEqual(state(.pushToolApprovalOpened).permissionRequests.first?.requestID, "perm-1")
        XCTAssertFalse(state(.pushToolApprovalOpened).lifecycle.isForeground == false)
    }

    func testLoadingAScenarioKeepsRevisionsAndEffectIDsMovingForward() {
        var store = TestStore(.connectedChat)
        store.send(.sendMessage(text: "x"), effects: [.webSocket(.send(#"{"id":3,"type":"message","content":"x"}"#))]) {
            $0.transcript.beginTurn()
            $0.transcript.append(role: .user, text: "x")
            $0.session.isProcessing = true
            $0.connection.nextRequestID = 4
            $0.nextOutboxID += 1
        }
        let revision = store.state.revision
        let nextID = store.state.effects.nextID
        var replaced = Store(state: store.state)
        let t = replaced.send(.action(.loadScenario("onboarding")))
        XCTAssertEqual(t.revision, revision + 1)
        XCTAssertEqual(t.effects.map(\.effect), [.webSocket(.close)], "the old socket is closed")
        XCTAssertGreaterThanOrEqual(replaced.state.effects.nextID, nextID + 1)
        XCTAssertEqual(replaced.state.screen, .onboarding)
        let r = replaced.send(.action(.reset))
        XCTAssertFalse(r.changed, "reset of a first-launch state changes nothing")
    }
}

final class SemanticTreeTests: XCTestCase {
    func testEveryScreenOfEveryScenarioHasUniqueNodeIds() {
        for scenario in Scenario.allCases {
            var state = scenario.state()
            for screen in Screen.allCases {
                state.screen = screen
                let nodes = SemanticTree.build(state).allNodes()
                let ids = nodes.map(\.id)
                XCTAssertEqual(Set(ids).count, ids.count, "\(scenario.rawValue)/\(screen.rawValue): \(ids.filter { id in ids.filter { $0 == id }.count > 1 })")
            }
        }
    }

    func testEveryTappableNodeOfEveryScenarioDoesSomethingWhenTapped() {
        for scenario in Scenario.allCases {
            let state = scenario.state()
            for screen in Screen.allCases where screen == .onboarding || state.selectedServer != nil {
                var onScreen = state
                onScreen.screen = screen
                for node in SemanticTree.build(onScreen).allNodes() where node.supportedActions.contains("tap") {
                    let target = TapTargets.target(of: node.id, in: onScreen)
                    let visible = isVisible(node.id, in: SemanticTree.build(onScreen))
                    switch target {
                    case .none: XCTAssertFalse(visible, "\(scenario.rawValue)/\(screen.rawValue): \(node.id) is visible but not tappable")
                    case .disabled: XCTAssertFalse(node.enabled, "\(node.id)")
                    case .focus: XCTAssertTrue(node.role == .textField || node.role == .secureField, node.id)
                    case .action(let action):
                        var store = Store(state: onScreen)
                        let transition = store.send(.action(.tapNode(id: node.id)))
                        XCTAssertTrue(
                            transition.changed || !transition.effects.isEmpty,
                            "\(scenario.rawValue)/\(screen.rawValue): tapping \(node.id) (\(action)) did nothing: \(transition.notes)")
                    }
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
        var state = AppState()
        state.pairing.code = "12"
        let tree = SemanticTree.build(state)
        XCTAssertEqual(tree.id, "root")
        XCTAssertEqual(tree.find("pair.host")?.role, .textField)
        XCTAssertEqual(tree.find("pair.host")?.supportedActions, ["tap", "set_host"])
        XCTAssertEqual(tree.find("pair.host")?.accessibilityValue, "my-computer.local")
        XCTAssertEqual(tree.find("pair.code.error")?.label, "The pairing code is 6 digits.")
        XCTAssertNil(tree.find("pair.host.error"), "an untouched field shows no error")
        XCTAssertEqual(tree.find("pair.submit")?.label, "Pair")
        XCTAssertEqual(tree.find("banner.error")?.visible, false)
    }

    func testTheChatTreeShowsMessagesToolsAndComposer() {
        let state = Scenario.chatStreaming.state()
        let tree = SemanticTree.build(state)
        let messages = tree.find("chat.messages")!
        XCTAssertEqual(messages.children.map(\.id), state.transcript.entries.map { "message.\($0.id)" })
        let streaming = messages.children.last!
        XCTAssertEqual(streaming.label, "jcode (typing)")
        XCTAssertEqual(streaming.find("message.\(state.transcript.entries.last!.id).reasoning")?.label, "Thought for 1.4 s")
        XCTAssertEqual(tree.find("chat.interrupt")?.visible, true)
        XCTAssertEqual(tree.find("chat.send")?.enabled, false, "nothing typed")
        XCTAssertEqual(tree.find("chat.draft")?.placeholder, "Queue a message…")
        XCTAssertEqual(tree.find("chat.activity")?.visible, true)
        XCTAssertEqual(tree.find("tool.call_grep")?.value, "Done")
    }

    func testBoundsStackTopToBottomWithinTheViewport() {
        let tree = SemanticTree.build(Scenario.connectedChat.state(), viewport: .init(width: 400, height: 800))
        XCTAssertEqual(tree.bounds, .init(x: 0, y: 0, width: 400, height: 800))
        var lastY = -1
        for node in tree.children where node.visible {
            XCTAssertGreaterThanOrEqual(node.bounds.y, lastY, node.id)
            XCTAssertLessThanOrEqual(node.bounds.x + node.bounds.width, 400, node.id)
            lastY = node.bounds.y + node.bounds.height
        }
    }

    func testTappingATextFieldFocusesIt() {
        var store = TestStore()
        store.send(.tapNode(id: "pair.code")) { $0.focusedNodeID = "pair.code" }
        XCTAssertEqual(SemanticTree.build(store.state).find("pair.code")?.focused, true)
        store.send(.tapNode(id: "chat.send")) { _ in }
        XCTAssertEqual(store.lastNotes, ["tap_node: no tappable node \"chat.send\" on this screen"])
    }
}
