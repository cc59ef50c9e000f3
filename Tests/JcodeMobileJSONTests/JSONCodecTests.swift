import XCTest
@testable import JcodeMobileJSON

final class JSONParserTests: XCTestCase {
    private func parse(_ text: String, limits: JSONLimits = .default) -> Result<JSONValue, CoreError> {
        do throws(CoreError) {
            return .success(try JSONParser.parse(text, limits: limits))
        } catch {
            return .failure(error)
        }
    }

    private func parseBytes(_ bytes: [UInt8]) -> Result<JSONValue, CoreError> {
        bytes.withUnsafeBufferPointer { buffer in
            do throws(CoreError) {
                return .success(try JSONParser.parse(buffer))
            } catch {
                return .failure(error)
            }
        }
    }

    private func error(_ text: String, limits: JSONLimits = .default) -> CoreError? {
        if case .failure(let e) = parse(text, limits: limits) { return e }
        return nil
    }

    func testParsesEveryKindOfValue() {
        XCTAssertEqual(
            try parse(#" {"a": [1, -2, 3.5, 1e3, true, false, null, "x"], "b": {}} "#).get(),
            ["a": [1, -2, 3.5, 1000.0, true, false, nil, "x"], "b": .object(JSONObject())])
    }

    func testNestedContainersKeepTheirKeys() {
        let text = #"{"a":{"b":{"c":1}},"d":[{"e":2},[3,{"f":[]}]],"g":{}}"#
        XCTAssertEqual(try parse(text).get(), ["a": ["b": ["c": 1]], "d": [["e": 2], [3, ["f": []]]], "g": .object(JSONObject())])
        XCTAssertEqual(try parse(text).get().jsonString, text)
    }

    func testAReusedWorkspaceGivesTheSameResults() {
        var workspace = JSONParser.Workspace()
        for text in [#"{"a":[1,{"b":"é"}]}"#, "[", #"{"x":"y"}"#, #"[[[]]]"#] {
            var copy = text
            let reused = copy.withUTF8 { b in Result { () throws(CoreError) in try JSONParser.parse(b, workspace: &workspace) } }
            let fresh = parse(text)
            switch (reused, fresh) {
            case (.success(let a), .success(let b)): XCTAssertEqual(a, b, text)
            case (.failure(let a), .failure(let b)): XCTAssertEqual(a, b, text)
            default: XCTFail(text)
            }
        }
    }

    func testKeepsObjectKeysInOrderAndLastDuplicateWins() {
        let value = try? parse(#"{"z":1,"a":2,"z":3}"#).get()
        XCTAssertEqual(value?.objectValue?.keys, ["z", "a", "z"])
        XCTAssertEqual(value?["z"], 3)
    }

    func testIntegersStayExactAcrossTheWhole64BitRange() {
        XCTAssertEqual(try parse("9223372036854775807").get(), .int(Int64.max))
        XCTAssertEqual(try parse("-9223372036854775808").get(), .int(Int64.min))
        XCTAssertEqual(try parse("9223372036854775808").get(), .double(9223372036854775808.0), "beyond Int64: a double")
        XCTAssertEqual(try parse("-0").get(), .int(0))
        XCTAssertEqual(try parse("0.5e-3").get(), .double(0.0005))
    }

    /// What an integer field reads from a literal: `JSONTape.integer(at:)`.
    private func integer(_ literal: String) -> Int64?? {
        var text = literal
        return text.withUTF8 { bytes in
            var workspace = JSONParser.Workspace()
            return try? JSONParser.withTape(bytes, workspace: &workspace) { (tape) throws(CoreError) -> Int64? in tape.integer(at: 0) }
        }
    }

    func testAnIntegerIsReadFromTheLiteralsDigitsNeverRoundedClampedOrWrapped() {
        // The ends of the 64-bit range, and one beyond each.
        XCTAssertEqual(integer("9223372036854775807"), .some(Int64.max))
        XCTAssertEqual(integer("-9223372036854775808"), .some(Int64.min))
        XCTAssertEqual(integer("9223372036854775808"), .some(nil), "one beyond Int64.max does not fit (was refused as \"got integer\")")
        XCTAssertEqual(integer("-9223372036854775809"), .some(nil), "one beyond Int64.min does not fit (was read as Int64.min)")
        XCTAssertEqual(integer("18446744073709551616"), .some(nil))
        // Thirty digits, and far more.
        XCTAssertEqual(integer("123456789012345678901234567890"), .some(nil))
        XCTAssertEqual(integer("-123456789012345678901234567890"), .some(nil))
        XCTAssertEqual(integer("1" + String(repeating: "0", count: 10_000)), .some(nil))
        XCTAssertEqual(integer("0000"), nil, "leading zeros are not JSON")
        // Zero in every spelling.
        XCTAssertEqual(integer("-0"), .some(0))
        XCTAssertEqual(integer("-0.0"), .some(0))
        XCTAssertEqual(integer("0e999999999999999999999"), .some(0))
        XCTAssertEqual(integer("0.000e-5"), .some(0))
        // Exponents and fractions: a whole number is an integer however it is written.
        XCTAssertEqual(integer("1e3"), .some(1000))
        XCTAssertEqual(integer("1E+3"), .some(1000))
        XCTAssertEqual(integer("1000.0"), .some(1000))
        XCTAssertEqual(integer("10000e-1"), .some(1000))
        XCTAssertEqual(integer("1.5e1"), .some(15))
        XCTAssertEqual(integer("-2.50e2"), .some(-250))
        XCTAssertEqual(integer("9.223372036854775807e18"), .some(Int64.max))
        XCTAssertEqual(integer("-9.223372036854775808e18"), .some(Int64.min))
        XCTAssertEqual(integer("9.223372036854775808e18"), .some(nil))
        XCTAssertEqual(integer("1e19"), .some(nil))
        XCTAssertEqual(integer("1.5"), .some(nil), "a fraction is not an integer")
        XCTAssertEqual(integer("1e-1"), .some(nil))
        XCTAssertEqual(integer("1.0000000000000001"), .some(nil), "a double would round this to 1")
        XCTAssertEqual(integer("1e99999999999999999999"), .some(nil), "a huge exponent is answered at once")
        XCTAssertEqual(integer("1e-99999999999999999999"), .some(nil))
        // Beyond a double's precision, still exact.
        XCTAssertEqual(integer("9007199254740993"), .some(9_007_199_254_740_993))
        XCTAssertEqual(integer("9007199254740993.0"), .some(9_007_199_254_740_993), "a double would round this to …992")
        XCTAssertEqual(integer("\"7\""), .some(nil), "a string is not a number")
    }

    func testALiteralIsAWholeNumberAFractionOrBeyondSixtyFourBits() {
        XCTAssertEqual(JSONTape.wholeNumber("-9223372036854775808"), .exact(Int64.min))
        XCTAssertEqual(JSONTape.wholeNumber("9223372036854775808"), .beyond(negative: false))
        XCTAssertEqual(JSONTape.wholeNumber("-9223372036854775809"), .beyond(negative: true))
        XCTAssertEqual(JSONTape.wholeNumber("-1e30"), .beyond(negative: true))
        XCTAssertEqual(JSONTape.wholeNumber("2.5"), .fraction)
        XCTAssertEqual(JSONTape.wholeNumber("-0e-7"), .exact(0))
        XCTAssertEqual(JSONTape.wholeNumber("\"1\""), nil)
        XCTAssertEqual(JSONTape.wholeNumber("01"), nil, "not JSON")
    }

    func testAParsedDoubleIsAnIntegerOnlyWhereDoublesAreExact() {
        XCTAssertEqual(JSONValue.double(3.0).int64Value, 3)
        XCTAssertEqual(JSONValue.double(-9_007_199_254_740_991.0).int64Value, -9_007_199_254_740_991)
        XCTAssertEqual(JSONValue.double(3.5).int64Value, nil)
        XCTAssertEqual(JSONValue.double(9_007_199_254_740_992.0).int64Value, nil)
        XCTAssertEqual(try parse("-9223372036854775809").get().int64Value, nil, "never clamped to Int64.min")
        XCTAssertEqual(try parse("9223372036854775808").get().int64Value, nil)
        XCTAssertEqual(try parse("1e400").get().int64Value, nil)
    }

    func testDecodesEveryEscapeIncludingSurrogatePairs() {
        XCTAssertEqual(try parse(#""\"\\\/\b\f\n\r\t""#).get(), .string("\"\\/\u{8}\u{c}\n\r\t"))
        XCTAssertEqual(try parse(#""\u00e9\u4e2d\ud83d\ude00""#).get(), .string("é中😀"))
        XCTAssertEqual(try parse(#""a\u0000b""#).get(), .string("a\u{0}b"))
    }

    func testRejectsLoneSurrogatesWithTheirOffset() {
        XCTAssertEqual(error(#""\ud83d""#)?.code, .invalidJSON)
        XCTAssertEqual(error(#""\ude00x""#)?.offset, 1)
        XCTAssertEqual(error(#""\ud83d\u0041""#)?.code, .invalidJSON)
    }

    func testReportsTheByteOffsetOfInvalidJSON() {
        let cases: [(String, Int)] = [
            ("", 0), ("{", 1), (#"{"a" 1}"#, 5), ("[1,]", 3), ("[1 2]", 3), ("tru", 0), ("01", 1), ("1.", 2),
            ("{\"a\":1}x", 7), ("\"a\tb\"", 2), (#"{"a":1,}"#, 7), (#"{1:2}"#, 1), ("-", 1), (#""\x""#, 2),
        ]
        for (text, offset) in cases {
            let e = error(text)
            XCTAssertEqual(e?.code, .invalidJSON, "\(text)")
            XCTAssertEqual(e?.offset, offset, "offset for \(text)")
        }
    }

    func testValidatesUTF8StrictlyWithTheOffsetOfTheFirstBadByte() {
        let prefix = Array(#"{"a":""#.utf8)
        let bad: [[UInt8]] = [
            [0xFF], [0xC0, 0x80] /* overlong */, [0xED, 0xA0, 0x80] /* surrogate */, [0xF4, 0x90, 0x80, 0x80] /* > U+10FFFF */,
            [0xE2, 0x82] /* truncated */, [0x80] /* stray continuation */,
        ]
        for sequence in bad {
            guard case .failure(let e) = parseBytes(prefix + sequence + Array("\"}".utf8)) else {
                XCTFail("accepted \(sequence)")
                continue
            }
            XCTAssertEqual(e.code, .invalidUTF8, "\(sequence)")
            XCTAssertEqual(e.offset, prefix.count, "\(sequence)")
        }
        XCTAssertEqual(try parseBytes(prefix + [0xF0, 0x9F, 0x98, 0x80] + Array("\"}".utf8)).get(), ["a": "😀"])
    }

    func testDepthAndSizeLimitsAnswerWithoutRecursing() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        XCTAssertEqual(error(deep)?.code, .tooDeep)
        let objects = String(repeating: "{\"a\":", count: 100_000)
        XCTAssertEqual(error(objects)?.code, .tooDeep)
        let atLimit = String(repeating: "[", count: 128) + String(repeating: "]", count: 128)
        XCTAssertNotNil(try? parse(atLimit).get(), "128 levels are allowed")
        XCTAssertEqual(error(String(repeating: " ", count: 33), limits: JSONLimits(maxBytes: 32))?.code, .tooLarge)
    }

    func testLongStringsWithEscapesRoundTrip() {
        let text = String(repeating: "abc\"def\\ghi\n", count: 1000) + "é😀"
        let encoded = JSONValue.string(text).jsonString
        XCTAssertEqual(try parse(encoded).get(), .string(text))
    }
}

final class JSONWriterTests: XCTestCase {
    func testWritesCompactJSONInInsertionOrder() {
        let value: JSONValue = ["ok": true, "n": -42, "d": 1.5, "s": "x", "a": [nil, false], "o": ["z": 1, "a": 2]]
        XCTAssertEqual(value.jsonString, #"{"ok":true,"n":-42,"d":1.5,"s":"x","a":[null,false],"o":{"z":1,"a":2}}"#)
    }

    func testEscapesQuotesBackslashesAndControlCharacters() {
        XCTAssertEqual(JSONValue.string("a\"b\\c\n\r\t\u{8}\u{c}\u{1}\u{1f}").jsonString, #""a\"b\\c\n\r\t\b\f\u0001\u001f""#)
        XCTAssertEqual(JSONValue.string("é😀\u{7f}").jsonString, "\"é😀\u{7f}\"")
        XCTAssertEqual(JSONValue.string("a\u{0}b").jsonString, #""a\u0000b""#)
    }

    func testWritesNumbersExactly() {
        var unsigned = JSONWriter()
        unsigned.arrayStart(); unsigned.uint(UInt64.max); unsigned.uint(1 << 63); unsigned.uint(0); unsigned.arrayEnd()
        XCTAssertEqual(unsigned.text, "[18446744073709551615,9223372036854775808,0]")
        XCTAssertEqual(JSONValue.int(Int64.min).jsonString, "-9223372036854775808")
        XCTAssertEqual(JSONValue.int(Int64.max).jsonString, "9223372036854775807")
        XCTAssertEqual(JSONValue.int(0).jsonString, "0")
        XCTAssertEqual(JSONValue.double(2).jsonString, "2.0")
        XCTAssertEqual(JSONValue.double(0.1).jsonString, "0.1")
        XCTAssertEqual(JSONValue.double(1e300).jsonString, "1e+300")
        XCTAssertEqual(JSONValue.double(.infinity).jsonString, "null", "JSON has no infinity")
        XCTAssertEqual(JSONValue.double(.nan).jsonString, "null")
    }

    /// Integers are written two digits at a time: every digit count and
    /// every boundary between counts.
    func testWritesEveryLengthOfIntegerDigitByDigit() {
        var values: [Int64] = [0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 1001, 12_345, 99_999_999, Int64.max, Int64.min, -1, -10, -99, -100]
        var power: Int64 = 1
        for _ in 0..<18 {
            power *= 10
            values += [power - 1, power, power + 1, -power, -(power - 1)]
        }
        for value in values {
            XCTAssertEqual(JSONValue.int(value).jsonString, String(value))
        }
        var w = JSONWriter()
        w.arrayStart()
        for value: UInt64 in [9_999_999_999_999_999_999, 10_000_000_000_000_000_000, UInt64.max - 1] { w.uint(value) }
        w.arrayEnd()
        XCTAssertEqual(w.text, "[9999999999999999999,10000000000000000000,18446744073709551614]")
    }

    /// A writer that starts in the caller's buffer moves to its own when
    /// the document outgrows it, keeping what was written.
    func testAWriterStartedInTheCallersBufferGrowsOutOfIt() {
        withUnsafeTemporaryAllocation(byteCount: 16, alignment: 1) { scratch in
            var w = JSONWriter(startingIn: scratch)
            w.arrayStart()
            w.string("short")
            XCTAssertEqual(w.text, #"["short""#)
            w.string(String(repeating: "long ", count: 40))
            w.arrayEnd()
            XCTAssertEqual(w.text, #"["short",""# + String(repeating: "long ", count: 40) + #""]"#)
            let text = w.cString()
            XCTAssertEqual(text.map { String(cString: $0) }, #"["short",""# + String(repeating: "long ", count: 40) + #""]"#)
            free(text)
        }
        withUnsafeTemporaryAllocation(byteCount: 64, alignment: 1) { scratch in
            var w = JSONWriter(startingIn: scratch)
            w.value(["k": "v"])
            let text = w.cString()
            XCTAssertEqual(text.map { String(cString: $0) }, #"{"k":"v"}"#, "a C string of a document still in the caller's buffer is a copy")
            free(text)
        }
    }

    /// The patch operations' bytes, written from fixed pieces.
    func testPatchOperationsAreWrittenExactly() {
        let path = JSONPath([.key("transcript"), .index(4), .key("a/b~c")])
        var w = JSONWriter()
        w.arrayStart()
        for op: JSONPatchOp in [
            .add(path: path, value: ["x": 1]), .remove(path: path), .replace(path: JSONPath([.key("draft")]), value: "é\"q\""),
            .append(path: JSONPath([]), text: "tail"),
        ] { op.write(to: &w) }
        w.arrayEnd()
        XCTAssertEqual(w.text, #"[{"op":"add","path":"/transcript/4/a~1b~0c","value":{"x":1}},{"op":"remove","path":"/transcript/4/a~1b~0c"},"#
            + #"{"op":"replace","path":"/draft","value":"é\"q\""},{"op":"append","path":"","value":"tail"}]"#)
        XCTAssertEqual(JSONDiff.op(from: "ab", to: "abc", at: JSONPath([.key("draft")])), .append(path: JSONPath([.key("draft")]), text: "c"))
        XCTAssertEqual(JSONDiff.op(from: "ab", to: "ab", at: JSONPath([.key("draft")])), nil)
        XCTAssertEqual(JSONDiff.op(from: "", to: "a", at: JSONPath([.key("draft")])), .replace(path: JSONPath([.key("draft")]), value: "a"))
        XCTAssertEqual(JSONDiff.op(from: "x\r", to: "x\r\n", at: JSONPath()), .replace(path: JSONPath(), value: "x\r\n"), "\r\n is one character")
    }

    func testEscapesAreFoundAtEveryOffsetOfTheEightByteScan() {
        for offset in 0..<24 {
            for special in ["\"", "\\", "\n", "\u{1}", "é", "😀", "\u{7f}"] {
                let text = String(repeating: "a", count: offset) + special + String(repeating: "b", count: offset % 9) + special
                let written = JSONValue.string(text).jsonString
                XCTAssertEqual(try JSONParser.parse(written), .string(text), "offset \(offset) \(special.debugDescription)")
                XCTAssertEqual(try JSONParser.parse(#"{"k":\#(written)}"#)["k"], .string(text))
            }
        }
    }

    func testEveryWrittenDocumentParsesBackToTheSameValue() {
        let values: [JSONValue] = [
            ["nested": [["deep": [1, 2, ["x": "y\u{2028}"]]]], "unicode": "中文 ✓", "empty": [], "null": nil],
            .array((0..<100).map { .int(Int64($0) * 987_654_321) }),
            .double(-123.456e-7),
        ]
        for value in values {
            XCTAssertEqual(try JSONParser.parse(value.jsonString), value)
        }
    }
}
