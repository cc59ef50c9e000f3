import XCTest
@testable import JcodeMobileCore

/// What the chat shows beyond the streamed turn (issue 24, items 5, 6 and
/// 11): a turn the server stopped, the older part of a compacted history,
/// images as they arrive, and notices about a condition that has passed.
final class TranscriptRecoveryTests: XCTestCase {
    /// The app's own continuation (the server gave none).
    static let ourContinuation =
        "Your last turn was cut off before it finished (the app's connection dropped or the server restarted); a tool that was running was stopped and its result may be incomplete. Carry on from where you stopped, without asking me what to do next."

    // MARK: - Interrupted turns (client_disconnect_cleanup.rs, the TUI's History handler)

    func testAHistorySayingTheTurnWasInterruptedOffersToContinueAndContinueSendsItOnce() {
        var store = SpecStore.interruptedTurnOffered()
        XCTAssertEqual(store.node("chat.interrupted")?.label, "The last turn stopped before it finished.")
        XCTAssertEqual(store.node("chat.continue")?.label, "Continue")
        XCTAssertEqual(store.node("chat.continue")?.enabled, true)
        XCTAssertEqual(store.node("chat.interrupted.dismiss")?.label, "Dismiss")
        // As jcode's TUI sends it: an empty content and the continuation as system_reminder; it is
        // not the person's words, so no user bubble.
        store.send(
            .tapNode(id: "chat.continue"),
            effects: [.webSocket(.send(#"{"id":3,"type":"message","content":"","system_reminder":"\#(Self.ourContinuation)"}"#))],
            followUps: ["continue_interrupted_turn", "send"]
        ) {
            $0["/outbox"] = [outboxJSON("o1", "", delivery: "awaiting_ack", systemReminder: Self.ourContinuation)]
            $0["/session/is_processing"] = true
            $0["/interrupted_turn"] = nil
        }
        XCTAssertNil(store.node("chat.interrupted"))
        XCTAssertNil(store.node("chat.continue"), "the offer is gone: a second tap sends nothing")
    }

    func testContinueTappedOfflineWaitsInTheOutboxAndTheNextHistoryDoesNotOfferItAgain() {
        var store = SpecStore.interruptedTurnOffered()
        store.loseTheConnection()
        store.send(.tapNode(id: "chat.continue"), notes: ["message queued in the outbox"], followUps: ["continue_interrupted_turn"]) {
            $0["/outbox"] = [outboxJSON("o1", "", delivery: "waiting", systemReminder: Self.ourContinuation)]
            $0["/interrupted_turn"] = nil
        }
        store.reconnect()
        // The server still says the turn was interrupted; the continuation is
        // already on its way, so it is not offered again, and it goes once.
        store.server(
            #"{"type":"history","id":2,"session_id":"session-fox","messages":[{"role":"user","content":"Refactor it"}],"was_interrupted":true}"#,
            effects: [.webSocket(.send(#"{"id":3,"type":"message","content":"","system_reminder":"\#(Self.ourContinuation)"}"#))], followUps: ["send"]
        ) {
            $0["/transcript"] = [entryJSON("m2", "user", text: "Refactor it")]
            $0["/outbox"] = [outboxJSON("o1", "", delivery: "awaiting_ack", systemReminder: Self.ourContinuation)]
            $0["/connection/attempt"] = 0
            $0["/session/history_loaded"] = true
            $0["/session/is_processing"] = true
            $0["/banners/status"] = nil
        }
    }

    func testContinueSendsTheServersOwnWordsAfterAReloadAndShowsItsNotice() {
        var store = SpecStore(.connectedEmptyChat)
        store.server(
            #"{"type":"history","id":2,"session_id":"session-fox","messages":[{"role":"user","content":"Build it"}],"reload_recovery":{"reconnect_notice":"Reloaded with build v2","continuation_message":"Reload succeeded. Continue immediately."}}"#
        ) {
            $0["/transcript"] = [entryJSON("m1", "user", text: "Build it")]
            $0["/interrupted_turn"] = ["continuation": "Reload succeeded. Continue immediately.", "reconnect_notice": "Reloaded with build v2"]
        }
        XCTAssertEqual(store.node("chat.interrupted")?.value, "Reloaded with build v2")
        // jcode marks its recovery delivered only when system_reminder equals the continuation.
        store.send(
            .tapNode(id: "chat.continue"),
            effects: [.webSocket(.send(#"{"id":3,"type":"message","content":"","system_reminder":"Reload succeeded. Continue immediately."}"#))],
            followUps: ["continue_interrupted_turn", "send"]
        ) {
            $0["/outbox"] = [outboxJSON("o1", "", delivery: "awaiting_ack", systemReminder: "Reload succeeded. Continue immediately.")]
            $0["/session/is_processing"] = true
            $0["/interrupted_turn"] = nil
        }
    }

    func testDismissClosesTheOfferAndSendsNothing() {
        var store = SpecStore.interruptedTurnOffered()
        store.send(.tapNode(id: "chat.interrupted.dismiss"), followUps: ["dismiss_interrupted_turn"]) { $0["/interrupted_turn"] = nil }
        store.send(.dismissInterruptedTurn, notes: ["dismiss_interrupted_turn: no interrupted turn is shown"])
    }

    func testNothingIsOfferedForAnEmptyTranscriptOrATurnStillRunning() {
        var store = SpecStore(.connectedEmptyChat)
        store.server(#"{"type":"history","id":2,"session_id":"session-fox","messages":[],"was_interrupted":true}"#) {
            $0["/session/was_interrupted"] = true
        }
        store.server(
            #"{"type":"history","id":2,"session_id":"session-fox","messages":[{"role":"user","content":"Go"}],"was_interrupted":true,"activity":{"is_processing":true}}"#
        ) {
            $0["/transcript"] = [entryJSON("m1", "user", text: "Go")]
            $0["/session/is_processing"] = true
        }
    }

    func testAMessageWaitingInTheOutboxGoesWithTheHistoryAndTheOfferIsMoot() {
        var store = SpecStore(.connectedEmptyChat)
        store.loseTheConnection()
        store.send(.sendMessage(text: "Next step"), notes: ["message queued in the outbox"]) {
            $0["/outbox"] = [outboxJSON("o1", "Next step", delivery: "waiting")]
        }
        store.reconnect()
        store.server(
            #"{"type":"history","id":2,"session_id":"session-fox","messages":[{"role":"user","content":"Refactor it"}],"was_interrupted":true}"#,
            effects: [.webSocket(.send(#"{"id":3,"type":"message","content":"Next step"}"#))], followUps: ["send"]
        ) {
            $0["/transcript"] = [entryJSON("m1", "user", text: "Refactor it"), entryJSON("m2", "user", text: "Next step")]
            $0["/outbox"] = [outboxJSON("o1", "Next step", delivery: "awaiting_ack")]
            $0["/session/was_interrupted"] = true
            $0["/session/is_processing"] = true
            $0["/connection/attempt"] = 0
            $0["/session/history_loaded"] = true
            $0["/banners/status"] = nil
        }
    }

    func testATurnStartedElsewhereClosesTheOffer() {
        var store = SpecStore.interruptedTurnOffered()
        store.server(#"{"type":"state","id":0,"session_id":"session-fox","message_count":2,"is_processing":true}"#) {
            $0["/session/is_processing"] = true
            $0["/interrupted_turn"] = nil
        }
    }

    // MARK: - Older history (session/render.rs, client_state.rs handle_get_compacted_history)

    static let marker = "Earlier conversation compacted - 120 historical messages hidden from the UI. Scroll to the top to load older history."

    /// `connected_empty_chat` given a compacted history: the marker row and
    /// two live rows; the list starts with `chat.load_older`.
    static func compacted(file: StaticString = #filePath, line: UInt = #line) -> SpecStore {
        var store = SpecStore(.connectedEmptyChat, file: file, line: line)
        store.server(
            #"{"type":"history","id":2,"session_id":"session-fox","messages":[{"role":"system","content":"\#(marker)"},{"role":"user","content":"Latest question"},{"role":"assistant","content":"Latest answer"}]}"#,
            file: file, line: line
        ) {
            $0["/transcript"] = [entryJSON("m1", "user", text: "Latest question"), entryJSON("m2", "assistant", text: "Latest answer")]
            $0["/older_history"] = ["total": 120, "visible": 0, "remaining": 120, "requested": nil]
        }
        return store
    }

    func testACompactedHistoryOffersOlderMessagesInsteadOfTheScrollUpRow() {
        let store = Self.compacted()
        let list = store.node("chat.messages")
        XCTAssertEqual(list?.children.map(\.id), ["chat.load_older", "message.m1", "message.m2"])
        XCTAssertEqual(store.node("chat.load_older")?.label, "Load earlier messages")
        XCTAssertEqual(store.node("chat.load_older")?.value, "120 hidden")
        XCTAssertEqual(store.node("chat.load_older")?.enabled, true)
    }

    func testLoadOlderAsksForTheNextChunkAndTheAnswerComesFirstInTheList() {
        var store = Self.compacted()
        store.send(
            .tapNode(id: "chat.load_older"), effects: [.webSocket(.send(#"{"id":3,"type":"get_compacted_history","visible_messages":64}"#))],
            followUps: ["load_older_messages", "send"]
        ) { $0["/older_history/requested"] = 64 }
        XCTAssertEqual(store.node("chat.load_older")?.label, "Loading earlier messages…")
        XCTAssertEqual(store.node("chat.load_older")?.enabled, false)
        store.send(.loadOlderMessages, notes: ["load_older_messages: already asked; waiting for the answer"])
        store.server(
            #"{"type":"compacted_history","id":3,"session_id":"session-fox","messages":[{"role":"system","content":"Earlier conversation compacted - 56 older historical messages hidden. Showing 64 of 120 compacted messages. Scroll to the top to load more."},{"role":"user","content":"Older question"},{"role":"assistant","content":"Older answer"},{"role":"user","content":"Latest question"},{"role":"assistant","content":"Latest answer"}],"compacted_total":120,"compacted_visible":64,"compacted_remaining":56}"#,
            followUps: ["older_messages_shown"]
        ) {
            $0["/transcript"] = [
                entryJSON("m3", "user", text: "Older question"), entryJSON("m4", "assistant", text: "Older answer"),
                entryJSON("m5", "user", text: "Latest question"), entryJSON("m6", "assistant", text: "Latest answer"),
            ]
            $0["/older_history"] = ["total": 120, "visible": 64, "remaining": 56, "requested": nil]
        }
        XCTAssertEqual(store.node("chat.messages")?.children.map(\.id), ["chat.load_older", "message.m3", "message.m4", "message.m5", "message.m6"])
        XCTAssertEqual(store.node("chat.load_older")?.value, "56 hidden")
    }

    func testTheEntriesBeingReadStayInViewWhenOlderOnesArePrepended() {
        // Forty live rows: the list (390×844) scrolls; the person reads from offset 100.
        let live = (1...40).map { #"{"role":"user","content":"Live \#($0)"}"# }.joined(separator: ",")
        var store = SpecStore(.connectedEmptyChat)
        store.server(#"{"type":"history","id":2,"session_id":"session-fox","messages":[{"role":"system","content":"\#(Self.marker)"},\#(live)]}"#, notes: nil) {
            $0["/transcript"] = .array((1...40).map { entryJSON("m\($0)", "user", text: "Live \($0)") })
            $0["/older_history"] = ["total": 120, "visible": 0, "remaining": 120, "requested": nil]
        }
        store.send(.scrollMessages(offset: 100), followUps: ["scroll_messages"]) { $0["/messages_scroll"] = 100 }
        store.send(.loadOlderMessages, effects: [.webSocket(.send(#"{"id":3,"type":"get_compacted_history","visible_messages":64}"#))], followUps: ["send"]) {
            $0["/older_history/requested"] = 64
        }
        // Two older one-line messages come first: each is a box of two lines
        // ("You", then its text: 2 × 20 + 2 × 8 points) and a gap of 8, so
        // the list moves down by 2 × 64 points.
        store.server(
            #"{"type":"compacted_history","id":3,"session_id":"session-fox","messages":[{"role":"system","content":"Earlier conversation compacted - 56 older historical messages hidden. Showing 64 of 120 compacted messages. Scroll to the top to load more."},{"role":"user","content":"Old 1"},{"role":"user","content":"Old 2"},\#(live)],"compacted_total":120,"compacted_visible":64,"compacted_remaining":56}"#,
            followUps: ["older_messages_shown", "scroll_messages"]
        ) {
            $0["/transcript"] = .array(
                [entryJSON("m41", "user", text: "Old 1"), entryJSON("m42", "user", text: "Old 2")]
                    + (1...40).map { entryJSON("m\($0 + 42)", "user", text: "Live \($0)") })
            $0["/older_history"] = ["total": 120, "visible": 64, "remaining": 56, "requested": nil]
            $0["/messages_scroll"] = 228
        }
    }

    func testTapXYFindsLoadOlderWhereTheMessagesAboveItPutIt() {
        let live = (1...40).map { #"{"role":"user","content":"Live \#($0)"}"# }.joined(separator: ",")
        var store = SpecStore(.connectedEmptyChat)
        store.server(#"{"type":"history","id":2,"session_id":"session-fox","messages":[{"role":"system","content":"\#(Self.marker)"},\#(live)]}"#) {
            $0["/transcript"] = .array((1...40).map { entryJSON("m\($0)", "user", text: "Live \($0)") })
            $0["/older_history"] = ["total": 120, "visible": 0, "remaining": 120, "requested": nil]
        }
        // The list starts at y 163 (under the top safe area and the header).
        // Following the newest message, its top shows a message, not the
        // button far above.
        store.send(.tapXY(x: 100, y: 177), notes: ["tap_xy: nothing tappable at (100.0, 177.0): message.m32"])
        // Scrolled to the top, the same point is the button.
        store.send(.scrollMessages(offset: 0), followUps: ["scroll_messages"]) { $0["/messages_scroll"] = 0 }
        store.send(
            .tapXY(x: 100, y: 177), effects: [.webSocket(.send(#"{"id":3,"type":"get_compacted_history","visible_messages":64}"#))],
            followUps: ["load_older_messages", "send"]
        ) { $0["/older_history/requested"] = 64 }
    }

    func testACompactedHistoryNeverAskedForOrForAnotherSessionIsIgnored() {
        var store = Self.compacted()
        let answer = #"{"type":"compacted_history","id":3,"session_id":"session-fox","messages":[],"compacted_total":120,"compacted_visible":64,"compacted_remaining":56}"#
        store.server(answer, notes: ["compacted_history never asked for; ignored"])
        store.send(.loadOlderMessages, effects: [.webSocket(.send(#"{"id":3,"type":"get_compacted_history","visible_messages":64}"#))], followUps: ["send"]) {
            $0["/older_history/requested"] = 64
        }
        store.server(
            #"{"type":"compacted_history","id":3,"session_id":"session-owl","messages":[],"compacted_total":9,"compacted_visible":9,"compacted_remaining":0}"#,
            notes: ["compacted_history for session session-owl, not the one open; ignored"])
    }

    func testAnAnswerArrivingWhileATurnRunsIsNotAppliedAndTheButtonWorksAgain() {
        var store = Self.compacted()
        store.send(.loadOlderMessages, effects: [.webSocket(.send(#"{"id":3,"type":"get_compacted_history","visible_messages":64}"#))], followUps: ["send"]) {
            $0["/older_history/requested"] = 64
        }
        store.server(#"{"type":"state","id":0,"session_id":"session-fox","message_count":3,"is_processing":true}"#) {
            $0["/session/is_processing"] = true
        }
        XCTAssertEqual(store.node("chat.load_older")?.enabled, false)
        store.server(
            #"{"type":"compacted_history","id":3,"session_id":"session-fox","messages":[],"compacted_total":120,"compacted_visible":64,"compacted_remaining":56}"#,
            notes: ["compacted_history arrived while a turn runs: not applied; load again once it ends"]
        ) { $0["/older_history/requested"] = nil }
        store.send(.loadOlderMessages, notes: ["load_older_messages: a turn is running; load once it ends"])
    }

    func testTheMarkersOtherWordingsAreRead() {
        var store = SpecStore(.connectedEmptyChat)
        store.server(
            #"{"type":"history","id":2,"session_id":"session-fox","messages":[{"role":"system","content":"Earlier conversation compacted - showing all 30 compacted historical messages. Redraw may be slower while this view is open."},{"role":"user","content":"Hi"}]}"#
        ) {
            $0["/transcript"] = [entryJSON("m1", "user", text: "Hi")]
            $0["/older_history"] = ["total": 30, "visible": 30, "remaining": 0, "requested": nil]
        }
        XCTAssertEqual(store.node("chat.load_older")?.label, "All earlier messages shown")
        XCTAssertEqual(store.node("chat.load_older")?.enabled, false)
        store.send(.loadOlderMessages, notes: ["load_older_messages: no older messages to load"])
        // Wording the app cannot read stays an ordinary system row.
        store.server(#"{"type":"history","id":2,"session_id":"session-fox","messages":[{"role":"system","content":"Earlier conversation compacted - some were hidden."}]}"#) {
            $0["/transcript"] = [entryJSON("m2", "system", text: "Earlier conversation compacted - some were hidden.")]
            $0["/older_history"] = nil
        }
    }

    // MARK: - Images as they arrive (wire.rs SidePaneImages, GeneratedImage)

    func testLiveImagesAreKeptAndShownWithTheToolCallTheyBelongTo() {
        var store = SpecStore.turnRunning()
        store.server(#"{"type":"generated_image","id":"call_img","path":"/srv/out/cat.png","output_format":"png","revised_prompt":"A cat"}"#) {
            $0.append(
                "/transcript",
                entryJSON(
                    "m5", "assistant",
                    toolCalls: [toolCallJSON("call_img", "image_generation", output: "Generated image (png) saved to /srv/out/cat.png.\n\nRevised prompt:\nA cat", status: "succeeded")],
                    isStreaming: true))
        }
        store.server(
            #"{"type":"side_pane_images","session_id":"session-fox","images":[{"media_type":"image/png","data":"iVBORw0KGgo=","label":"cat","source":{"kind":"tool_result","tool_name":"image_generation"},"anchor":{"kind":"tool_call","id":"call_img"}}]}"#
        ) {
            $0["/images"] = [["media_type": "image/png", "label": "cat", "anchor": ["kind": "tool_call", "id": "call_img"], "data": "iVBORw0KGgo="]]
        }
        let image = store.node("tool.m5.call_img.image.0")
        XCTAssertEqual(image?.role, .image)
        XCTAssertEqual(image?.label, "cat")
        XCTAssertEqual(image?.value, "image/png")
    }

    func testImagesOfAUserPromptAndUnanchoredOnesHaveTheirPlace() {
        var store = SpecStore(.connectedEmptyChat)
        store.server(
            #"{"type":"history","id":2,"session_id":"session-fox","messages":[{"role":"user","content":"First"},{"role":"user","content":"Look at this"}],"images":[{"media_type":"image/jpeg","data":"AA==","anchor":{"kind":"user_prompt","ordinal":1}},{"media_type":"image/png","data":"BB=="}]}"#
        ) {
            $0["/transcript"] = [entryJSON("m1", "user", text: "First"), entryJSON("m2", "user", text: "Look at this")]
            $0["/images"] = [
                ["media_type": "image/jpeg", "label": nil, "anchor": ["kind": "user_prompt", "ordinal": 1], "data": "AA=="],
                ["media_type": "image/png", "label": nil, "anchor": nil, "data": "BB=="],
            ]
        }
        XCTAssertEqual(store.node("message.m2")?.children.map(\.id), ["message.m2.image.0"])
        XCTAssertEqual(store.node("chat.messages")?.children.map(\.id), ["message.m1", "message.m2", "image.1"])
    }

    func testPastSixtyFourImagesTheOldestGo() {
        var store = SpecStore.turnRunning()
        let images = (0...64).map { #"{"media_type":"image/png","data":"\#($0)","source":{"kind":"user_input"}}"# }.joined(separator: ",")
        store.server(
            #"{"type":"side_pane_images","session_id":"session-fox","images":[\#(images)]}"#,
            notes: ["more than 64 images: the 1 oldest are not kept"]
        ) {
            $0["/images"] = .array((1...64).map { ["media_type": "image/png", "label": nil, "anchor": nil, "data": .string("\($0)")] })
        }
    }

    func testLiveImagesForAnotherSessionOrNoneAreIgnored() {
        var store = SpecStore.turnRunning()
        store.server(
            #"{"type":"side_pane_images","session_id":"session-owl","images":[{"media_type":"image/png","data":"AA==","source":{"kind":"user_input"}}]}"#,
            notes: ["side_pane_images for session session-owl, not the one open; ignored"])
        store.server(#"{"type":"side_pane_images","session_id":"session-fox","images":[]}"#, notes: ["side_pane_images with no images; ignored"])
    }

    // MARK: - Notices about a condition that has passed

    func testTheInterruptedNoticeGoesWhenTheNextTurnStarts() {
        var store = SpecStore.turnRunning()
        store.server(#"{"type":"interrupted"}"#, followUps: ["notice", "turn_ended"]) {
            $0["/session/is_processing"] = false
            $0["/outbox"] = []
            $0.append("/notices", ["id": "n1", "kind": "info", "text": "Interrupted"])
        }
        store.send(
            .sendMessage(text: "Try again"), effects: [.webSocket(.send(#"{"id":4,"type":"message","content":"Try again"}"#))],
            followUps: ["send", "turn_started"]
        ) {
            $0.append("/transcript", entryJSON("m5", "user", text: "Try again"))
            $0.append("/outbox", outboxJSON("o2", "Try again", delivery: "awaiting_ack"))
            $0["/session/is_processing"] = true
            $0["/notices"] = []
        }
    }

    func testTheServerIsUpdatingNoticeGoesOnceTheSocketOpensAgain() {
        var store = SpecStore(.connectedChat)
        store.server(#"{"type":"reloading"}"#, followUps: ["notice"]) {
            $0.append("/notices", ["id": "n1", "kind": "info", "text": "Server is updating, reconnecting shortly"])
        }
        store.loseTheConnectionAfterAReload()
        store.fireTheReconnect()
        // The notice goes: the reconnect succeeded.
        store.resubscribe(keepalive: "keepalive.3") { $0["/notices"] = [] }
    }
}

extension SpecStore {
    /// `connected_empty_chat` given a history whose turn was cut off
    /// (`was_interrupted`): the chat offers to continue it, with the words
    /// the continuation will send.
    static func interruptedTurnOffered(file: StaticString = #filePath, line: UInt = #line) -> SpecStore {
        var store = SpecStore(.connectedEmptyChat, file: file, line: line)
        store.server(
            #"{"type":"history","id":2,"session_id":"session-fox","messages":[{"role":"user","content":"Refactor it"}],"was_interrupted":true}"#,
            file: file, line: line
        ) {
            $0["/transcript"] = [entryJSON("m1", "user", text: "Refactor it")]
            $0["/session/was_interrupted"] = true
            $0["/interrupted_turn"] = ["continuation": .string(TranscriptRecoveryTests.ourContinuation), "reconnect_notice": nil]
        }
        return store
    }
}
