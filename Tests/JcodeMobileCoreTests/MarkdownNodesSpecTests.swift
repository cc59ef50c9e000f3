import XCTest
import JcodeMobileTestSupport
@testable import JcodeMobileCore
import JcodeMobileMarkdown

/// The spec's examples through the path a streamed reply takes to the tree:
/// the markdown cache and its nodes. (The parser's own conformance is
/// JcodeMobileMarkdownTests' CommonMarkSpecTests.)
final class MarkdownNodesSpecTests: XCTestCase {
    /// Every example streamed in chunks of 1, 3 and 17 bytes (whole characters) through
    /// the path a streamed reply takes (`MarkdownCache`, as `StreamedRowPatch` calls it,
    /// and the `MarkdownStream` under it) equals a whole parse of the text so far, after every chunk.
    func testEveryExampleStreamedEqualsItsWholeParse() throws {
        guard let commonMark = SpecExamples.examples("commonmark-0.31.2.json"), let gfm = SpecExamples.examples("gfm-0.29-spec.json") else {
            throw XCTSkip("the spec examples are not in ../shared/commonmark")
        }
        var failures: [String] = []
        for (suite, examples) in [("commonmark", commonMark), ("gfm", gfm)] {
            for example in examples {
                for size in [1, 3, 17] {
                    if let failure = Self.streamed(example.markdown, chunk: size) {
                        failures.append("\(suite) \(example.number) chunk \(size): \(failure)")
                    }
                }
            }
        }
        XCTAssertEqual(failures, [], failures.prefix(20).joined(separator: "\n"))
    }

    /// Nil when streaming `text` in chunks of `size` bytes equals the whole parse at every step.
    static func streamed(_ text: String, chunk size: Int) -> String? {
        let cache = MarkdownCache()
        var stream = MarkdownStream()
        let scalars = Array(text.unicodeScalars)
        var sent = ""
        var bytes = 0
        var index = 0
        var first = true
        while index < scalars.count {
            var piece = ""
            while index < scalars.count && piece.utf8.count < size {
                piece.unicodeScalars.append(scalars[index])
                index += 1
            }
            sent += piece
            let nodes = cache.blocks(of: sent, prefix: "m", appendedTo: first ? nil : bytes).nodes
            stream.update(sent, appendedOnly: !first)
            first = false
            bytes = sent.utf8.count
            let whole = Markdown.parse(sent)
            if stream.blocks != whole { return "blocks differ after \(sent.debugDescription)" }
            if nodes != MarkdownNodes.nodes(whole, prefix: "m") { return "nodes differ after \(sent.debugDescription)" }
        }
        return nil
    }

    func testTheNodesCarryImagesAndBreaks() {
        let node = MarkdownNodes.node(Markdown.parse("![alt](s.png)  \nb")[0], id: "m.0")
        XCTAssertEqual(node.spans, [
            TextSpan("alt", .image, source: "s.png"), TextSpan("\n", .lineBreak), TextSpan("b"),
        ])
    }

    /// Streamed through the markdown cache a byte at a time: what a delta appended in place
    /// must not take for plain text (an HTML block's blanks, a definition being written, an
    /// escape, a delimiter run's flanking).
    func testStreamedDeltasThatChangeWhatCameBefore() {
        for text in ["<div></div>\n``` c\nint x", "[Foo\n  bar]: /url", "p\n\n[Foo\n  bar]: /url", "a \\-b", "ab _<!--__-|b",
                     "~~~\rabc", "<div>\na  \n\n"] {
            XCTAssertNil(Self.streamed(text, chunk: 1), text)
        }
    }
}
