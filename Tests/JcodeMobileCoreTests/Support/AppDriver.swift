import XCTest
@testable import JcodeMobileCore
@testable import JcodeMobileJSON

/// Drives a whole app through its JSON boundary, as a host does: every
/// input is JSON text, every answer is read back from the report. The
/// persistence specifications use it because the snapshot is what the
/// reports carry (`storage_write`) and what `app_new` reads.
final class AppDriver {
    private(set) var app: JcodeMobileApp
    /// The effects of the last call, as the host received them.
    private(set) var effects: [JSONValue] = []
    /// Every `websocket_send` line of every call, in order.
    private(set) var sentLines: [String] = []

    /// `options`: the `app_new` argument (nil for NULL).
    init(_ options: String? = nil, file: StaticString = #filePath, line: UInt = #line) {
        var text = options ?? ""
        let made: JcodeMobileApp? = text.withUTF8 { bytes in
            do throws(CoreError) {
                return try JcodeMobileApp(optionsJSON: options == nil ? nil : bytes)
            } catch {
                XCTFail("app_new refused: \(error.message)", file: file, line: line)
                return nil
            }
        }
        app = made ?? JcodeMobileApp(options: AppOptions())
    }

    /// The error `app_new` answers `options` with, or nil when it accepts them.
    static func refusal(_ options: String) -> CoreError? {
        var text = options
        return text.withUTF8 { bytes in
            do throws(CoreError) {
                _ = try JcodeMobileApp(optionsJSON: bytes)
                return nil
            } catch {
                return error
            }
        }
    }

    @discardableResult
    func dispatch(_ json: String, file: StaticString = #filePath, line: UInt = #line) -> [JSONValue] {
        take(app.dispatch(json: json), json, file: file, line: line)
    }

    @discardableResult
    func event(_ json: String, file: StaticString = #filePath, line: UInt = #line) -> [JSONValue] {
        take(app.platformEvent(json: json), json, file: file, line: line)
    }

    /// One server event on the current socket.
    @discardableResult
    func server(_ eventJSON: String, file: StaticString = #filePath, line: UInt = #line) -> [JSONValue] {
        guard let socket = app.state.connection.socketEffectID else {
            XCTFail("no open socket for \(eventJSON)", file: file, line: line)
            return []
        }
        return event(#"{"type":"websocket_event","effect_id":\#(socket.rawValue),"event":\#(eventJSON)}"#, file: file, line: line)
    }

    private func take(_ bytes: [UInt8], _ input: String, file: StaticString, line: UInt) -> [JSONValue] {
        let report = json(bytes.string, file: file, line: line)
        XCTAssertEqual(report["ok"], .bool(true), "\(input) was refused: \(bytes.string)", file: file, line: line)
        assertValid(report, "dispatch_answer", "the report of \(input)", file: file, line: line)
        effects = report["effects"]?.arrayValue ?? []
        for effect in effects where effect["type"] == "websocket_send" {
            if let sent = effect["line"]?.stringValue {
                sentLines.append(sent)
                assertValid(json(sent), "gateway_request", "a line sent after \(input)", file: file, line: line)
            }
        }
        return effects
    }

    // MARK: - Reading

    /// The state JSON.
    var state: JSONValue {
        let answer = json(app.stateJSON().string)
        assertValid(answer, "state_answer", "the state")
        return answer["state"] ?? .null
    }

    /// `jcode_mobile_snapshot`'s `snapshot` member.
    var snapshot: JSONValue {
        let document = json(app.snapshotDocument().bytes.string)
        XCTAssertEqual(document["ok"], .bool(true))
        assertValid(document, "snapshot_answer", "the snapshot")
        return document["snapshot"] ?? .null
    }

    /// The types of the last call's effects, in order.
    var effectTypes: [String] { effects.compactMap { $0["type"]?.stringValue } }

    /// The last call's first effect of `type`.
    func effect(_ type: String) -> JSONValue? { effects.first { $0["type"]?.stringValue == type } }

    /// The `effect_id` of the last call's first effect of `type`.
    func effectID(_ type: String, file: StaticString = #filePath, line: UInt = #line) -> Int {
        guard let id = effect(type)?["effect_id"]?.int64Value else {
            XCTFail("no \(type) in \(effectTypes)", file: file, line: line)
            return -1
        }
        return Int(id)
    }

    /// The requests sent so far, as `type` names (`["subscribe","get_history","message"]`).
    var sentTypes: [String] { sentLines.compactMap { json($0)["type"]?.stringValue } }

    /// The contents of the `message` requests sent so far.
    var sentMessages: [String] {
        sentLines.compactMap { line in
            let request = json(line)
            return request["type"] == "message" ? request["content"]?.stringValue : nil
        }
    }

    /// The id of the latest request of `type` sent so far.
    func requestID(_ type: String, file: StaticString = #filePath, line: UInt = #line) -> Int {
        for line in sentLines.reversed() {
            let request = json(line)
            if request["type"]?.stringValue == type, let id = request["id"]?.int64Value { return Int(id) }
        }
        XCTFail("no \(type) request sent", file: file, line: line)
        return -1
    }

    /// The texts of the user entries of the transcript.
    var userTexts: [String] {
        (state["transcript"]?.arrayValue ?? []).compactMap { $0["role"] == "user" ? $0["text"]?.stringValue : nil }
    }

    /// The messages list of the tree, as `(id, label, value)`.
    var shownMessages: [(id: String, label: String, value: String?)] {
        guard let list = app.tree().find("chat.messages") else { return [] }
        return list.children.map { ($0.id, $0.label, $0.value) }
    }

    /// The user messages the tree shows (transcript entries and outbox
    /// bubbles), by their text.
    var shownUserTexts: [String] {
        shownMessages.filter { $0.label.hasPrefix("You") }.compactMap(\.value)
    }
}

/// Fails the test when `value` does not validate against the runtime
/// schema's definition `def` (every output an `AppDriver` reads is checked).
func assertValid(
    _ value: JSONValue, _ def: String, _ context: String = "", file: StaticString = #filePath, line: UInt = #line
) {
    let errors = runtimeSchemaValidator.errors(value, def: def)
    XCTAssertTrue(errors.isEmpty, "\(context.isEmpty ? def : context) does not match \(def): \(errors.prefix(5).joined(separator: "; "))", file: file, line: line)
}
