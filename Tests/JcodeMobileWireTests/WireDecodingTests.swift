import XCTest
import JcodeMobileJSON
import JcodeMobileWire

/// The wire's declarations alone: a small union of its own, decoded both from
/// a parsed value and in place on a tape, as the core decodes its actions,
/// platform events and server events. The core's own unions are checked
/// member by member in the core's `WireSpecTests`.
final class WireDecodingTests: XCTestCase {
    enum Sample: Equatable {
        case ping
        case connect(host: String, port: Int, token: String?, retry: Int?)
        case files(names: [String], sizes: [Int])
        case move(x: Double, fast: Bool)
    }

    static let union = WireUnion<Sample>("sample", [
        MessageSpec("ping") { _ throws(CoreError) in .ping },
        MessageSpec("connect", fields: [
            FieldSpec("host", .string),
            FieldSpec("port", .stringOrInteger(.port)),
            .optional("token", .string, secret: true),
            .optional("retry", .integer(IntegerRange(0...60).orAbsent)),
        ]) { r throws(CoreError) in
            .connect(host: try r.string("host"), port: Int(try r.stringOrInteger("port")) ?? 0,
                     token: try r.optionalString("token"), retry: try r.optionalInt("retry"))
        },
        MessageSpec("files", fields: [
            FieldSpec("names", .array(.string)),
            FieldSpec("entries", .array(.record([FieldSpec("size", .integer(.count)), .optional("pin", .integer(.port), secret: true)]))),
        ]) { r throws(CoreError) in
            .files(names: try r.strings("names"),
                   sizes: try r.optionalRecords("entries") { e throws(CoreError) in
                       _ = try e.optionalInt("pin")
                       return try e.int("size")
                   } ?? [])
        },
        MessageSpec("move", fields: [FieldSpec("x", .number), .optional("fast", .boolean)]) { r throws(CoreError) in
            .move(x: try r.coordinate("x"), fast: try r.bool("fast", default: false))
        },
    ])

    /// Decodes `text` both ways, which must agree on the value or on the
    /// error's code and field; answers the in-place decoding, the hosts' path.
    func decode(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> Result<Sample, CoreError> {
        let parsed = Result { () throws(CoreError) in try Self.union.decode(try JSONParser.parse(text)) }
        var workspace = JSONParser.Workspace()
        var bytes = Array(text.utf8)
        let inPlace = bytes.withUnsafeMutableBufferPointer { buffer in
            Result { () throws(CoreError) in
                try JSONParser.withTape(UnsafeBufferPointer(buffer), workspace: &workspace) { tape throws(CoreError) in
                    try Self.union.decode(tape: tape)
                }
            }
        }
        switch (parsed, inPlace) {
        case (.success(let a), .success(let b)): XCTAssertEqual(a, b, "parsed and in place differ", file: file, line: line)
        case (.failure(let a), .failure(let b)):
            // A number's text as written is on the tape only: a parsed value
            // says it as it reads back (`1e+45`), so messages are the tape's.
            XCTAssertEqual([a.code.rawValue, a.field ?? "-"], [b.code.rawValue, b.field ?? "-"],
                           "parsed and in place differ", file: file, line: line)
        default: XCTFail("parsed \(parsed), in place \(inPlace)", file: file, line: line)
        }
        return inPlace
    }

    func error(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> [String] {
        guard case .failure(let e) = decode(text, file: file, line: line) else {
            XCTFail("\(text) decoded", file: file, line: line)
            return []
        }
        return [e.code.rawValue, e.field ?? "-", e.message]
    }

    func testEachMemberDecodesItsFields() {
        XCTAssertEqual(try decode(#"{"type":"ping"}"#).get(), .ping)
        XCTAssertEqual(try decode(#"{"type":"connect","host":"h","port":8080,"token":"t"}"#).get(),
                       .connect(host: "h", port: 8080, token: "t", retry: nil))
        XCTAssertEqual(try decode(#"{"type":"files","names":["a","b"],"entries":[{"size":1},{"size":2e0}]}"#).get(),
                       .files(names: ["a", "b"], sizes: [1, 2]))
        XCTAssertEqual(try decode(#"{"type":"move","x":-1.5}"#).get(), .move(x: -1.5, fast: false))
    }

    func testAStringOrIntegerFieldTakesATypedPort() {
        XCTAssertEqual(try decode(#"{"type":"connect","host":"h","port":"8080"}"#).get(),
                       .connect(host: "h", port: 8080, token: nil, retry: nil))
    }

    func testNullReadsAsAbsentAndAMissingRequiredFieldIsNamed() {
        XCTAssertEqual(try decode(#"{"type":"connect","host":"h","port":1,"token":null}"#).get(),
                       .connect(host: "h", port: 1, token: nil, retry: nil))
        XCTAssertEqual(error(#"{"type":"connect","port":1}"#),
                       ["invalid_field", "host", #"missing required field "host""#])
    }

    func testAnIntegerOutsideItsRangeIsRefusedNamingTheRange() {
        XCTAssertEqual(error(#"{"type":"connect","host":"h","port":70000}"#),
                       ["invalid_field", "port", #"field "port" must be a string or an integer from 1 to 65535, got 70000"#])
        XCTAssertEqual(error(#"{"type":"connect","host":"h","port":1.5}"#),
                       ["invalid_field", "port", #"field "port" must be a string or an integer from 1 to 65535, got 1.5"#])
    }

    func testABeyond64BitNumberIsCutShortInTheMessage() {
        let digits = String(repeating: "9", count: 45)
        XCTAssertEqual(error(#"{"type":"files","names":[],"entries":[{"size":\#(digits)}]}"#),
                       ["invalid_field", "entries[0].size",
                        #"field "size" must be an integer from 0 to 9223372036854775807, got 99999999999999999999999999999999… (45 characters)"#])
    }

    func testASecretNumberIsNotRepeated() {
        XCTAssertEqual(error(#"{"type":"files","names":[],"entries":[{"size":1,"pin":123456}]}"#).last,
                       #"field "pin" must be an integer from 1 to 65535, got another number"#)
    }

    func testAnOrAbsentRangeReadsANumberOutsideItAsAbsent() {
        XCTAssertEqual(try decode(#"{"type":"connect","host":"h","port":1,"retry":3600}"#).get(),
                       .connect(host: "h", port: 1, token: nil, retry: nil))
        XCTAssertEqual(error(#"{"type":"connect","host":"h","port":1,"retry":"soon"}"#).last,
                       #"field "retry" must be an integer from 0 to 60, got string"#)
    }

    func testNestedErrorsNameTheElementPath() {
        XCTAssertEqual(error(#"{"type":"files","names":["a",7],"entries":[]}"#),
                       ["invalid_field", "names[1]", #"element 1 of "names" must be a string, got integer"#])
        XCTAssertEqual(error(#"{"type":"files","names":[],"entries":[{"size":1},"x"]}"#),
                       ["invalid_field", "entries[1]", #"element 1 of "entries" must be an object, got string"#])
    }

    func testACoordinateMustBeFinite() {
        XCTAssertEqual(error(#"{"type":"move","x":1e400}"#),
                       ["invalid_field", "x", #"field "x" must be a finite number of points, got 1e400"#])
        XCTAssertEqual(error(#"{"type":"move","x":1,"fast":"yes"}"#).last, #"field "fast" must be a boolean, got string"#)
    }

    func testTheTypeIsCheckedBeforeAnyMember() {
        XCTAssertEqual(error(#"[1]"#), ["invalid_field", "$", "expected sample to be a JSON object, got array"])
        XCTAssertEqual(error(#"{"host":"h"}"#), ["invalid_field", "type", #"missing required field "type""#])
        XCTAssertEqual(error(#"{"type":3}"#), ["invalid_field", "type", #"field "type" must be a string, got integer"#])
        XCTAssertEqual(error(#"{"type":"pong"}"#), ["unknown_type", "type", #"unknown sample type "pong""#])
    }

    func testAnEscapedTypeNameIsTheSameName() {
        XCTAssertEqual(try decode(#"{"type":"p\u0069ng"}"#).get(), .ping)
    }

    func testTheTypeIndexTellsApartNamesOfOneLengthAndLastByte() {
        // "ab", "cb" and "zb" fall in one bucket (length 2, last byte "b").
        let index = WireTypeIndex(["ab", "cb", "zb", "abc"])
        XCTAssertEqual(["ab", "cb", "zb", "abc", "b", "xb", ""].map { index.position(of: $0) }, [0, 1, 2, 3, nil, nil, nil])
    }

    func testRedactionReplacesSecretsAtEveryDepth() throws {
        let object = try XCTUnwrap(JSONParser.parse(
            #"{"type":"files","names":["a"],"entries":{"size":1,"pin":9},"token":"t"}"#).objectValue)
        XCTAssertEqual(JSONValue.object(Redaction.redact(object, fields: [
            .optional("token", .string, secret: true),
            FieldSpec("entries", .record([FieldSpec("size", .integer(.count)), .optional("pin", .integer(.port), secret: true)])),
        ])).jsonString, #"{"type":"files","names":["a"],"entries":{"size":1,"pin":"[redacted]"},"token":"[redacted]"}"#)
        let connect = try XCTUnwrap(JSONParser.parse(#"{"type":"connect","host":"h","port":1,"token":"t"}"#).objectValue)
        XCTAssertEqual(JSONValue.object(Self.union.redact(connect)).jsonString, #"{"type":"connect","host":"h","port":1,"token":"[redacted]"}"#)
    }
}
