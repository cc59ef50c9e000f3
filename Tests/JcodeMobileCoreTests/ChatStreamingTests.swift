import XCTest
@testable import JcodeMobileCore

/// Helpers shared by the chat specifications.
extension TestStore {
    /// connected_chat with "go" sent: a turn is running (request id 3).
    static func turnRunning(file: StaticString = #filePath, line: UInt = #line) -> TestStore {
        var store = TestStore(.connectedChat)
        store.send(.sendMessage(text: "go"), effects: [.webSocket(.send(#"{"id":3,"type":"message","content":"go"}"#))], file: file, line: line) {
            $0.transcript.beginTurn()
            $0.transcript.append(role: .user, text: "go")
            $0.session.isProcessing = true
            $0.connection.nextRequestID = 4
            $0.nextOutboxID += 1
        }
        return store
    }
}

final class ChatStreamingTests: XCTestCase {
    func testSendingTheDraftPutsItInTheTranscriptAndSendsAMessageRequest() {
        var store = TestStore(.connectedChat)
        store.send(.setDraft("  Run the tests  ")) { $0.draft = "  Run the tests  " }
        store.send(.sendMessage(text: nil), effects: [.webSocket(.send(#"{"id":3,"type":"message","content":"Run the tests"}"#))]) {
            $0.draft = ""
            $0.transcript.append(role: .user, text: "Run the tests")
            $0.session.isProcessing = true
            $0.connection.nextRequestID = 4
            $0.nextOutboxID += 1
        }
    }

    func testAnEmptyDraftSendsNothing() {
        var store = TestStore(.connectedChat)
        store.send(.setDraft("   ")) { $0.draft = "   " }
        store.send(.sendMessage(text: nil)) { _ in }
        XCTAssertEqual(store.lastNotes, ["send_message: nothing to send"])
    }

    func testTextDeltasStreamIntoOneAssistantEntryUntilDone() {
        var store = TestStore.turnRunning()
        store.server(#"{"type":"text_delta","text":"Hel"}"#) {
            let i = $0.transcript.streamingAssistant()
            $0.transcript.appendText("Hel", at: i)
        }
        store.server(#"{"type":"text_delta","text":"lo"}"#) { $0.transcript.appendText("lo", at: $0.transcript.streamingIndex!) }
        XCTAssertEqual(store.state.transcript.entries.last?.text, "Hello")
        XCTAssertEqual(store.state.transcript.entries.last?.isStreaming, true)
        store.server(#"{"type":"done","id":3}"#) {
            $0.session.isProcessing = false
            $0.transcript.finishStreaming()
        }
        XCTAssertEqual(store.state.transcript.entries.last?.isStreaming, false)
    }

    func testDurationsAndDelaysTheAppCannotShowAreTreatedAsAbsent() {
        var store = TestStore.turnRunning()
        store.server(#"{"type":"reasoning_delta","text":"x"}"#) {
            $0.transcript.appendReasoning("x", at: $0.transcript.streamingAssistant())
            $0.session.isReasoning = true
        }
        store.server(#"{"type":"reasoning_done","duration_secs":-5}"#) { $0.session.isReasoning = false }
        XCTAssertEqual(SemanticTree.build(store.state).find("message.\(store.state.transcript.entries.last!.id).reasoning")?.label, "Thinking…")
        store.server(#"{"type":"reasoning_done","duration_secs":1e300}"#) { $0.transcript.setReasoningSecs(1e300, at: $0.transcript.streamingIndex!) }
        XCTAssertEqual(SemanticTree.build(store.state).find("message.\(store.state.transcript.entries.last!.id).reasoning")?.label, "Thought for a long time")
        store.server(#"{"type":"error","message":"overloaded","retry_after_secs":-9223372036854775808}"#) {
            $0.endTurnLocally()
            $0.errorBanner = ErrorBanner(message: "overloaded")
        }
        XCTAssertEqual(ChatScreen.formatSeconds(1e19), "a long time")
        XCTAssertEqual(ChatScreen.formatSeconds(125), "2 min 5 s")
        XCTAssertEqual(ChatScreen.formatSeconds(.infinity), "a while")
    }

    func testTextReplaceReplacesTheStreamedTextOfTheCurrentEntry() {
        var store = TestStore.turnRunning()
        store.server(#"{"type":"text_delta","text":"garbled <tool"}"#) {
            let i = $0.transcript.streamingAssistant()
            $0.transcript.appendText("garbled <tool", at: i)
        }
        store.server(#"{"type":"text_replace","text":"Clean text"}"#) { $0.transcript.setText("Clean text", at: $0.transcript.streamingIndex!) }
        XCTAssertEqual(store.state.transcript.entries.last?.text, "Clean text")
    }

    func testReasoningIsKeptApartFromTextWithAnIsReasoningFlag() {
        var store = TestStore.turnRunning()
        store.server(#"{"type":"reasoning_delta","text":"Think"}"#) {
            let i = $0.transcript.streamingAssistant()
            $0.transcript.appendReasoning("Think", at: i)
            $0.session.isReasoning = true
        }
        store.server(#"{"type":"reasoning_done","duration_secs":2.5}"#) {
            $0.session.isReasoning = false
            $0.transcript.setReasoningSecs(2.5, at: $0.transcript.streamingIndex!)
        }
        store.server(#"{"type":"text_delta","text":"Answer"}"#) { $0.transcript.appendText("Answer", at: $0.transcript.streamingIndex!) }
        let entry = store.state.transcript.entries.last!
        XCTAssertEqual(entry.reasoning, "Think")
        XCTAssertEqual(entry.text, "Answer")
        XCTAssertEqual(entry.reasoningSecs, 2.5)
    }

    func testMessageEndClosesTheEntrySoTheNextDeltaStartsANewOne() {
        var store = TestStore.turnRunning()
        store.server(#"{"type":"text_delta","text":"first"}"#) {
            $0.transcript.appendText("first", at: $0.transcript.streamingAssistant())
        }
        store.server(#"{"type":"message_end"}"#) { $0.transcript.finishStreaming() }
        store.server(#"{"type":"text_delta","text":"second"}"#) {
            $0.transcript.appendText("second", at: $0.transcript.streamingAssistant())
        }
        XCTAssertEqual(store.state.transcript.entries.suffix(2).map(\.text), ["first", "second"])
    }

    func testRetryRollbackDropsThePartialEntryAndSaysRetrying() {
        var store = TestStore.turnRunning()
        store.server(#"{"type":"text_delta","text":"committed"}"#) {
            $0.transcript.appendText("committed", at: $0.transcript.streamingAssistant())
        }
        store.server(#"{"type":"message_end"}"#) { $0.transcript.finishStreaming() }
        store.server(#"{"type":"reasoning_delta","text":"partial"}"#) {
            $0.transcript.appendReasoning("partial", at: $0.transcript.streamingAssistant())
            $0.session.isReasoning = true
        }
        store.server(#"{"type":"retry_rollback","attempt":1,"max":3}"#) {
            $0.transcript.discardStreaming()
            $0.session.isReasoning = false
            $0.session.statusDetail = "Retrying (1/3)"
        }
        XCTAssertEqual(store.state.transcript.entries.last?.text, "committed", "committed turns are kept")
        XCTAssertEqual(SemanticTree.build(store.state).find("chat.activity")?.label, "Retrying (1/3)")
    }

    func testEmptyAssistantStubsLeftByAFinishedTurnAreDropped() {
        var store = TestStore.turnRunning()
        store.server(#"{"type":"tool_start","id":"t1","name":"bash"}"#) {
            $0.transcript.addToolCall(ToolCall(id: "t1", name: "bash", status: .pending), at: $0.transcript.streamingAssistant())
        }
        store.server(#"{"type":"message_end"}"#) { $0.transcript.finishStreaming() }
        store.server(#"{"type":"reasoning_done"}"#) { _ in }
        store.server(#"{"type":"text_delta","text":""}"#) { $0.transcript.appendText("", at: $0.transcript.streamingAssistant()) }
        let count = store.state.transcript.count
        store.server(#"{"type":"done","id":3}"#) {
            $0.session.isProcessing = false
            $0.transcript.finishStreaming()
        }
        XCTAssertEqual(store.state.transcript.count, count - 1, "the empty stub is gone")
        XCTAssertEqual(store.state.transcript.entries.last?.toolCalls.first?.id, "t1", "the tool entry stays")
    }

    func testInterruptSendsCancelAndInterruptedEndsTheTurnWithANotice() {
        var store = TestStore.turnRunning()
        store.send(.interrupt, effects: [.webSocket(.send(#"{"id":4,"type":"cancel"}"#))]) { $0.connection.nextRequestID = 5 }
        store.server(#"{"type":"interrupted"}"#) {
            $0.session.isProcessing = false
            $0.addNotice(.info, "Interrupted")
        }
        store.send(.interrupt) { _ in }
        XCTAssertEqual(store.lastNotes, ["interrupt: no turn is running"])
    }

    func testAnErrorShowsABannerWithTheRetryDelayAndEndsTheTurn() {
        var store = TestStore.turnRunning()
        store.server(#"{"type":"text_delta","text":"partial"}"#) {
            $0.transcript.appendText("partial", at: $0.transcript.streamingAssistant())
        }
        store.server(#"{"type":"error","id":3,"message":"overloaded","retry_after_secs":15}"#) {
            $0.endTurnLocally()
            $0.errorBanner = ErrorBanner(message: "overloaded", retryAfterSecs: 15)
        }
        XCTAssertEqual(store.state.errorBanner?.text, "overloaded (retry in 15 s)")
        store.send(.dismissError) { $0.errorBanner = nil }
    }

    func testTokensStatusDetailAndServerPhaseShowWhileTheTurnRunsAndClearWhenItEnds() {
        var store = TestStore.turnRunning()
        store.server(#"{"type":"tokens","input":1200,"output":34}"#) { $0.session.tokens = TokenUsage(input: 1200, output: 34) }
        store.server(#"{"type":"status_detail","detail":"Reading files"}"#) { $0.session.statusDetail = "Reading files" }
        store.server(#"{"type":"connection_phase","phase":"streaming"}"#) { $0.session.serverPhase = "streaming" }
        let activity = SemanticTree.build(store.state).find("chat.activity")
        XCTAssertEqual(activity?.label, "Reading files")
        XCTAssertEqual(activity?.value, "1200 in · 34 out")
        store.server(#"{"type":"done","id":3}"#) {
            $0.session.isProcessing = false
            $0.session.statusDetail = nil
            $0.session.serverPhase = nil
        }
        XCTAssertEqual(SemanticTree.build(store.state).find("chat.activity")?.visible, false)
    }

    func testTheDoneThatAnswersSubscribeIsNotTheEndOfATurn() {
        var store = TestStore.turnRunning()
        store.server(#"{"type":"done","id":1}"#) { _ in }
        XCTAssertEqual(store.lastNotes, ["done for subscribe"])
        XCTAssertTrue(store.state.session.isProcessing)
    }

    func testSendingWhileOfflineQueuesTheMessageAndItGoesOutOnceConnected() {
        var store = TestStore(.networkReconnect)
        store.send(.sendMessage(text: "hello from the train")) {
            $0.outbox.append(OutboxMessage(id: "o1", text: "hello from the train", attachments: []))
            $0.nextOutboxID = 2
        }
        store.send(.sendMessage(text: "and another")) {
            $0.outbox.append(OutboxMessage(id: "o2", text: "and another", attachments: []))
            $0.nextOutboxID = 3
        }
        store.event(#"{"type":"timer_fired","timer_id":"reconnect.1"}"#, effects: [.webSocket(.connect(url: "ws://devbox.local:7643/ws", authToken: "fixture-token"))]) {
            $0.connection.reconnectTimerID = nil
            $0.connection.reconnectDelayMS = nil
        }
        let socket = store.pendingID("websocket_connect")
        store.event(#"{"type":"websocket_opened","effect_id":\#(socket)}"#, effects: [
            .webSocket(.send(#"{"id":1,"type":"subscribe","target_session_id":"session-fox"}"#)), .webSocket(.send(#"{"id":2,"type":"get_history"}"#)),
        ]) {
            $0.connection.phase = .connected
            $0.connection.attempt = 0
            $0.connection.reason = nil
            $0.connection.isSocketOpen = true
            $0.connection.socketEffectID = EffectID(socket)
            $0.connection.nextRequestID = 3
            $0.connection.subscribeRequestID = 1
            $0.connection.historyRequestID = 2
            $0.session.historyLoaded = false
        }
        store.server(#"{"type":"history","id":2,"session_id":"session-fox","messages":[]}"#, effects: [.webSocket(.send(#"{"id":3,"type":"message","content":"hello from the train"}"#))]) {
            $0.transcript.removeAll()
            $0.transcript.append(role: .user, text: "hello from the train")
            $0.outbox.removeFirst()
            $0.session.historyLoaded = true
            $0.session.isProcessing = true
            $0.connection.historyRequestID = nil
            $0.connection.nextRequestID = 4
        }
        store.server(#"{"type":"done","id":3}"#, effects: [.webSocket(.send(#"{"id":4,"type":"message","content":"and another"}"#))]) {
            $0.transcript.append(role: .user, text: "and another")
            $0.outbox = []
            $0.connection.nextRequestID = 5
        }
    }

    func testALostConnectionEndsTheStreamingEntryButKeepsItsText() {
        var store = TestStore.turnRunning()
        store.server(#"{"type":"text_delta","text":"half an ans"}"#) {
            $0.transcript.appendText("half an ans", at: $0.transcript.streamingAssistant())
        }
        store.loseTheConnection()
        XCTAssertEqual(store.state.transcript.entries.last?.text, "half an ans")
        XCTAssertEqual(store.state.transcript.entries.last?.isStreaming, false)
    }

    func testClearConversationEmptiesTheTranscriptOptimisticallyAndSendsClear() {
        var store = TestStore(.connectedChat)
        store.send(.clearConversation, effects: [.webSocket(.send(#"{"id":3,"type":"clear"}"#))]) {
            $0.transcript.removeAll()
            $0.connection.nextRequestID = 4
        }
        XCTAssertTrue(store.state.transcript.isEmpty)
    }
}

/// The streaming inputs skip the features that ignore them; this proves
/// the features really do ignore them.
final class RoutingTests: XCTestCase {
    func testRoutedInputsDoWhatEveryFeatureWouldDo() {
        let hot: [String] = [
            #"{"type":"websocket_event","event":{"type":"text_delta","text":"a"}}"#,
            #"{"type":"websocket_event","line":"{\"type\":\"text_delta\",\"text\":\"b\"}\n{\"type\":\"done\",\"id\":3}"}"#,
            #"{"type":"websocket_event","event":{"type":"text_replace","text":"c"}}"#,
            #"{"type":"websocket_event","event":{"type":"reasoning_delta","text":"d"}}"#,
            #"{"type":"websocket_event","event":{"type":"tool_input","delta":"e"}}"#,
            #"{"type":"websocket_event","effect_id":999,"event":{"type":"text_delta","text":"stale"}}"#,
        ]
        for scenario in Scenario.allCases {
            for json in hot {
                let event = try! PlatformEvent.wire.decode(try! JSONParser.parse(json))
                var routed = Store(state: scenario.state())
                var everyFeature = Store(state: scenario.state(), interactor: EveryFeature())
                let a = routed.send(.platform(event))
                let b = everyFeature.send(.platform(event))
                XCTAssertEqual(a, b, "\(scenario.rawValue): \(json)")
                XCTAssertEqual(routed.state, everyFeature.state, "\(scenario.rawValue): \(json)")
            }
        }
    }

    private struct EveryFeature: Interactor {
        let app = AppInteractor()
        func interact(_ state: inout AppState, _ input: Input) -> Emission { app.interactWithEveryFeature(&state, input) }
    }
}
