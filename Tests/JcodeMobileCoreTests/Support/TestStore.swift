import XCTest
@testable import JcodeMobileCore

/// Drives a store the way a host would and checks each step exhaustively:
/// the caller states how the whole previous state changes and exactly which
/// effects come out; any other difference fails with a per-section diff.
struct TestStore {
    var store: Store

    init(_ scenario: Scenario = .onboarding) {
        let built = scenario.build()
        XCTAssertEqual(built.problems, [], "fixture \(scenario.rawValue) did not build as written")
        store = Store(state: built.state)
    }

    init(state: AppState) {
        store = Store(state: state)
    }

    var state: AppState { store.state }

    /// The ids of the effects of the last step, in order.
    private(set) var lastEffectIDs: [EffectID] = []
    private(set) var lastNotes: [String] = []

    /// Sends an action; `update` turns the previous state into the expected one.
    mutating func send(
        _ action: Action, effects expected: [Effect] = [], file: StaticString = #filePath, line: UInt = #line,
        _ update: (inout AppState) -> Void = { _ in }
    ) {
        step(.action(action), expected, file: file, line: line, update)
    }

    /// Sends a platform event written as JSON (as hosts write it).
    mutating func event(
        _ json: String, effects expected: [Effect] = [], file: StaticString = #filePath, line: UInt = #line,
        _ update: (inout AppState) -> Void = { _ in }
    ) {
        guard let event = decodeEvent(json, file: file, line: line) else { return }
        step(.platform(event), expected, file: file, line: line, update)
    }

    /// A server event on the open socket, written as the gateway writes it.
    mutating func server(
        _ json: String, effects expected: [Effect] = [], file: StaticString = #filePath, line: UInt = #line,
        _ update: (inout AppState) -> Void = { _ in }
    ) {
        event("{\"type\":\"websocket_event\",\"event\":\(json)}", effects: expected, file: file, line: line, update)
    }

    /// The id of the pending effect of `type` (the newest one).
    func pendingID(_ type: String, file: StaticString = #filePath, line: UInt = #line) -> Int {
        guard let id = state.effects.pending.last(where: { $0.effect.type == type })?.id.rawValue else {
            XCTFail("no pending \(type)", file: file, line: line)
            return -1
        }
        return id
    }

    private func decodeEvent(_ json: String, file: StaticString, line: UInt) -> PlatformEvent? {
        do throws(CoreError) {
            return try PlatformEvent.wire.decode(try JSONParser.parse(json))
        } catch {
            XCTFail("test event does not decode: \(error.message)", file: file, line: line)
            return nil
        }
    }

    private mutating func step(
        _ input: Input, _ expectedEffects: [Effect], file: StaticString, line: UInt, _ update: (inout AppState) -> Void
    ) {
        var expected = store.state
        update(&expected)
        let transition = store.send(input)
        lastEffectIDs = transition.effects.map(\.id)
        lastNotes = transition.notes
        XCTAssertEqual(transition.effects.map(\.effect), expectedEffects, "effects", file: file, line: line)
        // The store owns the revision and the ledger; everything else is the test's to state.
        expected.revision = store.state.revision
        expected.effects = store.state.effects
        _ = expected.transcript.drainChanges()
        assertStatesEqual(store.state, expected, file: file, line: line)
    }
}

extension TestStore {
    /// From `pairing_ready`: submits the form; the code leaves the state and
    /// `http_pair` carries it.
    mutating func submitTheReadyForm(file: StaticString = #filePath, line: UInt = #line) {
        send(
            .submitPairing,
            effects: [
                .http(.pair(host: "devbox.local", port: 7643, useTLS: false, code: "123456", deviceID: "fixture-device", deviceName: "Test iPhone", apnsToken: nil))
            ], file: file, line: line
        ) {
            $0.pairing.isSubmitting = true
            $0.pairing.code = ""
            $0.pairing.heldCode = "123456"
            $0.connection.phase = .pairing
        }
    }

    /// The open socket closes; a reconnect is scheduled after 1 s.
    mutating func loseTheConnection(file: StaticString = #filePath, line: UInt = #line) {
        guard let socket = state.connection.socketEffectID?.rawValue else { return XCTFail("no open socket", file: file, line: line) }
        event(
            #"{"type":"websocket_closed","effect_id":\#(socket)}"#,
            effects: [.timer(.schedule(timerID: "reconnect.1", afterMS: 1000, purpose: "reconnect"))], file: file, line: line
        ) {
            $0.endTurnLocally()
            $0.connection.phase = .reconnecting
            $0.connection.attempt = 1
            $0.connection.reason = "Connection closed"
            $0.connection.socketEffectID = nil
            $0.connection.isSocketOpen = false
            $0.connection.reconnectTimerID = "reconnect.1"
            $0.connection.reconnectDelayMS = 1000
            $0.connection.nextTimerSerial = 2
        }
    }
}

/// Fails with the sections that differ, as JSON, when two states differ.
func assertStatesEqual(_ actual: AppState, _ expected: AppState, file: StaticString = #filePath, line: UInt = #line) {
    guard actual != expected else { return }
    var lines: [String] = []
    for section in AppState.Section.allCases where actual.json(of: section) != expected.json(of: section) {
        lines.append("  \(section.rawValue):\n    actual:   \(actual.json(of: section).jsonString)\n    expected: \(expected.json(of: section).jsonString)")
    }
    if lines.isEmpty {
        lines.append("  (differs outside the JSON: cursors, counters or credentials)")
        if actual.transcript != expected.transcript {
            lines.append("  transcript cursors: actual streaming=\(String(describing: actual.transcript.streamingIndex)) queued=\(actual.transcript.queuedCount) latestTool=\(String(describing: actual.transcript.latestToolCallID)) next=\(actual.transcript.nextSerial); expected streaming=\(String(describing: expected.transcript.streamingIndex)) queued=\(expected.transcript.queuedCount) latestTool=\(String(describing: expected.transcript.latestToolCallID)) next=\(expected.transcript.nextSerial)")
        }
        if actual.credentials != expected.credentials { lines.append("  credentials differ") }
        if actual.connection != expected.connection { lines.append("  connection internals differ: \(actual.connection) vs \(expected.connection)") }
        if actual.nextNoticeID != expected.nextNoticeID || actual.nextOutboxID != expected.nextOutboxID || actual.nextAttachmentID != expected.nextAttachmentID {
            lines.append("  id counters differ")
        }
        if actual.lifecycle != expected.lifecycle { lines.append("  lifecycle differs: \(actual.lifecycle) vs \(expected.lifecycle)") }
    }
    XCTFail("state differs:\n" + lines.joined(separator: "\n"), file: file, line: line)
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
