import XCTest
@testable import JcodeMobileMarkdown
import JcodeMobileTestSupport

/// A streamed reply parsed incrementally (only its open tail at each append)
/// equals a whole parse of the text so far after every update: the whole
/// parse is the specification of the stream.
final class MarkdownStreamTests: XCTestCase {
    /// Streams `text` (what `stream` had, and more) and checks the blocks
    /// equal a parse of the whole.
    private func streamAndCompare(_ stream: inout MarkdownStream, _ text: String, file: StaticString = #filePath, line: UInt = #line) {
        stream.update(text, appendedOnly: true)
        XCTAssertEqual(stream.blocks, Markdown.parse(text), file: file, line: line)
    }

    /// Lines that mix the constructs whose boundaries the stream must get right:
    /// paragraphs with pipes, table headers and delimiter rows (indented, after a
    /// paragraph, in quotes and lists), lists and nested lists, quotes, fences,
    /// setext underlines, indented code, HTML, link reference definitions.
    private static let pieces: [String] = [
        "a | b\n", "| a | b |\n", "| a ||  b\n", "|:--|--:|\n", "|---|---|\n", "-|-\n", " |-|-|\n", "| 1 \\| x | `2` |\n",
        "    | a | b |\n", "\t|x|y|\n", "  | c | d |\n", "- a | b\n", "1. x|y\n", "2. x|y\n", "<a href=\"|\">\n", "-\n",
        "1.\n", "*\n", "plain words\n", "more *text* [x]\n", "\n", "\n", "- item\n", "  - nested\n", "    - deeper\n",
        "* star\n", "10) ten\n", "1. one\n", "- [x] task\n", "> quote\n", "> | a | b |\n", "> |-|-|\n", ">\n",
        "```swift\n", "```\n", "~~~\n", "===\n", "---\n", "***\n", "    code\n", "\t\tcode\n", "[x]: /url\n",
        "[y]: /y 'title\n", "title'\n", "[x] and [y]\n", "# heading\n", "<div>\n", "</div>\n", "<!-- c\n", "-->\n",
        "lazy | line\n", "x\n", "  two spaces\n", "   three | spaces\n", "     five\n", "- \n", "  continued\n",
    ]

    /// A reply of `count` pieces chosen by `generator`; some without their final newline.
    private static func reply(_ generator: inout SplitMix, count: Int) -> String {
        var text = ""
        for _ in 0..<count {
            var piece = pieces[Int(generator.next() % UInt64(pieces.count))]
            if generator.next() % 9 == 0 { piece.removeLast() ; piece += " " }
            text += piece
        }
        return text
    }

    /// Streams `text` in chunks of `size` bytes (whole characters) and checks every step.
    private func streamsAsAWholeParse(_ text: String, size: Int, file: StaticString = #filePath, line: UInt = #line) -> Bool {
        let bytes = Array(text.utf8)
        var stream = MarkdownStream()
        var previousStable: [MarkdownBlock] = []
        var end = 0
        while end < bytes.count {
            end = min(bytes.count, end + size)
            while end < bytes.count && bytes[end] & 0xC0 == 0x80 { end += 1 }
            let prefix = String(decoding: bytes[0..<end], as: UTF8.self)
            stream.update(prefix, appendedOnly: true)
            guard stream.blocks == Markdown.parse(prefix) else {
                XCTFail("chunks of \(size), after \(end) bytes of \(text.debugDescription)", file: file, line: line)
                return false
            }
            guard Array(stream.blocks.prefix(previousStable.count)) == previousStable else {
                XCTFail("a stable block changed: chunks of \(size), \(end) bytes of \(text.debugDescription)", file: file, line: line)
                return false
            }
            previousStable = Array(stream.blocks.prefix(stream.stableCount))
        }
        return true
    }

    func testGeneratedRepliesStreamAsAWholeParseAtEveryChunkSize() {
        var generator = SplitMix(seed: 0x5EED)
        for _ in 0..<160 {
            let text = Self.reply(&generator, count: 4 + Int(generator.next() % 14))
            for size in 1...64 where !streamsAsAWholeParse(text, size: size) { return }
        }
    }

    func testATableWhoseHeaderWouldStartABlockAloneStreamsAsAWholeParse() {
        let headers = ["    | a | b |", "\t|a|b|", "- a | b", "* a | b", "+ a | b", "2. a | b", "1. a | b", "-", "<a href=\"|\">",
                       "<div>|", "| a | b |", "a | b", "   | a | b |"]
        for header in headers {
            for delimiter in ["|:--|--:|", "-|-", "|-|", "|---|"] {
                let text = "| p ||  q\nmore | words\n\(header)\n\(delimiter)\n| 1 | 2 |\n\n- x\n  - y\n   z\n"
                for size in 1...24 where !streamsAsAWholeParse(text, size: size) { return }
            }
        }
    }

    func testTheFuzzersReplyStreamsAsAWholeParseAtEveryChunkSize() {
        let text = "| a ||  b\n|:--|-\u{D1C5}|d\n    |\u{A0}a | b |\n|:--|--:|\n| 1 \\| x | `2` |\n\n- [x] d> q\n\n--\u{4EF}one\n- [ol] todo\n  - nested\n   r"
        for size in 1...64 where !streamsAsAWholeParse(text, size: size) { return }
    }

    func testABlockTheLastLineClosedIsFinalOnceThatLineHasBegunAsWhatItIs() {
        // Each text, more of its last line, and where its last line starts:
        // the next parse reads from there, not the closed block again.
        let settled: [(text: String, more: String, lastLine: Int)] = [
            ("- one\n- two\n\n## Exec", "utive summary", 13),
            ("> a quote\n\nThe par", "agraph", 11),
            ("- one\n\n> q", "uote", 7),
            ("1. one\n\n- x", "y", 8),
            ("| a |\n|---|\n| 1 |\n\n2. st", "ep", 19),
            ("    code\nwo", "rds", 9),
        ]
        for (text, more, lastLine) in settled {
            var stream = MarkdownStream()
            streamAndCompare(&stream, text)
            XCTAssertEqual(stream.restartPoint, lastLine, text)
            streamAndCompare(&stream, text + more)
            XCTAssertEqual(stream.restartPoint, lastLine, text + more)
        }
        // A last line whose marks more text may still make another block's, or the closed block's again.
        for (text, more) in [
            ("- one\n\n#", "x"), ("- one\n\n## ", "a"), ("- one\n\n1.", " x"), ("- q\n\n```", "x`"), ("- a\n\n* ", "* *"), ("1. one\n\n2", ". two"),
        ] {
            var stream = MarkdownStream()
            streamAndCompare(&stream, text)
            XCTAssertEqual(stream.restartPoint, 0, text)
            streamAndCompare(&stream, text + more)
        }
    }

    func testAParagraphBeforeATableIsHeadOnceTheDelimiterRowIsComplete() {
        var stream = MarkdownStream()
        let text = "words | more\n| a | b |\n|---|---|\n| 1 | 2 |\n| 3 |"
        streamAndCompare(&stream, text)
        XCTAssertEqual(stream.stableCount, 1)
        // The table's rows before its last are final: the next parse reads from the last row on.
        XCTAssertEqual(stream.restartPoint, Array("words | more\n| a | b |\n|---|---|\n| 1 | 2 |\n".utf8).count)
    }

    func testAParagraphBeforeATableWithAnIndentedHeaderIsReadAgainUntilTheTableCloses() {
        var stream = MarkdownStream()
        var text = "words | more\n    | a | b |\n|---|---|\n| 1 | 2 |\n"
        streamAndCompare(&stream, text)
        XCTAssertEqual(stream.stableCount, 0)
        XCTAssertEqual(stream.restartPoint, 0)
        text += "\nafter"
        streamAndCompare(&stream, text)
        XCTAssertEqual(stream.stableCount, 2)
        XCTAssertEqual(stream.restartPoint, Array("words | more\n    | a | b |\n|---|---|\n| 1 | 2 |\n\n".utf8).count)
    }

    func testAnAppendToALongHTMLBlockParsesOnlyItsLastLine() {
        var stream = MarkdownStream()
        var text = "Intro\n\n<div class=\"x\">\n"
        for i in 1...200 { text += "<p>line \(i)</p>\n" }
        stream.update(text, appendedOnly: true)
        let end = Array(text.utf8).count
        XCTAssertEqual(stream.restartPoint, end, "every line read is final: the block goes on at the next")
        text += "<p>the last"
        stream.update(text, appendedOnly: true)
        XCTAssertEqual(stream.restartPoint, end, "the last line is not complete")
        XCTAssertEqual(stream.blocks, Markdown.parse(text))
        text += " line</p>\n\nafter"
        stream.update(text, appendedOnly: true)
        XCTAssertEqual(stream.blocks, Markdown.parse(text), "a blank line ends a type 6 block")
        // Type 2 (a comment) ends on a line with "-->", blanks inside.
        var comment = "<!-- a\n\n"
        var quoted = MarkdownStream()
        for i in 1...50 { comment += "c \(i)\n"; quoted.update(comment, appendedOnly: true) }
        XCTAssertEqual(quoted.restartPoint, Array(comment.utf8).count)
        for piece in ["x -", "-", "> tail\n", "next\n"] {
            comment += piece
            quoted.update(comment, appendedOnly: true)
            XCTAssertEqual(quoted.blocks, Markdown.parse(comment))
        }
    }

    func testStreamedHTMLBlocksEqualAWholeParseAtEveryByte() {
        let texts = [
            "<div>\n*a*\n\nb\n", "<!-- x\n\n--> y\nz\n", "<pre>\nx\n\n</pre>\n# h\n", "<details>\n<summary>s</summary>\n\n- a\n",
            "<table><tr>\n<td>1</td>\n</tr></table>\n\n| a |\n|-|\n", "<?php\nx\n?>\ny\n", "<![CDATA[\nx\n]]>\n", "<!X\ny>\nz\n",
            "<a href=\"x\">\nb\n\nc\n", "para\n<div>\nx\n", "<div>\r\nx\r\n\r\ny\r\n",
        ]
        for text in texts {
            let bytes = Array(text.utf8)
            var stream = MarkdownStream()
            for end in 1...bytes.count {
                guard let prefix = String(validating: bytes[0..<end], as: UTF8.self) else { continue }
                stream.update(prefix, appendedOnly: true)
                XCTAssertEqual(stream.blocks, Markdown.parse(prefix), "\(prefix.debugDescription)")
            }
        }
    }

    func testAnAppendToALongListParsesOnlyItsLastItemAndKeepsTheItemsBefore() {
        var stream = MarkdownStream()
        var text = "Intro\n\n"
        for i in 1...300 { text += "\(i). item **\(i)** with `code`\n" }
        stream.update(text, appendedOnly: true)
        let lastItem = Array(text.utf8).count
        let item300 = lastItem - Array("300. item **300** with `code`\n".utf8).count
        XCTAssertEqual(stream.restartPoint, item300, "items 1 to 299 are final: 300 may still grow")
        text += "301. the last"
        stream.update(text, appendedOnly: true)
        XCTAssertEqual(stream.restartPoint, item300, "301's line is not complete: it could still be a thematic break")
        text += " item, still growing"
        XCTAssertEqual(stream.update(text, appendedOnly: true), 1, "the intro is unchanged")
        XCTAssertEqual(stream.grown?.block, 1)
        XCTAssertEqual(stream.grown?.count, 299)
        XCTAssertEqual(stream.blocks.count, 2)
        XCTAssertEqual(stream.blocks[1].kind, .list(ordered: true, start: 1, tight: true))
        XCTAssertEqual(stream.blocks[1].children.count, 301)
        XCTAssertEqual(stream.blocks[1].children[300].children.first?.text, "the last item, still growing")
        XCTAssertEqual(stream.blocks, Markdown.parse(text))
        text += "\n302. next"
        stream.update(text, appendedOnly: true)
        XCTAssertEqual(stream.restartPoint, lastItem, "302 began on a complete line: 300 is final")
        XCTAssertEqual(stream.blocks, Markdown.parse(text))
        // A blank line between two items makes the whole list loose, the kept items too.
        text += "\n\n302. after a blank\n"
        stream.update(text, appendedOnly: true)
        XCTAssertEqual(stream.blocks[1].kind, .list(ordered: true, start: 1, tight: false))
        XCTAssertEqual(stream.blocks, Markdown.parse(text))
    }

    func testAnAppendToALongTableParsesOnlyItsLastRow() {
        var stream = MarkdownStream()
        var text = "| n | name |\n|--:|:--|\n"
        for i in 1...200 { text += "| \(i) | *row* \(i) |\n" }
        let lastRow = Array(text.utf8).count
        text += "| 201 | growing"
        stream.update(text, appendedOnly: true)
        text += " on |"
        stream.update(text, appendedOnly: true)
        XCTAssertEqual(stream.restartPoint, lastRow)
        XCTAssertEqual(stream.grown?.block, 0)
        XCTAssertEqual(stream.grown?.count, 201, "the header and 200 rows")
        XCTAssertEqual(stream.blocks[0].children.count, 202)
        XCTAssertEqual(stream.blocks[0].children[201].children.map(\.text), ["201", "growing on"])
        XCTAssertEqual(stream.blocks[0].children[0].kind, .tableRow(header: true))
        XCTAssertEqual(stream.blocks[0].children[201].kind, .tableRow(header: false))
        XCTAssertEqual(stream.blocks, Markdown.parse(text))
        text += "\n\nAfter the table."
        streamAndCompare(&stream, text)
        XCTAssertEqual(stream.blocks.count, 2)
    }

    func testATableRowWhoseLineEndedIsFinalAndTheNextUpdateGoesOnAfterIt() {
        var stream = MarkdownStream()
        var text = "| n | name |\n|--:|:--|\n"
        for i in 1...200 { text += "| \(i) | `row` \(i) |\n" }
        text += "| 201 | growing"
        stream.update(text, appendedOnly: true)
        let row201 = Array(text.utf8).count - Array("| 201 | growing".utf8).count
        XCTAssertEqual(stream.restartPoint, row201, "row 201's line has not ended")
        text += " on |\n"
        stream.update(text, appendedOnly: true)
        let row202 = Array(text.utf8).count
        XCTAssertEqual(stream.restartPoint, row202, "row 201's line ended: the next update goes on after it, not from it")
        text += "| 202"
        stream.update(text, appendedOnly: true)
        XCTAssertEqual(stream.grown?.count, 202, "the header and rows 1 to 201 kept as they were")
        XCTAssertEqual(stream.restartPoint, row202, "row 202's line has not ended")
        XCTAssertEqual(stream.blocks[0].children[201].children.map(\.text), ["201", "growing on"])
        XCTAssertEqual(stream.blocks, Markdown.parse(text))
        // Whatever follows a row whose line ended reads as in a whole parse: a
        // row, a blank line, a block that closes the table, a line without pipes, a CR.
        let ended = "| a | b |\n|---|---|\n| 1 | 2 |\n"
        for next in ["| 3 | 4 |\n", "\n\nafter", "# heading", "plain words\n", "   \nx", "- item", "|", "\\|x", "```\ncode", "> q", "\r\n"] {
            for size in [1, 2, 3, 17] where !streamsAsAWholeParse(ended + next, size: size) { return }
        }
        // Rows ended by CR LF or a lone CR, and a header alone before its rows.
        for text in ["| a | b |\r\n|---|---|\r\n| 1 | 2 |\r\n| 3 | 4 |\r\n", "| a |\r|--|\r| 1 |\r\r\n| 2 |", "| a |\n|--|\n"] {
            for size in [1, 2, 3, 17] where !streamsAsAWholeParse(text, size: size) { return }
        }
    }

    func testListsAndTablesStreamedInTokensEqualAWholeParse() {
        let texts = [
            "- a\n- b\n  - nested\n  - more\n- c\n\n  para in c\n- d [x]\n\n[x]: /url\n",
            "1. one\n2. two\n3) other list\n4) four\n\n5. five\n",
            "- [ ] task\n- [x] done\n-\n  late\n- - -\n- e\n---\nafter\n",
            "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 |\n- list\n| x | y |\n|-|-|\n|z\n\n> q\n",
            "* a\n* b\n\n\n* c\n    code in c\n* d\n```\nfence\n```\n* e\n",
            "- a [r]\n- b\n- c\n\n[r]: /late\n- d\n",
        ]
        for text in texts {
            for size in [1, 2, 3, 4, 5, 8, 17] where !streamsAsAWholeParse(text, size: size) { return }
        }
    }

    func testAnAppendToALongReplyParsesOnlyItsOpenTail() {
        var stream = MarkdownStream()
        var text = ""
        for i in 0..<400 {
            text += "Paragraph \(i) | with a pipe\n| h | i |\n|---|---|\n| \(i) | x |\n\n- item\n  - nested\n\n"
        }
        stream.update(text, appendedOnly: true)
        let head = Array(text.utf8).count
        text += "tail words\nmore"
        streamAndCompare(&stream, text)
        XCTAssertEqual(stream.restartPoint, head + 11, "the open paragraph's last line, after \"tail words\\n\"")
    }

    // MARK: - A long paragraph: read on from its last line

    func testAParagraphsLastLineThatBeginsWithALetterIsKeptAndOnlyWhatFollowsIsRead() {
        var stream = MarkdownStream()
        var text = "Some *emphasis* and **bold** words"
        streamAndCompare(&stream, text)
        XCTAssertEqual(stream.keptLineBytes, 34, "the paragraph's one line, its first")
        text += " and `code` too"
        streamAndCompare(&stream, text)
        XCTAssertEqual(stream.keptLineBytes, 49)
        text += "\n   indented continuation"
        streamAndCompare(&stream, text)
        XCTAssertEqual(stream.keptLineBytes, 21, "the second line's bytes after its blanks")
        XCTAssertEqual(stream.blocks, [MarkdownBlock(kind: .paragraph, text: "Some emphasis and bold words and code too\nindented continuation",
                                                     spans: MarkdownSpans([
                                                         MarkdownSpan(text: "Some "), MarkdownSpan(text: "emphasis", styles: .italic),
                                                         MarkdownSpan(text: " and "), MarkdownSpan(text: "bold", styles: .bold),
                                                         MarkdownSpan(text: " words and "), MarkdownSpan(text: "code", styles: .code),
                                                         MarkdownSpan(text: " too\nindented continuation"),
                                                     ]))])
        // A line that may still become something else is read again whole: a list item, a fence, a heading, an underline.
        for (more, kind) in [("\n- item", MarkdownBlock.Kind.list(ordered: false, start: 1, tight: true)),
                             ("\n```", .codeBlock(language: nil, open: true)), ("\n# Title", .heading(level: 1))] {
            var other = stream
            streamAndCompare(&other, text + more)
            XCTAssertEqual(other.keptLineBytes, 0, more.debugDescription)
            XCTAssertEqual(other.blocks.last?.kind, kind)
        }
        var underline = stream
        streamAndCompare(&underline, text + "\n==")
        XCTAssertEqual(underline.keptLineBytes, 0)
        XCTAssertEqual(underline.blocks.map(\.kind), [.heading(level: 1)])
        // A line ended by a lone "\r" is complete: a "\n" after it must not join it.
        var carriage = MarkdownStream()
        streamAndCompare(&carriage, "words\r")
        XCTAssertEqual(carriage.keptLineBytes, 0)
        streamAndCompare(&carriage, "words\r\nmore")
        XCTAssertEqual(carriage.keptLineBytes, 4)
        // Streamed a byte at a time, a long paragraph of one line equals a whole parse at every byte.
        let long = String(repeating: "Some *emphasis* and **bold 7** with `code` words ", count: 12)
        XCTAssertTrue(streamsAsAWholeParse(long, size: 1))
        XCTAssertTrue(streamsAsAWholeParse("  indented *a* b\nc `d` e f g\r\nh **i** j", size: 1))
    }

    func testAnOpenParagraphIsReadOnFromItsLastLineAndItsLinesStillTurnIntoAHeadingOrATable() {
        var stream = MarkdownStream()
        var text = "Some words\nmore words\nlast"
        stream.update(text, appendedOnly: true)
        XCTAssertEqual(stream.restartPoint, 22, "after \"Some words\\nmore words\\n\"")
        text += " | x\n"
        stream.update(text, appendedOnly: true)
        XCTAssertEqual(stream.restartPoint, 31, "the end: every line is complete")
        XCTAssertEqual(stream.blocks, [MarkdownBlock(kind: .paragraph, text: "Some words\nmore words\nlast | x")])
        // A delimiter row under the last line: it is a table's header, the lines before stay a paragraph.
        text += "|---|---|\n"
        stream.update(text, appendedOnly: true)
        XCTAssertEqual(stream.blocks.map(\.kind), [.paragraph, .table(alignments: [.none, .none])])
        XCTAssertEqual(stream.blocks[0].text, "Some words\nmore words")
        XCTAssertEqual(stream.blocks[1].children[0].children.map(\.text), ["last", "x"])

        var setext = MarkdownStream()
        text = "A title\nin two lines\n"
        setext.update(text, appendedOnly: true)
        XCTAssertEqual(setext.restartPoint, 21)
        text += "==="
        setext.update(text, appendedOnly: true)
        XCTAssertEqual(setext.blocks, [MarkdownBlock(kind: .heading(level: 1), text: "A title\nin two lines")])
        text += "\nthen a paragraph"
        setext.update(text, appendedOnly: true)
        XCTAssertEqual(setext.blocks, [MarkdownBlock(kind: .heading(level: 1), text: "A title\nin two lines"),
                                       MarkdownBlock(kind: .paragraph, text: "then a paragraph")])
    }

    // MARK: - A list's last item: read on from its last block

    func testAnOpenItemIsReadOnFromTheLineItsLastBlockBeginsOnAndKeepsTheBlocksBefore() {
        var stream = MarkdownStream()
        // The last item's blocks: a paragraph (at 23), a nested list (at 32), a code block (at 47).
        var text = "- Step 1\n  ```sh\n  ```\n- Step 2\n  - check `it`\n  ```sh\n  make st"
        streamAndCompare(&stream, text)
        XCTAssertEqual(stream.restartPoint, 47, "the code block's line: the item's paragraph and nested list are final")
        text += "ep2\n"
        streamAndCompare(&stream, text)
        XCTAssertEqual(stream.grown?.block, 0)
        XCTAssertEqual(stream.grown?.count, 1, "the first item kept")
        XCTAssertEqual(stream.grown?.item, 2, "and the second's paragraph and nested list")
        XCTAssertEqual(stream.blocks[0].children[1].children.map(\.text), ["Step 2", "", "make step2"])
        text += "  ```\n  after the code\n  and"
        streamAndCompare(&stream, text)
        XCTAssertEqual(stream.restartPoint, 74, "the paragraph after the closed code block: three blocks kept")
        XCTAssertEqual(stream.grown?.item, 2, "this update read on after the same two blocks as the last")
        text += " more\n- Step 3"
        streamAndCompare(&stream, text)
        XCTAssertEqual(stream.restartPoint, 74, "the third item's line is not complete: the second is still read on from its paragraph")
        text += " and more\n"
        streamAndCompare(&stream, text)
        XCTAssertEqual(stream.restartPoint, 102, "the third item began on a complete line: the two before are final")
        XCTAssertEqual(stream.blocks[0].children.count, 3)
    }

    func testAFenceThatBeganOnTheLastLineIsReadOnFromOnceItsLineEndsAsAFence() {
        // The last item's blocks: a paragraph, a nested list (at 18), a fence on the last line (at 31).
        let text = "- Step 1\n- Step 2\n  - check it\n  ```"
        // Its line ended as a fence's: read on from the fence, the paragraph and the nested list kept.
        for more in ["sh\n  make", "\n", "`` more\n", "sh extra words\r\n  x"] {
            var stream = MarkdownStream()
            streamAndCompare(&stream, text)
            XCTAssertEqual(stream.restartPoint, 18, "the nested list's line: the fence's may still be no fence")
            streamAndCompare(&stream, text + more)
            XCTAssertEqual(stream.grown?.count, 1, more.debugDescription)
            XCTAssertEqual(stream.grown?.item, 2, "\(more.debugDescription): the paragraph and the nested list kept")
        }
        // Not ended yet, or ended as no fence (a backtick after a backtick run: the nested item's lazy line).
        for more in ["sh", "sh`\n", "sh ` x\n  more"] {
            var stream = MarkdownStream()
            streamAndCompare(&stream, text)
            streamAndCompare(&stream, text + more)
            XCTAssertEqual(stream.grown?.item, 1, "\(more.debugDescription): read on from the nested list")
        }
        // A tilde fence takes backticks in its info string; a blank line before the fence makes the list loose.
        for (start, more) in [("- a\n- b\n  c\n  ~~~", "`x`\n  y"), ("- a\n- b\n  c\n\n  ```", "\n  y"), ("1. a\n2. b\n   c\n   ```", "\n   y")] {
            var stream = MarkdownStream()
            streamAndCompare(&stream, start)
            streamAndCompare(&stream, start + more)
            XCTAssertEqual(stream.grown?.item, 1, "\(start.debugDescription): the paragraph kept")
        }
    }

    func testABlockOfAnOpenItemReadOnIsNeitherATaskBoxNorTightWhenABlankLineCameBefore() {
        var stream = MarkdownStream()
        var text = "- first\n\n  [ ] not a box: the item's second paragraph\n  goes"
        streamAndCompare(&stream, text)
        XCTAssertEqual(stream.restartPoint, 9, "the second paragraph's line")
        text += " on"
        streamAndCompare(&stream, text)
        XCTAssertEqual(stream.blocks, [MarkdownBlock(kind: .list(ordered: false, start: 1, tight: false), children: [
            MarkdownBlock(kind: .listItem(checked: nil), children: [
                MarkdownBlock(kind: .paragraph, text: "first"),
                MarkdownBlock(kind: .paragraph, text: "[ ] not a box: the item's second paragraph\ngoes on"),
            ]),
        ])])
    }

    func testItemsOfEveryShapeStreamAsAWholeParse() {
        let lists = [
            "- a\n  b\n\n  c\n  - d\n    e\n  f\n- g\n",
            "1. one\n   ```\n   code\n   ```\n   after\n2. two\n\n   para\n",
            "- [x] done\n  - [ ] sub\n  ---\n  text\n  ===\n",
            "- a\n  | h | i |\n  |---|---|\n  | 1 | 2 |\n- b\n",
            "- a\n  > quoted\n  > more\n  lazy\n- b\n",
            "- a\n  [r]: /url\n\n  [r]\n- [r]\n",
            "- a\n  b\n  <div>\n  x\n\n  y\n",
            "* a\n\n      code\n  after\n* b\n",
            "- a\n  - b\n\n    c\n  d\n",
            "- [x]\n  - sub\n  ```\n  code\n  more\n  ```\n- [ ]\n\n  para\n  ```\n  x\n",
            "- a\n  - b\n  ```sh`\n  ```c\n  x\n  ~~~ `q`\n  y\n  ~~~\n\n  ````\n  ```\n  ````\n- [r]\n  [r]: /u\n  ```\n",
        ]
        for text in lists {
            for size in [1, 2, 3, 7] { _ = streamsAsAWholeParse(text, size: size) }
        }
    }

    // MARK: - A long block quote: read on from its last child

    func testAnOpenQuoteIsReadOnFromTheLineItsLastChildBeginsOn() {
        var stream = MarkdownStream()
        // Three children: a paragraph (at 0), a list (at 25), a paragraph (at 39, on the last line).
        var text = "> first para\n> goes on\n>\n> - a\n> - b\n>\n> last"
        streamAndCompare(&stream, text)
        XCTAssertEqual(stream.restartPoint, 25, "the list's line: the last child that began on a complete line; the paragraph before it kept")
        text += " words\n> more\n>\n> > inner"
        streamAndCompare(&stream, text)
        XCTAssertEqual(stream.restartPoint, 39, "the paragraph's line: a nested quote began after it, on the last line")
    }

    func testQuotesOfEveryShapeStreamAsAWholeParse() {
        let quotes = [
            "> para\nlazy line\n> more\n>\n> next para\n",
            "> para\n> ---\n> after\n>\n> ===\n",
            "> - a\n> - b\n>   continued\n> - c\nlazy\n>\n> tail\n",
            "> > inner\n> > more\n> outer\n>\n> > again\n> end\n",
            "> [a]: /url\n>\n> text [a]\n>\n> [b]\n>\n> [b]: /b\n",
            "[c]\n\n> x\n>\n> [c]: /c\n> y\n",
            "> ```\n> code\n>\n> more code\n> ```\n> after\n",
            ">\tcode with a tab\n>\tmore\n>\n> text\n",
            "> a\n>\n>     indented code\n>\n> b\n\nafter the quote\n",
            ">  1. one\n>  2. two\n>\n>  3. three\n> para\n",
            "> # heading\n> text\n>\n> | a | b |\n> |---|---|\n> | 1 | 2 |\n> after\n",
            "  > indented\n  >\n  > quote\n>\n> end\n",
            "> <div>\n> html\n>\n> para\n",
            "> a\n>\n> b\n- list after\n> c\n",
        ]
        for quote in quotes {
            for size in [1, 3, 17] where !streamsAsAWholeParse(quote + quote, size: size) { return }
        }
    }

    func testDefinitionsInTheKeptItemsOfAListOrQuoteStillDefine() {
        // Found in an item's (a quote's child's) paragraph, they are held by
        // the list (quote): the ones of the kept children count after a resume.
        for text in ["- [a]: /url\n- x\n- text [a]\n- y [a]\n", "> [a]: /url\n>\n> x\n>\n> text [a]\n>\n> y [a]\n",
                     "1. one\n\n   [a]: /u\n2. two\n3. three [a]\n"] {
            for size in [1, 3, 17] where !streamsAsAWholeParse(text, size: size) { return }
            var stream = MarkdownStream()
            stream.update(text, appendedOnly: true)
            XCTAssertTrue(stream.blocks.last.map { "\($0)".contains("url: Optional(\"/u") } ?? false, text)
        }
    }

    // MARK: - A long paragraph: its inlines read on from a checkpoint

    func testAnAppendToALongParagraphReadsItsInlinesOnlyFromItsLastCheckpoint() {
        var stream = MarkdownStream()
        // 20 times "see *this* now " (15 bytes): 299 bytes once the last blank is trimmed.
        var text = String(repeating: "see *this* now ", count: 20)
        stream.update(text, appendedOnly: true)
        XCTAssertEqual(stream.inlineRestart, 285, "after a blank, every opener before it closed, 32 bytes or more after the one before")
        XCTAssertEqual(stream.blocks, Markdown.parse(text))
        // An opener not closed yet holds the checkpoint before it.
        text += "a *b" + String(repeating: " xx", count: 40)
        stream.update(text, appendedOnly: true)
        XCTAssertEqual(stream.inlineRestart, 289, "the first checkpoint of this read (285 + 4); none after the open \"*b\"")
        XCTAssertEqual(stream.blocks, Markdown.parse(text))
        text += "* and on" + String(repeating: " yy", count: 40)
        streamAndCompare(&stream, text)
        XCTAssertEqual(stream.blocks[0].spans.filter { $0.styles == .italic }.count, 21, "20 times \"this\", and \"b xx … xx\"")
        XCTAssertEqual(stream.inlineRestart, 529, "past the closed opener (430), then 32 bytes or more apart after a blank: 463, 496, 529")
    }

    func testReleasingTheOpenTextEmptiesTheLastBlocksTextUntilTheNextUpdateReadsItAgain() {
        var stream = MarkdownStream()
        stream.update("# Title\n\nsome words", appendedOnly: true)
        stream.releaseOpenText()
        XCTAssertEqual(stream.blocks.map(\.text), ["Title", ""], "the open paragraph's text, not the final heading's")
        streamAndCompare(&stream, "# Title\n\nsome words and *more*")
        // A paragraph closed by a blank line is final: its text stays.
        stream = MarkdownStream()
        stream.update("a paragraph\n\n", appendedOnly: true)
        stream.releaseOpenText()
        XCTAssertEqual(stream.blocks.map(\.text), ["a paragraph"])
        // An open code block's too goes, and comes back at the next update.
        stream = MarkdownStream()
        stream.update("```\nlet a = 1\nlet b", appendedOnly: true)
        stream.releaseOpenText()
        XCTAssertEqual(stream.blocks.map(\.text), [""])
        streamAndCompare(&stream, "```\nlet a = 1\nlet b = 2\n")
    }

    func testALongParagraphsNewTextIsBuiltInTheStorageItsHolderLends() {
        func address(_ text: String) -> UInt? { text.utf8.withContiguousStorageIfAvailable { UInt(bitPattern: $0.baseAddress) } }
        var stream = MarkdownStream()
        var text = String(repeating: "see *this* now ", count: 20)
        stream.update(text, appendedOnly: true)
        // The holder takes the text (the stream lets it go) and grows it as the plain delta " and" goes on it.
        var held = stream.blocks[0].text
        stream.releaseOpenText()
        held += " and"
        // Room for what the parse appends (else it may move, as any string that grows).
        held.reserveCapacity(held.utf8.count + 64)
        text += " and *that*"
        stream.lend(held)
        let lent = address(held)
        held = ""
        stream.update(text, appendedOnly: true)
        XCTAssertEqual(stream.blocks, Markdown.parse(text))
        XCTAssertEqual(address(stream.blocks[0].text), lent, "built where the lent text lies")
        // A lent text that does not begin as the last parse's is not used.
        stream.lend("something else entirely, long enough to hold the text" + String(repeating: " and more", count: 40))
        text += " then *more*"
        streamAndCompare(&stream, text)
    }

    func testALongParagraphInAListItemOrAQuoteReadsItsInlinesFromItsLastCheckpoint() {
        // The last block at any depth: the last item's paragraph, a quote's.
        for (opening, offset) in [("- first\n- ", 285), ("> ", 285), ("1. a\n\n   > ", 285)] {
            var stream = MarkdownStream()
            var text = opening + String(repeating: "see *this* now ", count: 20)
            stream.update(text, appendedOnly: true)
            XCTAssertEqual(stream.inlineRestart, offset, opening)
            XCTAssertEqual(stream.blocks, Markdown.parse(text), opening)
            text += "a *b" + String(repeating: " xx", count: 40) + "*"
            stream.update(text, appendedOnly: true)
            XCTAssertEqual(stream.blocks, Markdown.parse(text), opening)
        }
        // A short last paragraph is read whole: no checkpoint.
        var stream = MarkdownStream()
        stream.update("- first\n- see *this* now", appendedOnly: true)
        XCTAssertNil(stream.inlineRestart)
    }

    func testWhatMayStillCloseHoldsAParagraphsCheckpointBeforeIt() {
        let words = String(repeating: "plain words go on ", count: 8)  // 144 bytes
        for (opening, closing) in [("`code", "` done"), ("<b", "r> done"), ("[link](/u \"a title", "\") done"), ("[a][b", "] done"),
                                   ("**strong", "** done"), ("[bracket", "] done"), ("<!-- note", " --> done")] {
            var stream = MarkdownStream()
            var text = words + opening + " " + words
            stream.update(text, appendedOnly: true)
            XCTAssertEqual(stream.blocks, Markdown.parse(text), opening)
            XCTAssertLessThanOrEqual(stream.inlineRestart ?? 0, 144, "\(opening) is still open")
            text += closing + " " + words
            stream.update(text, appendedOnly: true)
            XCTAssertEqual(stream.blocks, Markdown.parse(text), opening)
        }
    }

    func testTheSpacesBeforeABackslashHardBreakAreDroppedWhenAParagraphIsReadOnFromACheckpoint() {
        // 72 bytes of words, then spaces and a backslash: the line ending after it makes a hard break.
        let words = String(repeating: "plain words ", count: 6)
        let text = words + "then  \\\nnext line and more  \\\nlast"
        var stream = MarkdownStream()
        var sent = ""
        for character in text {
            sent.append(character)
            stream.update(sent, appendedOnly: true)
            XCTAssertEqual(stream.blocks, Markdown.parse(sent), sent.debugDescription)
        }
        XCTAssertEqual(stream.blocks.first?.text, words + "then\nnext line and more\nlast")
    }

    func testLongParagraphsWithInlineSyntaxStreamedInTokensEqualAWholeParse() {
        let pieces = ["word ", "more words ", "*em* ", "**strong** ", "_under_ ", "`code` ", "``two`` ", "`", "*", "**", "_", "~~s~~ ",
                      "[l](http://x.y) ", "[ref] ", "[r][ref] ", "![img](/i.png) ", "<b>raw</b> ", "<", "a < b ", "&amp; ", "&amp",
                      "\\* ", "www.ex.com ", "me@ex.com ", "](", "[", "] ", "  \n", "\n", "x*y ", "(*) ", "<http://a.b> ", "<!-- c ",
                      "--> ", "[l](/u \"t ", "\") "]
        var generator = SplitMix(seed: 0xFA5A)
        for round in 0..<12 {
            var text = ""
            for _ in 0..<(40 + Int(generator.next() % 80)) { text += pieces[Int(generator.next() % UInt64(pieces.count))] }
            if round % 4 == 0 { text += "\n\n[ref]: /defined\n" }
            for size in [1, 4, 13] where !streamsAsAWholeParse(text, size: size) { return }
        }
    }
}
