import XCTest
@testable import JcodeMobileCore

/// The core's layout, hit-testing, `tap_xy`, the scrolling message list and
/// the SVG screenshot, specified on the `connected_chat` scenario: a header,
/// three messages (the second with a grep tool card) and the composer.
final class LayoutAndHitTestTests: XCTestCase {
    private func chat(height: Int = 844) -> JcodeMobileApp {
        var options = AppOptions()
        options.scenario = .connectedChat
        options.viewport = SemanticTree.Viewport(width: 390, height: height)
        return JcodeMobileApp(options: options)
    }

    private func hit(_ app: JcodeMobileApp, _ x: Double, _ y: Double) -> JSONValue {
        json(app.hitTestDocument(x: x, y: y).bytes.string)
    }

    private func report(_ app: JcodeMobileApp, _ action: String) -> JSONValue {
        json(app.dispatch(json: action).string)
    }

    /// What the core noted about the last input (the log says it; the report does not).
    private func notes(_ app: JcodeMobileApp) -> JSONValue? {
        json(app.logsJSON(limit: 1).string)["entries"]?.arrayValue?.first?["notes"]
    }

    private func bounds(_ x: Int, _ y: Int, _ width: Int, _ height: Int) -> SemanticNode.Bounds {
        SemanticNode.Bounds(x: x, y: y, width: width, height: height)
    }

    // MARK: - Layout

    func testTheChatScreenHasItsHeaderOnTopTheComposerAtTheBottomAndTheMessagesBetween() {
        let tree = chat().tree()
        XCTAssertEqual(tree.bounds, bounds(0, 0, 390, 844))
        XCTAssertEqual(tree.find("chat.header")?.bounds, bounds(16, 0, 358, 104))
        XCTAssertEqual(tree.find("chat.messages")?.bounds, bounds(16, 112, 358, 616))
        XCTAssertEqual(tree.find("chat.composer")?.bounds, bounds(16, 728, 358, 116))
        XCTAssertEqual(tree.find("chat.messages")?.scroll, SemanticNode.Scroll(offset: 0, contentHeight: 412, maxOffset: 0))
    }

    func testAHeadersButtonsAndTheComposersButtonsShareARow() {
        let tree = chat().tree()
        XCTAssertEqual(tree.find("nav.sessions")?.bounds, bounds(16, 52, 114, 44))
        XCTAssertEqual(tree.find("nav.model_picker")?.bounds, bounds(138, 52, 114, 44))
        XCTAssertEqual(tree.find("nav.settings")?.bounds, bounds(260, 52, 114, 44))
        XCTAssertEqual(tree.find("chat.send")?.bounds, bounds(260, 792, 114, 44))
        XCTAssertEqual(tree.find("chat.interrupt")?.bounds.width, 0, "hidden: no room taken")
    }

    func testAToolCardIsIndentedInsideItsMessage() {
        let tree = chat().tree()
        XCTAssertEqual(tree.find("message.m2")?.bounds, bounds(16, 172, 358, 244))
        XCTAssertEqual(tree.find("tool.m2.call_grep")?.bounds, bounds(24, 224, 342, 178))
    }

    func testAConversationTallerThanItsFrameShowsItsEndAndPutsEarlierMessagesAboveTheFrame() {
        let tree = chat(height: 480).tree()
        XCTAssertEqual(tree.find("chat.messages")?.bounds, bounds(16, 112, 358, 252))
        XCTAssertEqual(tree.find("chat.messages")?.scroll, SemanticNode.Scroll(offset: 160, contentHeight: 412, maxOffset: 160))
        XCTAssertEqual(tree.find("message.m1")?.bounds, bounds(16, -48, 358, 52))
        XCTAssertEqual(tree.find("message.m3")?.bounds, bounds(16, 264, 358, 92))
        XCTAssertEqual(tree.find("chat.composer")?.bounds, bounds(16, 364, 358, 116))
    }

    func testTextWrapsAtTheLastSpaceThatFitsOrMidWordWhenThereIsNone() {
        XCTAssertEqual(Layout.lines("one two three", perLine: 7), ["one two", "three"])
        XCTAssertEqual(Layout.lines("abcdefghij", perLine: 4), ["abcd", "efgh", "ij"])
        XCTAssertEqual(Layout.lines("a\n\nb", perLine: 4), ["a", "", "b"])
        XCTAssertEqual(Layout.lineCount("", perLine: 4), 0)
        XCTAssertEqual(Layout.lineCount("héllo wörld", perLine: 5), 2, "characters, not bytes")
    }

    // MARK: - Hit-testing

    func testAHitTestAnswersTheDeepestNodeAtThePointWithItsPathAndWhatATapWouldTap() {
        let answer = hit(chat(), 300, 810)
        XCTAssertEqual(answer["ok"], true)
        XCTAssertEqual(answer["node"]?["id"], "chat.send")
        XCTAssertEqual(answer["node"]?["bounds"], ["x": 260, "y": 792, "width": 114, "height": 44])
        XCTAssertEqual(answer["path"], ["root", "chat.composer", "chat.send"])
        XCTAssertEqual(answer["tap_target"], "chat.send")
    }

    func testAPointOnAToolsOutputHitsTheOutputInsideItsCardAndMessageAndNothingTappable() {
        let answer = hit(chat(), 100, 350)
        XCTAssertEqual(answer["path"], ["root", "chat.messages", "message.m2", "tool.m2.call_grep", "tool.m2.call_grep.output"])
        XCTAssertEqual(answer["tap_target"], .null)
    }

    func testAPointOutsideTheViewportHitsNothingAndANonFiniteOneIsRefused() {
        let app = chat()
        XCTAssertEqual(hit(app, -1, 10)["node"], .null)
        XCTAssertEqual(hit(app, 390, 10)["path"], [])
        XCTAssertEqual(hit(app, 10, 844)["node"], .null)
        XCTAssertEqual(hit(app, .nan, 10)["error"]?["code"], "invalid_field")
        XCTAssertEqual(hit(app, 10, .infinity)["error"]?["field"], "y")
    }

    func testWhatScrolledAboveTheMessageListIsNotHitTheHeaderIs() {
        // message.m1 spans y -48…4 at this size, behind the header.
        XCTAssertEqual(hit(chat(height: 480), 20, 10)["path"], ["root", "chat.header"])
    }

    // MARK: - tap_xy

    func testTapXYOnTheSettingsButtonOpensSettings() {
        let app = chat()
        _ = report(app, #"{"type":"tap_xy","x":300,"y":70}"#)
        XCTAssertEqual(app.state.navigation.screen, .settings)
    }

    func testTapXYOnTheDraftFieldFocusesIt() {
        let app = chat()
        _ = report(app, #"{"type":"tap_xy","x":100.5,"y":760.25}"#)
        XCTAssertEqual(app.state.navigation.focusedNodeID, "chat.draft")
    }

    func testTapXYOnAMessageOrADisabledButtonDoesNothingAndSaysWhy() {
        let app = chat()
        _ = report(app, #"{"type":"tap_xy","x":100,"y":130}"#)
        // (a message is not tappable: the tap names the deepest node there)
        XCTAssertEqual(notes(app), ["tap_xy: nothing tappable at (100.0, 130.0): message.m1"])
        _ = report(app, #"{"type":"tap_xy","x":300,"y":810}"#)
        XCTAssertEqual(notes(app), [#"tap_node: "chat.send" is disabled"#])
        _ = report(app, #"{"type":"tap_xy","x":500,"y":10}"#)
        XCTAssertEqual(notes(app), ["tap_xy: (500.0, 10.0) is outside the 390×844 viewport"])
        XCTAssertEqual(app.state.navigation.screen, .chat)
    }

    func testTapXYNeedsNumbers() {
        let answer = report(chat(), #"{"type":"tap_xy","x":"10","y":5}"#)
        XCTAssertEqual(answer["error"]?["code"], "invalid_field")
        XCTAssertEqual(answer["error"]?["field"], "x")
    }

    // MARK: - Scrolling

    func testScrollingToTheTopShowsTheFirstMessageWhereTheFrameBegins() {
        let app = chat(height: 480)
        _ = report(app, #"{"type":"scroll_messages","offset":0}"#)
        XCTAssertEqual(app.state.navigation.messagesScroll, 0)
        XCTAssertEqual(app.tree().find("message.m1")?.bounds, bounds(16, 112, 358, 52))
        XCTAssertEqual(hit(app, 100, 120)["node"]?["id"], "message.m1")
        XCTAssertEqual(hit(app, 100, 300)["path"], ["root", "chat.messages", "message.m2", "tool.m2.call_grep", "tool.m2.call_grep.input"])
    }

    func testAnOffsetAtOrPastTheEndFollowsNewMessages() {
        let app = chat(height: 480)
        _ = report(app, #"{"type":"scroll_messages","offset":40}"#)
        XCTAssertEqual(app.state.navigation.messagesScroll, 40)
        _ = report(app, #"{"type":"scroll_messages","offset":160}"#)
        XCTAssertEqual(app.state.navigation.messagesScroll, nil, "160 is the end")
        _ = report(app, #"{"type":"scroll_messages","offset":1000000}"#)
        XCTAssertEqual(app.state.navigation.messagesScroll, nil)
    }

    func testAScrolledListKeepsItsPlaceAsTheReplyGrowsAndSendingReturnsToTheEnd() {
        let app = chat(height: 480)
        _ = report(app, #"{"type":"scroll_messages","offset":0}"#)
        _ = report(app, #"{"type":"set_draft","value":"And the other flaky test?"}"#)
        _ = report(app, #"{"type":"send_message"}"#)
        XCTAssertEqual(app.state.navigation.messagesScroll, nil)
        let scroll = app.tree().find("chat.messages")?.scroll
        XCTAssertEqual(scroll?.offset, scroll?.maxOffset, "the list shows its end")
        XCTAssertEqual(scroll?.contentHeight, 472)
    }

    func testScrollingAwayFromTheChatIsANote() {
        var options = AppOptions()
        options.scenario = .onboarding
        let app = JcodeMobileApp(options: options)
        _ = report(app, #"{"type":"scroll_messages","offset":10}"#)
        XCTAssertEqual(notes(app), ["scroll_messages: the message list is not on this screen"])
        XCTAssertEqual(app.state.navigation.messagesScroll, nil)
        XCTAssertEqual(report(app, #"{"type":"scroll_messages","offset":-1}"#)["error"]?["code"], "invalid_field")
    }

    func testTheScrollPositionIsInTheStateAndTheChangeFeed() {
        let app = chat(height: 480)
        XCTAssertEqual(json(app.stateJSON().string)["state"]?["messages_scroll"], .null)
        _ = report(app, #"{"type":"scroll_messages","offset":12}"#)
        XCTAssertEqual(json(app.stateJSON().string)["state"]?["messages_scroll"], 12)
        let changes = json(app.changesJSON(since: 0).string)
        let ops = changes["changes"]?.arrayValue?.last?["ops"]?.arrayValue ?? []
        XCTAssertEqual(ops, [["op": "replace", "path": "/messages_scroll", "value": 12]])
    }

    // MARK: - Screenshot

    private func svg(_ app: JcodeMobileApp) -> String {
        json(app.screenshotDocument().bytes.string)["svg"]?.stringValue ?? ""
    }

    func testAScreenshotIsTheSameBytesForTheSameScreen() {
        XCTAssertEqual(svg(chat()), svg(chat()))
        let answer = json(chat().screenshotDocument().bytes.string)
        XCTAssertEqual(answer["format"], "svg")
        XCTAssertEqual(answer["width"], 390)
        XCTAssertEqual(answer["height"], 844)
    }

    func testAScreenshotDrawsEachVisibleNodeAsAGroupWithItsText() {
        let picture = svg(chat())
        XCTAssertTrue(picture.hasPrefix(#"<svg xmlns="http://www.w3.org/2000/svg" width="390" height="844" viewBox="0 0 390 844""#))
        XCTAssertTrue(picture.contains(#"<g data-id="chat.send" data-role="button">"#))
        XCTAssertTrue(picture.contains(#">Why does test_reconnect fail on CI?</text>"#))
        XCTAssertTrue(picture.contains(#">{&quot;pattern&quot;:&quot;sleep&quot;,&quot;path&quot;:&quot;tests/&quot;}</text>"#))
        XCTAssertFalse(picture.contains(#"data-id="chat.interrupt""#), "hidden nodes are not drawn")
    }

    func testAScreenshotLeavesOutWhatScrolledOutOfTheList() {
        let app = chat(height: 480)
        _ = report(app, #"{"type":"scroll_messages","offset":0}"#)
        let top = svg(app)
        XCTAssertTrue(top.contains(#"data-id="message.m1""#))
        XCTAssertFalse(top.contains(#"data-id="message.m3""#))
        XCTAssertTrue(top.contains(#"data-scroll-offset="0""#))
    }

    func testScreenshotTextEscapesMarkupAndReplacesWhatXMLCannotHold() {
        XCTAssertEqual(Screenshot.escaped("<b>&\"x\"</b>"), "&lt;b&gt;&amp;&quot;x&quot;&lt;/b&gt;")
        XCTAssertEqual(Screenshot.escaped("a\tb\u{1}c\u{FFFF}"), "a b\u{FFFD}c\u{FFFD}")
        XCTAssertEqual(Screenshot.fitted("claude-sonnet-4", 8), "claude-…")
        XCTAssertEqual(Screenshot.tail("/home/you/project", 8), "…project")
    }
}
