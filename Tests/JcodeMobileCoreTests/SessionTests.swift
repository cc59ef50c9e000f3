import XCTest
@testable import JcodeMobileCore

final class SessionTests: XCTestCase {
    func testHistoryTakesTheSessionMetadata() {
        let s = Scenario.connectedChat.state().session
        XCTAssertEqual(s.id, "session-fox")
        XCTAssertEqual(s.title, "Fix the flaky test")
        XCTAssertEqual(s.model, "claude-sonnet-4")
        XCTAssertEqual(s.provider, "anthropic")
        XCTAssertEqual(s.availableModels, ["claude-sonnet-4", "claude-opus-4", "gpt-5"])
        XCTAssertEqual(s.allSessions, [SessionSummary(id: "session-fox", title: "Fix the flaky test"), SessionSummary(id: "session-owl", title: "Release notes")])
        XCTAssertEqual(s.totalTokens, TokenUsage(input: 48210, output: 3120))
        XCTAssertEqual(s.serverVersion, "0.9.2")
        XCTAssertEqual(s.reasoningEffort, "medium")
        XCTAssertTrue(s.historyLoaded)
        XCTAssertFalse(s.isProcessing)
    }

    func testHistoryReportsATurnStillRunningOnTheServer() {
        var store = TestStore(.connectedEmptyChat)
        store.server(#"{"type":"history","session_id":"session-fox","messages":[],"activity":{"is_processing":true,"current_tool_name":"bash"}}"#) {
            $0.session.isProcessing = true
            $0.connection.historyRequestID = nil
        }
    }

    func testSessionAndStateEventsFollowTheServer() {
        var store = TestStore(.connectedChat)
        store.server(#"{"type":"session","session_id":"session-owl"}"#) {
            $0.session.id = "session-owl"
            $0.session.title = "Release notes"
        }
        store.server(#"{"type":"state","id":5,"session_id":"session-owl","message_count":3,"is_processing":true}"#) {
            $0.session.isProcessing = true
        }
        store.server(#"{"type":"state","session_id":"session-owl","is_processing":false}"#) { $0.session.isProcessing = false }
    }

    func testRenamesUpdateTheTitleOfTheirSessionAndTheCurrentTitleFollows() {
        var store = TestStore(.connectedChat)
        store.server(#"{"type":"session_renamed","session_id":"session-owl","display_title":"Changelog"}"#) {
            $0.session.allSessions[1].title = "Changelog"
        }
        XCTAssertEqual(store.state.session.title, "Fix the flaky test")
        store.server(#"{"type":"session_renamed","session_id":"session-fox","display_title":"Flaky test fixed"}"#) {
            $0.session.allSessions[0].title = "Flaky test fixed"
            $0.session.title = "Flaky test fixed"
        }
        store.server(#"{"type":"session_renamed","session_id":"session-new","display_title":"Brand new"}"#) {
            $0.session.allSessions.append(SessionSummary(id: "session-new", title: "Brand new"))
        }
    }

    func testRenamingTheSessionIsOptimistic() {
        var store = TestStore(.connectedChat)
        store.send(.renameSession(title: "  Flaky test  "), effects: [.webSocket(.send(#"{"id":3,"type":"rename_session","title":"Flaky test"}"#))]) {
            $0.session.allSessions[0].title = "Flaky test"
            $0.session.title = "Flaky test"
            $0.connection.nextRequestID = 4
        }
    }

    func testResumingAnotherSessionSwitchesAndReloadsHistory() {
        var store = TestStore(.connectedChat)
        store.send(.navigate(.sessions)) { $0.screen = .sessions }
        store.send(.tapNode(id: "session.session-owl"), effects: [
            .webSocket(.send(#"{"id":3,"type":"resume_session","session_id":"session-owl"}"#)), .webSocket(.send(#"{"id":4,"type":"get_history"}"#)),
        ]) {
            $0.screen = .chat
            $0.transcript.removeAll()
            $0.session.id = "session-owl"
            $0.session.title = "Release notes"
            $0.session.historyLoaded = false
            $0.session.totalTokens = nil
            $0.connection.nextRequestID = 5
            $0.connection.historyRequestID = 4
        }
    }

    func testModelChangesAndTheirErrors() {
        var store = TestStore(.connectedChat)
        store.send(.setModel("gpt-5"), effects: [.webSocket(.send(#"{"id":3,"type":"set_model","model":"gpt-5"}"#))]) {
            $0.session.pendingModel = "gpt-5"
            $0.connection.nextRequestID = 4
        }
        XCTAssertEqual(SemanticTree.build(store.state).find("nav.model_picker")?.label, "Switching to gpt-5…")
        store.server(#"{"type":"model_changed","id":3,"model":"gpt-5","provider_name":"openai"}"#) {
            $0.session.pendingModel = nil
            $0.session.model = "gpt-5"
            $0.session.provider = "openai"
        }
        store.send(.setModel("nope"), effects: [.webSocket(.send(#"{"id":4,"type":"set_model","model":"nope"}"#))]) {
            $0.session.pendingModel = "nope"
            $0.connection.nextRequestID = 5
        }
        store.server(#"{"type":"model_changed","id":4,"model":"nope","error":"unknown model"}"#) {
            $0.session.pendingModel = nil
            $0.errorBanner = ErrorBanner(message: "Couldn't switch model: unknown model")
        }
        XCTAssertEqual(store.state.session.model, "gpt-5", "the old model stays")
    }

    func testTheModelSwitchFailedScenarioShowsTheBannerAndKeepsTheModel() {
        let state = Scenario.modelSwitchFailed.state()
        XCTAssertEqual(state.errorBanner?.message, "Couldn't switch model: unknown model")
        XCTAssertEqual(state.session.model, "claude-sonnet-4")
        XCTAssertNil(state.session.pendingModel)
    }

    func testReasoningEffortChangesAndTheirErrors() {
        var store = TestStore(.connectedChat)
        store.send(.setReasoningEffort("high"), effects: [.webSocket(.send(#"{"id":3,"type":"set_reasoning_effort","effort":"high"}"#))]) {
            $0.session.pendingReasoningEffort = "high"
            $0.connection.nextRequestID = 4
        }
        store.server(#"{"type":"reasoning_effort_changed","id":3,"error":"not supported by this model"}"#) {
            $0.session.pendingReasoningEffort = nil
            $0.errorBanner = ErrorBanner(message: "Couldn't change reasoning effort: not supported by this model")
        }
        store.server(#"{"type":"reasoning_effort_changed","id":4,"effort":"low"}"#) { $0.session.reasoningEffort = "low" }
    }

    func testAvailableModelsUpdate() {
        var store = TestStore(.connectedChat)
        store.server(#"{"type":"available_models_updated","available_models":["a","b"],"provider_model":"b"}"#) {
            $0.session.availableModels = ["a", "b"]
            $0.session.model = "b"
        }
    }

    func testCompactingShowsTheResultAsANoticeOrABanner() {
        var store = TestStore(.connectedChat)
        store.send(.compact, effects: [.webSocket(.send(#"{"id":3,"type":"compact"}"#))]) {
            $0.session.isCompacting = true
            $0.connection.nextRequestID = 4
        }
        store.server(#"{"type":"compact_result","id":3,"message":"Compacted 40 messages","success":true}"#) {
            $0.session.isCompacting = false
            $0.addNotice(.info, "Compacted 40 messages")
        }
        store.send(.compact, effects: [.webSocket(.send(#"{"id":4,"type":"compact"}"#))]) {
            $0.session.isCompacting = true
            $0.connection.nextRequestID = 5
        }
        store.server(#"{"type":"compact_result","id":4,"message":"Nothing to compact","success":false}"#) {
            $0.session.isCompacting = false
            $0.errorBanner = ErrorBanner(message: "Nothing to compact")
        }
    }

    func testCompactionIsANoticeUnlessItRanInTheBackground() {
        var store = TestStore(.connectedChat)
        store.server(#"{"type":"compaction","trigger":"background","tokens_saved":500}"#) { _ in }
        store.server(#"{"type":"compaction","trigger":"hard_compact","tokens_saved":12000}"#) {
            $0.addNotice(.info, "Context compacted (12000 tokens saved)")
        }
        store.server(#"{"type":"compaction","trigger":"auto_recovery"}"#) { $0.addNotice(.info, "Context compacted") }
    }

    func testNotificationsAndReloadsAreNoticesThatCanBeDismissed() {
        var store = TestStore(.connectedChat)
        store.server(#"{"type":"notification","from_name":"build-agent","message":"Release build finished"}"#) {
            $0.addNotice(.notification, "build-agent: Release build finished")
        }
        store.server(#"{"type":"notification","message":"Anonymous ping"}"#) { $0.addNotice(.notification, "Anonymous ping") }
        store.server(#"{"type":"reloading","new_socket":"/tmp/x"}"#) {
            $0.addNotice(.info, "Server is updating, reconnecting shortly")
            $0.connection.reconnectSoon = true
        }
        let first = store.state.notices[0].id
        store.send(.tapNode(id: "notice.\(first).dismiss")) { $0.notices.removeFirst() }
        store.send(.dismissNotice(id: "n999")) { _ in }
        XCTAssertEqual(store.lastNotes, ["dismiss_notice: no notice n999"])
    }

    func testNoticesAreBounded() {
        var store = TestStore(.connectedChat)
        for i in 0..<(Notice.limit + 5) {
            store.server(#"{"type":"notification","message":"n\#(i)"}"#) { $0.addNotice(.notification, "n\(i)") }
        }
        XCTAssertEqual(store.state.notices.count, Notice.limit)
        XCTAssertEqual(store.state.notices.first?.text, "n5")
    }

    func testNavigationReachesEveryScreenOfAPairedApp() {
        var store = TestStore(.connectedChat)
        store.send(.tapNode(id: "nav.model_picker")) { $0.screen = .modelPicker }
        store.send(.tapNode(id: "nav.back")) { $0.screen = .chat }
        store.send(.tapNode(id: "nav.settings")) { $0.screen = .settings }
        store.send(.tapNode(id: "settings.add_server")) { $0.screen = .onboarding }
        store.send(.tapNode(id: "nav.chat")) { $0.screen = .chat }
        var fresh = TestStore()
        fresh.send(.navigate(.chat)) { _ in }
        XCTAssertEqual(fresh.lastNotes, ["navigate: chat needs a paired server"])
    }
}
