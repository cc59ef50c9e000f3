import XCTest
@testable import JcodeMobileCore

final class SessionTests: XCTestCase {
    func testTheConnectedChatFixtureCarriesTheSessionMetadataOfItsHistory() {
        let store = SpecStore(.connectedChat)
        XCTAssertEqual(
            store["/session"],
            [
                "id": "session-fox", "title": "Fix the flaky test",
                "all_sessions": [["id": "session-fox", "title": "Fix the flaky test"], ["id": "session-owl", "title": "Release notes"]],
                "model": "claude-sonnet-4", "pending_model": nil, "provider": "anthropic",
                "available_models": ["claude-sonnet-4", "claude-opus-4", "gpt-5"],
                "reasoning_effort": "medium", "pending_reasoning_effort": nil, "server_version": "0.9.2",
                "tokens": nil, "total_tokens": ["input": 48210, "output": 3120, "cache_read_input": nil, "cache_creation_input": nil],
                "connection_type": nil, "upstream_provider": nil, "was_interrupted": false, "is_processing": false, "is_reasoning": false, "server_phase": nil, "status_detail": nil,
                "history_loaded": true, "is_compacting": false, "rename_draft": nil, "pending_rename": nil, "is_clearing": false,
            ])
    }

    func testAHistoryReplacesTheSessionMetadataAndKeepsKnownTitlesForUntitledSessions() {
        var store = SpecStore(.connectedEmptyChat)
        store.server(
            #"{"type":"history","session_id":"session-fox","messages":[],"provider_name":"openai","provider_model":"gpt-5","available_models":["gpt-5","o3"],"all_sessions":[{"session_id":"session-fox"},{"session_id":"session-cat","display_title":"Cats"}],"total_tokens":[10,20],"server_version":"1.0.0","reasoning_effort":"high"}"#
        ) {
            $0["/session/all_sessions"] = [["id": "session-fox", "title": "Fix the flaky test"], ["id": "session-cat", "title": "Cats"]]
            $0["/session/model"] = "gpt-5"
            $0["/session/provider"] = "openai"
            $0["/session/available_models"] = ["gpt-5", "o3"]
            $0["/session/reasoning_effort"] = "high"
            $0["/session/server_version"] = "1.0.0"
            $0["/session/total_tokens"] = ["input": 10, "output": 20, "cache_read_input": nil, "cache_creation_input": nil]
        }
    }

    func testAHistoryReportsATurnStillRunningOnTheServer() {
        var store = SpecStore(.connectedEmptyChat)
        store.server(#"{"type":"history","session_id":"session-fox","messages":[],"activity":{"is_processing":true,"current_tool_name":"bash"}}"#) {
            $0["/session/is_processing"] = true
        }
        XCTAssertEqual(store.node("chat.interrupt")?.visible, true, "the running turn can be interrupted")
    }

    func testSessionAndStateEventsFollowTheServer() {
        var store = SpecStore(.connectedChat)
        store.server(#"{"type":"session","session_id":"session-owl"}"#) {
            $0["/session/id"] = "session-owl"
            $0["/session/title"] = "Release notes"
        }
        XCTAssertEqual(store.node("chat.header")?.label, "Release notes")
        store.server(#"{"type":"state","id":5,"session_id":"session-owl","message_count":3,"is_processing":true}"#) {
            $0["/session/is_processing"] = true
        }
        // `state` answers `get_state` with the connection's flag, not the session's: it ends no turn.
        store.server(
            #"{"type":"state","session_id":"session-owl","is_processing":false}"#,
            notes: ["state with is_processing false ends no turn (it is the connection's flag); the turn ends with its done"])
    }

    func testARenameUpdatesTheTitleOfItsSessionAndTheCurrentTitleFollowsOnlyForTheCurrentSession() {
        var store = SpecStore(.connectedChat)
        store.server(#"{"type":"session_renamed","session_id":"session-owl","display_title":"Changelog"}"#) {
            $0["/session/all_sessions/1/title"] = "Changelog"
        }
        XCTAssertEqual(store["/session/title"], "Fix the flaky test", "another session's rename leaves the current title")
        store.server(#"{"type":"session_renamed","session_id":"session-fox","display_title":"Flaky test fixed"}"#) {
            $0["/session/all_sessions/0/title"] = "Flaky test fixed"
            $0["/session/title"] = "Flaky test fixed"
        }
        XCTAssertEqual(store.node("chat.header")?.label, "Flaky test fixed")
        store.server(#"{"type":"session_renamed","session_id":"session-new","display_title":"Brand new"}"#) {
            $0.append("/session/all_sessions", ["id": "session-new", "title": "Brand new"])
        }
    }

    func testARenameTrimsTheTitleAndTheTitleChangesOnlyWithTheServersSessionRenamed() {
        var store = SpecStore(.connectedChat)
        store.send(.renameSession(title: "  Flaky test  "), effects: [.webSocket(.send(#"{"id":3,"type":"rename_session","title":"Flaky test"}"#))], followUps: ["send"]) {
            $0["/session/pending_rename"] = "Flaky test"
        }
        XCTAssertEqual(store.node("chat.header")?.label, "Fix the flaky test", "not renamed before the server says so")
        store.send(.renameSession(title: "   "), notes: ["rename_session: empty title"])
        store.send(.renameSession(title: "Flaky"), notes: ["rename_session: a rename is already awaiting its answer"])
        // jcode answers session_renamed, then done (client_actions.rs, handle_rename_session).
        store.server(#"{"type":"session_renamed","session_id":"session-fox","title":"Flaky test","display_title":"Flaky test"}"#) {
            $0["/session/all_sessions/0/title"] = "Flaky test"
            $0["/session/title"] = "Flaky test"
        }
        store.server(#"{"type":"done","id":3}"#, notes: ["done for rename_session"]) {
            $0["/session/pending_rename"] = nil
        }
        store.send(.renameSession(title: "Flaky"), effects: [.webSocket(.send(#"{"id":4,"type":"rename_session","title":"Flaky"}"#))], followUps: ["send"]) {
            $0["/session/pending_rename"] = "Flaky"
        }
    }

    func testTappingAnotherSessionResumesItAndReloadsItsHistory() {
        var store = SpecStore(.connectedChat)
        store.send(.navigate(.sessions)) { $0["/screen"] = "sessions" }
        store.send(
            .tapNode(id: "session.session-owl"),
            effects: [
                .webSocket(.send(#"{"id":3,"type":"resume_session","session_id":"session-owl","client_instance_id":"fixture-device"}"#)),
                .webSocket(.send(#"{"id":4,"type":"ping"}"#)),
            ], followUps: ["resume_session", "open_chat", "session_switched", "send"]
        ) {
            $0["/screen"] = "chat"
            $0.showsTheOwlSessionLoading()
            $0["/banners/status"] = "Loading conversation…"
        }
        XCTAssertEqual(store.node("chat.loading")?.label, "Loading conversation…")
        store.server(#"{"type":"history","id":4,"session_id":"session-owl","messages":[{"role":"user","content":"Draft the notes"}],"total_tokens":[7,8]}"#) {
            $0["/transcript"] = [entryJSON("m4", "user", text: "Draft the notes")]
            $0["/session/history_loaded"] = true
            $0["/session/total_tokens"] = ["input": 7, "output": 8, "cache_read_input": nil, "cache_creation_input": nil]
            $0["/banners/status"] = nil
        }
    }

    func testAModelChangeIsPendingUntilTheServerConfirmsAndAFailureKeepsTheOldModel() {
        var store = SpecStore(.connectedChat)
        store.send(.setModel("gpt-5"), effects: [.webSocket(.send(#"{"id":3,"type":"set_model","model":"gpt-5"}"#))], followUps: ["send"]) {
            $0["/session/pending_model"] = "gpt-5"
        }
        XCTAssertEqual(store.node("nav.model_picker")?.label, "Switching to gpt-5…")
        store.server(#"{"type":"model_changed","id":3,"model":"gpt-5","provider_name":"openai"}"#) {
            $0["/session/pending_model"] = nil
            $0["/session/model"] = "gpt-5"
            $0["/session/provider"] = "openai"
        }
        XCTAssertEqual(store.node("nav.model_picker")?.label, "gpt-5")
        store.send(.setModel("nope"), effects: [.webSocket(.send(#"{"id":4,"type":"set_model","model":"nope"}"#))], followUps: ["send"]) {
            $0["/session/pending_model"] = "nope"
        }
        store.server(#"{"type":"model_changed","id":4,"model":"nope","error":"unknown model"}"#, followUps: ["show_error"]) {
            $0["/session/pending_model"] = nil
            $0["/banners/error"] = ["message": "Couldn't switch model: unknown model", "retry_after_secs": nil, "text": "Couldn't switch model: unknown model"]
        }
        XCTAssertEqual(store["/session/model"], "gpt-5", "the old model stays")
    }

    func testTheModelSwitchFailedFixtureShowsTheBannerAndKeepsTheModel() {
        let store = SpecStore(.modelSwitchFailed)
        XCTAssertEqual(store["/banners/error/message"], "Couldn't switch model: unknown model")
        XCTAssertEqual(store["/session/model"], "claude-sonnet-4")
        XCTAssertEqual(store["/session/pending_model"], .null)
        XCTAssertEqual(store.node("nav.model_picker")?.label, "claude-sonnet-4")
    }

    func testAReasoningEffortChangeIsPendingUntilTheServerAnswersAndAnErrorShowsABanner() {
        var store = SpecStore(.connectedChat)
        store.send(.setReasoningEffort("high"), effects: [.webSocket(.send(#"{"id":3,"type":"set_reasoning_effort","effort":"high"}"#))], followUps: ["send"]) {
            $0["/session/pending_reasoning_effort"] = "high"
        }
        store.server(#"{"type":"reasoning_effort_changed","id":3,"error":"not supported by this model"}"#, followUps: ["show_error"]) {
            $0["/session/pending_reasoning_effort"] = nil
            $0["/banners/error"] = [
                "message": "Couldn't change reasoning effort: not supported by this model", "retry_after_secs": nil,
                "text": "Couldn't change reasoning effort: not supported by this model",
            ]
        }
        XCTAssertEqual(store["/session/reasoning_effort"], "medium", "the old effort stays")
        store.server(#"{"type":"reasoning_effort_changed","id":4,"effort":"low"}"#) {
            $0["/session/reasoning_effort"] = "low"
        }
    }

    func testAnAvailableModelsUpdateReplacesTheListAndTheCurrentModel() {
        var store = SpecStore(.connectedChat)
        store.server(#"{"type":"available_models_updated","available_models":["a","b"],"provider_model":"b"}"#) {
            $0["/session/available_models"] = ["a", "b"]
            $0["/session/model"] = "b"
        }
    }

    func testCompactingShowsASuccessAsANoticeAndAFailureAsABanner() {
        var store = SpecStore(.connectedChat)
        store.send(.compact, effects: [.webSocket(.send(#"{"id":3,"type":"compact"}"#))], followUps: ["send"]) {
            $0["/session/is_compacting"] = true
        }
        store.server(#"{"type":"compact_result","id":3,"message":"Compacted 40 messages","success":true}"#, followUps: ["notice"]) {
            $0["/session/is_compacting"] = false
            $0.append("/notices", ["id": "n1", "kind": "info", "text": "Compacted 40 messages"])
        }
        store.send(.compact, effects: [.webSocket(.send(#"{"id":4,"type":"compact"}"#))], followUps: ["send"]) {
            $0["/session/is_compacting"] = true
        }
        store.server(#"{"type":"compact_result","id":4,"message":"Nothing to compact","success":false}"#, followUps: ["show_error"]) {
            $0["/session/is_compacting"] = false
            $0["/banners/error"] = ["message": "Nothing to compact", "retry_after_secs": nil, "text": "Nothing to compact"]
        }
    }

    func testACompactionIsANoticeUnlessItRanInTheBackground() {
        var store = SpecStore(.connectedChat)
        store.server(#"{"type":"compaction","trigger":"background","tokens_saved":500}"#)
        store.server(#"{"type":"compaction","trigger":"hard_compact","tokens_saved":12000}"#, followUps: ["notice"]) {
            $0.append("/notices", ["id": "n1", "kind": "info", "text": "Context compacted (12000 tokens saved)"])
        }
        store.server(#"{"type":"compaction","trigger":"auto_recovery"}"#, followUps: ["notice"]) {
            $0.append("/notices", ["id": "n2", "kind": "info", "text": "Context compacted"])
        }
    }

    func testNotificationsAndReloadsAreNoticesThatCanBeDismissed() {
        var store = SpecStore(.connectedChat)
        store.server(#"{"type":"notification","from_name":"build-agent","message":"Release build finished"}"#, followUps: ["notice"]) {
            $0.append("/notices", ["id": "n1", "kind": "notification", "text": "build-agent: Release build finished"])
        }
        store.server(#"{"type":"notification","message":"Anonymous ping"}"#, followUps: ["notice"]) {
            $0.append("/notices", ["id": "n2", "kind": "notification", "text": "Anonymous ping"])
        }
        store.server(#"{"type":"reloading","new_socket":"/tmp/x"}"#, followUps: ["notice"]) {
            $0.append("/notices", ["id": "n3", "kind": "info", "text": "Server is updating, reconnecting shortly"])
        }
        XCTAssertEqual(store.node("notice.n1")?.label, "build-agent: Release build finished")
        store.send(.tapNode(id: "notice.n1.dismiss"), followUps: ["dismiss_notice"]) { $0.remove("/notices/0") }
        store.send(.dismissNotice(id: "n999"), notes: ["dismiss_notice: no notice n999"])
    }

    func testAfterAReloadNoticeTheLostConnectionIsRetriedSoonerThanTheBackoff() {
        var store = SpecStore(.connectedChat)
        store.server(#"{"type":"reloading","new_socket":"/tmp/x"}"#, followUps: ["notice"]) {
            $0.append("/notices", ["id": "n1", "kind": "info", "text": "Server is updating, reconnecting shortly"])
        }
        store.loseTheConnectionAfterAReload()
    }

    func testNoticesAreBoundedToTheNewestFifty() {
        var store = SpecStore(.connectedChat)
        for i in 0..<55 {
            store.server(#"{"type":"notification","message":"n\#(i)"}"#, followUps: ["notice"]) {
                $0.append("/notices", ["id": .string("n\(i + 1)"), "kind": "notification", "text": .string("n\(i)")])
                if i >= 50 { $0.remove("/notices/0") }
            }
        }
        XCTAssertEqual(store["/notices"]?.arrayValue?.count, 50)
        XCTAssertEqual(store["/notices/0"], ["id": "n6", "kind": "notification", "text": "n5"])
        XCTAssertEqual(store["/notices/49"], ["id": "n55", "kind": "notification", "text": "n54"])
    }

    func testNavigationReachesEveryScreenOfAPairedApp() {
        var store = SpecStore(.connectedChat)
        store.send(.tapNode(id: "nav.model_picker"), followUps: ["navigate"]) { $0["/screen"] = "model_picker" }
        store.send(.tapNode(id: "nav.back"), followUps: ["navigate"]) { $0["/screen"] = "chat" }
        store.send(.tapNode(id: "nav.sessions"), followUps: ["navigate"]) { $0["/screen"] = "sessions" }
        store.send(.tapNode(id: "nav.back"), followUps: ["navigate"]) { $0["/screen"] = "chat" }
        store.send(.tapNode(id: "nav.settings"), followUps: ["navigate"]) { $0["/screen"] = "settings" }
        store.send(.tapNode(id: "settings.add_server"), followUps: ["navigate"]) { $0["/screen"] = "onboarding" }
        store.send(.tapNode(id: "nav.chat"), followUps: ["navigate"]) { $0["/screen"] = "chat" }
    }

    func testAnUnpairedAppCannotLeaveOnboarding() {
        var store = SpecStore()
        store.send(.navigate(.chat), notes: ["navigate: chat needs a paired server"])
        store.send(.navigate(.settings), notes: ["navigate: settings needs a paired server"])
    }
}
