import XCTest
@testable import JcodeMobileCore
@testable import JcodeMobileJSON
@testable import JcodeMobileMarkdown
import JcodeMobileTestSupport

/// A reply too long to show whole: past a budget of nodes it shows its first
/// ones, in order, and a button that shows the rest, so what an agent writes
/// costs the host what a screen of it is, however many nodes its bytes make.
final class LongReplyTests: XCTestCase {
    // MARK: - Support

    private func replying() -> JcodeMobileApp {
        var options = AppOptions()
        options.scenario = .connectedEmptyChat
        let app = JcodeMobileApp(options: options)
        act(app, #"{"type":"send_message","text":"List the files"}"#)
        return app
    }

    private func act(_ app: JcodeMobileApp, _ action: String, file: StaticString = #filePath, line: UInt = #line) {
        let report = json(app.dispatch(json: action).string)
        XCTAssertEqual(report["ok"], true, "\(report)", file: file, line: line)
    }

    private func delta(_ app: JcodeMobileApp, _ text: String, file: StaticString = #filePath, line: UInt = #line) {
        let event = #"{"type":"websocket_event","event":{"type":"text_delta","text":\#(JSONValue.string(text).jsonString)}}"#
        let report = app.platformEvent(json: event).string
        XCTAssertTrue(report.hasPrefix(#"{"ok":true"#), report, file: file, line: line)
    }

    /// The nodes in document order, each as its role and value.
    private func outline(_ nodes: [SemanticNode]) -> [String] {
        nodes.flatMap { node in [node.value.map { "\(node.role.rawValue) \($0)" } ?? node.role.rawValue] + outline(node.children) }
    }

    private func nodeCount(_ nodes: [SemanticNode]) -> Int { nodes.reduce(0) { $0 + 1 + nodeCount($1.children) } }

    /// What `text` shows within `budget` nodes: its first nodes' outline, nil when every node fits.
    private func shown(_ text: String, _ budget: Int) -> [String]? {
        MarkdownNodes.shown(Markdown.parse(text), budget: budget).map { outline(MarkdownNodes.nodes($0.blocks, prefix: "m")) }
    }

    // MARK: - Counting and cutting

    func testABlockCountsTheNodesItMakesItsOwnAndItsChildrens() {
        let cases: [(String, Int)] = [
            ("Words.\n", 1),
            ("# Title\n", 1),
            ("---\n", 1),
            ("```sh\nmake\n```\n", 2),  // the code and its Copy button
            ("- a\n- b\n  - c\n", 5),
            ("- [x] done\n", 2),
            ("| a | b |\n|---|---|\n| 1 | 2 |\n", 7),
            ("> q\n>\n> - x\n", 4),
            ("1. one\n\n   ```\n   code\n   ```\n", 4),
        ]
        for (text, expected) in cases {
            XCTAssertEqual(MarkdownNodes.count(Markdown.parse(text)), expected, text)
        }
    }

    /// The count is what the blocks' nodes are, for every example of the specs.
    func testEverySpecExampleCountsAsManyNodesAsItsBlocksMake() throws {
        guard let commonMark = SpecExamples.examples("commonmark-0.31.2.json"),
              let gfm = SpecExamples.examples("gfm-0.29-spec.json") else {
            throw XCTSkip("the spec examples are not in ../shared/commonmark")
        }
        var differing: [Int] = []
        for example in commonMark + gfm {
            let blocks = Markdown.parse(example.markdown)
            if MarkdownNodes.count(blocks) != nodeCount(MarkdownNodes.nodes(blocks, prefix: "m")) { differing.append(example.number) }
        }
        XCTAssertEqual(differing, [])
    }

    func testALongReplyShowsItsFirstNodesInOrderCutBetweenAContainersChildren() {
        // A list and its first three items fill 4.
        XCTAssertEqual(shown("- 1\n- 2\n- 3\n- 4\n- 5\n", 4), ["list", "list_item 1", "list_item 2", "list_item 3"])
        // An item whose nested list does not fit shows its line and what of the nested list does.
        XCTAssertEqual(shown("- a\n  - b\n  - c\n- d\n", 4), ["list", "list_item a", "list", "list_item b"])
        // A quote's blocks.
        XCTAssertEqual(shown("> one\n>\n> two\n>\n> three\n", 3), ["quote", "paragraph one", "paragraph two"])
        // A code block that does not fit (with its Copy button) is not shown, nor anything after it.
        XCTAssertEqual(shown("Para\n\n```\ncode\n```\n\nAfter\n", 2), ["paragraph Para"])
        // What fits exactly is not long.
        XCTAssertNil(shown("- 1\n- 2\n", 3))
        XCTAssertNil(shown("Para\n\n```\ncode\n```\n", 3))
    }

    func testATablesRowIsNeverCutAndTheFoldSaysWhereItLooked() {
        let table = "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n"
        XCTAssertEqual(
            shown(table, 8), ["table", "table_row", "table_cell a", "table_cell b", "table_row", "table_cell 1", "table_cell 2"])
        XCTAssertEqual(
            MarkdownNodes.shown(Markdown.parse(table), budget: 8)?.fold, MarkdownNodes.Fold(examined: 0, looked: .children(through: 2)))
        // No room left: the next block counts only by being there.
        XCTAssertEqual(
            MarkdownNodes.shown(Markdown.parse("Para\n\n" + table), budget: 1)?.fold, MarkdownNodes.Fold(examined: 1, looked: .there))
        // One node left and a code block: it counts only by being one.
        XCTAssertEqual(
            MarkdownNodes.shown(Markdown.parse("Para\n\n```\ncode\n"), budget: 2)?.fold, MarkdownNodes.Fold(examined: 1, looked: .codeBlock))
    }

    // MARK: - Streamed

    /// Streamed in deltas of 1 to 8 bytes through the markdown cache, with
    /// budgets small enough for each text to cross: after every delta the
    /// nodes are what a whole parse shows within the budget (all of them
    /// when shown whole), it is long exactly when a whole parse passes the
    /// budget, and the count is the whole parse's up to the budget.
    func testAReplyStreamedAcrossItsBudgetShowsWhatAWholeParseShowsAfterEveryDelta() {
        var random = SplitMix(seed: 41)
        var texts = [
            (1...30).map { "- Item \($0): update the parser\n" }.joined(),
            "| File | Lines |\n|:--|--:|\n" + (1...20).map { "| src/m\($0).swift | \($0 * 7) |\n" }.joined(),
            (1...8).map { "- Step \($0)\n  - check `v\($0)`\n  ```sh\n  make step\($0)\n  ```\n" }.joined(),
            "> Quoted words\n> more words\n>\n> - a\n> - b\n>\n> After the list\n>\n> ```\n> code\n> ```\n",
            "## Part\n\nThe **core** parses.\n\n- one\n- [x] a task\n\n```swift\nlet x = 1\n```\n\n| a | b |\n|---|--:|\n| 1 | 2 |\n\n1. first\n2. second\n",
            "- a\n\n- b\n- c\n- d\n",  // loose: the blank line decides every item's spacing
            "[a]\n\n- one [b]\n- two\n\n[b]: /url\n[a]: /other\n",  // definitions after their uses
            "- 1\n- 2\n- 3\n```\n- 4\n- 5\n",  // an open fence takes the rest: fewer nodes than before
            "Para\n\n```js`x\nmore\n",  // a fence until a backtick in its info makes it a paragraph
            // A reference shown, resolved while its definition's destination still streams (the fuzzer's).
            "# Plan\n\nWords:\n\n1./read `main.Swift`\n2. fix the [bug][b]\n3. test\n\n```swift\nlet x = 1\n```\n\n> note: *careful*\n\n[b]: https://bugs/1 \"t\"\n",
            // Items of one block that is not a paragraph: code, a heading, a break, HTML.
            "- ```\n  code\n  ```\n- # Title\n- ***\n- <div>\n- ```\n  more\n  ```\n* item\n",
        ]
        let fixed = texts.count
        for _ in 0 ..< 40 { texts.append(MarkdownCacheRandomStreamTests.document(&random)) }
        var differing: [String] = []
        for (n, text) in texts.enumerated() {
            let bytes = Array(text.utf8)
            // The texts written for it byte by byte too.
            for bytewise in n < fixed ? [false, true] : [false] {
                for budget in [1, 2, 3, 5, 8, 13, 21, 34] {
                    for whole in [false, true] {
                        let cache = MarkdownCache()
                        var end = 0
                        var previous: Int?
                        while end < bytes.count && differing.count < 5 {
                            end = min(bytes.count, end + (bytewise ? 1 : 1 + random.next(upTo: 8)))
                            while end < bytes.count && bytes[end] & 0xC0 == 0x80 { end += 1 }
                            let prefix = String(decoding: bytes[..<end], as: UTF8.self)
                            let got = cache.blocks(of: prefix, prefix: "g", appendedTo: previous, budget: budget, whole: whole)
                            previous = end
                            let blocks = Markdown.parse(prefix)
                            let total = MarkdownNodes.count(blocks)
                            let fold = whole ? nil : MarkdownNodes.shown(blocks, budget: budget)
                            let expected = MarkdownNodes.nodes(fold?.blocks ?? blocks, prefix: "g")
                            let counted = cache.total(for: "g") ?? -1
                            if got.nodes != expected || got.long != (total > budget) || (total <= budget ? counted != total : counted <= budget) {
                                differing.append("\(prefix.debugDescription) budget \(budget) whole \(whole): counted \(counted) of \(total)")
                            }
                        }
                    }
                }
            }
        }
        XCTAssertEqual(differing, [])
    }

    /// Folded where its shown blocks are closed and hold no `[`, a reply's
    /// delta goes on its text without a parse; a `[` shown waits for a
    /// definition written later, so then each delta is parsed.
    func testAFoldedReplysDeltaIsNotParsedWhenNothingItShowsCanChange() {
        let cache = MarkdownCache()
        let text = (1...6).map { "Paragraph \($0).\n\n" }.joined()
        _ = cache.blocks(of: text, prefix: "g", budget: 4)
        let parses = cache.parses
        let more = text + "More words, and more"
        let nodes = cache.blocks(of: more, prefix: "g", appendedTo: text.utf8.count, budget: 4).nodes
        XCTAssertEqual(nodes.map(\.value), ["Paragraph 1.", "Paragraph 2.", "Paragraph 3.", "Paragraph 4."])
        XCTAssertEqual(cache.parses, parses)

        let references = MarkdownCache()
        let shown = "See [docs].\n\n" + (1...5).map { "Paragraph \($0).\n\n" }.joined()
        _ = references.blocks(of: shown, prefix: "g", budget: 3)
        let defined = shown + "[docs]: https://example.com\n"
        let resolved = references.blocks(of: defined, prefix: "g", appendedTo: shown.utf8.count, budget: 3).nodes
        XCTAssertEqual(resolved.first?.spans?.compactMap(\.url), ["https://example.com"])
        XCTAssertEqual(resolved, MarkdownCache.wholeParseNodes(of: defined, prefix: "g", budget: 3))
    }

    // MARK: - In the app

    /// A table of 1 400 rows streamed as a reply: past 4 096 nodes the reply
    /// shows the table's first 1 364 rows and "Show the whole reply"; the
    /// deltas after that change only the message's text; opening it shows
    /// every row and "Show less", and folding it again shows the first ones.
    func testAReplyPastItsBudgetShowsItsStartAndAButtonThatShowsItWhole() {
        let app = replying()
        var text = "| File | Lines |\n|:--|--:|\n"
        for row in 1...1400 { text += "| src/module_\(row).swift | \(row * 7) |\n" }
        let bytes = Array(text.utf8)
        var at = 0
        var chunks = 0
        while at < bytes.count {
            let end = min(bytes.count, at + 700)
            delta(app, String(decoding: bytes[at..<end], as: UTF8.self))
            at = end
            chunks += 1
            if chunks % 10 == 0 {
                XCTAssertEqual(app.tree().find("message.m2"), SemanticTree.build(app.state).find("message.m2"), "after \(at) bytes")
            }
        }
        var tree = app.tree()
        XCTAssertEqual(tree.find("message.m2.md.0")?.children.count, 1365)
        XCTAssertEqual(tree.find("message.m2.md.0")?.children.last?.id, "message.m2.md.0.1364")
        XCTAssertEqual(tree.find("message.m2.more")?.label, "Show the whole reply")
        XCTAssertEqual(tree.find("message.m2")?.expanded, false)
        XCTAssertEqual(tree.find("message.m2")?.value, text, "the message keeps its whole text (to copy)")
        XCTAssertEqual(tree.find("message.m2"), SemanticTree.build(app.state).find("message.m2"))

        // A delta now changes the message's text, not what it shows.
        let revision = app.state.revision
        delta(app, "| src/extra.swift | 1 |\n")
        guard case .changes(_, let ops)? = app.treeChanges(since: revision) else { return XCTFail("changes expected") }
        let touched = ops.map { op -> String in
            switch op {
            case .append(let id, _, _), .update(let id, _, _), .move(let id, _, _), .spans(let id, _, _): return id
            case .splice(let parent, _, _, _): return parent
            }
        }
        XCTAssertFalse(touched.contains { $0.hasPrefix("message.m2.") }, "\(touched)")
        XCTAssertTrue(touched.contains("message.m2"))

        act(app, #"{"type":"tap_node","node_id":"message.m2.more"}"#)
        tree = app.tree()
        XCTAssertEqual(tree.find("message.m2.md.0")?.children.count, 1402)
        XCTAssertEqual(tree.find("message.m2.md.0")?.children.last?.children.first?.value, "src/extra.swift")
        XCTAssertEqual(tree.find("message.m2.more")?.label, "Show less")
        XCTAssertEqual(tree.find("message.m2")?.expanded, true)
        delta(app, "| src/open.swift | 2 |\n")
        tree = app.tree()
        XCTAssertEqual(tree.find("message.m2.md.0")?.children.count, 1403)
        XCTAssertEqual(tree.find("message.m2"), SemanticTree.build(app.state).find("message.m2"))

        act(app, #"{"type":"tap_node","node_id":"message.m2.more"}"#)
        tree = app.tree()
        XCTAssertEqual(tree.find("message.m2.md.0")?.children.count, 1365)
        XCTAssertEqual(tree.find("message.m2.more")?.label, "Show the whole reply")
    }

    /// A reply that fits its budget has no button and says nothing of folding.
    func testAReplyWithinItsBudgetIsShownWholeWithoutAButton() {
        let app = replying()
        delta(app, (1...100).map { "- Item \($0)\n" }.joined())
        let tree = app.tree()
        XCTAssertEqual(tree.find("message.m2.md.0")?.children.count, 100)
        XCTAssertNil(tree.find("message.m2.more"))
        XCTAssertNil(tree.find("message.m2")?.expanded)
    }
}
