import XCTest
@testable import JcodeMobileCore
@testable import JcodeMobileJSON

/// Drives a store the way a host would and checks every step as a
/// specification: the caller states the expected state as JSON facts (the
/// state JSON of the step before, with the paths that change set to literal
/// values), the exact effects, the notes and the follow-up inputs. Any other
/// difference in the state JSON fails with the paths that differ.
///
///     var store = SpecStore(.connectedChat)
///     store.send(.setDraft("hi")) { $0["/draft"] = "hi" }
///     store.server(#"{"type":"tokens","input":5,"output":2}"#) {
///         $0["/session/tokens"] = ["input": 5, "output": 2]
///     }
///
/// `notes` and `followUps` default to "none"; pass `nil` to leave them
/// unchecked (an explicit opt-out). Follow-ups are named as the log names
/// them (`Input.name`): the wire type of an action (`"queue_interrupt"`),
/// the name of an internal input (`"turn_ended"`).
struct SpecStore {
    var store: Store

    /// `persists: false` (the default) leaves out the snapshot's
    /// `storage_write`, so a step lists the effects of its features only;
    /// the persistence tests turn it on.
    init(_ scenario: Scenario = .onboarding, persists: Bool = false, file: StaticString = #filePath, line: UInt = #line) {
        let built = scenario.build()
        XCTAssertEqual(built.problems, [], "fixture \(scenario.rawValue) did not build as written", file: file, line: line)
        store = Store(state: built.state, persists: persists)
    }

    init(state: AppState, persists: Bool = false) {
        store = Store(state: state, persists: persists)
    }

    var state: AppState { store.state }

    /// The state JSON as `jcode_mobile_state` returns it.
    var json: JSONValue { store.state.json }

    /// The value at a JSON pointer of the state (`"/session/is_processing"`), nil when absent.
    subscript(_ pointer: String) -> JSONValue? { json.at(pointer) }

    /// The node `id` of the semantic tree of the current state.
    func node(_ id: String) -> SemanticNode? { SemanticTree.build(store.state).find(id) }

    /// The effects, notes and follow-ups of the last step.
    private(set) var lastEffectIDs: [EffectID] = []
    private(set) var lastNotes: [String] = []
    private(set) var lastFollowUps: [String] = []

    /// Sends an action; `expect` turns the previous state JSON into the expected one.
    mutating func send(
        _ action: Action, effects: [Effect] = [], notes: [String]? = [], followUps: [String]? = [],
        file: StaticString = #filePath, line: UInt = #line, _ expect: (inout ExpectedState) -> Void = { _ in }
    ) {
        step(.action(action), effects, notes, followUps, file: file, line: line, expect)
    }

    /// Sends a platform event written as JSON (as hosts write it).
    mutating func event(
        _ eventJSON: String, effects: [Effect] = [], notes: [String]? = [], followUps: [String]? = [],
        file: StaticString = #filePath, line: UInt = #line, _ expect: (inout ExpectedState) -> Void = { _ in }
    ) {
        guard let event = decodeEvent(eventJSON, file: file, line: line) else { return }
        step(.platform(event), effects, notes, followUps, file: file, line: line, expect)
    }

    /// A server event on the open socket, written as the gateway writes it.
    mutating func server(
        _ eventJSON: String, effects: [Effect] = [], notes: [String]? = [], followUps: [String]? = [],
        file: StaticString = #filePath, line: UInt = #line, _ expect: (inout ExpectedState) -> Void = { _ in }
    ) {
        event(
            "{\"type\":\"websocket_event\",\"event\":\(eventJSON)}", effects: effects, notes: notes, followUps: followUps,
            file: file, line: line, expect)
    }

    /// Sends an action written as JSON (as hosts dispatch it): the action's
    /// decoder, and the defaults it gives the fields left out, are part of the step.
    mutating func dispatch(
        _ actionJSON: String, effects: [Effect] = [], notes: [String]? = [], followUps: [String]? = [],
        file: StaticString = #filePath, line: UInt = #line, _ expect: (inout ExpectedState) -> Void = { _ in }
    ) {
        guard let action = decodeAction(actionJSON, file: file, line: line) else { return }
        step(.action(action), effects, notes, followUps, file: file, line: line, expect)
    }

    /// A raw text frame on the open socket: `events` newline-separated, as
    /// the gateway writes them (each line decoded from its bytes).
    mutating func frame(
        _ events: String..., effects: [Effect] = [], notes: [String]? = [], followUps: [String]? = [],
        file: StaticString = #filePath, line: UInt = #line, _ expect: (inout ExpectedState) -> Void = { _ in }
    ) {
        let text = JSONValue.string(events.joined(separator: "\n")).jsonString
        event(
            "{\"type\":\"websocket_event\",\"line\":\(text)}", effects: effects, notes: notes, followUps: followUps,
            file: file, line: line, expect)
    }

    /// The id of the newest pending effect of `type`.
    func pendingID(_ type: String, file: StaticString = #filePath, line: UInt = #line) -> Int {
        guard let id = store.state.effects.pending.last(where: { $0.kind.rawValue == type })?.id.rawValue else {
            XCTFail("no pending \(type)", file: file, line: line)
            return -1
        }
        return id
    }

    private func decodeAction(_ text: String, file: StaticString, line: UInt) -> Action? {
        do throws(CoreError) {
            return try Action.wire.decode(try JSONParser.parse(text))
        } catch {
            XCTFail("test action does not decode: \(error.message)", file: file, line: line)
            return nil
        }
    }

    private func decodeEvent(_ text: String, file: StaticString, line: UInt) -> PlatformEvent? {
        do throws(CoreError) {
            return try PlatformEvent.wire.decode(try JSONParser.parse(text))
        } catch {
            XCTFail("test event does not decode: \(error.message)", file: file, line: line)
            return nil
        }
    }

    private mutating func step(
        _ input: Input, _ expectedEffects: [Effect], _ expectedNotes: [String]?, _ expectedFollowUps: [String]?,
        file: StaticString, line: UInt, _ expect: (inout ExpectedState) -> Void
    ) {
        var expected = ExpectedState(json: store.state.json)
        expect(&expected)
        let transition = store.send(input)
        lastEffectIDs = transition.effects.map(\.id)
        lastNotes = transition.notes.map(\.text)
        lastFollowUps = transition.followUps.map(\.name)
        XCTAssertEqual(transition.effects.map(\.effect), expectedEffects, "effects", file: file, line: line)
        if let expectedNotes {
            XCTAssertEqual(lastNotes, expectedNotes, "notes", file: file, line: line)
        }
        if let expectedFollowUps {
            XCTAssertEqual(lastFollowUps, expectedFollowUps, "follow-ups", file: file, line: line)
        }
        for failure in expected.failures { XCTFail(failure, file: file, line: line) }
        // `run_status` is read from the turn, the agent's requests, the connection and the outbox,
        // which every step states; it is checked where a step states it (`RunStatusTests`).
        let derived: Set<String> = expected.statesRunStatus ? [] : ["run_status"]
        assertJSONEqual(store.state.json, expected.json, ignoring: Set(["revision", "pending_effects"]).union(derived), file: file, line: line)
    }
}

/// The expected state JSON of a step, written as edits of the previous one.
struct ExpectedState {
    /// The chat shows session-owl ("Release notes") of the fixtures' server,
    /// empty until its history comes.
    mutating func showsTheOwlSessionLoading() {
        self["/transcript"] = []
        self["/session/id"] = "session-owl"
        self["/session/title"] = "Release notes"
        self["/session/history_loaded"] = false
        self["/session/total_tokens"] = nil
    }

    var json: JSONValue
    /// Edits that named a path the state does not have.
    fileprivate(set) var failures: [String] = []
    /// The step states the run status (`/run_status`), derived from the rest.
    fileprivate(set) var statesRunStatus = false

    /// The value at a JSON pointer; setting it replaces the value (or adds
    /// the member to an object).
    subscript(_ pointer: String) -> JSONValue {
        get { json.at(pointer) ?? .null }
        set { edit(.add(path: JSONPath(pointer: pointer), value: newValue), pointer) }
    }

    /// Appends `value` to the array at `pointer`.
    mutating func append(_ pointer: String, _ value: JSONValue) {
        let count = json.at(pointer)?.arrayValue?.count ?? 0
        edit(.add(path: JSONPath(pointer: pointer).appending(index: count), value: value), pointer)
    }

    /// Inserts `value` at `pointer` (`"/transcript/3"`), shifting later elements.
    mutating func insert(_ pointer: String, _ value: JSONValue) {
        edit(.add(path: JSONPath(pointer: pointer), value: value), pointer)
    }

    /// Removes the value at `pointer`.
    mutating func remove(_ pointer: String) {
        edit(.remove(path: JSONPath(pointer: pointer)), pointer)
    }

    private mutating func edit(_ op: JSONPatchOp, _ pointer: String) {
        if pointer == "/run_status" || pointer.hasPrefix("/run_status/") { statesRunStatus = true }
        if case .add(let path, let value) = op, let last = path.components.last, case .key = last,
           json.at(pointer) != nil
        {
            // Replace in place so the member keeps its position.
            guard JSONDiff.apply([.replace(path: path, value: value)], to: &json) else {
                return failures.append("expected state: cannot set \(pointer)")
            }
            return
        }
        if !JSONDiff.apply([op], to: &json) { failures.append("expected state: no path \(pointer)") }
    }
}

extension JSONPath {
    /// Parses a JSON pointer (`/transcript/3/tool_calls/0/status`); numbers address array elements.
    init(pointer: String) {
        var components: [Component] = []
        for part in pointer.split(separator: "/", omittingEmptySubsequences: false).dropFirst() {
            let key = part.replacingOccurrences("~1", "/").replacingOccurrences("~0", "~")
            if let i = Int(key) { components.append(.index(i)) } else { components.append(.key(key)) }
        }
        self.init(components)
    }
}

extension Substring {
    fileprivate func replacingOccurrences(_ target: String, _ replacement: String) -> String {
        var result = ""
        var rest = self[...]
        while let r = rest.range(ofLiteral: target) {
            result += rest[..<r.lowerBound]
            result += replacement
            rest = rest[r.upperBound...]
        }
        return result + rest
    }
}

extension String {
    fileprivate func replacingOccurrences(_ target: String, _ replacement: String) -> String {
        Substring(self).replacingOccurrences(target, replacement)
    }
}

extension JSONValue {
    /// The value at a JSON pointer, nil when absent.
    func at(_ pointer: String) -> JSONValue? {
        var value = self
        for component in JSONPath(pointer: pointer).components {
            switch (component, value) {
            case (.key(let k), .object(let o)):
                guard let v = o[k] else { return nil }
                value = v
            case (.index(let i), .array(let a)) where i >= 0 && i < a.count:
                value = a[i]
            case (.index(let i), .object(let o)):
                guard let v = o[String(i)] else { return nil }
                value = v
            default:
                return nil
            }
        }
        return value
    }
}

/// Fails with every path at which two JSON documents differ.
func assertJSONEqual(
    _ actual: JSONValue, _ expected: JSONValue, ignoring: Set<String> = [], file: StaticString = #filePath, line: UInt = #line
) {
    var differences: [String] = []
    jsonDifferences(actual, expected, path: "", ignoring: ignoring, into: &differences)
    if !differences.isEmpty {
        XCTFail("state differs:\n" + differences.prefix(20).joined(separator: "\n"), file: file, line: line)
    }
}

private func jsonDifferences(_ a: JSONValue, _ e: JSONValue, path: String, ignoring: Set<String>, into out: inout [String]) {
    guard a != e else { return }
    switch (a, e) {
    case (.object(let ao), .object(let eo)) where ao.keys == eo.keys:
        for (key, value) in ao.entries where !(path.isEmpty && ignoring.contains(key)) {
            jsonDifferences(value, eo[key] ?? .null, path: path + "/" + key, ignoring: ignoring, into: &out)
        }
    case (.array(let aa), .array(let ea)) where aa.count == ea.count:
        for i in aa.indices { jsonDifferences(aa[i], ea[i], path: path + "/" + String(i), ignoring: ignoring, into: &out) }
    default:
        out.append("  \(path.isEmpty ? "/" : path):\n    actual:   \(a.jsonString)\n    expected: \(e.jsonString)")
    }
}

/// A transcript entry as the state JSON writes it (a literal for expectations).
func entryJSON(
    _ id: String, _ role: String, text: String = "", reasoning: String = "", reasoningSecs: Double? = nil,
    toolCalls: [JSONValue] = [], isStreaming: Bool = false, isQueued: Bool = false, imageCount: Int = 0,
    stopReason: String? = nil
) -> JSONValue {
    [
        "id": .string(id), "role": .string(role), "text": .string(text), "reasoning": .string(reasoning),
        "reasoning_secs": .from(reasoningSecs), "tool_calls": .array(toolCalls), "is_streaming": .bool(isStreaming),
        "is_queued": .bool(isQueued), "image_count": .int(Int64(imageCount)), "stop_reason": .from(stopReason),
    ]
}

/// An outbox message as the state JSON writes it (`delivery`: "waiting",
/// "awaiting_ack" or "unconfirmed").
func outboxJSON(_ id: String, _ text: String, attachments: [JSONValue] = [], delivery: String, systemReminder: String? = nil) -> JSONValue {
    [
        "id": .string(id), "text": .string(text), "attachments": .array(attachments), "delivery": .string(delivery),
        "system_reminder": systemReminder.map(JSONValue.string) ?? .null,
    ]
}

/// A tool call as the state JSON writes it.
func toolCallJSON(
    _ id: String, _ name: String, input: String = "", output: String = "", status: String, error: String? = nil
) -> JSONValue {
    [
        "id": .string(id), "name": .string(name), "input": .string(input), "output": .string(output),
        "status": .string(status), "error": .from(error),
    ]
}

/// Parses JSON in tests, failing the test on error.
func json(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> JSONValue {
    do throws(CoreError) {
        return try JSONParser.parse(text)
    } catch {
        XCTFail("invalid test JSON: \(error.message)", file: file, line: line)
        return .null
    }
}

extension Array where Element == UInt8 {
    var string: String { String(decoding: self, as: UTF8.self) }
}
