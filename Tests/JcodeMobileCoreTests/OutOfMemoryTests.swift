import XCTest
@testable import JcodeMobileCore
@testable import JcodeMobileJSON

/// The core's own buffers (the answer a call hands to C, the tokens of an
/// input) report exhausted memory instead of ending the process. Exhaustion
/// is simulated here with a limit; harness/c/oom.c does it for real, under
/// RLIMIT_AS.
final class OutOfMemoryTests: XCTestCase {
    func testAWriterThatCannotGrowStopsWritingAndSaysSo() {
        var w = JSONWriter(capacity: 16, limit: 64)
        w.objectStart()
        w.key("text"); w.string(String(repeating: "x", count: 100))
        w.key("after"); w.int(12_345)
        w.objectEnd()
        XCTAssertTrue(w.failed)
        XCTAssertEqual(w.count, 0, "the lost document is not half-kept")
        XCTAssertEqual(w.text, "")
        let text = w.cString()
        XCTAssertNil(text, "no C string: the ABI answers out_of_memory")
    }

    func testAFailedWriterIsUsableAgainAfterAReset() {
        var w = JSONWriter(capacity: 16, limit: 300)
        w.string(String(repeating: "y", count: 400))
        XCTAssertTrue(w.failed)
        w.reset()
        XCTAssertFalse(w.failed)
        w.objectStart(); w.key("ok"); w.bool(true); w.objectEnd()
        XCTAssertEqual(w.text, #"{"ok":true}"#)
        let text = w.cString().map { String(cString: $0) }
        XCTAssertEqual(text, #"{"ok":true}"#)
    }

    func testACopyOfAFailedWriterHasFailedToo() {
        var w = JSONWriter(capacity: 16, limit: 32)
        w.string(String(repeating: "z", count: 40))
        let copy = JSONWriter(copying: w)
        XCTAssertTrue(copy.failed)
        let text = copy.cString()
        XCTAssertNil(text)
    }

    func testTokensThatDoNotFitAreOutOfMemoryAndTheWorkspaceParsesTheNextInput() {
        var workspace = JSONParser.Workspace(tokenLimit: 4)
        var big = "[1,2,3,4,5]"
        let refused = big.withUTF8 { bytes in
            Result { () throws(CoreError) in try JSONParser.parse(bytes, workspace: &workspace) }
        }
        XCTAssertEqual(
            refused, .failure(CoreError(.outOfMemory, "out of memory: the tokens of this 11-byte input do not fit (4 did)")))
        var small = "[1,2]"
        let parsed = small.withUTF8 { bytes in
            Result { () throws(CoreError) in try JSONParser.parse(bytes, workspace: &workspace) }
        }
        XCTAssertEqual(parsed, .success([1, 2]))
    }

    func testOutOfMemoryIsAStableCodeWithItsMeaningInTheReference() {
        XCTAssertEqual(ErrorCode.outOfMemory.rawValue, "out_of_memory")
        XCTAssertTrue(ABIReference.markdown().contains("| `out_of_memory` | the answer (or the tokens of the input) could not be allocated;"))
    }
}
