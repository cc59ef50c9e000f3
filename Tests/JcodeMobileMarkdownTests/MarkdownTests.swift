// Test vectors for the markdown parser, written by hand for each section of
// CommonMark 0.31 and of GFM's extensions (our own small inputs, not the
// spec's examples), plus streaming and hostile-input checks.
//
// Sections that pass fully (every behaviour the section describes that we
// tried): thematic breaks, ATX headings, setext headings, indented code,
// fenced code, paragraphs, blank lines, block quotes, list items, lists,
// backslash escapes, code spans, emphasis, links, images, autolinks, hard and
// soft breaks, tables, task lists, strikethrough.
// Partial: HTML blocks and inline HTML (kept as literal text), entities (a
// table of common names; all numeric ones). The spec's own examples run in
// CommonMarkSpecTests.swift.

import XCTest
@testable import JcodeMobileMarkdown
import JcodeMobileTestSupport

// MARK: - Expected values, by hand

private typealias Vector = (input: String, expected: [MarkdownBlock])

private func p(_ text: String, _ spans: [MarkdownSpan] = []) -> MarkdownBlock {
    MarkdownBlock(kind: .paragraph, text: text, spans: MarkdownSpans(spans))
}
private func h(_ level: Int, _ text: String, _ spans: [MarkdownSpan] = []) -> MarkdownBlock {
    MarkdownBlock(kind: .heading(level: level), text: text, spans: MarkdownSpans(spans))
}
private func code(_ text: String, _ language: String? = nil, open: Bool = false) -> MarkdownBlock {
    MarkdownBlock(kind: .codeBlock(language: language, open: open), text: text)
}
private func ul(tight: Bool = true, _ items: MarkdownBlock...) -> MarkdownBlock {
    MarkdownBlock(kind: .list(ordered: false, start: 1, tight: tight), children: items)
}
private func ol(start: Int = 1, tight: Bool = true, _ items: MarkdownBlock...) -> MarkdownBlock {
    MarkdownBlock(kind: .list(ordered: true, start: start, tight: tight), children: items)
}
private func li(_ children: MarkdownBlock..., checked: Bool? = nil) -> MarkdownBlock {
    MarkdownBlock(kind: .listItem(checked: checked), children: children)
}
private func quote(_ children: MarkdownBlock...) -> MarkdownBlock {
    MarkdownBlock(kind: .quote, children: children)
}
private func html(_ text: String) -> MarkdownBlock { MarkdownBlock(kind: .html, text: text) }
private let hr = MarkdownBlock(kind: .thematicBreak)
private func s(_ text: String, _ styles: MarkdownStyle = [], _ url: String? = nil) -> MarkdownSpan {
    MarkdownSpan(text: text, styles: styles, url: url)
}
private func table(_ alignments: [MarkdownAlignment], _ rows: [[String]]) -> MarkdownBlock {
    MarkdownBlock(kind: .table(alignments: alignments), children: rows.enumerated().map { index, cells in
        MarkdownBlock(kind: .tableRow(header: index == 0), children: cells.enumerated().map { column, text in
            MarkdownBlock(kind: .tableCell(alignment: alignments[column]), text: text)
        })
    })
}

/// A short form of blocks for failure messages.
private func brief(_ blocks: [MarkdownBlock]) -> String {
    blocks.map { block in
        let spans = block.spans.map { "\($0.text.debugDescription)/\($0.styles.rawValue)\($0.url.map { "@" + $0 } ?? "")" }
        let text = block.text.isEmpty ? "" : " " + block.text.debugDescription
        let runs = spans.isEmpty ? "" : " " + spans.joined(separator: ",")
        let children = block.children.isEmpty ? "" : " [" + brief(block.children) + "]"
        return "\(block.kind)\(text)\(runs)\(children)"
    }.joined(separator: "; ")
}

private func check(_ vectors: [Vector], file: StaticString = #filePath, line: UInt = #line) {
    for vector in vectors {
        let got = Markdown.parse(vector.input)
        if got != vector.expected {
            XCTFail("input: \(vector.input.debugDescription)\n got: \(brief(got))\nwant: \(brief(vector.expected))", file: file, line: line)
        }
    }
}

// MARK: - Vectors by section

private let tabs: [Vector] = [
    ("\tcode", [code("code")]),
    ("  \tcode\tx", [code("code\tx")]),
    ("-\titem", [ul(li(p("item")))]),
    (">\t\tcode", [quote(code("  code"))]),
    ("*\t*\t*", [hr]),
]

private let thematicBreaks: [Vector] = [
    ("***\n---\n___", [hr, hr, hr]),
    (" - - -", [hr]),
    ("+++", [p("+++")]),
    ("**", [p("**")]),
    ("    ***", [code("***")]),
    ("a\n***\nb", [p("a"), hr, p("b")]),
    ("_ _ _ x", [p("_ _ _ x")]),
    ("- a\n***", [ul(li(p("a"))), hr]),
]

private let atxHeadings: [Vector] = [
    ("# one\n###### six", [h(1, "one"), h(6, "six")]),
    ("####### seven", [p("####### seven")]),
    ("#tag", [p("#tag")]),
    ("## closed ##", [h(2, "closed")]),
    ("# keep#", [h(1, "keep#")]),
    ("#", [h(1, "")]),
    ("# *em*", [h(1, "em", [s("em", .italic)])]),
    ("para\n# head", [p("para"), h(1, "head")]),
    ("   # three spaces", [h(1, "three spaces")]),
    ("\\# not", [p("# not")]),
]

private let setextHeadings: [Vector] = [
    ("Title\n=====", [h(1, "Title")]),
    ("Sub\n---", [h(2, "Sub")]),
    ("two\nlines\n===", [h(1, "two\nlines")]),
    ("> q\n---", [quote(p("q")), hr]),
    ("a\n= =", [p("a\n= =")]),
    ("---\n---", [hr, hr]),
    ("\n===", [p("===")]),
]

private let indentedCode: [Vector] = [
    ("    a\n      b", [code("a\n  b")]),
    ("    a\n\n    b\n\n", [code("a\n\nb")]),
    ("para\n    not code", [p("para\nnot code")]),
    ("    code\npara", [code("code"), p("para")]),
    ("- item\n\n      code", [ul(tight: false, li(p("item"), code("code")))]),
]

private let fencedCode: [Vector] = [
    ("```\nx\n```", [code("x")]),
    ("~~~ swift extra\nlet a = 1\n~~~", [code("let a = 1", "swift")]),
    ("````\n```\n````", [code("```")]),
    ("```\nnever closed", [code("never closed", open: true)]),
    ("``` a`b\n```", [p("``` a`b"), code("", open: true)]),
    ("``` a`b\nc ```", [p("a`b c", [s("a`b c", .code)])]),
    ("  ```\n  x\n   y\n ```", [code("x\n y")]),
    ("```\n\n```", [code("")]),
    ("```\n```", [code("")]),
    ("> ```\n> a\nb", [quote(code("a")), p("b")]),
    ("~~~\n```\n~~~", [code("```")]),
    ("```js\n```x", [code("```x", "js", open: true)]),
]

private let htmlBlocks: [Vector] = [
    ("<div>\n*x*\n</div>", [html("<div>\n*x*\n</div>")]),
    ("<div>\n\n*x*", [html("<div>"), p("x", [s("x", .italic)])]),
    ("<!-- c\n-->\nafter", [html("<!-- c\n-->"), p("after")]),
    ("<script>\n\nlet a\n</script>\nb", [html("<script>\n\nlet a\n</script>"), p("b")]),
    ("<custom-tag a=\"1\">\n", [html("<custom-tag a=\"1\">")]),
    ("text\n<custom>\n", [p("text\n<custom>")]),
]

private let linkReferenceDefinitions: [Vector] = [
    ("[a]: /url \"T\"\n\n[a]", [p("a", [s("a", .link, "/url")])]),
    ("[A b]:\n  <my url>\n[a  B]", [p("a  B", [s("a  B", .link, "my url")])]),
    ("[x]\n\n[x]: /later", [p("x", [s("x", .link, "/later")])]),
    ("[x]: /one\n[x]: /two\n\n[x]", [p("x", [s("x", .link, "/one")])]),
    ("[x]: /u 'title' junk\n", [p("[x]: /u 'title' junk")]),
    ("[y]: /only\n", []),
    ("[z]: /u\nTitle\n===", [h(1, "Title")]),
    ("[z]: /u\n---\n[z]", [hr, p("z", [s("z", .link, "/u")])]),
    ("[z]: /u\n===\n", [p("===")]),
]

private let paragraphs: [Vector] = [
    ("a\nb\n\nc", [p("a\nb"), p("c")]),
    ("   lead\n trail   ", [p("lead\ntrail")]),
    ("a\n\n\n\nb", [p("a"), p("b")]),
]

private let blankLines: [Vector] = [
    ("\n\n  \na\n  \n", [p("a")]),
    ("", []),
]

private let blockQuotes: [Vector] = [
    ("> a\n> b", [quote(p("a\nb"))]),
    ("> a\nlazy", [quote(p("a\nlazy"))]),
    (">> nested", [quote(quote(p("nested")))]),
    ("> a\n\n> b", [quote(p("a")), quote(p("b"))]),
    ("> # h\n> - i", [quote(h(1, "h"), ul(li(p("i"))))]),
    (">", [quote()]),
    ("> a\n---", [quote(p("a")), hr]),
]

private let listItems: [Vector] = [
    ("- a\n\n  b", [ul(tight: false, li(p("a"), p("b")))]),
    ("- a\n\n b", [ul(li(p("a"))), p("b")]),
    ("1.  x\n    y", [ol(li(p("x\ny")))]),
    ("-     code", [ul(li(code("code")))]),
    ("-\n  foo", [ul(li(p("foo")))]),
    ("-\n\n  foo", [ul(li()), p("foo")]),
    ("- a\n  - b\n    - c", [ul(li(p("a"), ul(li(p("b"), ul(li(p("c")))))))]),
    ("10) ten", [ol(start: 10, li(p("ten")))]),
    ("1234567890. no", [p("1234567890. no")]),
    ("- lazy\ncontinued", [ul(li(p("lazy\ncontinued")))]),
]

private let lists: [Vector] = [
    ("- a\n- b", [ul(li(p("a")), li(p("b")))]),
    ("- a\n\n- b", [ul(tight: false, li(p("a")), li(p("b")))]),
    ("- a\n+ b", [ul(li(p("a"))), ul(li(p("b")))]),
    ("1. a\n2) b", [ol(li(p("a"))), ol(start: 2, li(p("b")))]),
    ("para\n2. no", [p("para\n2. no")]),
    ("para\n1. yes", [p("para"), ol(li(p("yes")))]),
    ("para\n-", [h(2, "para")]),
    ("- a\n  - b\n\n- c", [ul(tight: false, li(p("a"), ul(li(p("b")))), li(p("c")))]),
    ("3. c\n4. d", [ol(start: 3, li(p("c")), li(p("d")))]),
]

private let backslashEscapes: [Vector] = [
    ("\\*not em\\*", [p("*not em*")]),
    ("\\a \\\\", [p("\\a \\")]),
    ("`\\*`", [p("\\*", [s("\\*", .code)])]),
    ("[a](/u\\)x)", [p("a", [s("a", .link, "/u)x")])]),
]

private let entities: [Vector] = [
    ("&amp; &lt; &gt; &quot; &copy;", [p("& < > \" ©")]),
    ("&#65;&#x1F600;&#0;", [p("A😀\u{FFFD}")]),
    ("&nbsp;x", [p("\u{A0}x")]),
    ("&unknown; &#xZZ;", [p("&unknown; &#xZZ;")]),
    ("`&amp;`", [p("&amp;", [s("&amp;", .code)])]),
]

private let codeSpans: [Vector] = [
    ("`a`", [p("a", [s("a", .code)])]),
    ("`` a`b ``", [p("a`b", [s("a`b", .code)])]),
    ("` `` `", [p("``", [s("``", .code)])]),
    ("`  `", [p("  ", [s("  ", .code)])]),
    ("`a\nb`", [p("a b", [s("a b", .code)])]),
    ("```a``", [p("```a``")]),
    ("`*a*`", [p("*a*", [s("*a*", .code)])]),
    ("*a `*` b*", [p("a * b", [s("a ", .italic), s("*", [.italic, .code]), s(" b", .italic)])]),
]

private let emphasis: [Vector] = [
    ("*a* _b_", [p("a b", [s("a", .italic), s(" "), s("b", .italic)])]),
    ("**a** __b__", [p("a b", [s("a", .bold), s(" "), s("b", .bold)])]),
    ("***a***", [p("a", [s("a", [.bold, .italic])])]),
    ("a * b *", [p("a * b *")]),
    ("snake_case_name", [p("snake_case_name")]),
    ("in*word*em", [p("inwordem", [s("in"), s("word", .italic), s("em")])]),
    ("*a **b** c*", [p("a b c", [s("a ", .italic), s("b", [.bold, .italic]), s(" c", .italic)])]),
    ("*foo**bar**baz*", [p("foobarbaz", [s("foo", .italic), s("bar", [.italic, .bold]), s("baz", .italic)])]),
    ("**a*", [p("*a", [s("*"), s("a", .italic)])]),
    ("*a**", [p("a*", [s("a", .italic), s("*")])]),
    ("_a*", [p("_a*")]),
    ("foo**bar*", [p("foo**bar*")]),
    ("*(*foo*)*", [p("(foo)", [s("(foo)", .italic)])]),
    ("__a, __b__, c__", [p("a, b, c", [s("a, b, c", .bold)])]),
    ("*foo*bar", [p("foobar", [s("foo", .italic), s("bar")])]),
    ("_foo_bar", [p("_foo_bar")]),
    ("**foo**bar", [p("foobar", [s("foo", .bold), s("bar")])]),
]

private let links: [Vector] = [
    ("[a](/u)", [p("a", [s("a", .link, "/u")])]),
    ("[a](</my u> \"t\")", [p("a", [s("a", .link, "/my u")])]),
    ("[a]()", [p("a", [s("a", .link, "")])]),
    ("[a](b c)", [p("[a](b c)")]),
    ("[*e*](/u)", [p("e", [s("e", [.link, .italic], "/u")])]),
    ("[a [b](/in)](/out)", [p("[a b](/out)", [s("[a "), s("b", .link, "/in"), s("](/out)")])]),
    ("[a](/u(x))", [p("a", [s("a", .link, "/u(x)")])]),
    ("[x][r] [r][] [r]\n\n[r]: /d", [p("x r r", [s("x", .link, "/d"), s(" "), s("r", .link, "/d"), s(" "), s("r", .link, "/d")])]),
    ("[x][missing]", [p("[x][missing]")]),
    ("*[a*](/u)", [p("*a*", [s("*"), s("a*", .link, "/u")])]),
    ("[a](/u 'ti\"tle')", [p("a", [s("a", .link, "/u")])]),
    ("[a](/&amp;b)", [p("a", [s("a", .link, "/&b")])]),
    ("[a]\n(/u)", [p("[a]\n(/u)")]),
]

private let images: [Vector] = [
    ("![alt](/i.png)", [p("alt", [MarkdownSpan(text: "alt", styles: .image, source: "/i.png")])]),
    ("![a *b*](/i)", [p("a b", [MarkdownSpan(text: "a b", styles: .image, source: "/i")])]),
    ("[![x](/i)](/l)", [p("x", [MarkdownSpan(text: "x", styles: [.link, .image], url: "/l", source: "/i")])]),
    ("! [a](/u)", [p("! a", [s("! "), s("a", .link, "/u")])]),
]

private let autolinks: [Vector] = [
    ("<https://x.org/a?b>", [p("https://x.org/a?b", [s("https://x.org/a?b", .link, "https://x.org/a?b")])]),
    ("<me@x.org>", [p("me@x.org", [s("me@x.org", .link, "mailto:me@x.org")])]),
    ("x <not a link>", [p("x <not a link>")]),
    ("<a+b:c>", [p("a+b:c", [s("a+b:c", .link, "a+b:c")])]),
    ("<b>bold</b>", [p("<b>bold</b>")]),
    ("x <http://a.b/c d>", [p("x <http://a.b/c d>")]),
]

private let breaks: [Vector] = [
    ("a  \nb", [p("a\nb", [s("a"), s("\n", .lineBreak), s("b")])]),
    ("a\\\nb", [p("a\nb", [s("a"), s("\n", .lineBreak), s("b")])]),
    ("a \nb", [p("a\nb")]),
    ("a\n   b", [p("a\nb")]),
    ("a  ", [p("a")]),
    ("`a  \nb`", [p("a   b", [s("a   b", .code)])]),
]

private let tables: [Vector] = [
    ("| a | b |\n| - | :-: |\n| 1 | 2 |", [table([.none, .center], [["a", "b"], ["1", "2"]])]),
    ("a | b\n:-- | --:\nc", [table([.left, .right], [["a", "b"], ["c", ""]])]),
    ("| x |\n|---|\n| a \\| b | extra |", [table([.none], [["x"], ["a | b"]])]),
    ("| a | b |\n| - |", [p("| a | b |\n| - |")]),
    ("intro\n| a |\n| - |\n| 1 |\n\nafter", [p("intro"), table([.none], [["a"], ["1"]]), p("after")]),
    ("| a |\n| - |\n# h", [table([.none], [["a"]]), h(1, "h")]),
]

private let taskLists: [Vector] = [
    ("- [ ] todo\n- [x] done\n- [X] also", [ul(li(p("todo"), checked: false), li(p("done"), checked: true), li(p("also"), checked: true))]),
    ("- [y] no", [ul(li(p("[y] no")))]),
    ("- [ ]", [ul(li(checked: false))]),
    ("1. [x] *n*", [ol(li(p("n", [s("n", .italic)]), checked: true))]),
    // The text after the box is read alone: its first run starts after the blanks; styles, links and a hard break too.
    ("- [x]   **ok** then [docs](u)  \n  more", [ul(li(
        p("ok then docs\nmore", [s("ok", .bold), s(" then "), s("docs", .link, "u"), s("\n", .lineBreak), s("more")]),
        checked: true))]),
    ("- [ ]\t`c`", [ul(li(p("c", [s("c", .code)]), checked: false))]),
    ("- [ ] a\n\n  b", [ul(tight: false, li(p("a"), p("b"), checked: false))]),
    ("- [x]\n  - [ ] inner", [ul(li(ul(li(p("inner"), checked: false)), checked: true))]),
]

private let strikethrough: [Vector] = [
    ("~~gone~~", [p("gone", [s("gone", .strikethrough)])]),
    ("~one~", [p("one", [s("one", .strikethrough)])]),
    ("~~a~", [p("~~a~")]),
    ("a ~~~x~~~", [p("a ~~~x~~~")]),
    ("**~~b~~**", [p("b", [s("b", [.bold, .strikethrough])])]),
]

private let extendedAutolinks: [Vector] = [
    ("see www.x.org.", [p("see www.x.org.", [s("see "), s("www.x.org", .link, "http://www.x.org"), s(".")])]),
    ("https://a.b/c?d).", [p("https://a.b/c?d).", [s("https://a.b/c?d", .link, "https://a.b/c?d"), s(").")])]),
    ("(http://a.b/(x))", [p("(http://a.b/(x))", [s("("), s("http://a.b/(x)", .link, "http://a.b/(x)"), s(")")])]),
    ("xwww.a.b", [p("xwww.a.b")]),
    ("www.a_b.c_d", [p("www.a_b.c_d")]),
    ("http://localhost", [p("http://localhost")]),
]

private let allSections: [[Vector]] = [
    tabs, thematicBreaks, atxHeadings, setextHeadings, indentedCode, fencedCode, htmlBlocks, linkReferenceDefinitions,
    paragraphs, blankLines, blockQuotes, listItems, lists, backslashEscapes, entities, codeSpans, emphasis, links,
    images, autolinks, breaks, tables, taskLists, strikethrough, extendedAutolinks,
]

/// Multi-block replies as an agent writes them.
private let replies: [String] = [
    "# Plan\n\nI'll do **three** things:\n\n1. read `main.swift`\n2. fix the [bug][b]\n3. test\n\n```swift\nlet x = 1\nprint(x)\n```\n\n> note: *careful*\n\n[b]: https://bugs/1\n",
    "Intro text\nwith two lines.\n\n| col | val |\n|:----|----:|\n| a | 1 |\n| b | 2 |\n\n- [x] done\n- [ ] todo\n  - nested\n\n---\nBye ~~now~~ www.example.com.",
    "```\nunclosed code\nline 2\n",
    "Text with <span>html</span> &amp; entities &#x41;\n\n<div>\nblock\n</div>\n\n    indented\n\nSetext\n======\n",
    "- a\n- b\n\n  para in b\n- c\n\n> quote\ncontinued lazily\n> > deeper\n\n***\n",
]

final class MarkdownTests: XCTestCase {

    // MARK: Sections

    func testTabsCountAsColumnsToTheNextMultipleOfFour() { check(tabs) }
    func testThematicBreaksAreThreeMatchingMarkersWithOptionalSpaces() { check(thematicBreaks) }
    func testATXHeadingsTakeOneToSixHashesAndDropAClosingSequence() { check(atxHeadings) }
    func testSetextHeadingsUnderlineAParagraph() { check(setextHeadings) }
    func testIndentedCodeIsFourSpacesAndCannotInterruptAParagraph() { check(indentedCode) }
    func testFencedCodeTakesTheInfoStringsFirstWordAsLanguage() { check(fencedCode) }
    func testHTMLBlocksAreKeptAsLiteralText() { check(htmlBlocks) }
    func testLinkReferenceDefinitionsAreConsumedAndResolveReferenceLinks() { check(linkReferenceDefinitions) }
    func testParagraphsJoinLinesAndStripTheirIndentation() { check(paragraphs) }
    func testBlankLinesSeparateBlocksAndAreOtherwiseIgnored() { check(blankLines) }
    func testBlockQuotesNestAndTakeLazyContinuationLines() { check(blockQuotes) }
    func testListItemContentAlignsWithTheFirstCharacterAfterTheMarker() { check(listItems) }
    func testListsAreTightUnlessABlankLineSeparatesTheirItemsOrBlocks() { check(lists) }
    func testBackslashEscapesMakePunctuationLiteral() { check(backslashEscapes) }
    func testEntitiesAreResolvedOutsideCode() { check(entities) }
    func testCodeSpansMatchEqualBacktickRunsAndStripOneSpace() { check(codeSpans) }
    func testEmphasisFollowsTheDelimiterRunRules() { check(emphasis) }
    func testLinksTakeADestinationOrAReference() { check(links) }
    func testImagesAreTheirAltTextWithTheirSource() { check(images) }
    func testAutolinksAreURIsOrAddressesInAngleBrackets() { check(autolinks) }
    func testHardAndSoftBreaksAreNewlinesAHardOneARunOfItsOwn() { check(breaks) }
    func testTablesHaveAHeaderADelimiterRowAndBodyRows() { check(tables) }
    func testTaskListItemsAreCheckedOrUnchecked() { check(taskLists) }
    func testStrikethroughIsOneOrTwoTildes() { check(strikethrough) }
    func testExtendedAutolinksNeedAValidDomainAndDropTrailingPunctuation() { check(extendedAutolinks) }

    func testAnUnclosedFenceIsAnOpenCodeBlockRunningToTheEnd() {
        XCTAssertEqual(Markdown.parse("text\n~~~ py\na\n\n- b\n"), [p("text"), code("a\n\n- b", "py", open: true)])
    }

    func testAFenceClosedByItsContainerIsNotOpen() {
        XCTAssertEqual(Markdown.parse("> ```\n> a\n\nb"), [quote(code("a")), p("b")])
    }

    // MARK: Streaming

    /// Feeds `text` in pieces ending at `cuts` and checks every step against a whole parse.
    private func stream(_ text: String, cuts: [Int], file: StaticString = #filePath, line: UInt = #line) {
        let bytes = Array(text.utf8)
        var stream = MarkdownStream()
        var previous: [MarkdownBlock] = []
        var previousStable = 0
        for cut in cuts {
            var end = min(cut, bytes.count)
            while end < bytes.count && bytes[end] & 0xC0 == 0x80 { end += 1 }  // whole characters
            let prefix = String(decoding: bytes[0..<end], as: UTF8.self)
            let first = stream.update(prefix, appendedOnly: true)
            let whole = Markdown.parse(prefix)
            guard stream.blocks == whole else {
                XCTFail("streamed \(prefix.debugDescription): \(brief(stream.blocks)) != \(brief(whole))", file: file, line: line)
                return
            }
            XCTAssertTrue(first <= previous.count && first <= stream.blocks.count, file: file, line: line)
            XCTAssertEqual(Array(stream.blocks.prefix(first)), Array(previous.prefix(first)), "before \(first)", file: file, line: line)
            XCTAssertGreaterThanOrEqual(stream.stableCount, previousStable, file: file, line: line)
            XCTAssertLessThanOrEqual(stream.stableCount, stream.blocks.count, file: file, line: line)
            XCTAssertEqual(Array(stream.blocks.prefix(previousStable)), Array(previous.prefix(previousStable)), file: file, line: line)
            previous = stream.blocks
            previousStable = stream.stableCount
        }
    }

    private var streamedTexts: [String] {
        allSections.flatMap { $0.map(\.input) } + replies
    }

    func testStreamingInChunksOfEverySizeMatchesAWholeParseAfterEveryStep() {
        for text in streamedTexts {
            let count = text.utf8.count
            for size in 1...max(1, min(count, 40)) {
                stream(text, cuts: Array(stride(from: size, through: count + size - 1, by: size)))
            }
        }
    }

    func testStreamingWithRandomSplitsMatchesAWholeParseAfterEveryStep() {
        var generator = SplitMix(seed: 7)
        for text in streamedTexts {
            let count = text.utf8.count
            for _ in 0..<10 {
                var cuts: [Int] = []
                var at = 0
                while at < count {
                    at += Int(generator.next() % 12) + 1
                    cuts.append(at)
                }
                stream(text, cuts: cuts)
            }
        }
    }

    func testAStreamKeepsClosedBlocksAndReportsWhereChangesStart() {
        var stream = MarkdownStream()
        stream.update("# Title\n\npara", appendedOnly: true)
        XCTAssertEqual(stream.blocks, [h(1, "Title"), p("para")])
        XCTAssertEqual(stream.stableCount, 1)
        let first = stream.update("# Title\n\npara *more*", appendedOnly: true)
        XCTAssertEqual(first, 1)
        XCTAssertEqual(stream.blocks, [h(1, "Title"), p("para more", [s("para "), s("more", .italic)])])
    }

    func testABlockClosedOnlyByAnIncompleteLineIsNotStable() {
        var stream = MarkdownStream()
        stream.update("para\n#", appendedOnly: true)
        XCTAssertEqual(stream.blocks, [p("para"), h(1, "")])
        XCTAssertEqual(stream.stableCount, 0)
        stream.update("para\n#x", appendedOnly: true)
        XCTAssertEqual(stream.blocks, [p("para\n#x")])
    }

    func testALateDefinitionReparsesTheBlocksThatLookedItUp() {
        var stream = MarkdownStream()
        stream.update("[x]\n\nmore\n\n[x]: /a", appendedOnly: true)
        XCTAssertEqual(stream.stableCount, 0)
        let first = stream.update("[x]\n\nmore\n\n[x]: /ab", appendedOnly: true)
        XCTAssertEqual(first, 0)
        XCTAssertEqual(stream.blocks, [p("x", [s("x", .link, "/ab")]), p("more")])
    }

    func testALongOpenFenceGrowsWithoutLosingItsLines() {
        var stream = MarkdownStream()
        var text = "intro\n\n```swift\n"
        for i in 0..<300 {
            text += "line \(i)"
            stream.update(text, appendedOnly: true)
            text += "\n"
            stream.update(text, appendedOnly: true)
        }
        XCTAssertEqual(stream.blocks, Markdown.parse(text))
        XCTAssertEqual(stream.stableCount, 1)
        text += "```\nafter"
        stream.update(text, appendedOnly: true)
        XCTAssertEqual(stream.blocks, Markdown.parse(text))
        XCTAssertEqual(stream.stableCount, 2)
    }

    func testAnOpenFenceAndHTMLBlockKeepTheirTextAcrossLineEndingsAndCharactersStreamedOneByOne() {
        // The text of the complete lines is kept from update to update and the
        // last line decoded on its own: CRLF, lone CR and multi-byte characters
        // read as in a whole parse at every step, and when the text ends at a line ending.
        let fence = "```sh\r\nlet é = \"ü\"\r\nx\ry\n\n日本\n"
        let html = "<div>\r\nä\rb\n\n"
        for (text, expected) in [
            (fence, MarkdownBlock(kind: .codeBlock(language: "sh", open: true), text: "let é = \"ü\"\nx\ny\n\n日本")),
            (html, MarkdownBlock(kind: .html, text: "<div>\nä\nb")),
        ] {
            var stream = MarkdownStream()
            var sent = ""
            for character in text {
                sent.append(character)
                stream.update(sent, appendedOnly: true)
                XCTAssertEqual(stream.blocks, Markdown.parse(sent), "after \(sent.debugDescription)")
            }
            XCTAssertEqual(stream.blocks, [expected])
        }
    }

    func testAnUpdateThatIsNotAnAppendParsesEverythingAgain() {
        var stream = MarkdownStream()
        stream.update("# a\n\nb\n\nc", appendedOnly: true)
        XCTAssertEqual(stream.stableCount, 2)
        let first = stream.update("# a\n\nX\n", appendedOnly: false)
        XCTAssertEqual(first, 1)
        XCTAssertEqual(stream.blocks, [h(1, "a"), p("X")])
        stream.update("new", appendedOnly: false)
        XCTAssertEqual(stream.blocks, [p("new")])
        XCTAssertEqual(stream.stableCount, 0)
    }

    // MARK: Hostile input

    private func maxDepth(_ blocks: [MarkdownBlock]) -> Int { blocks.map(\.depth).max() ?? 0 }

    func testDeeplyNestedQuotesStopAtTheCapAndTheRestIsText() {
        let blocks = Markdown.parse(String(repeating: ">", count: 5_000) + " x")
        XCTAssertEqual(maxDepth(blocks), Markdown.maxContainerDepth + 1)
    }

    func testDeeplyNestedListsStopAtTheCap() {
        let blocks = Markdown.parse(String(repeating: "- ", count: 5_000) + "x")
        XCTAssertLessThanOrEqual(maxDepth(blocks), Markdown.maxDepth)
        var lines = ""
        for i in 0..<1_000 { lines += String(repeating: " ", count: i * 2) + "- x\n" }
        XCTAssertLessThanOrEqual(maxDepth(Markdown.parse(lines)), Markdown.maxDepth)
    }

    func testRunsOfDelimitersBracketsAndParenthesesParse() {
        for piece in ["*", "_", "~", "[", "]", "(", "![", "[a](", "<", "`", "&", "\\", "<!--", "**a", "[x]: ", "(www.a.b)",
                      "[a](b(", "<a b=\"", "a  \n", "> - "] {
            let text = String(repeating: piece, count: 100_000 / piece.utf8.count)
            let blocks = Markdown.parse(text)
            XCTAssertLessThanOrEqual(maxDepth(blocks), Markdown.maxDepth, piece)
        }
        let backticks = "a" + String(repeating: "`", count: 100_000)
        XCTAssertEqual(Markdown.parse(backticks), [p(backticks)])
    }

    func testEachCommentInstructionAndCDATAEndsAtTheFirstTerminatorAfterItsOwnOpener() {
        // Raw HTML is kept as text, and nothing inside it is styled (inline: a line starting with one is an HTML block).
        XCTAssertEqual(Markdown.parse("x <!-- *a* <!-- *b* --> *c*"), [p("x <!-- *a* <!-- *b* --> c", [s("x <!-- *a* <!-- *b* --> "), s("c", .italic)])])
        XCTAssertEqual(Markdown.parse("x <? *a* --> ?> *b* <? *c*"), [p("x <? *a* --> ?> b <? c", [s("x <? *a* --> ?> "), s("b", .italic), s(" <? "), s("c", .italic)])])
        XCTAssertEqual(Markdown.parse("x <!-- *a* --> *b* <!-- *c* -->"), [p("x <!-- *a* --> b <!-- *c* -->", [s("x <!-- *a* --> "), s("b", .italic), s(" <!-- *c* -->")])])
        XCTAssertEqual(Markdown.parse("x <![CDATA[ *a* ]]> *b* <![CDATA[ *c*"), [p("x <![CDATA[ *a* ]]> b <![CDATA[ c", [s("x <![CDATA[ *a* ]]> "), s("b", .italic), s(" <![CDATA[ "), s("c", .italic)])])
        XCTAssertEqual(Markdown.parse("x <!X *a* <!Y *b* > *c*"), [p("x <!X *a* <!Y *b* > c", [s("x <!X *a* <!Y *b* > "), s("c", .italic)])])
    }

    func testARunOfStarsClosingManyOpenersStylesEachOfThem() {
        XCTAssertEqual(Markdown.parse("**a *b***"), [p("a b", [s("a ", .bold), s("b", [.bold, .italic])])])
        XCTAssertEqual(Markdown.parse("*a **b***"), [p("a b", [s("a ", .italic), s("b", [.bold, .italic])])])
    }

    func testAOneMegabyteLineIsOneParagraph() {
        let line = String(repeating: "word *em* ", count: 100_000)
        let blocks = Markdown.parse(line)
        XCTAssertEqual(blocks.count, 1)
        XCTAssertEqual(blocks.first?.spans.count, 200_000)
    }

    func testTenThousandItemsAreOneList() {
        let text = (0..<10_000).map { "- item \($0)\n" }.joined()
        let blocks = Markdown.parse(text)
        XCTAssertEqual(blocks.count, 1)
        XCTAssertEqual(blocks.first?.children.count, 10_000)
    }

    func testUnclosedConstructsAreText() {
        XCTAssertEqual(Markdown.parse("[a](b \"c"), [p("[a](b \"c")])
        XCTAssertEqual(Markdown.parse("<a href=\"x"), [p("<a href=\"x")])
        XCTAssertEqual(Markdown.parse("**a _b `c"), [p("**a _b `c")])
    }
}
