// The inline parser's plain-text shortcut: a text with nothing the inline
// syntax reads is its own text with no spans, without running the parser.
// What it lets through must be what the full parse makes of it.

import XCTest
@testable import JcodeMobileMarkdown
import JcodeMobileTestSupport

final class InlinePlainTextTests: XCTestCase {
    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    func testTextsWithNothingInlineAreTakenAsTheyAre() {
        XCTAssertEqual(InlineParser.plainText(bytes("src/module_12.swift")), "src/module_12.swift")
        XCTAssertEqual(InlineParser.plainText(bytes("Item 3: update the parser!")), "Item 3: update the parser!")
        XCTAssertEqual(InlineParser.plainText(bytes("a_b_c (x) #1 50% ok?")), "a_b_c (x) #1 50% ok?")
        XCTAssertEqual(InlineParser.plainText(bytes("Ünïcödé ✓ 日本")), "Ünïcödé ✓ 日本")
        XCTAssertEqual(InlineParser.plainText([]), "")
    }

    func testTextsTheSyntaxCouldReadGoToTheParser() {
        for text in ["*a*", "_a_", "a_", "_a", "é_é", "a__b", "`c`", "~~s~~", "[l](u)", "a\\*", "&amp;", "<b>",
                     "x@y.z", "see http://a.b", "www.example.com", "a\nb", "a]b"] {
            XCTAssertNil(InlineParser.plainText(bytes(text)), text)
        }
    }

    func testTheParseOfATextThatIsPlainHasNoSpans() {
        let read = InlineParser.parse(bytes("  | src/module_1.swift | 7 | ok |  "), definitions: [:])
        XCTAssertEqual(read.text, "| src/module_1.swift | 7 | ok |")
        XCTAssertEqual(read.spans, [])
        XCTAssertFalse(read.unresolved)
    }

    func testWhatTheShortcutTakesTheFullParseReadsTheSame() {
        // Random texts over an alphabet of letters, digits, "_" and the
        // punctuation the shortcut lets through or stops at.
        let alphabet = Array("ab1 _:/w.!?()#-é*`[]<&@~\\".unicodeScalars)
        var generator = SplitMix(seed: 36)
        var taken = 0
        for _ in 0..<4000 {
            var text = ""
            for _ in 0..<(1 + generator.next(upTo: 12)) {
                text.unicodeScalars.append(alphabet[generator.next(upTo: alphabet.count)])
            }
            let s = trimmed(Array(text.utf8))
            guard let plain = InlineParser.plainText(s) else { continue }
            taken += 1
            let full = InlineParser.parseFully(s, definitions: [:])
            XCTAssertEqual(full.text, plain, text)
            XCTAssertEqual(full.spans.filter { !$0.styles.isEmpty || $0.url != nil }, [], text)
        }
        XCTAssertGreaterThan(taken, 300)
    }
}
