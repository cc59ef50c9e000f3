import XCTest
@testable import JcodeMobileCore
@testable import JcodeMobileJSON
import JcodeMobileMarkdown

/// The windowed message list and `jcode_mobile_tree_changes`: the tree holds
/// the rows near the viewport; a host's copy kept current by the operations
/// equals the tree after every step.
final class TreeChangesTests: XCTestCase {
    // MARK: - Support

    private func app(_ scenario: Scenario = .connectedEmptyChat) -> JcodeMobileApp {
        var options = AppOptions()
        options.scenario = scenario
        return JcodeMobileApp(options: options)
    }

    private func server(_ app: JcodeMobileApp, _ event: String) {
        let report = app.platformEvent(json: #"{"type":"websocket_event","event":\#(event)}"#).string
        XCTAssertTrue(report.hasPrefix(#"{"ok":true"#), report)
    }

    private func act(_ app: JcodeMobileApp, _ action: String) {
        let report = app.dispatch(json: action).string
        XCTAssertTrue(report.hasPrefix(#"{"ok":true"#), report)
    }

    /// A history of `count` short entries, alternating user and assistant.
    private func history(_ app: JcodeMobileApp, count: Int, text: (Int) -> String = { "entry \($0) of the history" }) {
        let messages = (0..<count).map { #"{"role":"\#($0 % 2 == 0 ? "user" : "assistant")","content":"\#(text($0))"}"# }
        server(app, #"{"type":"history","id":2,"session_id":"s","messages":[\#(messages.joined(separator: ","))]}"#)
    }

    private func messages(_ tree: SemanticNode) -> SemanticNode? { tree.find("chat.messages") }

    /// Where a row of the list is on the screen: the list's rows are in its
    /// content coordinates (the list's y minus its offset, plus theirs).
    private func screenY(_ id: String, in list: SemanticNode?) -> Int? {
        guard let list, let scroll = list.scroll, let row = list.children.first(where: { $0.id == id }) else { return nil }
        return list.bounds.y - scroll.offset + row.bounds.y
    }

    /// A host's copy: starts from `tree()`, follows `treeChanges`.
    private struct Mirror {
        var tree: SemanticNode
        var revision: Int

        init(_ app: JcodeMobileApp) {
            tree = app.tree()
            revision = app.state.revision
        }

        mutating func follow(_ app: JcodeMobileApp, file: StaticString = #filePath, line: UInt = #line) {
            switch app.treeChanges(since: revision) {
            case .changes(let now, let ops)?:
                XCTAssertNoThrow(try tree.apply(ops), file: file, line: line)
                revision = now
            case .resync(let now, let whole)?:
                tree = whole
                revision = now
            case nil:
                XCTFail("a since from the future", file: file, line: line)
            }
            XCTAssertEqual(tree, app.tree(), "the copy equals the tree at revision \(revision)", file: file, line: line)
        }
    }

    /// Streams `reply` as `text_delta`s of 1, 3, 4, 2, 8 and 5 bytes in turn;
    /// after each, `after` gets the bytes sent so far, the delta's size and
    /// the revision before it.
    /// `ops` splice `container`'s children at `splicedFrom` or later only, and update none of the `untouched` ones.
    private func assertSpares(
        _ ops: [TreeChange], of container: String, splicedFrom: Int, untouched: [Int], line: UInt = #line
    ) {
        let spared = Set(untouched.map { "\(container).\($0)" })
        for op in ops {
            if case .splice(let parent, let index, _, _) = op, parent == container {
                XCTAssertGreaterThanOrEqual(index, splicedFrom, line: line)
            }
            if case .update(let id, _, _) = op { XCTAssertFalse(spared.contains(id), id, line: line) }
        }
    }

    private func streamInTokens(_ reply: String, into app: JcodeMobileApp, after: (_ at: Int, _ size: Int, _ revision: Int) -> Void) {
        let bytes = Array(reply.utf8)
        var at = 0
        var sizes = [1, 3, 4, 2, 8, 5]
        while at < bytes.count {
            let size = sizes.removeFirst()
            sizes.append(size)
            let end = min(bytes.count, at + size)
            let delta = String(decoding: bytes[at..<end], as: UTF8.self)
            at = end
            let revision = app.state.revision
            server(app, #"{"type":"text_delta","text":\#(JSONValue.string(delta).jsonString)}"#)
            after(at, size, revision)
        }
    }

    // MARK: - The window

    func testALongConversationShowsItsEndAndTheTreeHoldsOnlyTheRowsNearTheViewport() {
        let app = app()
        history(app, count: 10_000)
        let list = messages(app.tree())
        XCTAssertEqual(list?.window?.total, 10_000)
        XCTAssertEqual(list?.window?.end, 10_000, "following the newest message")
        XCTAssertEqual(list?.children.last?.id, "message.m10000")
        XCTAssertLessThanOrEqual(list?.children.count ?? .max, 60, "a window, not the conversation")
        XCTAssertEqual(list?.children.count, (list?.window?.end ?? 0) - (list?.window?.start ?? 0))
        XCTAssertEqual(list?.accessibilityValue, "10000 messages")
        let scroll = list?.scroll
        XCTAssertEqual(scroll?.offset, scroll?.maxOffset, "at the end")
        XCTAssertGreaterThan(scroll?.contentHeight ?? 0, 10_000 * 40, "every row counts in the content height")
    }

    func testScrollingToTheTopAndToAMessageMovesTheWindow() {
        let app = app()
        history(app, count: 2_000)
        act(app, #"{"type":"scroll_messages","offset":0}"#)
        var list = messages(app.tree())
        XCTAssertEqual(list?.window?.start, 0)
        XCTAssertEqual(list?.children.first?.id, "message.m1")
        XCTAssertEqual(list?.children.first?.bounds.y, 0, "the first message at the top of the content")
        XCTAssertEqual(screenY("message.m1", in: list), list?.bounds.y, "and at the list's top on the screen")

        act(app, #"{"type":"scroll_to_message","index":1000}"#)
        list = messages(app.tree())
        XCTAssertEqual(screenY("message.m1001", in: list), list?.bounds.y, "row 1000 at the list's top")
        XCTAssertLessThanOrEqual(list?.window?.start ?? .max, 1000)
        XCTAssertGreaterThan(list?.window?.end ?? 0, 1000)

        for index in [3, 12, 1999 - 40] {
            act(app, #"{"type":"scroll_to_message","index":\#(index)}"#)
            let list = messages(app.tree())
            XCTAssertEqual(screenY("message.m\(index + 1)", in: list), list?.bounds.y, "row \(index) at the list's top")
        }

        act(app, #"{"type":"scroll_to_message","index":5000}"#)
        XCTAssertNil(app.state.navigation.messagesScroll, "past the last row: the end, following")
        XCTAssertEqual(messages(app.tree())?.window?.end, 2_000)
    }

    func testAShortConversationIsLaidOutWholeAndScrollToMessageUsesItsMeasuredRows() {
        let app = app()
        history(app, count: 30)
        let list = messages(app.tree())
        XCTAssertEqual(list?.window, SemanticNode.Window(start: 0, end: 30, total: 30))
        act(app, #"{"type":"scroll_to_message","index":3}"#)
        let scrolled = messages(app.tree())
        XCTAssertEqual(screenY("message.m4", in: scrolled), scrolled?.bounds.y)
    }

    /// A compacted conversation of 100 live rows, scrolled to `offset`, then
    /// 64 older rows put above them: the row being read keeps its place.
    private func loadOlder(scrolledTo offset: Int, reading: String) {
        let marker = "Earlier conversation compacted - 200 historical messages hidden from the UI. Scroll to the top to load older history."
        let live = (1...100).map { #"{"role":"user","content":"Live \#($0)"}"# }.joined(separator: ",")
        let app = app()
        server(app, #"{"type":"history","id":2,"session_id":"s","messages":[{"role":"system","content":"\#(marker)"},\#(live)]}"#)
        act(app, #"{"type":"scroll_messages","offset":\#(offset)}"#)
        func place() -> Int? {
            let list = messages(app.tree())
            guard let id = list?.children.first(where: { $0.value == reading })?.id else { return nil }
            return screenY(id, in: list)
        }
        let before = place()
        XCTAssertNotNil(before, "\(reading) in view")
        act(app, #"{"type":"load_older_messages"}"#)
        let older = (1...64).map { #"{"role":"user","content":"Old \#($0) with a longer text that wraps onto a second line of the box"}"# }
        server(app, #"{"type":"compacted_history","id":3,"session_id":"s","messages":[{"role":"system","content":"Earlier conversation compacted - 136 older historical messages hidden. Showing 64 of 200 compacted messages. Scroll to the top to load more."},\#(older.joined(separator: ",")),\#(live)],"compacted_total":200,"compacted_visible":64,"compacted_remaining":136}"#)
        XCTAssertEqual(messages(app.tree())?.window?.total, 1 + 64 + 100)
        XCTAssertEqual(place(), before, "\(reading) stays where it was on the screen")
    }

    func testLoadingOlderMessagesAtTheTopKeepsTheRowBeingReadInPlace() {
        loadOlder(scrolledTo: 0, reading: "Live 1")
        loadOlder(scrolledTo: 70, reading: "Live 2")
    }

    func testLoadingOlderMessagesFurtherDownKeepsTheRowBeingReadInPlace() {
        loadOlder(scrolledTo: 3_000, reading: "Live 52")
    }

    // MARK: - Tree changes

    func testACodeBlocksLanguageAndFirstCharactersMoveNothingItsHeaderAndFirstLineAreThereFromItsFence() {
        let app = app()
        act(app, #"{"type":"send_message","text":"go"}"#)
        server(app, #"{"type":"text_delta","text":"Run:\n\n```"}"#)
        _ = app.tree()
        for (delta, expected) in [
            ("sh", #"[{"op":"append","id":"message.m2","field":"value","text":"sh"},{"op":"append","id":"message.m2.md.1","field":"accessibility_label","text":", sh"},{"op":"update","id":"message.m2.md.1","set":{"language":"sh"}}]"#),
            (#"\n"#, #"[{"op":"append","id":"message.m2","field":"value","text":"\n"}]"#),
            ("make", #"[{"op":"append","id":"message.m2","field":"value","text":"make"},{"op":"update","id":"message.m2.md.1","set":{"value":"make","accessibility_value":"make"}}]"#),
        ] {
            let revision = app.state.revision
            server(app, #"{"type":"text_delta","text":"\#(delta)"}"#)
            let answer = app.treeChangesDocument(since: UInt64(revision)).bytes.string
            XCTAssertTrue(answer.hasSuffix(#","ops":\#(expected)}"#), "\(delta): \(answer)")
        }
        XCTAssertEqual(app.tree().find("message.m2.md.1")?.bounds.height, 80, "a header and one line of code, padded")
    }

    func testAStreamedDeltaIsAppendedToItsMessagesTextAndToItsLastParagraph() {
        let app = app()
        history(app, count: 1_000)
        act(app, #"{"type":"send_message","text":"go"}"#)
        server(app, #"{"type":"text_delta","text":"Hello"}"#)
        let revision = app.state.revision
        _ = app.tree()
        server(app, #"{"type":"text_delta","text":" world"}"#)
        guard case .changes(let now, let ops)? = app.treeChanges(since: revision) else { return XCTFail("changes expected") }
        XCTAssertEqual(now, revision + 1)
        let appends = ops.filter { if case .append = $0 { return true } else { return false } }
        XCTAssertEqual(appends, [
            .append(id: "message.m1002", field: .value, text: " world"),
            .append(id: "message.m1002.md.0", field: .value, text: " world"),
            .append(id: "message.m1002.md.0", field: .accessibilityValue, text: " world"),
        ])
        var w = JSONWriter(capacity: 256)
        JcodeMobileApp.write(ops, to: &w)
        XCTAssertLessThan(w.bytes.count, 4096, "a delta's operations are small")
    }

    func testTheDocumentAnswersOperationsAResyncOrAnErrorForTheFuture() {
        let app = app()
        _ = app.tree()
        let start = app.state.revision
        act(app, #"{"type":"set_draft","value":"hi"}"#)
        let changes = json(app.treeChangesDocument(since: UInt64(start)).bytes.string)
        XCTAssertEqual(changes["ok"], true)
        XCTAssertEqual(changes["since"], .int(Int64(start)))
        XCTAssertEqual(changes["ops"]?.arrayValue?.contains(where: { $0["id"] == "chat.draft" }), true)

        let current = json(app.treeChangesDocument(since: UInt64(app.state.revision)).bytes.string)
        XCTAssertEqual(current["ops"], [])

        act(app, #"{"type":"set_draft","value":"hi there"}"#)
        let unbuilt = app.state.revision  // no tree was built at this revision
        act(app, #"{"type":"set_draft","value":"hi there!"}"#)
        let unknown = json(app.treeChangesDocument(since: UInt64(unbuilt)).bytes.string)
        XCTAssertEqual(unknown["resync"], true)
        XCTAssertEqual(unknown["tree"]?["id"], "root")

        let future = json(app.treeChangesDocument(since: UInt64.max).bytes.string)
        XCTAssertEqual(future["ok"], false)
        XCTAssertEqual(future["error"]?["code"], "invalid_field")
        XCTAssertEqual(future["error"]?["field"], "since_revision")
    }

    func testATreeSubscriberGetsEachRevisionsOperationsAfterItsStateChange() {
        let app = app()
        history(app, count: 300)
        act(app, #"{"type":"send_message","text":"go"}"#)
        server(app, #"{"type":"text_delta","text":"Hi"}"#)
        app.collectsEvents = true
        app.collectsTreeEvents = true
        let before = app.state.revision
        server(app, #"{"type":"text_delta","text":" there"}"#)
        let events = app.takeEvents().map { json($0.bytes.string) }
        XCTAssertEqual(events.map { $0["type"] }, ["state_changed", "tree_changed"])
        let tree = events[1]
        XCTAssertEqual(tree["since"], .int(Int64(before)))
        XCTAssertEqual(tree["revision"], .int(Int64(before + 1)))
        XCTAssertEqual(
            tree["ops"]?.arrayValue?.filter { $0["op"] == "append" },
            [
                ["op": "append", "id": "message.m302", "field": "value", "text": " there"],
                ["op": "append", "id": "message.m302.md.0", "field": "value", "text": " there"],
                ["op": "append", "id": "message.m302.md.0", "field": "accessibility_value", "text": " there"],
            ])
        app.collectsTreeEvents = false
        server(app, #"{"type":"text_delta","text":"!"}"#)
        XCTAssertEqual(app.takeEvents().map { json($0.bytes.string)["type"] }, ["state_changed"], "tree is asked for by name")
    }

    func testACopyFollowingTheOperationsEqualsTheTreeThroughEveryScenario() {
        for scenario in Scenario.allCases {
            let app = app(scenario)
            var mirror = Mirror(app)
            for other in Scenario.allCases {
                act(app, #"{"type":"load_scenario","scenario":"\#(other.rawValue)"}"#)
                mirror.follow(app)
            }
        }
    }

    /// A long reply in markdown, with its reasoning before it and a tool
    /// card after it, streams on: each delta's operations name the reply's
    /// row and its changed last blocks only (the blocks before are patched
    /// around, never visited), and a copy following them, like the tree
    /// itself, equals a tree built from scratch after every kind of delta.
    func testADeltaIntoALongReplyChangesItsLastBlocksOnlyAndACopyFollowsIt() {
        let app = app()
        history(app, count: 40)
        act(app, #"{"type":"send_message","text":"explain"}"#)
        server(app, #"{"type":"reasoning_delta","text":"Reading the code."}"#)
        let section = #"## Part\n\nThe **core** parses `markdown`.\n\n- one\n- [x] two\n\n```swift\nlet x = 1\n```\n\n| a | b |\n|---|--:|\n| 1 | 2 |\n\n"#
        for _ in 0..<60 { server(app, #"{"type":"text_delta","text":"\#(section)"}"#) }
        server(app, #"{"type":"tool_start","id":"t1","name":"bash"}"#)
        server(app, #"{"type":"tool_done","id":"t1","name":"bash","output":"ok"}"#)
        server(app, #"{"type":"text_delta","text":"Then"}"#)
        let reply = "message.m42"
        var mirror = Mirror(app)
        let blocks = app.tree().find(reply)?.children.filter(\.role.isMarkdownBlock).count ?? 0
        XCTAssertEqual(blocks, 301, "60 sections of 5 blocks, then a paragraph")
        XCTAssertEqual(app.tree().find(reply)?.children.first?.role, .reasoning)
        XCTAssertEqual(app.tree().find(reply)?.children.last?.id, "tool.m42.t1")

        let revision = app.state.revision
        server(app, #"{"type":"text_delta","text":" words"}"#)
        guard case .changes(_, let ops)? = app.treeChanges(since: revision) else { return XCTFail("changes expected") }
        let touched = Set(ops.map { op -> String in
            switch op {
            case .append(let id, _, _), .update(let id, _, _), .move(let id, _, _), .spans(let id, _, _): return id
            case .splice(let parent, _, _, _): return parent
            }
        })
        XCTAssertTrue(touched.isSubset(of: [reply, "\(reply).md.300", "tool.m42.t1", "chat.messages"]), "\(touched)")
        XCTAssertTrue(ops.contains(.append(id: reply, field: .value, text: " words")))
        mirror.follow(app)

        let deltas = [
            " and more", "\n\n# A heading\n", "text under it", "\n```py\nprint(1)", "\nprint(2)\n```\n",
            "| h | i |\n", "|---|---|\n| 3 | 4 |\n", "- a list\n- [ ] item", "\n\n> quoted", " **bold** end",
        ]
        for delta in deltas {
            server(app, #"{"type":"text_delta","text":\#(JSONValue.string(delta).jsonString)}"#)
            mirror.follow(app)
            XCTAssertEqual(SemanticTree.build(app.state, viewport: app.options.viewport), app.tree(), "after \(delta)")
        }
        XCTAssertEqual(app.tree().find(reply)?.children.last?.id, "tool.m42.t1", "the tool card stays after the blocks")
    }

    func testAListAndATableStreamedInTokensChangeOnlyTheirLastItemAndACopyFollowsThem() {
        let app = app()
        act(app, #"{"type":"send_message","text":"list them"}"#)
        var reply = "Steps:\n\n"
        for i in 1...40 { reply += "\(i). Step **\(i)**: run `make \(i)`\n" }
        reply += "\n| file | lines |\n|:--|--:|\n"
        for i in 1...30 { reply += "| src/f\(i).swift | \(i * 10) |\n" }
        reply += "\n- [ ] a task\n- [x] done\n  - nested\n\nThe end."
        var mirror = Mirror(app)
        var checkedItem = false
        streamInTokens(reply, into: app) { at, _, revision in
            mirror.follow(app)
            // Deep in the numbered list: a delta touches the list's last items only.
            if at > 900 && at < 1_000, case .changes(_, let ops)? = app.treeChanges(since: revision) {
                assertSpares(ops, of: "message.m2.md.1", splicedFrom: 20, untouched: [0, 1, 10])
                checkedItem = true
            }
        }
        XCTAssertTrue(checkedItem)
        XCTAssertEqual(SemanticTree.build(app.state, viewport: app.options.viewport), app.tree())
        let tree = app.tree()
        XCTAssertEqual(tree.find("message.m2.md.1")?.children.count, 40)
        XCTAssertEqual(tree.find("message.m2.md.1.39")?.label, "40.")
        XCTAssertEqual(tree.find("message.m2.md.1.39")?.value, "Step 40: run make 40")
        XCTAssertEqual(tree.find("message.m2.md.2")?.children.count, 31, "the header and 30 rows")
        XCTAssertEqual(tree.find("message.m2.md.2.30.0")?.value, "src/f30.swift")
        XCTAssertEqual(tree.find("message.m2.md.3.1")?.checked, true)
        XCTAssertEqual(tree.find("message.m2.md.4")?.value, "The end.")
    }

    func testALongQuoteStreamedInTokensChangesOnlyItsLastChildrenAndEqualsABuildFromScratch() {
        let app = app()
        act(app, #"{"type":"send_message","text":"quote it"}"#)
        var reply = "The document says:\n\n"
        for i in 1...12 {
            reply += "> Part \(i) of the *text*,\n> on two lines.\n>\n> - point \(i)\n> - another `one`\n>\n"
            if i % 4 == 0 { reply += "> > a nested quote\n>\n" }
        }
        reply += "> The end.\n\nAfter the quote."
        var mirror = Mirror(app)
        var checked = false
        var steps = 0
        streamInTokens(reply, into: app) { at, _, revision in
            mirror.follow(app)
            steps += 1
            // Deep in the quote: a delta never touches its first children.
            if at > 600 && at < 700, case .changes(_, let ops)? = app.treeChanges(since: revision) {
                assertSpares(ops, of: "message.m2.md.1", splicedFrom: 10, untouched: [0, 1, 2])
                checked = true
            }
            if steps % 23 == 0 {
                XCTAssertEqual(SemanticTree.build(app.state, viewport: app.options.viewport), app.tree(), "at \(at)")
            }
        }
        XCTAssertTrue(checked)
        XCTAssertEqual(SemanticTree.build(app.state, viewport: app.options.viewport), app.tree())
        let tree = app.tree()
        XCTAssertEqual(tree.find("message.m2.md.1")?.role, .quote)
        XCTAssertEqual(tree.find("message.m2.md.1")?.children.count, 28, "12 paragraphs, 12 lists, 3 nested quotes, the last line")
        XCTAssertEqual(tree.find("message.m2.md.1.27")?.value, "The end.")
        XCTAssertEqual(tree.find("message.m2.md.2")?.value, "After the quote.")
    }

    func testSpansThatKeepTheirFirstOnesAreSentFromTheFirstThatChanged() {
        var old = SemanticNode("p", .paragraph, label: "", value: "a b c")
        old.spans = [TextSpan("a "), TextSpan("b", .bold), TextSpan(" c")]
        var new = old
        new.value = "a b cd e"
        new.accessibilityValue = "a b cd e"
        new.spans = [TextSpan("a "), TextSpan("b", .bold), TextSpan(" cd "), TextSpan("e", .italic)]
        let ops = TreeChange.diff(from: old, to: new)
        XCTAssertEqual(ops, [.spans(id: "p", keep: 2, spans: [TextSpan(" cd "), TextSpan("e", .italic)])], "the value is the spans' texts")
        var w = JSONWriter()
        ops[0].write(to: &w)
        XCTAssertEqual(w.text, #"{"op":"spans","id":"p","keep":2,"spans":[{"text":" cd ","styles":[]},{"text":"e","styles":["italic"]}]}"#)
        var copy = old
        XCTAssertNoThrow(try copy.apply(ops))
        XCTAssertEqual(copy, new)
        XCTAssertEqual(copy.accessibilityValue, "a b cd e")
        // A value that is not the spans' texts: both are sent whole.
        var odd = new
        odd.value = "something else"
        odd.accessibilityValue = "something else"
        guard case .update(_, let set, _)? = TreeChange.diff(from: old, to: odd).last else { return XCTFail("an update") }
        XCTAssertEqual(set, [.value, .accessibilityValue, .spans])
        // Nothing kept: the spans are set whole.
        var other = new
        other.spans = [TextSpan("x", .code), TextSpan(" y")]
        XCTAssertEqual(TreeChange.diff(from: new, to: other).count, 1)
        guard case .update(_, let fields, _)? = TreeChange.diff(from: new, to: other).first else { return XCTFail("an update") }
        XCTAssertEqual(fields, [.spans])
        // A copy that holds fewer spans than kept does not fit.
        var short = old
        short.spans = [TextSpan("a ")]
        XCTAssertThrowsError(try short.apply(.spans(id: "p", keep: 2, spans: [])))
    }

    func testChildrenAddedOrTakenAwayAtTheEndAreOneSpliceAfterTheKeptChildrensChanges() {
        func item(_ k: Int, _ value: String) -> SemanticNode { SemanticNode("l.\(k)", .listItem, label: "•", value: value) }
        func list(_ values: [String]) -> SemanticNode {
            SemanticNode("l", .list, children: values.enumerated().map { item($0.offset, $0.element) })
        }
        let three = list(["a", "b", "c"])
        let five = list(["a", "b", "c d", "e", "f"])
        let grown = TreeChange.diff(from: three, to: five)
        XCTAssertEqual(grown, [
            .append(id: "l.2", field: .value, text: " d"),
            .append(id: "l.2", field: .accessibilityValue, text: " d"),
            .splice(parent: "l", index: 3, removed: [], inserted: [item(3, "e"), item(4, "f")]),
        ])
        // Taken away: the splice comes first, then the kept children's changes.
        let shrunk = TreeChange.diff(from: five, to: list(["a", "B", "c d"]))
        XCTAssertEqual(shrunk, [
            .splice(parent: "l", index: 3, removed: ["l.3", "l.4"], inserted: []),
            .update(id: "l.1", fields: [.value, .accessibilityValue], node: item(1, "B")),
        ])
        // Applied in order, each turns the old list into the new one.
        var copy = three
        XCTAssertNoThrow(try copy.apply(grown))
        XCTAssertEqual(copy, five)
        copy = five
        XCTAssertNoThrow(try copy.apply(shrunk))
        XCTAssertEqual(copy, list(["a", "B", "c d"]))
    }

    /// A long paragraph with emphasis, bold, code and links streams on: once
    /// its first runs are final, a delta that closes a style sends the last
    /// runs only (a `spans` operation keeping the others), and a copy follows.
    func testALongStyledParagraphStreamedInTokensSendsItsLastRunsOnly() {
        let app = app()
        act(app, #"{"type":"send_message","text":"explain"}"#)
        var reply = ""
        for i in 1...60 { reply += "Step \(i) is *important* and **bold \(i)** with `code` and [a link](https://x.y/\(i)). " }
        var mirror = Mirror(app)
        var largestKept = 0
        streamInTokens(reply, into: app) { at, size, revision in
            if case .changes(_, let ops)? = app.treeChanges(since: revision) {
                for op in ops {
                    if case .update(let id, let fields, _) = op, id == "message.m2.md.0", at > 1_000 {
                        XCTAssertFalse(fields.contains(.spans), "the spans of a long paragraph are never sent whole (\(at) bytes in)")
                    }
                    if case .spans(_, let keep, let spans) = op {
                        largestKept = max(largestKept, keep)
                        XCTAssertLessThanOrEqual(spans.count, 40, "the runs after the last checkpoint")
                    }
                }
            }
            mirror.follow(app)
            if at % 97 < size {
                // Laid out on from its last lines, the paragraph is where a layout from scratch puts it.
                XCTAssertEqual(SemanticTree.build(app.state, viewport: app.options.viewport), app.tree(), "\(at) bytes in")
            }
        }
        XCTAssertEqual(SemanticTree.build(app.state, viewport: app.options.viewport), app.tree())
        XCTAssertGreaterThan(largestKept, 400, "60 steps of 9 runs: most of them kept")
        let paragraph = app.tree().find("message.m2.md.0")
        XCTAssertEqual(paragraph?.spans?.count, 481, "60 times plain, italic, plain, bold, plain, code, plain, link; then \".\"")
        XCTAssertEqual(paragraph?.spans?[1], TextSpan("important", .italic))
        XCTAssertEqual(paragraph?.spans?[8], TextSpan(". Step 2 is "))
        XCTAssertEqual(paragraph?.spans?[480], TextSpan("."))
    }

    func testALongHTMLBlockStreamedInTokensIsFollowedByACopy() {
        let app = app()
        act(app, #"{"type":"send_message","text":"show the html"}"#)
        var reply = "Here:\n\n<div class=\"reply\">\n"
        for i in 1...60 { reply += "<p>Line \(i) with <b>bold</b></p>\n" }
        reply += "</div>\n\nThe end."
        var mirror = Mirror(app)
        streamInTokens(reply, into: app) { _, _, _ in mirror.follow(app) }
        XCTAssertEqual(SemanticTree.build(app.state, viewport: app.options.viewport), app.tree())
        XCTAssertEqual(app.tree().find("message.m2.md.2")?.value, "The end.")
    }

    func testTheStoresRecordSaysWhichEntriesOnlyGrewTheirText() {
        var record = InPlaceChanges.extending(nil, to: 5, [.appendText(index: 3, field: .text, text: "a")])
        XCTAssertEqual(record?.onlyTextAppended(3), true)
        record = InPlaceChanges.extending(record, to: 6, [.appendText(index: 3, field: .reasoning, text: "b")])
        XCTAssertEqual(record?.onlyTextAppended(3), false, "its reasoning grew too")
        record = InPlaceChanges.extending(record, to: 7, [.appendText(index: 4, field: .text, text: "c")])
        XCTAssertEqual(record?.onlyTextAppended(4), true)
        XCTAssertEqual(record?.onlyTextAppended(3), false)
        XCTAssertEqual(record?.onlyTextAppended(2), false, "not in the record")
    }

    func testACopyFollowsAStreamedTurnWithToolsAcrossALongHistoryAndScrolling() {
        let app = app()
        var mirror = Mirror(app)
        history(app, count: 2_000)
        mirror.follow(app)
        act(app, #"{"type":"send_message","text":"build it"}"#)
        mirror.follow(app)
        let steps = [
            #"{"type":"reasoning_delta","text":"Thinking about "}"#,
            #"{"type":"reasoning_delta","text":"the build."}"#,
            #"{"type":"text_delta","text":"Running "}"#,
            #"{"type":"tool_start","id":"t1","name":"bash"}"#,
            #"{"type":"tool_input","delta":"{\"command\":"}"#,
            #"{"type":"tool_input","delta":"\"make\"}"}"#,
            #"{"type":"tool_exec","id":"t1","name":"bash"}"#,
            #"{"type":"tool_done","id":"t1","name":"bash","output":"ok"}"#,
            #"{"type":"text_delta","text":"done."}"#,
        ]
        for step in steps {
            server(app, step)
            mirror.follow(app)
        }
        for action in [
            #"{"type":"scroll_messages","offset":0}"#, #"{"type":"scroll_messages","offset":300}"#,
            #"{"type":"scroll_to_message","index":1200}"#, #"{"type":"scroll_messages","offset":100000000}"#,
            #"{"type":"scroll_to_message","index":10}"#,
        ] {
            act(app, action)
            mirror.follow(app)
        }
        server(app, #"{"type":"done","id":3}"#)
        mirror.follow(app)
    }

    func testARowThatGrowsWhileStreamingMovesTheRowsAboveItAndTheScrollAsALayoutWould() {
        for (count, scroll) in [(1_000, nil), (1_000, 500), (40, nil), (40, 100), (1, nil)] as [(Int, Int?)] {
            let app = app()
            history(app, count: count)
            act(app, #"{"type":"send_message","text":"go"}"#)
            if let scroll { act(app, #"{"type":"scroll_messages","offset":\#(scroll)}"#) }
            var mirror = Mirror(app)
            // Short deltas, a line break every third one, then lines long enough to wrap.
            for k in 0..<90 {
                server(app, #"{"type":"text_delta","text":"\#(k % 3 == 2 ? "line\\n" : "word ")"}"#)
                mirror.follow(app)
                XCTAssertEqual(SemanticTree.build(app.state, viewport: app.options.viewport), app.tree(), "\(count) entries, delta \(k)")
            }
            let before = app.tree().find("chat.messages")?.scroll
            server(app, #"{"type":"text_delta","text":"\#(String(repeating: "long ", count: 40))"}"#)
            mirror.follow(app)
            XCTAssertEqual(SemanticTree.build(app.state, viewport: app.options.viewport), app.tree())
            if scroll == nil && count > 1 {
                XCTAssertGreaterThan(app.tree().find("chat.messages")?.scroll?.contentHeight ?? 0, before?.contentHeight ?? 0, "the content grew")
            }
        }
    }

    func testACopyFollowsFuzzedSessions() {
        var rng = SeededRandom(seed: 25)
        let events = [
            #"{"type":"text_delta","text":"more text "}"#, #"{"type":"text_delta","text":"é\n"}"#,
            #"{"type":"reasoning_delta","text":"hmm "}"#, #"{"type":"tool_start","id":"a","name":"read"}"#,
            #"{"type":"tool_input","delta":"{\"file_path\":\"x\"}"}"#, #"{"type":"tool_done","id":"a","name":"read","output":"text"}"#,
            #"{"type":"done","id":3}"#, #"{"type":"interrupted"}"#,
        ]
        for round in 0..<6 {
            let app = app()
            var mirror = Mirror(app)
            history(app, count: [3, 70, 400, 1_500, 64, 65][round]) { "row \($0) " + String(repeating: "w ", count: $0 % 37) }
            mirror.follow(app)
            for _ in 0..<120 {
                switch rng.next(9) {
                case 0: act(app, #"{"type":"send_message","text":"q \#(rng.next(100))"}"#)
                case 1: act(app, #"{"type":"scroll_messages","offset":\#(rng.next(60_000))}"#)
                case 2: act(app, #"{"type":"scroll_to_message","index":\#(rng.next(2_000))}"#)
                case 3: act(app, #"{"type":"set_draft","value":"draft \#(rng.next(10))"}"#)
                case 4: act(app, #"{"type":"navigate","screen":"\#(["chat", "sessions", "settings", "chat"][rng.next(4)])"}"#)
                default: server(app, events[rng.next(events.count)])
                }
                mirror.follow(app)
                // A tree built from scratch is the same: the row cache and the
                // rows replaced in place (a streamed delta) only save work.
                XCTAssertEqual(SemanticTree.build(app.state, viewport: app.options.viewport), app.tree())
            }
        }
    }

    func testNodeIdsAreUniqueInEveryTree() {
        let app = app()
        history(app, count: 200)
        // Two turns that use the same tool call id: two cards, two ids.
        for turn in 0..<2 {
            act(app, #"{"type":"send_message","text":"turn \#(turn)"}"#)
            server(app, #"{"type":"tool_start","id":"call_1","name":"bash"}"#)
            server(app, #"{"type":"tool_done","id":"call_1","name":"bash","output":"ok"}"#)
            server(app, #"{"type":"done","id":\#(3 + turn)}"#)
        }
        var trees = [("two turns", app.tree())]
        for scenario in Scenario.allCases {
            act(app, #"{"type":"load_scenario","scenario":"\#(scenario.rawValue)"}"#)
            trees.append((scenario.rawValue, app.tree()))
        }
        XCTAssertEqual(trees[0].1.allNodes().filter { $0.role == .toolCall }.map(\.id).suffix(2), ["tool.m202.call_1", "tool.m204.call_1"])
        for (name, tree) in trees {
            let ids = tree.allNodes().map(\.id)
            XCTAssertEqual(ids.count, Set(ids).count, "\(name): \(ids.filter { id in ids.filter { $0 == id }.count > 1 })")
        }
    }

    func testATreeAtOneHundredThousandEntriesIsSmall() {
        let app = app()
        history(app, count: 100_000)
        let bytes = app.treeDocument().bytes.count
        XCTAssertLessThanOrEqual(bytes, 256 * 1024, "\(bytes) bytes")
    }
}

/// A small reproducible generator (a 64-bit LCG), so fuzzed sessions replay.
struct SeededRandom {
    private var state: UInt64
    init(seed: UInt64) { state = seed &* 6_364_136_223_846_793_005 &+ 1 }
    mutating func next(_ bound: Int) -> Int {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Int((state >> 33) % UInt64(bound))
    }
}

/// A long value that grows at its end as a reply streams (a code block's,
/// an HTML block's, a plain paragraph's) is held in storage of its own by
/// the tree and by the line memo: the markdown cache's, which it appends
/// to in place, is held by no one else, so that no holder copies it whole
/// at each delta. Storage is told apart by where its bytes are.
final class GrownValueStorageTests: XCTestCase {
    private func address(_ text: String?) -> UInt? {
        text?.utf8.withContiguousStorageIfAvailable { UInt(bitPattern: $0.baseAddress) }
    }

    private func long(_ lines: Int) -> String {
        var text = ""
        text.reserveCapacity(16384)
        for i in 0 ..< lines { text += "let value\(i) = compute(\(i)) + offset\n" }
        return text
    }

    /// `text` in storage of its own.
    private func copy(_ text: String) -> String { String(decoding: Array(text.utf8), as: UTF8.self) }

    func testTheTreeKeepsTheOldNodesValueGrownInPlaceNotTheOneItWasGiven() {
        // The tree's node: its value and accessibility value one string, held by the node alone.
        var code = SemanticNode("m.md.0", .codeBlock, label: "", value: long(260))
        code.accessibilityValue = code.value
        var item = SemanticNode("m.md.1", .list, label: "")
        item.children = [SemanticNode("m.md.1.0", .listItem, label: "•", value: "an item")]
        var old = [code, item]
        code = SemanticNode("x", .text, label: "")
        let treeStorage = address(old[0].value)
        // The new node, as the markdown cache gave it: the same text and more, in the cache's storage.
        let grownText = copy(old[0].value!) + "let more = 1"
        var grown = old[0]
        grown.value = grownText
        grown.accessibilityValue = grownText
        var new = [grown, item]
        grown = SemanticNode("x", .text, label: "")
        let changes: [TreeChange] = [
            .append(id: "m.md.0", field: .value, text: "let more = 1"),
            .append(id: "m.md.0", field: .accessibilityValue, text: "let more = 1"),
            .append(id: "m.md.9", field: .value, text: "no such node"),
        ]
        StreamedRowPatch.keepGrownValues(changes[...], from: &old, in: &new, at: 0)
        XCTAssertEqual(new[0].value, long(260) + "let more = 1")
        XCTAssertEqual(new[0].accessibilityValue, long(260) + "let more = 1")
        XCTAssertEqual(address(new[0].value), treeStorage, "the tree's own storage, grown in place")
        XCTAssertEqual(address(new[0].accessibilityValue), treeStorage)
        XCTAssertNotEqual(address(new[0].value), address(grownText), "not the cache's")
        XCTAssertNil(old[0].value, "taken out of the old node")
        XCTAssertEqual(new[1], item, "a node no change names is left as it is")
    }

    func testTheLineMemoKeepsAPlainTextThatGrewInStorageOfItsOwn() {
        let memo = LineMemo()
        let first = long(40)
        // Forty lines of 32 to 38 characters, two each at 30 a line, and the empty one after the last line ending.
        XCTAssertEqual(memo.lineCount(of: first, id: "m.md.0", perLine: 30, keepsOwn: true), 81)
        let grown = first + "let last = 2\n"
        XCTAssertEqual(memo.lineCount(of: grown, id: "m.md.0", perLine: 30, keepsOwn: true), 82)
        XCTAssertEqual(memo.text(for: "m.md.0"), grown)
        XCTAssertNotEqual(address(memo.text(for: "m.md.0")), address(grown), "the memo's own storage")
        // Not asked to keep its own: held as given.
        let more = grown + "more"
        XCTAssertEqual(memo.lineCount(of: grown, id: "m.md.1", perLine: 30), 82)
        XCTAssertEqual(memo.lineCount(of: more, id: "m.md.1", perLine: 30), 82)
        XCTAssertEqual(address(memo.text(for: "m.md.1")), address(more), "the caller's storage")
    }

    func testTheLineMemoCutsItsOwnTextBackWhereAClosingMarkTookACharacterBackInOneOfTheLastLines() {
        let memo = LineMemo()
        // Forty code lines of two lines each at 30 a line, then three short lines.
        let first = long(40) + "one *two* three\nfour five\nsix"
        XCTAssertEqual(memo.lineCount(of: first, id: "m.md.0", perLine: 30, keepsOwn: true), 83)
        XCTAssertEqual(memo.lineCount(of: first + " seven", id: "m.md.0", perLine: 30, keepsOwn: true), 83)
        let own = address(memo.text(for: "m.md.0"))
        // The closing "*" read: the marks leave the third line from the end
        // (the text no longer than before: it fits where it lies, whatever room the storage has).
        let closed = long(40) + "one two three\nfour five\nsix seven"
        XCTAssertEqual(memo.lineCount(of: closed, id: "m.md.0", perLine: 30, keepsOwn: true), 83)
        XCTAssertEqual(memo.text(for: "m.md.0"), closed)
        XCTAssertEqual(address(memo.text(for: "m.md.0")), own, "cut back and grown where it lies")
        // The last line grows past 30 characters: one line more.
        let wrapped = closed + " eight nine ten eleven twelve"
        XCTAssertEqual(memo.lineCount(of: wrapped, id: "m.md.0", perLine: 30, keepsOwn: true), 84)
        // A change before the memo's last four line starts: counted again from the start.
        let early = "x" + String(long(40).dropFirst()) + "one two three\nfour five\nsix seven eight nine ten eleven twelve"
        XCTAssertEqual(memo.lineCount(of: early, id: "m.md.0", perLine: 30, keepsOwn: true), 84)
        XCTAssertEqual(memo.text(for: "m.md.0"), early)
    }

    func testTheTreeKeepsTheOldStyledNodesValueCutBackToItsKeptRunsAndGrownInPlace() {
        let words = String(repeating: "plain words ", count: 800)
        // The tree's node: "words… *x" (the "*" not closed yet), its value one string held by the node alone.
        // (The new value is no longer: it fits where it lies, whatever room the storage has.)
        var paragraph = SemanticNode("m.md.0", .paragraph, label: "", value: copy(words + "*x"))
        paragraph.accessibilityValue = paragraph.value
        paragraph.spans = MarkdownSpans([MarkdownSpan(text: words), MarkdownSpan(text: "*x")])
        var old = [paragraph]
        paragraph = SemanticNode("x", .text, label: "")
        let treeStorage = address(old[0].value)
        // The cache's: the "*" closed by "y*", "xy" in italics, in the cache's storage.
        let cacheText = copy(words + "xy")
        var grown = SemanticNode("m.md.0", .paragraph, label: "", value: cacheText)
        grown.accessibilityValue = cacheText
        grown.spans = MarkdownSpans([MarkdownSpan(text: words), MarkdownSpan(text: "xy", styles: .italic)])
        var new = [grown]
        grown = SemanticNode("x", .text, label: "")
        let changes: [TreeChange] = [
            .spans(id: "m.md.0", keep: 1, spans: [MarkdownSpan(text: "xy", styles: .italic)]),
        ]
        StreamedRowPatch.keepGrownValues(changes[...], from: &old, in: &new, at: 0)
        XCTAssertEqual(new[0].value, words + "xy")
        XCTAssertEqual(new[0].accessibilityValue, words + "xy")
        XCTAssertEqual(address(new[0].value), treeStorage, "the tree's own storage, cut back and grown in place")
        XCTAssertEqual(address(new[0].accessibilityValue), treeStorage)
        XCTAssertNotEqual(address(new[0].value), address(cacheText), "not the cache's")
        XCTAssertNil(old[0].value, "taken out of the old node")
    }

    func testALongCodeBlockAndParagraphStreamedInTokensEqualABuildFromScratchAsTheyGrow() {
        var options = AppOptions()
        options.scenario = .connectedEmptyChat
        let app = JcodeMobileApp(options: options)
        XCTAssertTrue(app.dispatch(json: #"{"type":"send_message","text":"write the code"}"#).string.hasPrefix(#"{"ok":true"#))
        let reply = "Here it is:\n\n```swift\n" + long(260) + "```\n\nAnd a long plain paragraph " + String(repeating: "of words ", count: 1000)
            + "to end.\n\nThen a long styled one: " + String(repeating: "Some *emphasis* and **bold** with `code` words ", count: 250) + "the end."
        let bytes = Array(reply.utf8)
        var at = 0
        var k = 0
        let sizes = [1, 3, 4, 2, 8, 5]
        while at < bytes.count {
            let end = min(bytes.count, at + sizes[k % sizes.count])
            k += 1
            let delta = String(decoding: bytes[at..<end], as: UTF8.self)
            at = end
            let report = app.platformEvent(json: #"{"type":"websocket_event","event":{"type":"text_delta","text":\#(JSONValue.string(delta).jsonString)}}"#).string
            XCTAssertTrue(report.hasPrefix(#"{"ok":true"#), report)
            if k % 97 == 0 || at == bytes.count {
                XCTAssertEqual(app.tree(), SemanticTree.build(app.state, viewport: app.options.viewport), "after \(at) bytes")
            }
        }
        XCTAssertEqual(app.tree().find("message.m2.md.1")?.value, String(long(260).dropLast()))
        XCTAssertEqual(app.tree().find("message.m2.md.3")?.value?.hasSuffix("Some emphasis and bold with code words the end."), true)
    }
}
