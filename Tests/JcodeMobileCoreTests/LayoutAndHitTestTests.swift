import XCTest
@testable import JcodeMobileCore
@testable import JcodeMobileJSON

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
        // Below the top safe area.
        XCTAssertEqual(tree.find("chat.header")?.bounds, bounds(16, 47, 358, 108))
        XCTAssertEqual(tree.find("chat.messages")?.bounds, bounds(16, 163, 358, 543))
        // Its field (no label over it: its placeholder says what it is), then its row of icons.
        XCTAssertEqual(tree.find("chat.composer")?.bounds, bounds(16, 706, 358, 104), "above the home indicator's 34 points")
        // The grep card closed: its name, status and summary.
        XCTAssertEqual(tree.find("chat.messages")?.scroll, SemanticNode.Scroll(offset: 0, contentHeight: 412, maxOffset: 0))
    }

    func testAHeadersIconsAreSquaresTheModelTakesTheRestAndTheComposersSendIsAtItsRightEnd() {
        let tree = chat().tree()
        // Sessions and Settings are icons (44 × 44); "claude-sonnet-4" has the rest of the row.
        XCTAssertEqual(tree.find("nav.sessions")?.bounds, bounds(16, 103, 44, 44))
        XCTAssertEqual(tree.find("nav.sessions")?.icon, "list.bullet")
        XCTAssertEqual(tree.find("nav.model_picker")?.bounds, bounds(68, 103, 254, 44))
        XCTAssertEqual(tree.find("nav.settings")?.bounds, bounds(330, 103, 44, 44))
        XCTAssertEqual(tree.find("nav.settings")?.label, "Settings", "its words stay its label")
        XCTAssertEqual(tree.find("chat.attach")?.bounds, bounds(16, 758, 44, 44))
        XCTAssertEqual(tree.find("chat.voice")?.bounds, bounds(68, 758, 44, 44))
        XCTAssertEqual(tree.find("chat.send")?.bounds, bounds(330, 758, 44, 44), "under the right thumb")
        XCTAssertEqual(tree.find("chat.interrupt")?.bounds.width, 0, "hidden: no room taken")
    }

    func testAToolCardIsIndentedInsideItsMessage() {
        let tree = chat().tree()
        // In the list's content coordinates (the list is not scrolled: on the screen, 163 lower).
        XCTAssertEqual(tree.find("message.m2")?.bounds, bounds(16, 64, 358, 204))
        XCTAssertEqual(tree.find("tool.m2.call_grep")?.bounds, bounds(24, 144, 342, 108))
    }

    func testAConversationTallerThanItsFrameShowsItsEndAndPutsEarlierMessagesAboveTheFrame() {
        let tree = chat(height: 480).tree()
        XCTAssertEqual(tree.find("chat.messages")?.bounds, bounds(16, 163, 358, 179))
        XCTAssertEqual(tree.find("chat.messages")?.scroll, SemanticNode.Scroll(offset: 233, contentHeight: 412, maxOffset: 233))
        // Content coordinates: the first message at the content's top, on the screen 233 above the list's (163 - 233 = -70).
        XCTAssertEqual(tree.find("message.m1")?.bounds, bounds(16, 0, 358, 56))
        XCTAssertEqual(tree.find("message.m3")?.bounds, bounds(16, 276, 358, 128))
        XCTAssertEqual(hit(chat(height: 480), 100, 163 - 233 + 276 + 10)["node"]?["id"], "message.m3")
        XCTAssertEqual(tree.find("chat.composer")?.bounds, bounds(16, 342, 358, 104))
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
        let answer = hit(chat(), 350, 780)
        XCTAssertEqual(answer["ok"], true)
        XCTAssertEqual(answer["node"]?["id"], "chat.send")
        XCTAssertEqual(answer["node"]?["bounds"], ["x": 330, "y": 758, "width": 44, "height": 44])
        XCTAssertEqual(answer["path"], ["root", "chat.composer", "chat.send"])
        XCTAssertEqual(answer["tap_target"], "chat.send")
    }

    func testAPointOnAnOpenToolsOutputHitsTheOutputInsideItsCardAndMessageAndATapThereClosesTheCard() {
        let app = chat()
        _ = report(app, #"{"type":"set_expanded","node_id":"tool.m2.call_grep","expanded":true}"#)
        let output = app.tree().find("tool.m2.call_grep.output")?.bounds ?? SemanticNode.Bounds()
        // The list (at y 163, not scrolled) holds it in its content coordinates.
        let answer = hit(app, Double(output.x + 10), Double(163 + output.y + 10))
        XCTAssertEqual(answer["node"]?["bounds"]?["y"], .int(Int64(163 + output.y)), "hit_test answers screen bounds")
        XCTAssertEqual(answer["path"], ["root", "chat.messages", "message.m2", "tool.m2.call_grep", "tool.m2.call_grep.output"])
        XCTAssertEqual(answer["tap_target"], "tool.m2.call_grep")
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
        // message.m1 spans y 32…84 at this size, behind the header (47…151).
        XCTAssertEqual(hit(chat(height: 480), 20, 60)["path"], ["root", "chat.header"])
        XCTAssertEqual(hit(chat(height: 480), 20, 40)["path"], ["root"], "the top safe area")
    }

    // MARK: - tap_xy

    func testTapXYOnTheSettingsButtonOpensSettings() {
        let app = chat()
        _ = report(app, #"{"type":"tap_xy","x":350,"y":120}"#)
        XCTAssertEqual(app.state.navigation.screen, .settings)
    }

    func testTapXYOnTheDraftFieldFocusesIt() {
        let app = chat()
        _ = report(app, #"{"type":"tap_xy","x":100.5,"y":726.25}"#)
        XCTAssertEqual(app.state.navigation.focusedNodeID, "chat.draft")
    }

    func testTapXYOnAMessageOrADisabledButtonDoesNothingAndSaysWhy() {
        let app = chat()
        _ = report(app, #"{"type":"tap_xy","x":100,"y":180}"#)
        // (a message is not tappable: the tap names the deepest node there)
        XCTAssertEqual(notes(app), ["tap_xy: nothing tappable at (100.0, 180.0): message.m1"])
        _ = report(app, #"{"type":"tap_xy","x":350,"y":780}"#)
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
        XCTAssertEqual(app.tree().find("message.m1")?.bounds, bounds(16, 0, 358, 56), "at the content's top")
        XCTAssertEqual(hit(app, 100, 170)["node"]?["bounds"], ["x": 16, "y": 163, "width": 358, "height": 56], "at the list's top on the screen")
        XCTAssertEqual(hit(app, 100, 170)["node"]?["id"], "message.m1")
        XCTAssertEqual(hit(app, 100, 316)["path"], ["root", "chat.messages", "message.m2", "tool.m2.call_grep"])
    }

    func testAnOffsetAtOrPastTheEndFollowsNewMessages() {
        let app = chat(height: 480)
        _ = report(app, #"{"type":"scroll_messages","offset":40}"#)
        XCTAssertEqual(app.state.navigation.messagesScroll, 40)
        _ = report(app, #"{"type":"scroll_messages","offset":233}"#)
        XCTAssertEqual(app.state.navigation.messagesScroll, nil, "233 is the end")
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
        XCTAssertEqual(scroll?.contentHeight, 476)
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
        XCTAssertTrue(picture.contains(#">claude-sonnet-4</text>"#), "the model's name whole")
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

/// The pictures of the transcript's nodes, buttons by variant and the top
/// safe area, on hand-built trees laid out by the core's layout.
final class PictureOfTranscriptNodesTests: XCTestCase {
    /// A screen of `nodes` (no message list), laid out and drawn.
    private func picture(_ nodes: [SemanticNode]) -> (tree: SemanticNode, svg: String) {
        var root = SemanticNode("root", .screen, label: "", children: nodes)
        Layout.apply(to: &root, viewport: SemanticTree.Viewport(width: 390, height: 844), messagesScroll: nil)
        return (root, Screenshot.svg(root))
    }

    private func bounds(_ x: Int, _ y: Int, _ width: Int, _ height: Int) -> SemanticNode.Bounds {
        SemanticNode.Bounds(x: x, y: y, width: width, height: height)
    }

    func testTheFirstNodeOfAScreenStartsBelowTheTopSafeArea() {
        let (tree, svg) = picture([.text("t", "Hello")])
        XCTAssertEqual(Layout.safeAreaTop, 47)
        XCTAssertEqual(tree.find("t")?.bounds, bounds(16, 47, 358, 36))
        XCTAssertTrue(svg.contains(##"<text x="24" y="70" fill="#111827" xml:space="preserve">Hello</text>"##))
    }

    func testACodeBlockIsAFilledBorderedBoxWithAHeaderOfItsLanguageAndCopyButtonAboveItsCodeLineByLine() {
        var code = SemanticNode(
            "c", .codeBlock, label: "", value: "let x = 1\nprint(x)",
            children: [.button("c.copy", "Copy", .copy(nodeID: "c"), accessibilityLabel: "Copy the code")])
        code.language = "swift"
        let (tree, svg) = picture([code])
        // Padding, a header as tall as a button, two lines of code, padding.
        XCTAssertEqual(tree.find("c")?.bounds, bounds(16, 47, 358, 100))
        XCTAssertTrue(svg.contains(##"<rect x="16" y="47" width="358" height="100" rx="6" fill="#f6f8fa" stroke="#d1d5db"/>"##))
        // The Copy button (words here, no icon) at the header's right, its word padded; the language at its left.
        XCTAssertEqual(tree.find("c.copy")?.bounds, bounds(318, 55, 48, 44))
        XCTAssertTrue(svg.contains(##"<text x="24" y="81" fill="#6b7280" font-size="11" xml:space="preserve">swift</text>"##))
        XCTAssertTrue(svg.contains(##"<text x="24" y="114" fill="#1f2937" xml:space="preserve">let x = 1</text>"##))
        XCTAssertTrue(svg.contains(##"<text x="24" y="134" fill="#1f2937" xml:space="preserve">print(x)</text>"##))
        XCTAssertEqual(Screenshot.fontFamily, "DejaVu Sans Mono, monospace")
        XCTAssertTrue(svg.contains(##"<g data-id="c" data-role="code_block" font-family="DejaVu Sans Mono, monospace">"##), "code in monospace")
        XCTAssertTrue(svg.contains(##"font-family="DejaVu Sans, sans-serif""##), "the rest in a proportional face")
    }

    func testACodeBlockHasItsHeaderWithoutALanguageAndALineOfCodeBeforeItsFirstCharacter() {
        var empty = SemanticNode("c", .codeBlock, label: "", value: "")
        empty.language = "sh"
        var noLanguage = SemanticNode("c", .codeBlock, label: "", value: "make")
        noLanguage.language = nil
        var oneLine = noLanguage
        oneLine.language = "sh"
        XCTAssertEqual(picture([empty]).tree.find("c")?.bounds, bounds(16, 47, 358, 80))
        XCTAssertEqual(picture([noLanguage]).tree.find("c")?.bounds, bounds(16, 47, 358, 80))
        XCTAssertEqual(picture([oneLine]).tree.find("c")?.bounds, bounds(16, 47, 358, 80))
    }

    func testACodeBlockStillStreamingLooksLikeAClosedOne() {
        var closed = SemanticNode("c", .codeBlock, label: "", value: "make lib")
        closed.language = "sh"
        var open = closed
        open.variant = "open"
        XCTAssertEqual(picture([open]).svg, picture([closed]).svg)
    }

    func testADiffShowsItsPathAndCountsAndEachLineAsABandColouredByItsKindWithItsSign() {
        func line(_ id: String, _ kind: String, _ text: String) -> SemanticNode {
            var node = SemanticNode(id, .diffLine, label: "", value: text)
            node.variant = kind
            return node
        }
        let hunk = SemanticNode(
            "d.0", .diffHunk, label: "@@ -1 +1 @@",
            children: [line("d.0.0", "context", "a"), line("d.0.1", "removed", "b"), line("d.0.2", "added", "c")])
        var diff = SemanticNode("d", .diff, label: "main.swift", value: "+1 −1", children: [hunk])
        diff.counts = SemanticNode.Counts(added: 1, removed: 1)
        let (tree, svg) = picture([diff])
        XCTAssertTrue(svg.contains(##"<text x="24" y="70" fill="#374151" font-weight="bold" xml:space="preserve">main.swift</text>"##))
        XCTAssertTrue(svg.contains(##"<tspan fill="#15803d">+1</tspan> <tspan fill="#b91c1c">−1</tspan>"##))
        XCTAssertTrue(svg.contains(##"<text x="32" y="126" fill="#6b7280" xml:space="preserve">@@ -1 +1 @@</text>"##), "the hunk's header dim")
        // Under the path, the counts and the hunk's header, the lines touch: a band of 20 points each, no gap.
        XCTAssertEqual(tree.find("d.0.0")?.bounds, bounds(24, 139, 342, 20))
        XCTAssertEqual(tree.find("d.0.1")?.bounds, bounds(24, 159, 342, 20))
        XCTAssertEqual(tree.find("d.0.2")?.bounds, bounds(24, 179, 342, 20))
        XCTAssertTrue(svg.contains(##"<rect x="24" y="159" width="342" height="20" fill="#fee2e2"/>"##))
        XCTAssertTrue(svg.contains(##"<text x="32" y="174" fill="#b91c1c">-</text>"##))
        XCTAssertTrue(svg.contains(##"<text x="48" y="174" fill="#991b1b" xml:space="preserve">b</text>"##))
        XCTAssertTrue(svg.contains(##"<rect x="24" y="179" width="342" height="20" fill="#dcfce7"/>"##))
        XCTAssertTrue(svg.contains(##"<text x="32" y="194" fill="#15803d">+</text>"##))
        XCTAssertFalse(svg.contains(##"<rect x="24" y="139""##), "a context line has no band")
        XCTAssertTrue(svg.contains(##"<text x="48" y="154" fill="#374151" xml:space="preserve">a</text>"##))
    }

    func testAHeadingIsBoldAndLargerOnTallerLinesInsideItsBox() {
        var h1 = SemanticNode("h1", .heading, label: "", value: "Plan")
        h1.level = 1
        var h2 = SemanticNode("h2", .heading, label: "", value: "Steps")
        h2.level = 2
        var h3 = SemanticNode("h3", .heading, label: "", value: "Notes")
        h3.level = 3
        let (tree, svg) = picture([h1, h2, h3])
        XCTAssertEqual(tree.find("h1")?.bounds, bounds(16, 47, 358, 44), "a 28-point line, padded")
        XCTAssertEqual(tree.find("h2")?.bounds, bounds(16, 99, 358, 40), "a 24-point line, padded")
        XCTAssertEqual(tree.find("h3")?.bounds, bounds(16, 147, 358, 36))
        XCTAssertTrue(svg.contains(##"<text x="24" y="76" fill="#111827" font-size="19" font-weight="bold" xml:space="preserve">Plan</text>"##))
        XCTAssertTrue(svg.contains(##"<text x="24" y="125" fill="#111827" font-size="16" font-weight="bold" xml:space="preserve">Steps</text>"##))
        XCTAssertTrue(svg.contains(##"<text x="24" y="170" fill="#111827" font-weight="bold" xml:space="preserve">Notes</text>"##))
    }

    func testALongHeadingWrapsOnItsOwnGridSoItStaysInsideItsBox() {
        var h1 = SemanticNode("h1", .heading, label: "", value: String(repeating: "word ", count: 12))
        h1.level = 1
        // 342 points of text at 12 per character: 28 characters a line.
        XCTAssertEqual(Layout.valueCharactersPerLine(h1, width: 358), 28)
        XCTAssertEqual(picture([h1]).tree.find("h1")?.bounds, bounds(16, 47, 358, 3 * 28 + 16))
    }

    func testALinkIsBlueAndUnderlinedABoldRunBoldAndEachRunWhereTheProseBeforeItEnds() {
        var p = SemanticNode("p", .paragraph, label: "", value: "See the docs now")
        p.spans = [TextSpan("See "), TextSpan("the docs", .link, url: "https://x.dev"), TextSpan(" "), TextSpan("now", .bold)]
        let svg = picture([p]).svg
        XCTAssertTrue(svg.contains(
            ##"<text x="24" y="70" fill="#111827" xml:space="preserve"><tspan x="24">See </tspan><tspan x="52" fill="#2563eb" text-decoration="underline">the docs</tspan><tspan x="108"> </tspan><tspan x="112" font-weight="bold">now</tspan></text>"##
                + "\n" + ##"<line x1="52" y1="72" x2="107" y2="72" stroke="#2563eb"/>"##
        ))
    }

    func testItalicStruckAndCodeRunsAndRunsFollowTheLayoutsLineBreaks() {
        var p = SemanticNode("p", .paragraph, label: "", value: "aa bb cc")
        p.spans = [TextSpan("aa ", .italic), TextSpan("bb", .code), TextSpan(" cc", .strikethrough)]
        var root = SemanticNode("root", .screen, label: "", children: [p])
        // 5 characters a line: "aa bb" / "cc" (the space at the break is not drawn).
        Layout.apply(to: &root, viewport: SemanticTree.Viewport(width: 32 + 16 + 40, height: 400), messagesScroll: nil)
        let svg = Screenshot.svg(root)
        XCTAssertTrue(svg.contains(
            ##"<rect x="43" y="57" width="18" height="16" rx="3" fill="#eef0f3"/>"## + "\n"
                + ##"<text x="24" y="70" fill="#111827" xml:space="preserve"><tspan x="24" font-style="italic">aa </tspan><tspan x="44" font-family="DejaVu Sans Mono, monospace" fill="#9d174d">bb</tspan></text>"##))
        XCTAssertTrue(svg.contains(
            ##"<text x="24" y="90" fill="#111827" xml:space="preserve"><tspan x="24" text-decoration="line-through">cc</tspan></text>"##
                + "\n" + ##"<line x1="24" y1="86" x2="37" y2="86" stroke="#111827"/>"##))
    }

    func testAListItemHasItsMarkerInAGutterAndATaskItemACheckBox() {
        let bullet = SemanticNode("b", .listItem, label: "•", value: "milk")
        var task = SemanticNode("t", .listItem, label: "2.", value: "eggs")
        task.checked = true
        let (tree, svg) = picture([bullet, task])
        XCTAssertEqual(tree.find("b")?.bounds, bounds(16, 47, 358, 36), "the marker shares the item's first line")
        XCTAssertTrue(svg.contains(##"<text x="24" y="70" fill="#4b5563" xml:space="preserve">•</text>"##))
        XCTAssertTrue(svg.contains(##"<text x="40" y="70" fill="#111827" xml:space="preserve">milk</text>"##))
        XCTAssertTrue(svg.contains(##"<rect data-check="true" x="48" y="103" width="12" height="12" rx="2" fill="#2563eb" stroke="#2563eb"/>"##))
        XCTAssertTrue(svg.contains(##"<text x="64" y="114" fill="#111827" xml:space="preserve">eggs</text>"##))
    }

    func testAQuoteHasABarATableCellsBordersAndItsHeaderRowBoldADividerALine() {
        let quote = SemanticNode("q", .quote, label: "", children: [SemanticNode("q.0", .paragraph, label: "", value: "said")])
        var header = SemanticNode("t.0", .tableRow, label: "", children: [SemanticNode("t.0.0", .tableCell, label: "", value: "Name")])
        header.variant = "header"
        let body = SemanticNode("t.1", .tableRow, label: "", children: [SemanticNode("t.1.0", .tableCell, label: "", value: "jcode")])
        let table = SemanticNode("t", .table, label: "", children: [header, body])
        let (tree, svg) = picture([quote, table, SemanticNode("hr", .divider, label: "")])
        XCTAssertTrue(svg.contains(##"<rect x="16" y="47" width="3" height="52" fill="#d1d5db"/>"##))
        XCTAssertEqual(tree.find("t.0.0")?.bounds, bounds(16, 107, 358, 36))
        XCTAssertTrue(svg.contains(##"<rect x="16" y="107" width="358" height="36" fill="none" stroke="#d1d5db"/>"##))
        XCTAssertTrue(svg.contains(##"<text x="24" y="130" fill="#111827" font-weight="bold" xml:space="preserve">Name</text>"##))
        XCTAssertTrue(svg.contains(##"<text x="24" y="174" fill="#111827" xml:space="preserve">jcode</text>"##))
        XCTAssertTrue(svg.contains(##"<line x1="16" y1="207" x2="374" y2="207" stroke="#d1d5db"/>"##))
    }

    func testButtonsAreDrawnByTheirVariantSoDenyDoesNotLookLikeApprove() {
        let approve = SemanticNode.button("a", "Approve", .respondPermission(requestID: "r", approved: true, remember: false))
        let deny = SemanticNode.button("d", "Deny", .respondPermission(requestID: "r", approved: false, remember: false))
        let always = SemanticNode.button("s", "Always", .respondPermission(requestID: "r", approved: true, remember: true))
        let off = SemanticNode.button("o", "Send", .sendMessage(text: "x"), enabled: false)
        let (tree, svg) = picture([approve, deny, always, off])
        XCTAssertEqual([approve, deny, always].map(\.variant), ["primary", "destructive", "secondary"])
        XCTAssertEqual(tree.find("a")?.bounds, bounds(16, 47, 358, 44))
        XCTAssertTrue(svg.contains(##"<rect x="16" y="47" width="358" height="44" rx="8" fill="#2563eb"/>"##))
        XCTAssertTrue(svg.contains(##"<text x="195" y="74" fill="#ffffff" text-anchor="middle" xml:space="preserve">Approve</text>"##))
        XCTAssertTrue(svg.contains(##"<rect x="16" y="99" width="358" height="44" rx="8" fill="#fef2f2" stroke="#dc2626"/>"##))
        XCTAssertTrue(svg.contains(##"fill="#b91c1c" text-anchor="middle" xml:space="preserve">Deny</text>"##))
        XCTAssertTrue(svg.contains(##"<rect x="16" y="151" width="358" height="44" rx="8" fill="#ffffff" stroke="#9ca3af"/>"##))
        XCTAssertTrue(svg.contains(##"fill="#111827" text-anchor="middle" xml:space="preserve">Always</text>"##))
        XCTAssertTrue(svg.contains(##"<rect x="16" y="203" width="358" height="44" rx="8" fill="#f3f4f6"/>"##), "disabled: flat grey")
    }

    func testAToolCardShowsWhetherItIsOpenAtItsTopRight() {
        var closed = SemanticNode("tc", .toolCall, label: "edit", value: "Done")
        closed.expanded = false
        var open = SemanticNode("to", .toolCall, label: "bash", value: "Done")
        open.expanded = true
        let svg = picture([closed, open]).svg
        XCTAssertTrue(svg.contains(##"<text x="366" y="70" fill="#92400e" text-anchor="end">▸</text>"##))
        XCTAssertTrue(svg.contains(##"<text x="366" y="134" fill="#92400e" text-anchor="end">▾</text>"##))
    }
}
