import XCTest

@testable import JcodeMobileCore

/// What a person sees: errors in words they can read, and nothing on the
/// screen covered or pushed off it by a long text.
final class ReadableScreensTests: XCTestCase {
    let small = SemanticTree.Viewport(width: 320, height: 568)

    func testAServerThatCannotReadAnApprovalIsNamedInPlainWordsWithItsOwnTextBehindDetails() {
        var state = Scenario.approvalUnsupported.state()
        var tree = SemanticTree.build(state)
        XCTAssertEqual(tree.find("banner.error")?.label, "This server does not support approvals. Updating jcode on the server may help.")
        XCTAssertEqual(tree.find("banner.error")?.expanded, false)
        XCTAssertNil(tree.find("banner.error.details"), "the server's own text waits behind Details")
        XCTAssertEqual(tree.find("banner.error.more")?.label, "Details")
        XCTAssertEqual(tree.find("banner.error.dismiss")?.label, "Dismiss")

        state.navigation.expansions.append(.init(nodeID: "banner.error", expanded: true))
        tree = SemanticTree.build(state, viewport: small)
        XCTAssertEqual(tree.find("banner.error.more")?.label, "Hide details")
        XCTAssertEqual(
            tree.find("banner.error.details")?.label,
            "Invalid request: unknown variant `permission_response`, expected one of `subscribe`…")
        XCTAssertTrue(
            tree.find("banner.error.details")?.accessibilityLabel.hasSuffix("`get_compacted_history` at line 1 column 30") == true,
            "a screen reader reads all of it")
    }

    func testAnyRequestTheServerCannotReadIsNamedByWhatItDoes() {
        let words = [
            ("set_reasoning_effort", "This server does not support changing the reasoning effort. Updating jcode on the server may help."),
            ("stdin_response", "This server does not support answering a tool's questions. Updating jcode on the server may help."),
            ("no_such_request", "The server could not read a request from this app. Updating jcode on the server may help."),
        ]
        for (name, expected) in words {
            let banner = ErrorBanner(message: "Invalid request: unknown variant `\(name)`, expected one of `message` at line 1 column 9")
            XCTAssertEqual(SemanticText.plain(of: banner).words, expected, name)
        }
        let missing = ErrorBanner(message: "Invalid request: missing field `model` at line 1 column 30", retryAfterSecs: 2)
        XCTAssertEqual(
            SemanticText.plain(of: missing).words,
            "The server could not read a request from this app. Updating jcode on the server may help. (retry in 2 s)")
        XCTAssertEqual(SemanticText.plain(of: missing).details, "Invalid request: missing field `model` at line 1 column 30 (retry in 2 s)")
        XCTAssertNil(SemanticText.plain(of: ErrorBanner(message: "unknown model")).details, "words a feature chose are shown as they are")
    }

    func testALongErrorTakesAThirdOfASmallScreenUntilShowAllAndItsButtonsStayOnTheScreen() {
        var state = Scenario.connectedChat.state()
        let sentence = "The server answered with a page of text nobody wrote for a phone. "
        state.notices.errorBanner = ErrorBanner(message: String(repeating: sentence, count: 30))
        var tree = SemanticTree.build(state, viewport: small)
        let closed = tree.find("banner.error")!
        XCTAssertEqual(closed.bounds, .init(x: 16, y: 47, width: 288, height: 176), "5 lines, its buttons and padding: under 568 / 3")
        XCTAssertEqual(
            closed.label,
            "The server answered with a page of text nobody wrote for a phone. The server answered with a page of text nobody wrote for a phone. The server answered with a page of…")
        XCTAssertEqual(tree.find("banner.error.more")?.label, "Show all")
        XCTAssertEqual(tree.find("banner.error.dismiss")?.bounds, .init(x: 252, y: 163, width: 44, height: 44), "an icon (xmark) at the row's end")

        state.navigation.expansions.append(.init(nodeID: "banner.error", expanded: true))
        tree = SemanticTree.build(state, viewport: small)
        XCTAssertEqual(tree.find("banner.error.more")?.label, "Show less")
        XCTAssertEqual(tree.find("banner.error")?.bounds.height, 216, "7 lines open on this screen")
        for id in ["banner.error.more", "banner.error.dismiss", "chat.header", "chat.composer", "chat.send"] {
            let b = tree.find(id)!.bounds
            XCTAssertTrue(b.y >= 0 && b.y + b.height <= 568 && b.x + b.width <= 320, "\(id) at \(b) is on the 320 × 568 screen")
        }
        XCTAssertEqual(tree.find("banner.error")?.accessibilityLabel, "Error: " + String(repeating: sentence, count: 30))
    }

    func testAnOpenedErrorTakesWhatTheChatsHeaderAndComposerLeaveAsTheyAreLaidOut() {
        var state = Scenario.connectedChat.state()
        state.notices.errorBanner = ErrorBanner(message: String(repeating: "The server answered with a page of text. ", count: 40))
        state.navigation.expansions.append(.init(nodeID: "banner.error", expanded: true))
        let side = SemanticTree.Viewport(width: 844, height: 390)
        // On its side: a 60-point header band and its gap, a line of activity
        // (44) and the composer in one row (44 and 8 under it) leave
        // 390 - 21 (the home indicator) - 164 = 205 points: 6 lines, its
        // padding and buttons (with a fixed guess of 296, none beyond the closed 2).
        XCTAssertEqual(Layout.chatChrome(state, width: 718), 68 + 44 + 52)
        let tree = SemanticTree.build(state, viewport: side)
        XCTAssertEqual(tree.find("banner.error")?.bounds.height, 6 * 20 + 3 * 8 + 44 + 8)
        // Upright on a small phone: a 108-point header over its buttons and
        // its gap, the composer's field over its icons (104).
        XCTAssertEqual(Layout.chatChrome(state, width: 288), 116 + 44 + 104)
    }

    func testAShortErrorSharesItsRowWithItsCloseButton() {
        let tree = SemanticTree.build(Scenario.modelSwitchFailed.state())
        let banner = tree.find("banner.error")!
        XCTAssertEqual(banner.label, "Couldn't switch model: unknown model")
        XCTAssertEqual(banner.bounds, SemanticNode.Bounds(x: 16, y: 47, width: 358, height: 60), "one line beside a 44-point button, padded")
        XCTAssertEqual(
            tree.find("banner.error.dismiss")?.bounds, SemanticNode.Bounds(x: 322, y: 55, width: 44, height: 44), "at its top right, inside its inset")
        XCTAssertEqual(Layout.textFrame(banner).width, 306, "its words stop where the button begins")
    }

    func testAnotherErrorShowsClosedEvenWhenTheLastOneWasOpened() {
        var options = AppOptions()
        options.scenario = .approvalUnsupported
        let app = JcodeMobileApp(options: options)
        _ = app.dispatch(json: #"{"type":"tap_node","node_id":"banner.error.more"}"#)
        XCTAssertEqual(app.tree().find("banner.error")?.expanded, true)
        _ = app.dispatch(json: #"{"type":"set_model","model":"gpt-5"}"#)
        _ = app.dispatch(json: #"{"type":"tap_node","node_id":"banner.error.dismiss"}"#)
        XCTAssertEqual(app.state.navigation.expansions, [], "dismissed: forgotten")
        _ = app.dispatch(json: #"{"type":"tap_node","node_id":"banner.error.more"}"#)
        XCTAssertNil(app.tree().find("banner.error.more"), "no banner: nothing to open")
        _ = app.dispatch(json: #"{"type":"set_expanded","node_id":"banner.error","expanded":true}"#)
        _ = app.dispatch(json: #"{"type":"disconnect"}"#)
        _ = app.dispatch(json: #"{"type":"compact"}"#)
        XCTAssertEqual(app.tree().find("banner.error")?.label, "Connect to the server to compact the conversation.")
        XCTAssertEqual(app.state.navigation.expansions, [], "a new error: its banner closed")
    }

    func testATextFoldsAtTheLineTheLayoutWouldBreakItEndingInAnEllipsis() {
        XCTAssertNil(SemanticText.folded("one two three", lines: 1, perLine: 13))
        XCTAssertEqual(SemanticText.folded("one two three four", lines: 1, perLine: 13), "one two…")
        XCTAssertEqual(SemanticText.folded("one two three four five", lines: 2, perLine: 9), "one two three…")
        XCTAssertEqual(SemanticText.folded("abcdefghijklmnop", lines: 1, perLine: 8), "abcdefg…")
        XCTAssertEqual(SemanticText.folded("first line\nsecond\nthird", lines: 2, perLine: 20), "first line\nsecond…")
    }
}

/// No internals on the screen: states are drawn, not written into labels.
final class NoInternalsOnScreenTests: XCTestCase {
    func testAReplyBeingWrittenIsMarkedTypingAndDrawnAsThreeDotsNotWords() {
        let tree = SemanticTree.build(Scenario.chatStreaming.state())
        let reply = tree.find("message.m5")!
        XCTAssertEqual(reply.label, "jcode")
        XCTAssertEqual(reply.variant, "typing")
        XCTAssertEqual(reply.accessibilityLabel, "jcode is writing")
        let svg = Screenshot.svg(tree)
        XCTAssertTrue(svg.contains(#"<circle data-typing="2""#), "the typing indicator's third dot")
        XCTAssertFalse(svg.contains("(typing)"))
    }

    func testAMessageWaitingToBeSentLooksUnlikeASentOne() {
        let tree = SemanticTree.build(Scenario.offlineQueuedMessage.state())
        let waiting = tree.find("chat.messages")!.children.last!
        XCTAssertEqual(waiting.id.hasPrefix("outbox."), true)
        XCTAssertEqual(waiting.label, "You")
        XCTAssertEqual(waiting.variant, "waiting")
        XCTAssertEqual(waiting.accessibilityLabel, "You said, not sent yet")
        let svg = Screenshot.svg(tree)
        XCTAssertTrue(svg.contains(##"fill="#f8fafc" stroke="#60a5fa" stroke-dasharray="5 3"/>"##), "a pale bubble outlined in dashes")
        XCTAssertTrue(svg.contains(">Waiting to send</text>"))
    }

    func testANoticeKindIsItsVariantAndNotItsValue() {
        var state = Scenario.connectedChat.state()
        state.notices.notices = [Notice(id: "n1", kind: .info, text: "Interrupted")]
        let notice = SemanticTree.build(state).find("notice.n1")!
        XCTAssertEqual(notice.label, "Interrupted")
        XCTAssertNil(notice.value)
        XCTAssertEqual(notice.variant, "info")
        XCTAssertFalse(Screenshot.svg(SemanticTree.build(state)).contains(">info<"))
    }

    func testAnEmptyChatSaysWhatToDoAndAChatWithMessagesDoesNot() {
        let hint = "No messages yet. Ask jcode to explain, change or run something in your project: type below, then Send."
        XCTAssertEqual(SemanticTree.build(Scenario.connectedEmptyChat.state()).find("chat.empty")?.label, hint)
        XCTAssertEqual(SemanticTree.build(Scenario.connectedEmptyChat.state()).find("chat.empty")?.visible, true)
        XCTAssertEqual(SemanticTree.build(Scenario.connectedChat.state()).find("chat.empty")?.visible, false)
    }

    func testAnEditsDiffHasNoInventedLineNumbersAndItsCardSaysItsPathOnce() {
        var state = Scenario.codeEditReview.state()
        var tree = SemanticTree.build(state)
        XCTAssertEqual(tree.find("tool.m5.call_edit.diff.0.0")?.label, "", "an edit's snippet says nothing of where in the file it lies")
        XCTAssertEqual(tree.find("tool.m5.call_edit.diff.0")?.label, "src/connection.rs")
        XCTAssertEqual(tree.find("tool.m5.call_edit.summary")?.visible, false, "open on its one diff, whose header says it")
        XCTAssertFalse(Screenshot.svg(tree).contains("@@"))
        state.navigation.expansions.append(.init(nodeID: "tool.m5.call_edit", expanded: false))
        tree = SemanticTree.build(state)
        XCTAssertEqual(tree.find("tool.m5.call_edit.summary")?.value, "src/connection.rs +2 −2")
        XCTAssertEqual(tree.find("tool.m5.call_edit.summary")?.visible, true)
    }

    func testASessionShowsWhatItLastSaidTheShownOneLiveAndOneLeftAsItWasWhenLeft() {
        var options = AppOptions()
        options.scenario = .connectedChat
        let app = JcodeMobileApp(options: options)
        func act(_ json: String) { XCTAssertTrue(app.dispatch(json: json).string.hasPrefix(#"{"ok":true"#)) }
        func server(_ event: String) {
            XCTAssertTrue(app.platformEvent(json: #"{"type":"websocket_event","event":\#(event)}"#).string.hasPrefix(#"{"ok":true"#))
        }
        act(#"{"type":"navigate","screen":"sessions"}"#)
        var tree = app.tree()
        XCTAssertEqual(
            tree.find("session.session-fox")?.value,
            "jcode: It sleeps a fixed 100 ms and races the server. I replaced the sleep with a wait…",
            "the last message with words, cut to 80 characters")
        XCTAssertNil(tree.find("session.session-owl")?.value, "never shown on this device: nothing known of it")
        XCTAssertEqual(tree.find("session.session-fox")?.bounds.height, 56, "two lines: its name, then what it said")
        XCTAssertEqual(tree.find("session.session-owl")?.bounds.height, 44)
        XCTAssertTrue(Screenshot.svg(tree).contains(
            ##"<text x="28" y="158" fill="#4b5563" xml:space="preserve">jcode: It sleeps a fixed 100 ms and rac…</text>"##),
            "drawn paler under the name, cut to the row beside the check mark")

        act(#"{"type":"resume_session","session_id":"session-owl"}"#)
        server(###"{"type":"history","id":3,"session_id":"session-owl","messages":[{"role":"user","content":"Draft the notes"},{"role":"assistant","content":"## Release 0.9\n\n- faster pairing"}]}"###)
        act(#"{"type":"navigate","screen":"sessions"}"#)
        tree = app.tree()
        XCTAssertEqual(tree.find("session.session-owl")?.value, "jcode: Release 0.9", "a heading's words, without its #s")
        XCTAssertEqual(
            tree.find("session.session-fox")?.value,
            "jcode: It sleeps a fixed 100 ms and races the server. I replaced the sleep with a wait…",
            "as it was when the person left it")

        act(#"{"type":"resume_session","session_id":"session-fox"}"#)
        act(#"{"type":"navigate","screen":"sessions"}"#)
        XCTAssertEqual(
            app.tree().find("session.session-fox")?.value,
            "jcode: It sleeps a fixed 100 ms and races the server. I replaced the sleep with a wait…",
            "its history still loading: what it said when left")
        XCTAssertEqual(app.tree().find("session.session-owl")?.value, "jcode: Release 0.9")
    }

    func testAPreviewIsTheFirstLineWithWordsOfTheLastMessageThatSaysSomething() {
        XCTAssertEqual(SessionPreview.firstLine("\n\n  > quoted words  \n second"), "quoted words")
        XCTAssertEqual(SessionPreview.firstLine("- an item"), "an item")
        XCTAssertEqual(SessionPreview.firstLine("-1 is negative"), "-1 is negative", "a minus, not a bullet")
        XCTAssertNil(SessionPreview.firstLine(" \n\t\n"))
        var transcript = Transcript()
        _ = transcript.append(role: .user, text: "Run the tests")
        let reply = transcript.streamingEntryCreatingIfNeeded()
        transcript.addToolCall(ToolCall(id: "c1", name: "bash", status: .running), at: reply)
        XCTAssertEqual(SessionPreview.of(transcript), SessionPreview(role: .assistant, text: "used bash"), "a reply of tool calls only")
        _ = transcript.appendQueued(text: "and then?")
        XCTAssertEqual(SessionPreview.of(transcript)?.line, "jcode: used bash", "a message not sent yet is not what the session said")
    }

    func testTheCurrentModelAndEffortAreSelectedAndDrawnWithACheckMark() {
        var state = Scenario.connectedChat.state()
        state.navigation.screen = .modelPicker
        let tree = SemanticTree.build(state)
        XCTAssertEqual(tree.find("model.list")?.children.map(\.selected), [true, false, false])
        XCTAssertEqual(tree.find("model.claude-sonnet-4")?.accessibilityLabel, "claude-sonnet-4, in use")
        let svg = Screenshot.svg(tree)
        XCTAssertEqual(svg.components(separatedBy: #"<path data-selected="true""#).count - 1, 2, "the model's and the effort's")
    }
}

/// Every size a phone has: a small one, one on its side; what does not fit scrolls.
final class EverySizeTests: XCTestCase {
    private func app(_ scenario: Scenario, _ width: Int, _ height: Int) -> JcodeMobileApp {
        var options = AppOptions()
        options.scenario = scenario
        options.viewport = SemanticTree.Viewport(width: width, height: height)
        return JcodeMobileApp(options: options)
    }

    func testAFormTallerThanASmallPhoneScrollsAndScrollScreenMovesItUntilAnotherScreenOpens() {
        let app = app(.onboarding, 320, 568)
        XCTAssertEqual(app.tree().scroll, SemanticNode.Scroll(offset: 0, contentHeight: 725, maxOffset: 157), "its nodes take 691 points; the home indicator's 34 follow")
        XCTAssertEqual(app.tree().find("pair.check")?.bounds, SemanticNode.Bounds(x: 16, y: 639, width: 288, height: 44), "below the fold")
        _ = app.dispatch(json: #"{"type":"scroll_screen","offset":100000}"#)
        XCTAssertEqual(app.state.navigation.screenScroll, 157, "at most its end")
        XCTAssertEqual(app.tree().scroll?.offset, 157)
        XCTAssertEqual(SemanticTree.hitTest(app.tree(), x: 100, y: 500)?.node.id, "pair.check", "on the screen at 639 - 157")
        let chat = self.app(.connectedChat, 320, 568)
        _ = chat.dispatch(json: #"{"type":"navigate","screen":"settings"}"#)
        _ = chat.dispatch(json: #"{"type":"scroll_screen","offset":40}"#)
        XCTAssertEqual(chat.state.navigation.screenScroll, 40)
        _ = chat.dispatch(json: #"{"type":"navigate","screen":"chat"}"#)
        XCTAssertEqual(chat.state.navigation.screenScroll, 0, "another screen shows from its top")
        XCTAssertNil(chat.tree().scroll, "the chat scrolls its message list, not itself")
    }

    func testScrollScreenOnTheChatOrAScreenThatFitsChangesNothing() {
        let chat = app(.connectedChat, 390, 844)
        let before = chat.state
        _ = chat.dispatch(json: #"{"type":"scroll_screen","offset":40}"#)
        XCTAssertEqual(chat.state.navigation, before.navigation)
        _ = chat.dispatch(json: #"{"type":"navigate","screen":"sessions"}"#)
        _ = chat.dispatch(json: #"{"type":"scroll_screen","offset":40}"#)
        XCTAssertEqual(chat.state.navigation.screenScroll, 0, "the sessions list fits")
    }

    func testOnItsSideAPhoneHasNoStatusBarBandAndTheComposerIsOneRow() {
        let tree = app(.connectedChat, 844, 390).tree()
        XCTAssertEqual(tree.find("chat.header")?.bounds.y, 0)
        XCTAssertEqual(tree.find("chat.draft")?.bounds, SemanticNode.Bounds(x: 63, y: 317, width: 562, height: 44), "Stop, hidden, takes no room")
        XCTAssertEqual(tree.find("chat.attach")?.bounds, SemanticNode.Bounds(x: 633, y: 317, width: 44, height: 44))
        XCTAssertEqual(tree.find("chat.send")?.bounds, SemanticNode.Bounds(x: 737, y: 317, width: 44, height: 44), "47 points from the edge (the notch's room), 21 above the bottom")
        let upright = app(.connectedChat, 320, 568).tree()
        XCTAssertEqual(upright.find("chat.header")?.bounds.y, 47)
        XCTAssertEqual(upright.find("chat.draft")?.bounds.width, 288, "too narrow for a row: the field above its buttons")
    }

    func testOnItsSideAHeaderIsOneBandItsBackButtonLeadingItsOthersTrailingAndItsTitleBetween() {
        let tree = app(.connectedChat, 844, 390).tree()
        // Its title and server (two lines, 56 points) beside a 44-point row: 60 tall, not 108.
        XCTAssertEqual(tree.find("chat.header")?.bounds, SemanticNode.Bounds(x: 63, y: 0, width: 718, height: 60), "inside the notch's room at each side")
        XCTAssertEqual(tree.find("nav.sessions")?.bounds, SemanticNode.Bounds(x: 541, y: 8, width: 44, height: 44))
        XCTAssertEqual(tree.find("nav.model_picker")?.bounds, SemanticNode.Bounds(x: 593, y: 8, width: 136, height: 44), "as wide as its words")
        XCTAssertEqual(tree.find("nav.settings")?.bounds, SemanticNode.Bounds(x: 737, y: 8, width: 44, height: 44))
        XCTAssertEqual(Layout.textFrame(tree.find("chat.header")!).x, 63)
        XCTAssertEqual(Layout.textFrame(tree.find("chat.header")!).width, 470, "up to the first button and a gap")

        let settings = app(.connectedChat, 844, 390)
        _ = settings.dispatch(json: #"{"type":"navigate","screen":"settings"}"#)
        let header = settings.tree().find("settings.header")!
        XCTAssertEqual(header.bounds.height, 60)
        XCTAssertEqual(settings.tree().find("nav.back")?.bounds, SemanticNode.Bounds(x: 63, y: 8, width: 44, height: 44), "back at the left")
        XCTAssertEqual(Layout.textFrame(header).x, 107, "the title after it")
        XCTAssertEqual(Layout.textFrame(header).y, 12, "one line (36 points) in the middle of 60")
        XCTAssertEqual(Layout.textFrame(tree.find("chat.header")!).y, 0, "two lines (56 points) from the top, on the grid")
        XCTAssertTrue(Screenshot.svg(settings.tree()).contains(##"<text x="115" y="35" fill="#111827" font-weight="bold" xml:space="preserve">Settings</text>"##))

        let upright = app(.connectedChat, 430, 932).tree()
        XCTAssertEqual(upright.find("chat.header")?.bounds.height, 108, "upright: a title over a row of buttons")
    }

    func testTheHomeIndicatorAndTheNotchKeepTheirRoomAndThePictureDrawsTheIndicator() {
        XCTAssertEqual(Layout.safeArea(SemanticTree.Viewport(width: 390, height: 844)), Layout.Insets(top: 47, left: 0, bottom: 34, right: 0))
        XCTAssertEqual(Layout.safeArea(SemanticTree.Viewport(width: 844, height: 390)), Layout.Insets(top: 0, left: 47, bottom: 21, right: 47))
        let upright = app(.connectedChat, 390, 844).tree()
        let composer = upright.find("chat.composer")!.bounds
        XCTAssertEqual(composer.y + composer.height, 844 - 34, "the composer ends where the home indicator's room begins")
        XCTAssertTrue(Screenshot.svg(upright).contains(##"<rect data-id="home_indicator" x="128" y="831" width="134" height="5" rx="2.5" fill="#111827"/>"##))
    }

    func testAHostGivesItsOwnSafeAreaAndAPhoneWithAHomeButtonHasNoIndicator() {
        var options = AppOptions()
        options.scenario = .connectedChat
        options.viewport = SemanticTree.Viewport(width: 320, height: 568, safeArea: Layout.Insets(top: 20, left: 0, bottom: 0, right: 0))
        let app = JcodeMobileApp(options: options)
        let tree = app.tree()
        XCTAssertEqual(tree.find("chat.header")?.bounds.y, 20, "under a 20-point status bar")
        let composer = tree.find("chat.composer")!.bounds
        XCTAssertEqual(composer.y + composer.height, 568, "down to the bottom: no home indicator")
        let svg = json(app.screenshotDocument().bytes.string)["svg"]?.stringValue ?? ""
        XCTAssertFalse(svg.contains("home_indicator"))
        XCTAssertTrue(svg.contains(##"<g data-id="status_bar"><text x="32" y="16""##), "the status bar in its 20 points")
    }

    func testTheSafeAreaOptionIsReadAndOneThatLeavesNoScreenIsRefusedAndNamed() {
        var given = #"{"viewport":{"width":320,"height":568,"safe_area":{"top":20,"left":0,"bottom":0,"right":0}}}"#
        let parsed = given.withUTF8 { bytes -> AppOptions? in
            do throws(CoreError) { return try AppOptions.parse(bytes) } catch { return nil }
        }
        XCTAssertEqual(parsed?.viewport.safeArea, Layout.Insets(top: 20, left: 0, bottom: 0, right: 0))
        XCTAssertNil(parseError(of: #"{"viewport":{"width":390,"height":844}}"#, AppOptions.parse), "optional")
        for options in [
            #"{"viewport":{"width":390,"height":844,"safe_area":{"top":500,"left":0,"bottom":344,"right":0}}}"#,
            #"{"viewport":{"width":390,"height":844,"safe_area":{"top":0,"left":200,"bottom":0,"right":190}}}"#,
        ] {
            let error = parseError(of: options, AppOptions.parse)
            XCTAssertEqual(error?.code, .invalidField)
            XCTAssertEqual(error?.field, "viewport.safe_area")
        }
        XCTAssertEqual(
            parseError(of: #"{"viewport":{"width":390,"height":844,"safe_area":{"top":-1,"left":0,"bottom":0,"right":0}}}"#, AppOptions.parse)?.field,
            "viewport.safe_area.top")
        XCTAssertEqual(
            parseError(of: #"{"viewport":{"width":390,"height":844,"safe_area":{"top":47}}}"#, AppOptions.parse)?.field,
            "viewport.safe_area.left", "every edge is given")
        XCTAssertEqual(
            parseError(of: #"{"viewport":{"width":390,"height":844,"safe_area":"none"}}"#, AppOptions.parse)?.code, .invalidField)
    }

    func testWhileASheetIsUpTheComposerShowsOnlyStop() {
        let tree = app(.toolApprovalRequired, 320, 568).tree()
        for id in ["chat.draft", "chat.attach", "chat.voice", "chat.send"] {
            XCTAssertEqual(tree.find(id)?.visible, false, id)
        }
        XCTAssertEqual(tree.find("chat.interrupt")?.visible, true)
        XCTAssertEqual(tree.find("permission.perm-1.always")?.bounds.width, 272, "its words do not fit a third of the row: one under the other")
        let upright = app(.toolApprovalRequired, 390, 844).tree()
        XCTAssertEqual(
            upright.find("permission.perm-1.deny")?.bounds.width, 342,
            "the three do not fit side by side: all one under the other, Deny never a small button beside a long one")
        let wide = app(.toolApprovalRequired, 844, 390).tree()
        XCTAssertEqual(wide.find("permission.perm-1.approve")?.bounds.y, wide.find("permission.perm-1.always")?.bounds.y, "side by side")
        // Not in equal thirds of 702 points (228 each: "Always allow for this session" needs 248), but
        // each as wide as its words and a third of the rest (106, on the 4-point grid: 104).
        XCTAssertEqual(wide.find("permission.perm-1.approve")?.bounds.width, 72 + 104)
        XCTAssertEqual(wide.find("permission.perm-1.always")?.bounds.width, 248 + 104)
    }

    func testAButtonAnAppDrawsAsAnIconCarriesItsSymbolAndKeepsItsWords() {
        let tree = app(.chatStreaming, 390, 844).tree()
        XCTAssertEqual(tree.find("chat.send")?.icon, "arrow.up.to.line", "Queue while jcode works")
        XCTAssertEqual(tree.find("chat.send")?.label, "Queue")
        XCTAssertEqual(tree.find("chat.interrupt")?.icon, "stop.fill")
        XCTAssertEqual(tree.find("chat.attach")?.accessibilityLabel, "Attach image")
        XCTAssertNil(tree.find("nav.model_picker")?.icon, "a model's name is words")
        let svg = Screenshot.svg(tree)
        XCTAssertTrue(svg.contains(#"<g data-icon="stop.fill""#))
        XCTAssertFalse(svg.contains(">Attach …<"), "no label cut short")
    }
}

/// Light and dark: the host tells the appearance; the tree carries roles, the pictures the colours.
final class AppearanceTests: XCTestCase {
    func testTheAppearanceEventSetsTheStateAndThePictureButNotTheTree() {
        var options = AppOptions()
        options.scenario = .connectedChat
        let app = JcodeMobileApp(options: options)
        let lightTree = app.tree()
        XCTAssertEqual(app.state.lifecycle.appearance, .light, "light until told")
        _ = app.platformEvent(json: #"{"type":"appearance","mode":"dark"}"#)
        XCTAssertEqual(app.state.lifecycle.appearance, .dark)
        XCTAssertEqual(app.tree(), lightTree, "the tree carries roles, never colours")
        let svg = Screenshot.svg(app.tree(), appearance: .dark)
        XCTAssertTrue(svg.contains(##"<rect data-id="background" x="0" y="0" width="390" height="844" fill="#0b0f17"/>"##))
        XCTAssertFalse(svg.contains(##"fill="#ffffff""##), "nothing of the light palette's white")
        let report = app.platformEvent(json: #"{"type":"appearance","mode":"sepia"}"#).string
        XCTAssertTrue(report.contains(#""code":"invalid_field""#), report)
        XCTAssertEqual(app.state.lifecycle.appearance, .dark, "an unknown mode changes nothing")
    }

    func testEveryColourOfTheLightPaletteHasADarkOne() {
        XCTAssertEqual(Screenshot.darkened(##"<rect fill="#ffffff" stroke="#d1d5db"/><text fill="#111827">Hi</text>"##),
                       ##"<rect fill="#0b0f17" stroke="#374151"/><text fill="#f3f4f6">Hi</text>"##)
        XCTAssertEqual(Screenshot.darkened(##"<text>#ffffff</text>"##), ##"<text>#ffffff</text>"##, "only attribute values")
    }
}
