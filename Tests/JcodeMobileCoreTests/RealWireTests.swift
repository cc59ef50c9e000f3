import XCTest
@testable import JcodeMobileCore
@testable import JcodeMobileJSON
import JcodeMobileTestSupport

/// Ground truth for the wire: the vectors jcode's own protocol crate wrote
/// (Tests/Fixtures/realwire, see its README for the jcode commit and how they
/// were made). Every server event jcode can serialize is taken by a connected
/// app without a "malformed" drop, and every request the core can send has the
/// shape of jcode's own serialization of that request.
final class RealWireTests: XCTestCase {
    /// One line of a vector file: `{"kind","variant","json"}`.
    private struct Vector {
        let kind: String
        let variant: String
        let json: JSONValue
        var type: String { json["type"]?.stringValue ?? "" }
    }

    private static let folder = URLPath.repositoryRoot + "/Tests/Fixtures/realwire"

    private func lines(_ name: String, file: StaticString = #filePath, line: UInt = #line) -> [JSONValue] {
        guard let text = readFile(Self.folder + "/" + name) else {
            XCTFail("fixture \(name) is missing from Tests/Fixtures/realwire", file: file, line: line)
            return []
        }
        return text.split(separator: "\n").map { json(String($0), file: file, line: line) }
    }

    private func vectors(_ name: String) -> [Vector] {
        lines(name).compactMap { row in
            guard let kind = row["kind"]?.stringValue, let variant = row["variant"]?.stringValue, let value = row["json"] else {
                XCTFail("a line of \(name) is not {kind, variant, json}: \(row.jsonString)")
                return nil
            }
            return Vector(kind: kind, variant: variant, json: value)
        }
    }

    // MARK: - Server events

    /// Sends `line` as one raw frame to a freshly connected app and returns
    /// the notes its log entry holds, after checking the call succeeded.
    private func deliver(
        _ line: String, _ label: String, to driver: AppDriver = AppDriver(#"{"scenario":"connected_chat"}"#),
        file: StaticString = #filePath, lineNumber: UInt = #line
    ) -> [String] {
        guard let socket = driver.app.state.connection.socketEffectID else {
            XCTFail("connected_chat has no open socket", file: file, line: lineNumber)
            return []
        }
        let event: JSONValue = ["type": "websocket_event", "effect_id": .int(Int64(socket.rawValue)), "line": .string(line)]
        driver.event(event.jsonString, file: file, line: lineNumber)  // the call succeeds, its report is valid
        let logs = json(driver.app.logsJSON(limit: 1).string, file: file, line: lineNumber)
        guard let entry = logs["entries"]?.arrayValue?.last, entry["type"] == "websocket_event" else {
            XCTFail("\(label): no log entry for the event: \(logs.jsonString)", file: file, line: lineNumber)
            return []
        }
        return (entry["notes"]?.arrayValue ?? []).compactMap(\.stringValue)
    }

    private func checkEveryEvent(of name: String) {
        let events = vectors(name).filter { $0.kind == "event" }
        XCTAssertEqual(events.count, 71, "\(name): every ServerEvent of jcode's wire.rs")
        for vector in events {
            let label = "\(name) \(vector.variant) (\(vector.type))"
            let notes = deliver(vector.json.jsonString, label)
            let dropped = notes.filter { $0.contains("malformed server event dropped") }
            XCTAssertEqual(dropped, [], "\(label): jcode's own serialization was dropped as malformed")
        }
    }

    func testEveryServerEventWithEveryFieldSetIsTaken() { checkEveryEvent(of: "wire_vectors.jsonl") }

    func testEveryServerEventWithEveryOptionalFieldEmptyIsTaken() { checkEveryEvent(of: "wire_vectors_min.jsonl") }

    func testABareEmptyObjectLineIsDroppedWithANoteAndTheConnectionStays() {
        let driver = AppDriver(#"{"scenario":"connected_chat"}"#)
        let notes = deliver("{}", "a bare {} line", to: driver)
        XCTAssertEqual(notes, [#"malformed server event dropped: missing required field "type""#])
        XCTAssertEqual(driver.effects, [], "nothing is sent or closed")
        XCTAssertEqual(driver.state["connection"]?["phase"], "connected")
        XCTAssertEqual(driver.state["connection"]?["socket_open"], true)
    }

    /// The nested enums the core reads, each variant put in the event that
    /// carries it (jcode's full vector of that event, one member replaced).
    func testEveryVariantOfTheNestedEnumsTheCoreReadsIsTaken() {
        let events = Dictionary(vectors("wire_vectors.jsonl").filter { $0.kind == "event" }.map { ($0.type, $0.json) }) { a, _ in a }
        /// type_path → (the event, how to put the variant into it)
        let places: [String: (event: String, put: (inout JSONObject, JSONValue) -> Void)] = [
            "jcode_protocol::NotificationType": ("notification", { $0["notification_type"] = $1 }),
            "jcode_config_types::CompactionMode": ("history", { $0["compaction_mode"] = $1 }),
            "jcode_session_types::RenderedImageSource": ("history", { Self.putIntoFirstImage(&$0, "source", $1) }),
            "jcode_session_types::RenderedImageAnchor": ("history", { Self.putIntoFirstImage(&$0, "anchor", $1) }),
        ]
        var tried: [String: Int] = [:]
        for row in lines("nested_enum_vectors.jsonl") {
            guard let path = row["type_path"]?.stringValue, let place = places[path], let value = row["json"] else { continue }
            guard var event = events[place.event]?.objectValue else {
                XCTFail("\(place.event) is missing from wire_vectors.jsonl")
                continue
            }
            place.put(&event, value)
            let label = "\(path) \(row["variant"]?.stringValue ?? "?") in \(place.event)"
            let dropped = deliver(JSONValue.object(event).jsonString, label).filter { $0.contains("malformed server event dropped") }
            XCTAssertEqual(dropped, [], "\(label): dropped as malformed")
            tried[path, default: 0] += 1
        }
        XCTAssertEqual(tried, [
            "jcode_protocol::NotificationType": 3, "jcode_config_types::CompactionMode": 3,
            "jcode_session_types::RenderedImageSource": 3, "jcode_session_types::RenderedImageAnchor": 2,
        ])
    }

    private static func putIntoFirstImage(_ event: inout JSONObject, _ member: String, _ value: JSONValue) {
        guard var images = event["images"]?.arrayValue, var first = images.first?.objectValue else { return }
        first[member] = value
        images[0] = .object(first)
        event["images"] = .array(images)
    }

    // MARK: - Requests

    /// What jcode's decoder says of each field of each request type:
    /// `type → field → (required, null accepted)`.
    private func probes() -> [String: [String: (required: Bool, nullAccepted: Bool)]] {
        var table: [String: [String: (required: Bool, nullAccepted: Bool)]] = [:]
        for row in lines("request_acceptance.jsonl") where row["case"]?.stringValue == "field_probe" {
            guard let type = row["type"]?.stringValue, let field = row["field"]?.stringValue,
                  let missing = row["accepted_when_missing"]?.boolValue, let null = row["accepted_when_null"]?.boolValue
            else {
                XCTFail("a field_probe line lacks type, field or the verdicts: \(row.jsonString)")
                continue
            }
            table[type, default: [:]][field] = (required: !missing, nullAccepted: null)
        }
        return table
    }

    /// The JSON shape of a value, as a short name (`[[string]]` for images).
    private func shape(_ value: JSONValue) -> String {
        switch value {
        case .null: return "null"
        case .bool: return "boolean"
        case .int: return "integer"
        case .double: return "number"
        case .string: return "string"
        case .object: return "object"
        case .array(let items): return "[" + (items.first.map(shape) ?? "") + "]"
        }
    }

    func testEveryRequestTheCoreSendsHasTheShapeOfJcodesOwnSerialization() {
        let jcode = Dictionary(vectors("wire_vectors.jsonl").filter { $0.kind == "request" }.map { ($0.type, $0) }) { a, _ in a }
        XCTAssertEqual(jcode.count, 77, "every Request of jcode's wire.rs")
        let probes = probes()
        XCTAssertEqual(
            Set(WireSpecTests.sampleRequests.map(\.type)), Set(GatewayRequest.Kind.allCases.map(\.rawValue)), "every request kind has a sample")
        for request in WireSpecTests.sampleRequests {
            let type = request.type
            let sent = json(request.line(id: 7))
            guard let reference = jcode[type] else {
                // permission_response is answered only to a permission_request,
                // which today's jcode never sends (GatewayRequest.swift says so).
                XCTAssertEqual(type, "permission_response", "\(type): jcode has no such request")
                continue
            }
            guard let fields = sent.objectValue, let expected = reference.json.objectValue, let rules = probes[type] else {
                XCTFail("\(type): no field probes in request_acceptance.jsonl")
                continue
            }
            XCTAssertEqual(sent["type"], reference.json["type"], "\(type): the tag")
            for (field, rule) in rules where rule.required {
                XCTAssertNotNil(fields[field], "\(type): jcode requires \(field); the core's \(sent.jsonString) lacks it")
            }
            for (field, value) in fields.entries {
                guard let theirs = expected[field] else {
                    XCTFail("\(type): the core writes \(field), which jcode's \(reference.variant) does not have")
                    continue
                }
                if value.isNull {
                    XCTAssertEqual(rules[field]?.nullAccepted, true, "\(type): \(field) is null, which jcode's decoder rejects")
                } else {
                    XCTAssertEqual(shape(value), shape(theirs), "\(type): \(field) has jcode's type")
                }
            }
        }
    }

    /// The fixtures say what the requests above rely on: that an absent
    /// optional field is fine and a `null` one is not, for the fields the
    /// core leaves out when it has nothing to say.
    func testJcodeRejectsNullForTheOptionalFieldsTheCoreOmits() {
        let probes = probes()
        for (type, field) in [("message", "images"), ("soft_interrupt", "images")] {
            XCTAssertEqual(probes[type]?[field]?.required, false, "\(type).\(field) may be absent")
            XCTAssertEqual(probes[type]?[field]?.nullAccepted, false, "\(type).\(field) must not be null")
        }
        XCTAssertEqual(
            WireSpecTests.sampleRequests.filter { $0.line(id: 1).contains("null") }.map(\.type), [],
            "the core never writes null in a request")
    }
}
