import XCTest
@testable import JcodeMobileCore
@testable import JcodeMobileJSON
@testable import JcodeMobileMarkdown
import JcodeMobileTestSupport

/// The transcript as a coding agent writes it: a reply's markdown as
/// semantic blocks (parsed on as it streams), tool cards a person can read,
/// diffs, reasoning apart from the answer, and copying.
final class TranscriptNodesTests: XCTestCase {
    // MARK: - Support

    private func app(_ scenario: Scenario = .connectedEmptyChat) -> JcodeMobileApp {
        var options = AppOptions()
        options.scenario = scenario
        return JcodeMobileApp(options: options)
    }

    private func server(_ app: JcodeMobileApp, _ event: String, file: StaticString = #filePath, line: UInt = #line) {
        let report = app.platformEvent(json: #"{"type":"websocket_event","event":\#(event)}"#).string
        XCTAssertTrue(report.hasPrefix(#"{"ok":true"#), report, file: file, line: line)
    }

    @discardableResult
    private func act(_ app: JcodeMobileApp, _ action: String, file: StaticString = #filePath, line: UInt = #line) -> JSONValue {
        let report = json(app.dispatch(json: action).string)
        XCTAssertEqual(report["ok"], true, "\(report)", file: file, line: line)
        return report
    }

    private func delta(_ app: JcodeMobileApp, _ text: String) {
        server(app, #"{"type":"text_delta","text":\#(JSONValue.string(text).jsonString)}"#)
    }

    /// A reply streaming into a connected chat: the phone's message is m1, the reply m2.
    private func replying() -> JcodeMobileApp {
        let app = app()
        act(app, #"{"type":"send_message","text":"Explain"}"#)
        return app
    }

    private func children(_ app: JcodeMobileApp, _ id: String) -> [String] {
        app.tree().find(id)?.children.map(\.id) ?? []
    }

    // MARK: - Markdown as blocks

    func testBlockIdsAreTheirPlacesInDecimalAtEveryDepth() {
        let app = replying()
        // Eleven paragraphs, then a table of twelve rows: ids with two digits at two depths.
        let paragraphs = (0..<11).map { "Paragraph \($0)." }.joined(separator: "\n\n")
        let rows = (1...11).map { "| r\($0) | \($0) |" }.joined(separator: "\n")
        delta(app, paragraphs + "\n\n| a | b |\n|---|---|\n" + rows + "\n")
        let ids = children(app, "message.m2")
        XCTAssertEqual(Array(ids.prefix(3)), ["message.m2.md.0", "message.m2.md.1", "message.m2.md.2"])
        XCTAssertEqual(Array(ids.suffix(2)), ["message.m2.md.10", "message.m2.md.11"])
        XCTAssertEqual(Array(children(app, "message.m2.md.11").suffix(2)), ["message.m2.md.11.10", "message.m2.md.11.11"])
        XCTAssertEqual(children(app, "message.m2.md.11.10"), ["message.m2.md.11.10.0", "message.m2.md.11.10.1"])
        XCTAssertEqual(app.tree().find("message.m2.md.11.10.1")?.value, "10")
    }

    func testAReplyInMarkdownIsItsBlocksWithStyledRunsAndNoMarkers() {
        let app = replying()
        delta(app, "## Plan\n\nFirst **build**, then `test` it: [docs](https://example.com).\n\n- one\n- [x] two\n\n---\n")
        let message = app.tree().find("message.m2")
        XCTAssertEqual(message?.children.map(\.id), ["message.m2.md.0", "message.m2.md.1", "message.m2.md.2", "message.m2.md.3"])
        XCTAssertEqual(message?.children.map(\.role), [.heading, .paragraph, .list, .divider])
        let heading = message?.find("message.m2.md.0")
        XCTAssertEqual(heading?.value, "Plan")
        XCTAssertEqual(heading?.level, 2)
        let paragraph = message?.find("message.m2.md.1")
        XCTAssertEqual(paragraph?.value, "First build, then test it: docs.")
        XCTAssertEqual(paragraph?.spans, [
            TextSpan("First "), TextSpan("build", .bold), TextSpan(", then "), TextSpan("test", .code), TextSpan(" it: "),
            TextSpan("docs", .link, url: "https://example.com"), TextSpan("."),
        ])
        let list = message?.find("message.m2.md.2")
        XCTAssertEqual(list?.variant, "bullet")
        XCTAssertEqual(list?.children.map(\.label), ["•", "•"])
        XCTAssertEqual(list?.children.map(\.value), ["one", "two"])
        XCTAssertEqual(list?.children.map(\.checked), [nil, true])
        // The message keeps the text as written (what copy copies); a screen reader reads the blocks.
        XCTAssertEqual(message?.value, "## Plan\n\nFirst **build**, then `test` it: [docs](https://example.com).\n\n- one\n- [x] two\n\n---\n")
        XCTAssertNil(message?.accessibilityValue)
        XCTAssertEqual(message?.supportedActions, ["copy"])
    }

    func testADeltaOnTheCodeLineEndingAListsLastItemGoesOnTheCodeBlockAsItIs() {
        let text = "- Step 1\n  - check it\n  ```sh\n  make st"
        var stream = MarkdownStream()
        stream.update(text, appendedOnly: false)
        let nodes = MarkdownNodes.nodes(stream.blocks, prefix: "m")
        let tail = MarkdownCache.tail(of: text, last: nodes.last, stream: stream)
        XCTAssertEqual(tail?.code, true)
        XCTAssertEqual(tail?.path, [0, 1], "item 0, its second block (the nested list, then the code)")
        // A line that begins with a backtick could close the fence: read again.
        var closing = MarkdownStream()
        closing.update(text + "ep\n  `", appendedOnly: false)
        XCTAssertNil(MarkdownCache.tail(of: text + "ep\n  `", last: MarkdownNodes.nodes(closing.blocks, prefix: "m").last, stream: closing))
        // The item's own line opening the fence: more of it is the info string, not code.
        var opener = MarkdownStream()
        opener.update("- ```sh", appendedOnly: false)
        let own = MarkdownCache.tail(of: "- ```sh", last: MarkdownNodes.nodes(opener.blocks, prefix: "m").last, stream: opener)
        XCTAssertEqual(own?.fence?.infoFrom, 5, "after the item's marker and the fence's run")
        XCTAssertEqual(own?.fence?.startsValue, true)
        // Through the cache: the code grows, and the nodes are those of a whole parse.
        let cache = MarkdownCache()
        _ = cache.blocks(of: text, prefix: "m")
        let grown = cache.blocks(of: text + "ep1 --fast", prefix: "m", appendedTo: text.utf8.count)
        XCTAssertEqual(grown.grownFrom, 0, "the list's items before its last one stay")
        XCTAssertEqual(grown.nodes.last?.children.last?.children.last?.value, "make step1 --fast")
        XCTAssertEqual(grown.nodes, MarkdownNodes.nodes(Markdown.parse(text + "ep1 --fast"), prefix: "m"))
    }

    func testADeltaWithPipesIntoATablesLastRowGoesOnItsCellsAsTheyAre() {
        let text = "| name | runs | state |\n|--|--:|:-:|\n| core | 1"
        let cache = MarkdownCache()
        _ = cache.blocks(of: text, prefix: "m")
        XCTAssertEqual(cache.tail(for: "m")?.path, [1, 1], "row 1, cell 1")
        // A pipe ends the cell; the text after it goes on the next one, its blanks at the start dropped.
        let two = text + "2 |  ok "
        let grown = cache.blocks(of: two, prefix: "m", appendedTo: text.utf8.count)
        XCTAssertEqual(grown.grownFrom, 1, "the header row stays")
        XCTAssertEqual(grown.nodes.last?.children.last?.children.map(\.value), ["core", "12", "ok"])
        XCTAssertEqual(cache.tail(for: "m")?.path, [1, 2])
        XCTAssertEqual(cache.tail(for: "m")?.blanks, " ")
        XCTAssertEqual(grown.nodes, MarkdownNodes.nodes(Markdown.parse(two), prefix: "m"))
        // A trailing pipe, then more: a cell past the header's is left out, so the parser reads it.
        let three = two + "|"
        XCTAssertEqual(cache.blocks(of: three, prefix: "m", appendedTo: two.utf8.count).nodes, MarkdownNodes.nodes(Markdown.parse(three), prefix: "m"))
        XCTAssertNil(cache.tail(for: "m"), "the row ends in a pipe: the next delta is parsed")
        // Streamed byte by byte with empty cells, tabs and runs of blanks: a whole parse's nodes after every byte.
        let table = "| a | b | c |\n|---|:-:|--:|\n|  x  |\ty\t|  |\n| | 2 |three  four\n|5|6|7|\n| last  | row |"
        XCTAssertEqual(Self.bytesWhereStreamingDiffersFromAWholeParse(table), [])
        // A lone CR ends a row's line as a line feed does (the fuzzer's): the next row's first cell grows.
        let crRows = "| a | b |\n|:--|--:|\n| 1 | b |\n| x | y\ri](/s.png)\n"
        XCTAssertEqual(Self.bytesWhereStreamingDiffersFromAWholeParse(crRows), [])
        XCTAssertEqual(MarkdownNodes.nodes(Markdown.parse(table), prefix: "t").last?.children.map { $0.children.map(\.value) },
                       [["a", "b", "c"], ["x", "y", ""], ["", "2", "three  four"], ["5", "6", "7"], ["last", "row", ""]])
    }

    func testADeltaAfterARowsPipeGoesOnTheNextCellWithoutAParse() {
        let text = "| name | runs | state |\n|--|--:|:-:|\n| core | 12 | "
        // After the pipe (and a blank): the row's next cell, empty so far.
        let (cache, all) = Self.streamAsAWholeParse(text, ["ok", " `now` and *then*", " done"], prefix: "m")
        XCTAssertEqual(cache.parses, 1, "\(all.debugDescription): only the first text was parsed")
        XCTAssertEqual(cache.tail(for: "m")?.path, [1, 2])
        XCTAssertEqual(MarkdownNodes.nodes(Markdown.parse(all), prefix: "m").last?.children.last?.children.map(\.value),
                       ["core", "12", "ok now and then done"])
        // A row that is a pipe so far: its first cell.
        let (first, row) = Self.streamAsAWholeParse("| a | b |\n|---|---|\n|", [" x", " `y`"], prefix: "f")
        XCTAssertEqual(first.parses, 1, "\(row.debugDescription): only the first text was parsed")
        XCTAssertEqual(first.tail(for: "f")?.path, [1, 0])
        // A pipe after the header's last cell: a cell the row leaves out, so the parser reads what follows it;
        // an escaped pipe at the end is the cell's text, and a backslash at the end escapes what comes next.
        Self.assertParsed([("| a | b |\n|---|---|\n| 1 | 2 |", " 3"), ("| a | b |\n|---|---|\n| 1 \\", "| 2")], prefix: "p")
        let (escaped, pipe) = Self.streamAsAWholeParse("| a | b |\n|---|---|\n| 1 \\|", [" one"], prefix: "e")
        XCTAssertEqual(escaped.parses, 1, "\(pipe.debugDescription): only the first text was parsed")
        XCTAssertEqual(escaped.tail(for: "e")?.path, [1, 0])
        // Streamed byte by byte: a whole parse's nodes after every byte.
        let rows = "| k | v |\n|:-|-:|\n| a | `b` |\n|\n| | c |\n| d \\| e | f |\n|x|\ty *z* |\n"
        XCTAssertEqual(Self.bytesWhereStreamingDiffersFromAWholeParse(rows), [])
    }

    func testDotsAndUnderscoresStreamedIntoTextEqualAWholeParseAndOnlyWwwDotMayStartALink() {
        let sentence = "Edit src/module_12.swift, then www.example.com/a_b and mail a.b_c@x.org. Done_ok _em_ a_ _b x.y.z WWW.Q.COM wwx.y"
        let texts = [sentence, "- " + sentence + "\n- next_item.", "| file | note |\n|--|--|\n| " + sentence + " | a_b.c |"]
        for text in texts { XCTAssertEqual(Self.bytesWhereStreamingDiffersFromAWholeParse(text), [], text) }
        // A dot after a word: more letters go on as they are; after "www" it is read by the parser.
        let cache = MarkdownCache()
        _ = cache.blocks(of: "see module_1", prefix: "p")
        XCTAssertEqual(cache.blocks(of: "see module_12.swi", prefix: "p", appendedTo: 12).nodes.first?.value, "see module_12.swi")
        XCTAssertEqual(cache.tail(for: "p")?.wordMayLink, false)
        _ = cache.blocks(of: "see module_12.swift www", prefix: "p", appendedTo: 17)
        let linked = cache.blocks(of: "see module_12.swift www.a.io", prefix: "p", appendedTo: 23).nodes
        XCTAssertEqual(linked.first?.spans?.last?.url, "http://www.a.io")
    }

    func testADeltaIntoAQuotesLastParagraphGoesOnItAsItIs() {
        let text = "> The core reads\n> and shows it"
        let cache = MarkdownCache()
        _ = cache.blocks(of: text, prefix: "q")
        XCTAssertEqual(cache.tail(for: "q")?.path, [0], "the quote's first block")
        let grown = cache.blocks(of: text + " as it streams", prefix: "q", appendedTo: text.utf8.count)
        XCTAssertEqual(grown.grownFrom, 0)
        XCTAssertEqual(grown.nodes.first?.children.first?.value, "The core reads\nand shows it as it streams")
        XCTAssertEqual(grown.nodes, MarkdownNodes.nodes(Markdown.parse(text + " as it streams"), prefix: "q"))
        // Not a line that is the marker alone, nor a definition's, nor an HTML block's.
        for other in ["> a\n>", "> [a]: /b", "> <div>"] {
            var stream = MarkdownStream()
            stream.update(other, appendedOnly: false)
            XCTAssertNil(MarkdownCache.tail(of: other, last: MarkdownNodes.nodes(stream.blocks, prefix: "q").last, stream: stream), other)
        }
        // Streamed byte by byte (lazy lines, tabs after the marker, nested quotes, a list): a whole parse's nodes after every byte.
        let quote = "> The core reads what the agent writes,\nlazy words go on it.\n>\tand a tab\n>\n> > nested quote here\n> back out\n> - a point\n>   more of it\n\n> again, with `code` and **bold** words"
        XCTAssertEqual(Self.bytesWhereStreamingDiffersFromAWholeParse(quote), [])
    }

    func testADeltaIntoTheOpenParagraphOrCodeAtAnyDepthGoesOnItAsItIs() {
        // Each text, the path to the node its last line goes on, and whether that node is code.
        let cases: [(text: String, path: [Int], code: Bool)] = [
            ("> - first point\n> - second poi", [0, 1], false),
            ("- Step 1\n  - check the value", [0, 0, 0], false),
            ("- Step 1\n  ```sh\n  make st", [0, 0], true),
            ("> a\n> > b", [1, 0], false),
            ("> - [ ] a task\n>   - deeper it", [0, 0, 0, 0], false),
            ("1. one\n\n   more of one", [0, 0], false),
            ("> ```\n> let x", [0], true),
            // Lines that begin with marks that begin no block, followed as they are.
            ("- **Fireworks** (`jcode login --prov", [0], false),
            ("`make` builds it, then the test", [], false),
            ("- a\n  - _b", [0, 0, 0], false),
            ("3 files changed, 1.5x faster: the parser", [], false),
            ("1.5x faster", [], false),
            ("> ![a picture](p.png) of the gateway", [0], false),
            ("- [`GATEWAY.md`](./GATEWAY.md) and the pai", [0], false),
            ("- [`GATEWAY.md`](./GATE", [0], false),
            ("[the docs](./docs) say", [], false),
        ]
        for (text, path, code) in cases {
            let cache = MarkdownCache()
            _ = cache.blocks(of: text, prefix: "d")
            XCTAssertEqual(cache.tail(for: "d")?.path, path, text)
            XCTAssertEqual(cache.tail(for: "d")?.code, code, text)
            let more = text + "s and more"
            let grown = cache.blocks(of: more, prefix: "d", appendedTo: text.utf8.count)
            // A list or quote grew in its last item or block (a paragraph at the top: in its text).
            if let first = path.first { XCTAssertEqual(grown.grownFrom, first, text) }
            XCTAssertEqual(grown.nodes, MarkdownNodes.nodes(Markdown.parse(more), prefix: "d"), text)
        }
        // Not the open text's first line when it may still become something else:
        // a fence's own line, a marker and nothing after it, a definition in an
        // item, a line that begins with marks more text may still make a
        // block's (a list marker, a thematic break, a fence, an ordered
        // list's marker, HTML), or a title of a definition before it.
        for other in [
            "> - a\n>   ```sh", "- a\n  - ", "> - [a]: /b", "- a\n  - **", "- a\n  - ``", "- a\n  - --", "> - a\n>   1",
            "> - a\n>   1.", "- a\n  <b>", "[a]: /u\n'the ti", "[a]: /u\n\"the ti", "[a]: /u\n(the ti", "12", "- [a]: /u", "- [a]", "- [a \\] b",
        ] {
            var stream = MarkdownStream()
            stream.update(other, appendedOnly: false)
            XCTAssertNil(MarkdownCache.tail(of: other, last: MarkdownNodes.nodes(stream.blocks, prefix: "d").last, stream: stream), other)
        }
        // Streamed byte by byte: a whole parse's nodes after every byte.
        let nested = "- Step 1\n  - check `value_1`\n  ```sh\n  make step1\n  ```\n- Step 2\n  - check it\n    and go on\n  - [x] done\n\n  a loose paragraph\n"
        XCTAssertEqual(Self.bytesWhereStreamingDiffersFromAWholeParse(nested), [])
        let quoted = "> The core reads,\n>\n> - first point of part 1\n> - second point with a [link](https://example.com)\n>   - deeper words\n>\n> 1. one\n> 2. [a]: /u\n> 3. three\n> > > three deep\nlazy words\n> ```\n> code in it\n> ```\n"
        XCTAssertEqual(Self.bytesWhereStreamingDiffersFromAWholeParse(quoted), [])
        // Lines that begin with marks, as agents write them: a bold or code lead-in, numbers, emphasis, images.
        let marked = "- **Gateway** (`jcode serve --port 7643`)\n- **Pairing** (`jcode pair`): *six digits*\n- `--help` lists them\n\n"
            + "`make` builds it: 3 files, 1.5x faster, 2024-11 notes, 1234567890. done\n\n**Note**: _this_ and __that__ ~~old~~\n"
            + "> ![the screen](a.png) **bold** and `code`\n>\n> 2) two\n- --x and -y\n- +z\n\n[a]: /u\n'a title'\n\n!bang [a]\n"
            + "- [`GATEWAY.md`](./GATEWAY.md)\n- [b] and [[c]]\n- [d]: /e\n\n[f] first, [the docs](./d.md) then\n\n[b]: /b\n[f]: /f\n"
        XCTAssertEqual(Self.bytesWhereStreamingDiffersFromAWholeParse(marked), [])
        XCTAssertEqual(Self.bytesWhereStreamingDiffersFromAWholeParse(marked, chunk: 3), [])
    }

    func testADeltaOfMarksIntoAParagraphsOnlyLineHasThatLineReadAgainAndNotTheBlocks() {
        // Each text, a delta that cannot be appended as it is, and where the last line's text begins.
        let cases: [(text: String, delta: String, from: Int)] = [
            ("Intro.\n\nThe core parses", " `markdown` as it _streams_", 8),
            ("- one\n- two **bo", "ld** and _it", 8),
            ("> - [ ] a task with", " *emphasis*", 8),
            ("see [the docs", "](https://example.com) now", 0),
            ("a snake_case", "_name and \\*stars\\*", 0),
            ("[ref]: https://example.com\n\nsee [ref", "] and [other]", 28),
            ("mail me at someone", "@example.com or www.example.com", 0),
            ("1. first\n2. an &amp", "; entity & <b>tag</b>", 12),
        ]
        for (text, delta, from) in cases {
            let cache = MarkdownCache()
            _ = cache.blocks(of: text, prefix: "r")
            XCTAssertEqual(cache.tail(for: "r")?.inlineFrom, from, text)
            let more = text + delta
            let nodes = cache.blocks(of: more, prefix: "r", appendedTo: text.utf8.count).nodes
            XCTAssertEqual(cache.parses, 1, "\(text): only the first text was parsed")
            XCTAssertEqual(nodes, MarkdownNodes.nodes(Markdown.parse(more), prefix: "r"), text)
            // Plain words after it go on as they are.
            let words = more + " and more words"
            XCTAssertEqual(cache.blocks(of: words, prefix: "r", appendedTo: more.utf8.count).nodes,
                           MarkdownNodes.nodes(Markdown.parse(words), prefix: "r"), text)
            XCTAssertEqual(cache.parses, 1, text)
        }
        // Parsed: a delta with a line ending, a paragraph of two lines, a line longer than
        // 1 024 bytes, a task's text that begins with what would be a mark before the box.
        let long = String(repeating: "word ", count: 205) + "end"
        for (text, delta) in [("para", " *x*\ny"), ("one\ntwo", " *x*"), (long, " *x*"),
                              ("- [ ] > not a quote", " but *text*"), ("- [x] - not a list", " but `text`")] {
            let cache = MarkdownCache()
            _ = cache.blocks(of: text, prefix: "r")
            let more = text + delta
            XCTAssertEqual(cache.blocks(of: more, prefix: "r", appendedTo: text.utf8.count).nodes,
                           MarkdownNodes.nodes(Markdown.parse(more), prefix: "r"), text)
            XCTAssertEqual(cache.parses, 2, text)
        }
        // Streamed byte by byte: a whole parse's nodes after every byte.
        let marks = "A _snake_case_ word, \\*not\\* emphasis, **bold *and* it**, ~~gone~~, `co*de*`, [a link](https://example.com \"t\"), <https://x.io>, www.example.com, a@b.co, &copy; &#35; and [ref].\n\n[ref]: /url\n- item with __strong__ and ![an image](i.png)\n> quoted *words* and `code`"
        XCTAssertEqual(Self.bytesWhereStreamingDiffersFromAWholeParse(marks), [])
    }

    func testADeltaOfMarksIntoATablesLastCellHasThatCellReadAgainAndNotTheTable() {
        let table = "| kind | id | what it shows |\n|---|---|---|\n| `tool_call` | `tool.<id>` | its name, `value` its status"
        // Each delta that cannot be appended as it is, into the last cell, then plain words after it.
        for delta in [", `expanded` (closed by", " **bold** _it_ and [a link](https://example.com)", " ~~old~~ *x", " (a `text`: one line"] {
            let (cache, all) = Self.streamAsAWholeParse(table, [delta, " and more words"], prefix: "t")
            XCTAssertEqual(cache.parses, 1, "\(all.debugDescription): only the first text was parsed")
        }
        // Parsed: a delta with marks and a pipe, a backslash, or a line ending.
        Self.assertParsed([(table, " `a` | b"), (table, " `a\\|b`"), (table, " *x*\n| c |")], prefix: "t")
        // Streamed byte by byte and in threes: a whole parse's nodes after every step.
        let rows = table + ", `expanded` (closed by default); a tap **toggles** it | extra | cells |\n| `diff` | `a\\|b` | `+n −m`, *counts* [x](y) ~~z~~ |\n"
        XCTAssertEqual(Self.bytesWhereStreamingDiffersFromAWholeParse(rows), [])
        XCTAssertEqual(Self.bytesWhereStreamingDiffersFromAWholeParse(rows, chunk: 3), [])
    }

    func testADeltaThatEndsAParagraphsOrCodesLineChangesNoNodeAndTheNextLineIsParsed() {
        // Each text and a delta that ends its last line.
        let cases: [(text: String, delta: String)] = [
            ("The core", " reads\n"), ("- one", " item\n"), ("> a quote", " with **bold**\n"), ("1. first", "\n"), ("para  ", "\n"),
            ("```sh\nmake", " step\n"), ("- a\n  ```\n  let x", " = 1\n"), ("> ~~~\n> code", "\n"),
        ]
        for (text, delta) in cases {
            let cache = MarkdownCache()
            _ = cache.blocks(of: text, prefix: "n")
            let more = text + delta
            XCTAssertEqual(cache.blocks(of: more, prefix: "n", appendedTo: text.utf8.count).nodes,
                           MarkdownNodes.nodes(Markdown.parse(more), prefix: "n"), text)
            XCTAssertEqual(cache.parses, 1, "\(text): the stream did not parse")
            // A fence at the top or in items reads its next line here; the others' is parsed.
            let fenced = text.hasPrefix("```") || text.hasPrefix("- a")
            XCTAssertEqual(cache.tail(for: "n")?.fence?.blanks, fenced ? 0 : nil, text)
        }
        // What the next line makes of the one before: an underline, a table's delimiter row, an item, a lazy line, a blank.
        for (text, delta) in cases {
            for next in ["===", "|--|", "- next", "lazy more", "\nafter", "```", "  ~~~"] {
                let cache = MarkdownCache()
                _ = cache.blocks(of: text, prefix: "n")
                _ = cache.blocks(of: text + delta, prefix: "n", appendedTo: text.utf8.count)
                let all = text + delta + next
                XCTAssertEqual(cache.blocks(of: all, prefix: "n", appendedTo: (text + delta).utf8.count).nodes,
                               MarkdownNodes.nodes(Markdown.parse(all), prefix: "n"), all)
                // A top-level fence's line of code goes on as it is, and so does an item's fence's line indented
                // as the item needs (the fence's other character is code); a line that may close it (a run of
                // its own character as long as its), a blank line, or an item's line indented less, is parsed.
                let asItIs = (text.hasPrefix("```") && !["\nafter", "```"].contains(next)) || (text.hasPrefix("- a") && next == "  ~~~")
                XCTAssertEqual(cache.parses, asItIs ? 1 : 2, all)
            }
        }
    }

    func testTheLinesOfAFenceAtTheTopOrInItemsGoOnTheirNodeAsTheParserReadsThem() {
        // Streamed in deltas that end a line and begin the next, and blanks by one: as parsed whole after each.
        let texts = [
            "```sh\nmake step1\n  make step2\n\n   three blanks\nend\n```\n",
            "  ```\n   x\n  y\n z\n      w\n  ```\n",
            "- Step 1\n  ```sh\n  make step1\n\n    indented more\n  \t tab\n  ```\n- Step 2\n",
            "1. one\n   - two\n     ```\n     deep code\n      one more\n   less: the inner item ends\n",
            "- a\n   ```\n  not enough for the fence's indent: still in the item\n     five\n",
        ]
        for text in texts {
            for size in [1, 2, 3, 5, 9] {
                XCTAssertEqual(Self.bytesWhereStreamingDiffersFromAWholeParse(text, chunk: size), [], "\(size): \(text.debugDescription)")
            }
        }
        // The line after a line of code, and the one after a line of blanks, in an item: no parse.
        let cache = MarkdownCache()
        var text = "- Step 1\n  ```sh\n  make step1"
        _ = cache.blocks(of: text, prefix: "g")
        for delta in ["\n  ma", "ke step2\n", "  ", "  more", "\n ", " ", "last"] {
            let old = text.utf8.count
            text += delta
            XCTAssertEqual(cache.blocks(of: text, prefix: "g", appendedTo: old).nodes,
                           MarkdownNodes.nodes(Markdown.parse(text), prefix: "g"), text)
        }
        XCTAssertEqual(cache.parses, 1, "only the first text")
        XCTAssertEqual(MarkdownNodes.nodes(Markdown.parse(text), prefix: "g")[0].children[0].children[0].value,
                       "make step1\nmake step2\n  more\nlast")
    }

    func testAFencesOwnLineAndItsFirstLineGoOnTheirNodeAsTheParserReadsThem() {
        // After the fence's run, at the top and in items: the info string names the language as it grows,
        // and the code's first line takes no line ending before it.
        let cases: [(text: String, deltas: [String], language: String?, value: String)] = [
            ("```", ["s", "h", "\nmake"], "sh", "make"),
            ("- Step 1\n  ```", ["sh", "\n  m", "ake step1"], "sh", "make step1"),
            ("- Step 1\n  ```sh", ["\n  "], "sh", ""),
            ("  ~~~ py", ["thon extra", " words\n", "   x = 1"], "python", " x = 1"),
            ("1. one\n   ```", [" ", "swift", "\n", "   let x"], "swift", "let x"),
            ("```", ["\n", "first", "\n", "second"], nil, "first\nsecond"),
        ]
        for (text, deltas, language, value) in cases {
            let (cache, all) = Self.streamAsAWholeParse(text, deltas, prefix: "f")
            XCTAssertEqual(cache.parses, 1, "\(all.debugDescription): only the first text was parsed")
            var code = cache.nodes(of: all, prefix: "f").last
            while let node = code, node.role != .codeBlock { code = node.children.last }
            XCTAssertEqual(code?.language, language, all.debugDescription)
            XCTAssertEqual(code?.accessibilityLabel, language.map { "Code, " + $0 } ?? "Code", all.debugDescription)
            XCTAssertEqual(code?.value, value, all.debugDescription)
        }
        // A line that begins with a run of the fence's character shorter than its run is code: no parse until
        // the run is as long (then the line may close the fence).
        for (text, deltas, closes) in [("```sh\nmake", ["\n`", "`", "`"], true), ("- a\n  ````\n  x", ["\n  ``", "`", " y"], false),
                                       ("~~~\nx\n", ["~", "~x"], false), ("- a\n  ```\n  x\n", ["  ``", "\n  ```"], true)] {
            let (cache, all) = Self.streamAsAWholeParse(text, deltas, prefix: "f")
            XCTAssertEqual(cache.parses, closes ? 2 : 1, "\(all.debugDescription): parsed at the run that may close it only")
        }
        // Parsed: what may end the fence's run or undo it (a backtick in a backtick fence's line), an
        // escape or an entity in the info string, a tab, and a fence in a quote (its lines are not read here).
        Self.assertParsed([("```", "`"), ("~~~", "~"), ("```", "sh`"), ("```", "c\\+\\+"), ("```", "c&#43;"),
                           ("```", "\tsh"), ("> ```", "sh"), ("```\\", "sh")], prefix: "f")
        // Streamed in chunks: a whole parse's nodes after each.
        let fences = "```sh  more words\nmake\n```\n- a\n  ~~~ python3 x\n\n  y = 2\n  ~~~\n   ``` c\n    int\n```\n~~~ a`b\nz\n~~~\n"
        for size in [1, 2, 3, 4, 7] {
            XCTAssertEqual(Self.bytesWhereStreamingDiffersFromAWholeParse(fences, chunk: size), [], "\(size)")
        }
    }

    func testAnEmptyItemsTextBeginsOnItsNodeWithoutAParse() {
        // The text ends in an empty item's marker (and its blanks); the deltas begin its text with a letter.
        let cases: [(text: String, deltas: [String], value: String)] = [
            ("- Step 1\n- ", ["Step", " 2 and more"], "Step 2 and more"),
            ("- Step 1\n-", [" Step 2"], "Step 2"),
            ("1. one\n2.   ", ["second", " item"], "second item"),
            ("> - a\n> - ", ["b"], "b"),
            ("- a\n\n  - b\n  + ", ["c, d"], "c, d"),
            ("- Step 1\n- ", ["Step *2*", " done"], "Step 2 done"),
            ("- a\n- ", ["\u{e9}t\u{e9}\n"], "\u{e9}t\u{e9}"),
        ]
        Self.assertLastItemsValueWithoutAParse(cases, prefix: "i")
        // Parsed: a task box, no blank after the marker (no item then), a mark or a digit first,
        // five blanks (the item's text would be indented code), a tab, a line ending.
        Self.assertParsed([("- a\n- ", "[ ] task"), ("- a\n-", "Step"), ("- a\n- ", "*b*"), ("- a\n- ", "1. b"),
                          ("- a\n-     ", "code"), ("- a\n-\t", "b"), ("- a\n- ", "\nb"), ("- a\n-", "  b")], prefix: "i")
        // Streamed in chunks: a whole parse's nodes after each.
        let items = "- Step 1\n-\n- [x] done\n-  two blanks\n1. one\n2.\n10) ten\n   - sub\n   *\n   * star\n\n- after a blank\n-    four\n-     five\n"
        for size in [1, 2, 3, 6] {
            XCTAssertEqual(Self.bytesWhereStreamingDiffersFromAWholeParse(items, chunk: size), [], "\(size)")
        }
    }

    func testAFencesOpenerArrivingInPiecesGoesOnTheParagraphAsItsLazyLineWithoutAParse() {
        // A paragraph's only line ends, then one or two backticks on the next line: a lazy line of that paragraph.
        let cases: [(text: String, deltas: [String], value: String)] = [
            ("- Step 1\n  - check `value_1`", ["\n  ", "``"], "check value_1\n``"),
            ("- Step 1\n  - check `value_1`", ["\n ", " ``"], "check value_1\n``"),
            ("- Step 1\n  - check `value_1`", ["\n  `"], "check value_1\n`"),
            ("- Step 1\n  - check `value_1`", ["\n  `", "`"], "check value_1\n``"),
            ("- Step 1\n  - check", [" it\n", "`"], "check it\n`"),
            ("- Step 1\n  - two and `one` done", ["\n", "  ``"], "two and one done\n``"),
            ("- a\n  - see `one` with two words", ["\n", "`"], "see one with two words\n`"),
        ]
        Self.assertLastItemsValueWithoutAParse(cases, prefix: "f")
        // Parsed: the run would close an open one (`` ` `` then a lone one; `` `` `` then two), a hard break
        // before (two blanks, a backslash), a third backtick (a fence), a tab, text after the run,
        // what could take a backtick into a link or an autolink.
        Self.assertParsed([("- a `b", "\n`"), ("- a ``b", "\n``"), ("- a  ", "\n`"), ("- a\\", "\n`"),
                          ("- a", "\n```"), ("- a", "\n\t`"), ("- a", "\n`b"), ("- [a](b)", "\n`"),
                          ("- see http://x.y", "\n`"), ("- see www.x.y", "\n`"), ("- a <b>", "\n`"),
                          ("- a", "\n\n`")], prefix: "f")
        // A blank line after the line ends the paragraph: backticks after it begin another, and are parsed.
        let (blank, text) = Self.streamAsAWholeParse("- Step 1\n  - check `value_1`", ["\n", "\n``"], prefix: "f")
        XCTAssertEqual(blank.parses, 2, text.debugDescription)
        // Streamed in chunks: a whole parse's nodes after each.
        let pieces = "- Step 1\n  - check `value_1`\n  ```sh\n  make step1\n  ```\n- Step 2\n  - a ``b\n  ``\nc`\n`\n\n"
            + "> quoted `x`\n``\n> - item\n  `\n"
        for size in [1, 2, 3, 5] {
            XCTAssertEqual(Self.bytesWhereStreamingDiffersFromAWholeParse(pieces, chunk: size), [], "\(size)")
        }
    }

    func testABlankLineSoFarChangesNoNodeOutsideCodeAndHTMLAndIsNotParsed() {
        // A line ending and blanks after a paragraph's line, then more blanks: as parsed whole, and no parse.
        let cases: [(text: String, delta: String, more: String)] = [
            ("- Step 26", "\n  ", " "), ("The core", " reads\n ", "\t "), ("> a quote", " line\n", "  "),
            ("| a | b |\n|---|---|\n| x | y", " |\n", " "), ("1. one\n   - two", "\n   ", "    "),
        ]
        for (text, delta, more) in cases {
            let cache = MarkdownCache()
            _ = cache.blocks(of: text, prefix: "b")
            let all = text + delta + more
            _ = cache.blocks(of: text + delta, prefix: "b", appendedTo: text.utf8.count)
            // A table's row is parsed at its line's end (its cells are not a paragraph).
            XCTAssertEqual(cache.parses, text.hasPrefix("|") ? 2 : 1, "\((text + delta).debugDescription): parsed or not")
            let parsed = cache.parses
            XCTAssertEqual(cache.blocks(of: all, prefix: "b", appendedTo: (text + delta).utf8.count).nodes,
                           MarkdownNodes.nodes(Markdown.parse(all), prefix: "b"), all)
            XCTAssertEqual(cache.parses, parsed, "\(all.debugDescription): the blanks were not parsed")
            // What comes after the blank line is parsed: a loose item, a paragraph, a code line.
            for next in ["  next", "- item", "\tcode", "   ```"] {
                let after = all + next
                XCTAssertEqual(cache.blocks(of: after, prefix: "b", appendedTo: all.utf8.count).nodes,
                               MarkdownNodes.nodes(Markdown.parse(after), prefix: "b"), after)
                _ = cache.blocks(of: all, prefix: "b")
            }
        }
        // In code and HTML, at any depth, a blank line is text: parsed, but in a fence at the top
        // or in items, whose lines are read as the parser reads them.
        for text in ["```\ncode\n", "- a\n  ```\n  code\n", "<!-- a\n", "> - <pre>\n>   x\n", "    code\n", "> ```\n> code\n"] {
            let cache = MarkdownCache()
            _ = cache.blocks(of: text, prefix: "c")
            let all = text + "   "
            XCTAssertEqual(cache.blocks(of: all, prefix: "c", appendedTo: text.utf8.count).nodes,
                           MarkdownNodes.nodes(Markdown.parse(all), prefix: "c"), all)
            let readHere = text.hasPrefix("```") || text.hasPrefix("- a")
            XCTAssertEqual(cache.parses, readHere ? 1 : 2, "\(text.debugDescription): parsed or not")
        }
        // Streamed byte by byte and by blank runs: a whole parse's nodes after every step.
        let blanks = "Some words\n  \n- item\n  \t\n  more\n\n   \n> quote\n \n```\n  \n```\n<div>\n \n</div>\n| a |\n|---|\n  \n"
        XCTAssertEqual(Self.bytesWhereStreamingDiffersFromAWholeParse(blanks), [])
    }

    func testAMarkThatClosesNothingAndTextAfterAStyledRunGoOnAsTheyAre() {
        // A line too long to be read again alone: only what goes on as it is escapes the parser.
        let long = String(repeating: "word ", count: 205) + "end"
        let table = "| a | b |\n|---|---|\n| x **b**"
        // A run of `*` or `_` after a blank (it closes nothing: text until a
        // closer comes), a blank after a closing run, plain text after a
        // styled run, a link or code; in a table's cell too.
        let asTheyAre: [(text: String, delta: String)] = [
            (long + " and", " *emph"), (long + " and", " **bold wo"), (long + " a", " _snake"), (long + " **bold**", " and more"),
            (long + " `code`", " and more"), (long + " [a link](https://x.io)", " and more"),
            (table, " and | *c"), (table, " __d"),
        ]
        for (text, delta) in asTheyAre {
            let cache = MarkdownCache()
            _ = cache.blocks(of: text, prefix: "k")
            let more = text + delta
            XCTAssertEqual(cache.blocks(of: more, prefix: "k", appendedTo: text.utf8.count).nodes,
                           MarkdownNodes.nodes(Markdown.parse(more), prefix: "k"), delta)
            XCTAssertEqual(cache.parses, 1, "\(delta): the stream did not parse")
        }
        // Parsed: a run that may close, a letter after a closing run (it may
        // open too), a backtick (it may close a code span), a backslash, what
        // follows a run of `~`. (A table's last cell is read again instead:
        // `testADeltaOfMarksIntoATablesLastCellHasThatCellReadAgainAndNotTheTable`.)
        let parsed: [(text: String, delta: String)] = [
            (long + " *emph", "asis* now"), (long + " **bold**", "x"), (long + " a", "_ b"), (long + " `co", "de`"), (long + " ~~gone~~", " and"),
            (long + " a", " \\*"), (table, "c |"),
        ]
        for (text, delta) in parsed {
            let cache = MarkdownCache()
            _ = cache.blocks(of: text, prefix: "k")
            let more = text + delta
            XCTAssertEqual(cache.blocks(of: more, prefix: "k", appendedTo: text.utf8.count).nodes,
                           MarkdownNodes.nodes(Markdown.parse(more), prefix: "k"), delta)
            XCTAssertEqual(cache.parses, 2, "\(delta): parsed")
        }
        // An opener streamed, then its closer: the words between are emphasis.
        let cache = MarkdownCache()
        var text = long + " and"
        _ = cache.blocks(of: text, prefix: "k")
        for delta in [" *em", "phasis", "* here"] {
            let before = text.utf8.count
            text += delta
            _ = cache.blocks(of: text, prefix: "k", appendedTo: before)
        }
        let last = cache.blocks(of: text, prefix: "k", appendedTo: text.utf8.count).nodes.last
        XCTAssertEqual(last?.spans?.suffix(2).map(\.text), ["emphasis", " here"])
        XCTAssertEqual(last?.spans?.suffix(2).map(\.styles), [[.italic], []])
        XCTAssertEqual(last?.value?.hasSuffix("word end and emphasis here"), true)
        XCTAssertEqual(cache.parses, 2, "the opener and the words went on as they are; the closer was parsed")
    }

    func testALineOfAnOpenHTMLBlockGoesOnItAsItIsBlanksAndAll() {
        let text = "<div class=\"reply\">\n<p>Line 1 of the"
        let cache = MarkdownCache()
        _ = cache.blocks(of: text, prefix: "h")
        XCTAssertEqual(cache.tail(for: "h")?.code, true, "the block's text is kept as it is")
        let grown = cache.blocks(of: text + " block  <b>bold</b> ", prefix: "h", appendedTo: text.utf8.count)
        XCTAssertEqual(grown.nodes.first?.value, "<div class=\"reply\">\n<p>Line 1 of the block  <b>bold</b> ")
        // Not on the block's first line: more of it can undo its start ("<del>*foo*" is a paragraph).
        var first = MarkdownStream()
        first.update("<del>", appendedOnly: false)
        XCTAssertFalse(first.endsInOpenHTML)
        // A comment closed on its line: the block is closed, and what follows is parsed.
        var closed = MarkdownStream()
        closed.update("<!-- a\nb -->", appendedOnly: false)
        XCTAssertFalse(closed.endsInOpenHTML)
        XCTAssertNil(MarkdownCache.tail(of: "<!-- a\nb -->", last: MarkdownNodes.nodes(closed.blocks, prefix: "h").last, stream: closed))
        // Streamed byte by byte: a whole parse's nodes after every byte.
        let blocks = [
            "<div>\n  <p>Line  one</p>  \n\n  after the block",
            "<!-- a comment\nstill --> trailing\ntext after",
            "<script>\nlet a = 1;  \n</script>\n*after*",
            "<?php echo 1; ?>\nafter\n<table><tr><td>\ncell</td></tr></table>\n\n- item",
            "<del>*foo*</del>\n\n<del>\n*foo*\n</del>",
        ]
        for html in blocks { XCTAssertEqual(Self.bytesWhereStreamingDiffersFromAWholeParse(html), [], html) }
    }

    /// `text` streamed through a `MarkdownCache` in deltas of `chunk` bytes
    /// (byte by byte by default): the byte counts after
    /// which its nodes differ from those of a whole parse.
    /// `text`, then each of `deltas` appended, through a cache: the nodes after each are a whole parse's.
    /// Each text, then its deltas: as parsed whole after each, parsed only
    /// the first time, and the value of the last item (down to the last
    /// one without children) is `value`.
    private static func assertLastItemsValueWithoutAParse(
        _ cases: [(text: String, deltas: [String], value: String)], prefix: String, file: StaticString = #filePath, line: UInt = #line
    ) {
        for (text, deltas, value) in cases {
            let (cache, all) = streamAsAWholeParse(text, deltas, prefix: prefix, file: file, line: line)
            XCTAssertEqual(cache.parses, 1, "\(all.debugDescription): only the first text was parsed", file: file, line: line)
            var item = cache.nodes(of: all, prefix: prefix).last
            while let node = item, node.role != .listItem || !node.children.isEmpty { item = node.children.last }
            XCTAssertEqual(item?.value, value, all.debugDescription, file: file, line: line)
        }
    }

    /// Each text, then its delta: as parsed whole, and parsed.
    private static func assertParsed(_ cases: [(String, String)], prefix: String, file: StaticString = #filePath, line: UInt = #line) {
        for (text, delta) in cases {
            let cache = MarkdownCache()
            _ = cache.blocks(of: text, prefix: prefix)
            let all = text + delta
            XCTAssertEqual(cache.blocks(of: all, prefix: prefix, appendedTo: text.utf8.count).nodes,
                           MarkdownNodes.nodes(Markdown.parse(all), prefix: prefix), all.debugDescription, file: file, line: line)
            XCTAssertEqual(cache.parses, 2, "\(all.debugDescription): parsed", file: file, line: line)
        }
    }

    private static func streamAsAWholeParse(
        _ text: String, _ deltas: [String], prefix: String, file: StaticString = #filePath, line: UInt = #line
    ) -> (cache: MarkdownCache, all: String) {
        let cache = MarkdownCache()
        var all = text
        _ = cache.blocks(of: all, prefix: prefix)
        for delta in deltas {
            let old = all.utf8.count
            all += delta
            XCTAssertEqual(cache.blocks(of: all, prefix: prefix, appendedTo: old).nodes,
                           MarkdownNodes.nodes(Markdown.parse(all), prefix: prefix), all.debugDescription, file: file, line: line)
        }
        return (cache, all)
    }

    private static func bytesWhereStreamingDiffersFromAWholeParse(_ text: String, chunk: Int = 1) -> [Int] {
        let bytes = Array(text.utf8)
        let cache = MarkdownCache()
        var failures: [Int] = []
        var n = 0
        while n < bytes.count {
            let old = n
            n = min(bytes.count, n + chunk)
            let prefix = String(decoding: bytes[..<n], as: UTF8.self)
            if cache.blocks(of: prefix, prefix: "s", appendedTo: old > 0 ? old : nil).nodes
                != MarkdownNodes.nodes(Markdown.parse(prefix), prefix: "s") { failures.append(n) }
        }
        return failures
    }

    func testAFencedCodeBlockHasItsLanguageItsCodeAndACopyButton() {
        let app = replying()
        delta(app, "Run:\n\n```sh\nmake test\nmake bench\n```\n")
        let code = app.tree().find("message.m2.md.1")
        XCTAssertEqual(code?.role, .codeBlock)
        XCTAssertEqual(code?.language, "sh")
        XCTAssertEqual(code?.value, "make test\nmake bench")
        XCTAssertNil(code?.variant, "closed")
        XCTAssertEqual(code?.supportedActions, ["copy"])
        XCTAssertEqual(code?.children.map(\.id), ["message.m2.md.1.copy"])
        XCTAssertEqual(code?.children.first?.supportedActions, ["tap"])
    }

    func testATableIsRowsOfCellsWithTheHeaderRowAndAlignmentsMarked() {
        let app = replying()
        delta(app, "| name | runs |\n|:--|--:|\n| core | 12 |\n")
        let table = app.tree().find("message.m2.md.0")
        XCTAssertEqual(table?.role, .table)
        XCTAssertEqual(table?.children.map(\.variant), ["header", nil])
        XCTAssertEqual(table?.children.map { $0.children.map(\.value) }, [["name", "runs"], ["core", "12"]])
        XCTAssertEqual(table?.children.last?.children.map(\.variant), ["left", "right"])
    }

    func testAUsersMessageIsPlainTextNotMarkdown() {
        let app = app()
        act(app, #"{"type":"send_message","text":"why is **this** failing?"}"#)
        let message = app.tree().find("message.m1")
        XCTAssertEqual(message?.value, "why is **this** failing?")
        XCTAssertEqual(message?.children.map(\.id), [])
    }

    // MARK: - Streaming

    func testAnUnclosedFenceStreamsAsAnOpenCodeBlockUntilItCloses() {
        let app = replying()
        delta(app, "```swift\nlet a = 1\n")
        XCTAssertEqual(app.tree().find("message.m2.md.0")?.variant, "open")
        XCTAssertEqual(app.tree().find("message.m2.md.0")?.value, "let a = 1")
        delta(app, "let b = 2\n```\n")
        XCTAssertNil(app.tree().find("message.m2.md.0")?.variant)
        XCTAssertEqual(app.tree().find("message.m2.md.0")?.value, "let a = 1\nlet b = 2")
    }

    func testADeltaChangesOnlyTheOpenBlockAndClosedBlocksKeepTheirIds() {
        let app = replying()
        delta(app, "# Title\n\nFirst paragraph.\n\nSecond")
        let revision = app.state.revision
        _ = app.tree()
        delta(app, " paragraph grows")
        guard case .changes(_, let ops)? = app.treeChanges(since: revision) else { return XCTFail("changes expected") }
        let touched = Set(ops.map { op -> String in
            switch op {
            case .append(let id, _, _), .update(let id, _, _), .move(let id, _, _), .spans(let id, _, _): return id
            case .splice(let parent, _, _, _): return parent
            }
        })
        XCTAssertFalse(touched.contains("message.m2.md.0"))
        XCTAssertFalse(touched.contains("message.m2.md.1"))
        XCTAssertTrue(touched.contains("message.m2.md.2"))
        XCTAssertEqual(app.tree().find("message.m2.md.2")?.value, "Second paragraph grows")
    }

    /// The tree built as a reply streams (parsed on from where it was)
    /// equals the tree built from scratch, after every delta of every size.
    func testTheStreamedTreeEqualsATreeBuiltFromScratchAfterEveryDelta() {
        let replies = [
            ScenarioScript.markdownReply.joined(),
            // Words that turn the line into a block, a link, an entity, a break, a closed fence.
            "Some words here\n# then a heading\nand words  \nthen www.example.com and http://a.b/c and a@b.co done",
            "para one  \n  indented lazy\n1. item\n   more\n\n```\ncode line one\n  indented code\n~~~ not a close\n```\ntail &amp words &copy",
            "[a] (b) and [a](http://x.y) then `code` then *em* and **strong** words   \n\n\tcode by indent\nend",
            "Text\n===\nMore text\n---\nLast words with trailing blanks   ",
            "| a | b |\n|---|---|\n| c | d |\nplain after table",
            // Lists and tables grow item by item, row by row; words go into the last item in place.
            "- item one\n- item two words\n  more lazy words\n- [ ] task words\n- [x] done words\n1. first step\n2. second step words\n10) other\n\n- a\n\n- loose item words",
            "- a\n  - nested words\n- b words\n* star words\n+ plus\n- 1.5 million words\n- www.x.y done\n- [ ]\n- [x]done\n-  spaced words",
            "| a | b |\n|---|---|\n| c | d |\n| e | f words\n| g | h |\n| i |\nafter the table",
            "| a | b | c |\n|:-|:-:|-:|\n| one | two words | three words\n| x \\| y | z words\nw | v words\n| 1 | 2 | 3 | 4 extra words\n|\n| q",
            // A paragraph's line of `-|` goes on to be a delimiter row: the lines before it a table's header.
            "| a |Int|\n-|-:| more\n| b | 2 |\n\nwords\n-|-\n--:|:-\n",
            // Items read on from their last block; blank lines so far, after a paragraph and alone.
            "- Step 1\n  - check `value_1`\n  ```sh\n  make step1\n  ```\n- Step 2\n  - check\n  \n  para  \n   \t\n  more\n- Step 3\n\n  ```\n  \n  code\n",
            // HTML blocks grow line by line; a blank line or their end condition closes them.
            "Intro\n\n<div class=\"x\">\n<p>one *a*</p>\n<p>two</p>\n\nafter words\n<!-- c\n\nmore -->\n<details>\n<summary>s</summary>\nend",
        ]
        for (n, reply) in replies.enumerated() {
            for size in [1, 2, 3, 7, 16, 64] {
                streamAndCompare(reply, chunk: size, label: "reply \(n)")
            }
        }
    }

    /// Every example of the CommonMark and GFM specs (../shared/commonmark), streamed into
    /// a reply as `text_delta`s of 1, 3 and 17 bytes (whole characters): the reply's row
    /// (patched in place as deltas come, debug builds checking each patch) equals the row
    /// built from scratch, and after every delta its blocks are those of a whole parse of the text so far.
    func testEverySpecExampleStreamedAsTextDeltasEqualsItsWholeParse() throws {
        guard let commonMark = SpecExamples.examples("commonmark-0.31.2.json"),
              let gfm = SpecExamples.examples("gfm-0.29-spec.json") else {
            throw XCTSkip("the spec examples are not in ../shared/commonmark")
        }
        func unplaced(_ node: SemanticNode) -> SemanticNode {
            var node = node
            node.bounds = SemanticNode.Bounds()
            node.children = node.children.map(unplaced)
            return node
        }
        var failures: [String] = []
        for (suite, examples) in [("commonmark", commonMark), ("gfm", gfm)] {
            for example in examples {
                let scalars = Array(example.markdown.unicodeScalars)
                for size in [1, 3, 17] {
                    let app = replying()
                    var index = 0
                    var sent = ""
                    var failed = false
                    while index < scalars.count {
                        var piece = ""
                        while index < scalars.count && piece.utf8.count < size {
                            piece.unicodeScalars.append(scalars[index])
                            index += 1
                        }
                        delta(app, piece)
                        sent += piece
                        let blocks = (app.tree().find("message.m2")?.children.filter(\.role.isMarkdownBlock) ?? []).map(unplaced)
                        if !failed && blocks != MarkdownNodes.nodes(Markdown.parse(sent), prefix: "message.m2.md") {
                            failures.append("\(suite) \(example.number) chunks of \(size) after \(sent.debugDescription)")
                            failed = true
                        }
                    }
                    if app.tree().find("message.m2") != SemanticTree.build(app.state).find("message.m2") {
                        failures.append("\(suite) \(example.number) chunks of \(size): the row is not the one built from scratch")
                    }
                }
            }
        }
        XCTAssertEqual(failures, [])
    }

    private func streamAndCompare(_ reply: String, chunk size: Int, label: String) {
        do {
            let app = replying()
            var rest = Substring(reply)
            while !rest.isEmpty {
                delta(app, String(rest.prefix(size)))
                rest = rest.dropFirst(size)
                let streamed = app.tree()
                let fresh = SemanticTree.build(app.state)
                XCTAssertEqual(
                    streamed.find("message.m2"), fresh.find("message.m2"), "\(label), chunks of \(size), at \(reply.count - rest.count)")
            }
        }
    }

    // MARK: - Copy

    func testCopyingACodeBlockAsksTheHostToPutItsCodeOnTheClipboard() {
        let app = replying()
        delta(app, "```\nswift test\n```\n")
        let report = act(app, #"{"type":"tap_node","node_id":"message.m2.md.0.copy"}"#)
        XCTAssertEqual(report["effects"]?.arrayValue?.map { $0["type"] }, ["copy_to_clipboard"])
        XCTAssertEqual(report["effects"]?.arrayValue?.first?["text"], "swift test")
    }

    func testCopyingAMessageCopiesItsTextAsWritten() {
        let app = replying()
        delta(app, "Use **`make`**.")
        let report = act(app, #"{"type":"copy","node_id":"message.m2"}"#)
        XCTAssertEqual(report["effects"]?.arrayValue?.first?["text"], "Use **`make`**.")
    }

    func testCopyingANodeThatOffersNoCopyIsANoteAndNoEffect() {
        let app = replying()
        delta(app, "Plain.")
        let report = act(app, #"{"type":"copy","node_id":"message.m2.md.0"}"#)
        XCTAssertEqual(report["effects"], [])
        let unknown = act(app, #"{"type":"copy","node_id":"message.m99"}"#)
        XCTAssertEqual(unknown["effects"], [])
        let notes = json(app.logsJSON(limit: 1).string)["entries"]?.arrayValue?.first?["notes"]
        XCTAssertEqual(notes, [#"copy: no node "message.m99" with copy on this screen"#])
    }

    func testCopyWithoutANodeIdIsRefusedWithAStableCode() {
        let app = app()
        let report = json(app.dispatch(json: #"{"type":"copy"}"#).string)
        XCTAssertEqual(report["error"]?["code"], "invalid_field")
        XCTAssertEqual(report["error"]?["field"], "node_id")
        let wrong = json(app.dispatch(json: #"{"type":"set_expanded","node_id":"x","expanded":"yes"}"#).string)
        XCTAssertEqual(wrong["error"]?["code"], "invalid_field")
    }

    // MARK: - Reasoning

    func testReasoningShowsOpenWhileItStreamsAndClosedOnceTheModelAnswers() {
        let app = replying()
        server(app, #"{"type":"reasoning_delta","text":"Check the build first."}"#)
        var reasoning = app.tree().find("message.m2.reasoning")
        XCTAssertEqual(reasoning?.role, .reasoning)
        XCTAssertEqual(reasoning?.label, "Thinking…")
        XCTAssertEqual(reasoning?.expanded, true)
        XCTAssertEqual(reasoning?.value, "Check the build first.")
        server(app, #"{"type":"reasoning_done","duration_secs":2.5}"#)
        reasoning = app.tree().find("message.m2.reasoning")
        XCTAssertEqual(reasoning?.label, "Thought for 2.5 s")
        XCTAssertEqual(reasoning?.expanded, false)
        XCTAssertNil(reasoning?.value)
        act(app, #"{"type":"tap_node","node_id":"message.m2.reasoning"}"#)
        reasoning = app.tree().find("message.m2.reasoning")
        XCTAssertEqual(reasoning?.expanded, true)
        XCTAssertEqual(reasoning?.value, "Check the build first.")
        XCTAssertEqual(json(app.stateJSON().string)["state"]?["expanded_nodes"], [["node_id": "message.m2.reasoning", "expanded": true]])
    }

    func testAHistoryRowsReasoningIsSplitFromItsAnswerAndShownBeforeIt() {
        let app = app()
        // jcode writes persisted reasoning as dim italic lines (U+2063 inside
        // the asterisks, markdown characters escaped, a hard break), a blank
        // line, then the answer.
        let content = "*\u{2063}Look at \\*args\u{2063}*  \n\n*\u{2063}then reply\u{2063}*  \n\nThe answer."
        server(app, #"{"type":"history","id":2,"session_id":"s","messages":[{"role":"assistant","content":\#(JSONValue.string(content).jsonString)}]}"#)
        let entry = app.state.chat.transcript.entries.first
        XCTAssertEqual(entry?.reasoning, "Look at *args\n\nthen reply")
        XCTAssertEqual(entry?.text, "The answer.")
        let message = app.tree().find("message.m1")
        XCTAssertEqual(message?.children.map(\.id), ["message.m1.reasoning", "message.m1.md.0"])
        XCTAssertEqual(message?.find("message.m1.reasoning")?.label, "Thought")
    }

    func testHistoryContentThatMerelyStartsWithEmphasisIsTheAnswer() {
        XCTAssertEqual(HistoryReasoning.split("*Note*: read this.").reasoning, "")
        XCTAssertEqual(HistoryReasoning.split("*Note*: read this.").text, "*Note*: read this.")
        XCTAssertEqual(HistoryReasoning.split("").text, "")
    }

    // MARK: - Expanding

    func testOnlyTheLatest256ExpansionsAreKept() {
        let app = app()
        for k in 0..<300 { act(app, #"{"type":"set_expanded","node_id":"tool.m1.c\#(k)","expanded":true}"#) }
        let kept = json(app.stateJSON().string)["state"]?["expanded_nodes"]?.arrayValue
        XCTAssertEqual(kept?.count, 256)
        XCTAssertEqual(kept?.first?["node_id"], "tool.m1.c44")
        XCTAssertEqual(kept?.last?["node_id"], "tool.m1.c299")
    }

    // MARK: - Buttons

    func testDenyLooksDestructiveApproveLooksPrimaryAndAlwaysAllowSecondary() {
        let tree = SemanticTree.build(Scenario.toolApprovalRequired.state())
        XCTAssertEqual(tree.find("permission.perm-1.approve")?.variant, "primary")
        XCTAssertEqual(tree.find("permission.perm-1.deny")?.variant, "destructive")
        XCTAssertEqual(tree.find("permission.perm-1.always")?.variant, "secondary")
        XCTAssertEqual(tree.find("chat.interrupt")?.variant, "destructive")
        XCTAssertEqual(tree.find("nav.settings")?.variant, "secondary")
    }
}

/// What an agent writes (lists, tasks, quotes, code, tables, marks and links),
/// made at random and streamed in deltas of 1 to 8 bytes through the cache:
/// its nodes equal a whole parse's after every delta, whichever way each
/// delta went (appended as it is, its line read again, or parsed).
final class MarkdownCacheRandomStreamTests: XCTestCase {
    static let starts = ["", "", "", "- ", "* ", "1. ", "2) ", "> ", "> - ", "  ", "   - ", "    ", "- [ ] ", "- [x] ", "> 1. ",
                         "# ", "## ", "```", "~~~", "| ", "<div>", "[a]: /u ", "---", "===", "> > "]
    static let pieces = ["alpha", "beta", "gamma", "`code`", "`", "*", "**", "_", "__", "~~", "[link](http://x.y)", "[a]", "[",
                         "]", "(", ")", "http://ex.com", "www.ex.com", "a@b.co", "&amp;", "&", "\\", "\\*", "<b>", "!", ":", ".",
                         " ", " ", " ", "  ", "\t", "|", "snake_case", "é", "x*y*z"]
    static let ends = ["\n", "\n", "\n", "\n\n", "\r\n", ""]

    static func document(_ random: inout SplitMix) -> String {
        var text = ""
        for _ in 0 ..< 4 + random.next(upTo: 10) {
            text += starts[random.next(upTo: starts.count)]
            for _ in 0 ..< 1 + random.next(upTo: 8) { text += pieces[random.next(upTo: pieces.count)] }
            text += ends[random.next(upTo: ends.count)]
        }
        return text
    }

    /// The first delta (byte offset) after which the cache's nodes differ from a whole parse, nil when none does.
    static func firstDifference(_ text: String, sizes: [Int]) -> Int? {
        let bytes = Array(text.utf8)
        let cache = MarkdownCache()
        var end = 0
        var k = 0
        var previous: Int?
        while end < bytes.count {
            end = min(bytes.count, end + sizes[k % sizes.count])
            k += 1
            while end < bytes.count && bytes[end] & 0xC0 == 0x80 { end += 1 }
            let prefix = String(decoding: bytes[..<end], as: UTF8.self)
            if cache.blocks(of: prefix, prefix: "g", appendedTo: previous).nodes != MarkdownNodes.nodes(Markdown.parse(prefix), prefix: "g") {
                return end
            }
            previous = end
        }
        return nil
    }

    func testRandomRepliesStreamedAtTokenSizeEqualAWholeParseAfterEveryDelta() {
        var random = SplitMix(seed: 36)
        var differing: [String] = []
        for _ in 0 ..< 300 {
            let text = Self.document(&random)
            let sizes = (0 ..< 8).map { _ in 1 + random.next(upTo: 8) }
            if let at = Self.firstDifference(text, sizes: sizes) { differing.append("\(text.debugDescription) at \(at), deltas \(sizes)") }
        }
        XCTAssertEqual(differing, [])
    }

    /// Lines longer than `MarkdownCache.longestLineReadAgain` (a paragraph's,
    /// a table row's) full of runs of `*`, `_` and `~`, backticks and
    /// backslashes: what the cache lets go on as it is there (a run after a
    /// blank, a blank after a run, text after a styled run) meets only the
    /// parser, never a line read again.
    func testLongLinesOfMarksStreamedAtTokenSizeEqualAWholeParseAfterEveryDelta() {
        var random = SplitMix(seed: 36)
        let tokens = ["word", "more", " ", " ", " ", "\t", "*", "**", "***", "_", "__", "`", "``", "~~", "\\", ".", ",", "é",
                      "snake_case", "a*b", "(", ")", "x_", "_x", "*x", "x*"]
        var differing: [String] = []
        for _ in 0 ..< 30 {
            let table = random.next(upTo: 3) == 0
            var text = table ? "| a | b |\n|---|---|\n| " : ""
            var line = 0
            while line < 1100 {
                let token = tokens[random.next(upTo: tokens.count)]
                text += token
                line += token.utf8.count
                if table && random.next(upTo: 30) == 0 { text += " | " }
            }
            let sizes = (0 ..< 8).map { _ in 1 + random.next(upTo: 8) }
            if let at = Self.firstDifference(text, sizes: sizes) { differing.append("\(text.debugDescription) at \(at), deltas \(sizes)") }
        }
        XCTAssertEqual(differing, [])
    }
}

/// The reply the markdown fuzzer found whose open tail, parsed on its own,
/// differed from a whole parse: streamed, it equals a whole parse after
/// every chunk.
final class MarkdownStreamRegressionTests: XCTestCase {
    func testTheFuzzersTableAndListReplyStreamsAsAWholeParse() {
        let base64 = "fCBhIHx8ICBiCnw6LS18LdHFfGQKICAgIHygYSB8IGIgfAp8Oi0tfC0tOnwKfCAxIFx8IHggfCBgMmAgfAoKLSBbeF0gZD4gcQoKLS3Tb25lCi0gW/WIgXfTmoeebXBsl9EibG9hZF9zY2VuYSBdIHRvZG8KICAtIG5lc3RlZAogICBy"
        let bytes = decodeBase64(base64)
        var stream = MarkdownStream()
        var end = 0
        while end < bytes.count {
            end = min(bytes.count, end + 61)
            while end < bytes.count && bytes[end] & 0xC0 == 0x80 { end += 1 }
            let prefix = String(decoding: bytes[0..<end], as: UTF8.self)
            stream.update(prefix, appendedOnly: true)
            XCTAssertEqual(stream.blocks, Markdown.parse(prefix), "after \(end) bytes")
        }
    }

    private func decodeBase64(_ text: String) -> [UInt8] {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var value: [UInt8: UInt32] = [:]
        for (k, c) in alphabet.enumerated() { value[c] = UInt32(k) }
        var out: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for c in text.utf8 {
            guard let v = value[c] else { continue }
            buffer = buffer << 6 | v
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8((buffer >> UInt32(bits)) & 0xFF))
            }
        }
        return out
    }
}
