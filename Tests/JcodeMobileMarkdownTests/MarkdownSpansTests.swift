import XCTest
@testable import JcodeMobileMarkdown

/// The runs of a block held in shared chunks (`MarkdownSpans`): read as an
/// array, whatever copies share and whatever chunk a run is in.
final class MarkdownSpansTests: XCTestCase {
    /// Runs "r0", "r1", … with every third one bold.
    private func runs(_ count: Int, from first: Int = 0) -> MarkdownSpans {
        var spans = MarkdownSpans()
        for k in first..<(first + count) { spans.append(MarkdownSpan(text: "r\(k)", styles: k % 3 == 0 ? .bold : [])) }
        return spans
    }

    func testRunsAppendedPastSeveralChunksReadBackInOrderWithTheirLengthAndStyle() {
        let spans = runs(150)
        XCTAssertEqual(spans.count, 150)
        XCTAssertEqual(spans[0], MarkdownSpan(text: "r0", styles: .bold))
        XCTAssertEqual(spans[63], MarkdownSpan(text: "r63", styles: .bold))
        XCTAssertEqual(spans[64], MarkdownSpan(text: "r64"))
        XCTAssertEqual(spans[149], MarkdownSpan(text: "r149"))
        XCTAssertEqual(spans.utf8Count, 490, "r0…r9: 2 bytes, r10…r99: 3, r100…r149: 4")
        XCTAssertFalse(spans.isPlain)
        XCTAssertTrue(MarkdownSpans([MarkdownSpan(text: "a"), MarkdownSpan(text: "b")]).isPlain)
    }

    func testACopyThatChangesLeavesTheOriginalAsItWas() {
        let original = runs(130)
        var copy = original
        copy.append(MarkdownSpan(text: "more", styles: .italic))
        copy[5] = MarkdownSpan(text: "changed")
        copy[129].text += "!"
        XCTAssertEqual(original.count, 130)
        XCTAssertEqual(original[5], MarkdownSpan(text: "r5"))
        XCTAssertEqual(original[129], MarkdownSpan(text: "r129", styles: .bold))
        XCTAssertEqual(original.utf8Count, 410)
        XCTAssertEqual(copy.count, 131)
        XCTAssertEqual(copy[5], MarkdownSpan(text: "changed"))
        XCTAssertEqual(copy[129], MarkdownSpan(text: "r129!", styles: .bold))
        XCTAssertEqual(copy[130], MarkdownSpan(text: "more", styles: .italic))
        XCTAssertEqual(copy.utf8Count, 420, "\"r5\" became \"changed\" (+5), a \"!\" (+1), \"more\" (+4)")
    }

    func testListsBuiltApartCompareRunByRunAcrossChunks() {
        XCTAssertEqual(runs(200), runs(200), "the same runs in chunks of their own")
        XCTAssertEqual(runs(200).commonPrefixCount(with: runs(200)), 200)
        var other = runs(200)
        other[130] = MarkdownSpan(text: "x")
        XCTAssertNotEqual(runs(200), other)
        XCTAssertEqual(runs(200).commonPrefixCount(with: other), 130)
        XCTAssertEqual(runs(200).commonPrefixCount(with: runs(70)), 70, "one is the start of the other")
        XCTAssertEqual(runs(64).commonPrefixCount(with: runs(128)), 64)
        XCTAssertNotEqual(runs(64), runs(65))
    }

    func testACopyGrownAtItsEndSharesTheRunsBefore() {
        let before = runs(300)
        var after = before
        after.append(MarkdownSpan(text: "next"))
        XCTAssertEqual(after.commonPrefixCount(with: before), 300)
        XCTAssertEqual(Array(after[300...]), [MarkdownSpan(text: "next")])
    }

    func testRemovingTheLastRunsAcrossChunksThenAppendingEqualsAListBuiltSo() {
        var spans = runs(200)
        spans.removeSuffix(keeping: 60)
        XCTAssertEqual(spans.count, 60)
        XCTAssertEqual(spans, runs(60))
        XCTAssertEqual(spans.utf8Count, 170)
        spans.append(contentsOf: runs(5, from: 60))
        XCTAssertEqual(spans, runs(65))
        spans.removeSuffix(keeping: 0)
        XCTAssertEqual(spans, [])
        XCTAssertEqual(spans.utf8Count, 0)
        XCTAssertTrue(spans.isPlain)
    }
}
