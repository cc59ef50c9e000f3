import XCTest
@testable import JcodeMobileCore
@testable import JcodeMobileJSON

/// The hot paths of docs/PERFORMANCE.md ("Cheap inputs") do exactly what the
/// general ones do: a frame of one server event and a keystroke read
/// straight from the tape, the store comparing a call with the slices the
/// previous call left, the snapshot written from its kept members, the
/// effects encoded once for the log and the report.
final class CheapInputTests: XCTestCase {
    // MARK: - The shortcuts against the general decoder

    /// Two apps of `scenario` that record events, the second with the
    /// shortcuts off (`usesShortcuts`): the general decoder and `Store.send`.
    private func twins(_ scenario: Scenario, logCapacity: Int = 8) -> (fast: JcodeMobileApp, general: JcodeMobileApp) {
        var options = AppOptions()
        options.scenario = scenario
        options.logCapacity = logCapacity
        let fast = JcodeMobileApp(options: options)
        let general = JcodeMobileApp(options: options)
        general.usesShortcuts = false
        fast.collectsEvents = true
        general.collectsEvents = true
        return (fast, general)
    }

    /// Sends each input to both apps; after each, the answer, the state, the
    /// change feed, the log and the stream events must be the same bytes.
    private func assertSameAsTheGeneralPath(
        _ inputs: [(kind: LogEntry.Kind, json: String)], scenario: Scenario, file: StaticString = #filePath, line: UInt = #line
    ) {
        let (fast, general) = twins(scenario)
        for (i, input) in inputs.enumerated() {
            let answers = [fast, general].map { app in
                input.kind == .action ? app.dispatch(json: input.json).string : app.platformEvent(json: input.json).string
            }
            let what = "input \(i): \(input.json.prefix(160))"
            XCTAssertEqual(answers[0], answers[1], "the answer to \(what)", file: file, line: line)
            XCTAssertEqual(fast.stateJSON().string, general.stateJSON().string, "the state after \(what)", file: file, line: line)
            XCTAssertEqual(fast.changesJSON(since: 0).string, general.changesJSON(since: 0).string, "the changes after \(what)", file: file, line: line)
            XCTAssertEqual(fast.logsJSON(limit: 0).string, general.logsJSON(limit: 0).string, "the log after \(what)", file: file, line: line)
            XCTAssertEqual(
                fast.takeEvents().map(\.bytes.string), general.takeEvents().map(\.bytes.string), "the events of \(what)", file: file, line: line)
        }
    }

    /// The `effect_id` of the scenario's open socket.
    private func socketID(_ scenario: Scenario) -> Int {
        let pending = scenario.state().effects.pending
        return pending.first { $0.kind == .websocketConnect }?.id.rawValue ?? 0
    }

    /// `{"type":"websocket_event","line":…}` of a raw frame, escaped as a host writes it.
    private func raw(_ frame: String, effectID: String? = nil) -> (kind: LogEntry.Kind, json: String) {
        let line = JSONValue.string(frame).jsonString
        let id = effectID.map { #""effect_id":\#($0),"# } ?? ""
        return (.event, #"{"type":"websocket_event",\#(id)"line":\#(line)}"#)
    }

    private func parsed(_ event: String, effectID: String? = nil) -> (kind: LogEntry.Kind, json: String) {
        let id = effectID.map { #""effect_id":\#($0),"# } ?? ""
        return (.event, #"{"type":"websocket_event",\#(id)"event":\#(event)}"#)
    }

    func testAFrameOfOneEventDoesWhatTheGeneralDecoderDoes() {
        let id = String(socketID(.connectedChat))
        let long = String(repeating: "é and more ", count: 500)  // a line beyond the hot path's buffer
        var inputs: [(kind: LogEntry.Kind, json: String)] = [
            (.action, #"{"type":"send_message","text":"go"}"#),
            // The first delta starts the streamed entry and the turn's processing.
            raw(#"{"type":"text_delta","text":"Hello"}"#, effectID: id),
            raw(#"{"type":"text_delta","text":", world"}"#),
            parsed(#"{"type":"text_delta","text":" again"}"#, effectID: id),
            parsed(#"{"type":"reasoning_delta","text":"thinking"}"#),
            raw(#"{"type":"reasoning_delta","text":"more"}"# + "\n", effectID: id),
            raw("\r\n  \n" + #"{"type":"text_delta","text":"after blank lines"}"# + "\r\n"),
            raw(#"{"type":"text_replace","text":"Replaced"}"#, effectID: id),
            raw(#"{"type":"text_delta","text":"é😀\u0000\"quoted\"\\ \n end"}"#),
            raw(#"{"type":"text_delta","text":"a","text":"b"}"#),
            raw(#"{"type":"text_delta","text":"a\"}"#),
            raw(#"{"type":"text_delta","text":"a"} "#),
            raw(#"{"type":"text_delta","text":"a","id":"x"}"#),
            raw(#"{"type":"text_delta","text":"\x"}"#),
            raw(#"{"t\u0079pe":"text\u005fdelta","text":"escaped names"}"#),
            raw(#"{"type":"text_delta","text":"extra","ignored":[1,{"x":2}]}"#),
            raw(#"{"type":"text_delta","text":"ends in a backslash \\"}"#),
            raw(#"{"type":"reasoning_delta","text":"a \"quote\" inside"}"#),
            raw(#"{"type":"text_replace","text":""}"#),
            parsed(#"{"type":"text_delta","text":" beside","note":"x"}"#, effectID: id),
            parsed(#"{"type":"text_delta","text":" twice","text":" once"}"#),
            raw(#"{"type":"tool_start","id":"call_1","name":"bash"}"#, effectID: id),
            raw(#"{"type":"tool_input","delta":"{\"command\":\"ls\"}"}"#),
            raw(#"{"type":"tokens","input":120,"output":7}"#, effectID: id),
            parsed(#"{"type":"tokens","input":130,"output":9}"#),
            // Two events in one frame, and frames the general decoder drops a line of.
            raw(#"{"type":"text_delta","text":"one"}"# + "\n" + #"{"type":"text_delta","text":"two"}"#),
            raw(#"{"type":"text_delta"}"#),
            raw(#"{"type":"text_delta","text":5}"#),
            raw(#"{"type":"no_such_event","text":"x"}"#),
            raw("[1,2]"),
            raw(#"{"type":"text_delta","text":"#),
            raw(""),
            raw("  \n "),
            parsed(#"{"type":"text_delta"}"#),
            parsed(#"{"type":"no_such_event"}"#),
            // Fields of the websocket_event itself.
            raw(#"{"type":"text_delta","text":"x"}"#, effectID: "null"),
            raw(#"{"type":"text_delta","text":"x"}"#, effectID: "\(id).0"),
            raw(#"{"type":"text_delta","text":"x"}"#, effectID: "999"),
            raw(#"{"type":"text_delta","text":"x"}"#, effectID: "0"),
            raw(#"{"type":"text_delta","text":"x"}"#, effectID: "\"\(id)\""),
            raw(#"{"type":"text_delta","text":"x"}"#, effectID: "1e400"),
            (.event, #"{"type":"websocket_event","line":5}"#),
            (.event, #"{"type":"websocket_event","line":null,"event":{"type":"text_delta","text":"event wins"}}"#),
            (.event, #"{"type":"websocket_event","line":"{\"type\":\"text_delta\",\"text\":\"ignored\"}","event":{"type":"text_delta","text":"event"}}"#),
            (.event, #"{"type":"websocket_event","line":7,"event":{"type":"text_delta","text":"a mistyped line refuses"}}"#),
            (.event, #"{"type":"websocket_event","event":"not an object"}"#),
            (.event, #"{"type":"websocket_event"}"#),
            (.event, #"{"type":"websocket_event","type":"websocket_event","event":{"type":"text_delta","text":"twice"}}"#),
            (.event, #"{"type":"websocket_even","event":{"type":"text_delta","text":"x"}}"#),
            raw(#"{"type":"text_delta","text":"\#(long)"}"#),
            parsed(#"{"type":"text_delta","text":"\#(long)"}"#),
            raw(#"{"type":"done","id":3}"#, effectID: id),
        ]
        // After the socket closes, a frame is ignored (and says why).
        inputs += [
            (.event, #"{"type":"websocket_closed","effect_id":\#(id),"code":1006}"#),
            raw(#"{"type":"text_delta","text":"late"}"#, effectID: id),
            parsed(#"{"type":"text_delta","text":"late"}"#),
        ]
        assertSameAsTheGeneralPath(inputs, scenario: .connectedChat)
    }

    func testAFramesEnvelopeWrittenAnyWayDoesWhatTheGeneralDecoderDoes() {
        let id = String(socketID(.connectedChat))
        let line = #""{\"type\":\"text_delta\",\"text\":\"hi\"}""#
        let envelopes = [
            // Read without the tokenizer: any order, any whitespace, a null effect_id.
            #"{"type":"websocket_event","effect_id":\#(id),"line":\#(line)}"#,
            #" { "line" : \#(line) ,"effect_id":\#(id) , "type" :"websocket_event" } "#,
            "{\n\t\"effect_id\":null,\r\n\"type\":\"websocket_event\",\"line\":\(line)}",
            #"{"line":\#(line),"type":"websocket_event"}"#,
            // The general way: whatever the envelope reader does not read exactly.
            #"{"type":"websocket_event","effect_id":\#(id),"effect_id":\#(id),"line":\#(line)}"#,
            #"{"type":"websocket_event","line":\#(line),"line":\#(line)}"#,
            #"{"type":"websocket_event","type":"websocket_event","line":\#(line)}"#,
            #"{"type":"websocket_event","line":"{\"type\":\"text_delta\",\"text\":\"\u00e9\"}"}"#,
            #"{"type":"websocket_event","line":"{\"type\":\"text_\u0064elta\",\"text\":\"x\"}"}"#,
            #"{"type":"websocket_\u0065vent","line":\#(line)}"#,
            #"{"typ\u0065":"websocket_event","line":\#(line)}"#,
            #"{"type":"websocket_event","effect_id":0\#(id),"line":\#(line)}"#,
            #"{"type":"websocket_event","effect_id":\#(id)e0,"line":\#(line)}"#,
            #"{"type":"websocket_event","effect_id":-\#(id),"line":\#(line)}"#,
            #"{"type":"websocket_event","effect_id":99999999999999999999,"line":\#(line)}"#,
            #"{"type":"websocket_event","effect_id":true,"line":\#(line)}"#,
            #"{"type":"websocket_event","line":\#(line),"extra":1}"#,
            #"{"type":"websocket_event","line":\#(line)} x"#,
            #"{"type":"websocket_event","line":\#(line),}"#,
            #"{"type":"websocket_event","line":\#(line)"#,
            #"{"type":"websocket_event","line":"{\"type\":\"text_delta\",\"text\":\"\x\"}"}"#,
            "{\"type\":\"websocket_event\",\"line\":\"{\\\"type\\\":\\\"text_delta\\\",\\\"text\\\":\\\"tab\there\\\"}\"}",
            #"{"type":"websocket_event" "line":\#(line)}"#,
            #"{"type":"websocket_event","line":"{\"type\":\"text_delta\",\"text\":\"a\"}\n{\"type\":\"text_delta\",\"text\":\"b\"}"}"#,
        ]
        var inputs: [(kind: LogEntry.Kind, json: String)] = [(.action, #"{"type":"send_message","text":"go"}"#)]
        inputs += envelopes.map { (.event, $0) }
        assertSameAsTheGeneralPath(inputs, scenario: .connectedChat)
    }

    func testAFrameWithInvalidUTF8InItsLineIsRefusedAsTheGeneralDecoderRefusesIt() {
        let (fast, general) = twins(.connectedChat)
        var bytes = Array(#"{"type":"websocket_event","line":"{\"type\":\"text_delta\",\"text\":\"a"#.utf8)
        bytes += [0xC3, 0x28]
        bytes += Array(#"\"}"}"#.utf8)
        let answers = [fast, general].map { app in bytes.withUnsafeBufferPointer { app.platformEvent($0).string } }
        XCTAssertEqual(answers[0], answers[1])
        XCTAssertTrue(answers[0].contains(#""code":"invalid_utf8""#), answers[0])
        XCTAssertEqual(fast.stateJSON().string, general.stateJSON().string)
    }

    func testAKeystrokeDoesWhatTheGeneralDecoderDoes() {
        assertSameAsTheGeneralPath([
            (.action, #"{"type":"set_draft","value":"h"}"#),
            (.action, #"{"type":"set_draft","value":"he"}"#),
            (.action, #"{"type":"set_draft","value":"hé\"\\\u0001😀"}"#),
            (.action, #"{"type":"set_draft","value":"x","value":"last wins"}"#),
            (.action, #"{"type":"set_draft","value":"extra","other":1}"#),
            (.action, #"{"type":"set_dr\u0061ft","value":"escaped type"}"#),
            (.action, #"{"type":"set_draft","value":""}"#),
            (.action, #"{"type":"set_draft","value":""}"#),
            (.action, #"{"type":"set_draft","value":5}"#),
            (.action, #"{"type":"set_draft","value":null}"#),
            (.action, #"{"type":"set_draft"}"#),
            (.action, #"{"value":"no type"}"#),
            (.action, #"{"type":"send_message"}"#),
            (.action, #"{"type":"set_draft","value":"typed while a turn runs"}"#),
            (.event, #"{"type":"app_background"}"#),
            (.action, #"{"type":"set_pair_code","value":"123456"}"#),
        ], scenario: .connectedChat)
    }

    func testAnOfflineSessionsInputsDoWhatTheGeneralPathDoes() {
        // The outbox and the snapshot's other members move here.
        assertSameAsTheGeneralPath([
            (.action, #"{"type":"set_draft","value":"offline"}"#),
            (.action, #"{"type":"send_message"}"#),
            (.action, #"{"type":"send_message","text":"second"}"#),
            (.event, #"{"type":"image_attachment_selected","media_type":"image/png","data_base64":"iVBORw0KGgo="}"#),
            (.action, #"{"type":"remove_attachment","id":"a1"}"#),
            (.event, #"{"type":"network_reachability_changed","reachable":true}"#),
            (.action, #"{"type":"load_scenario","name":"connected_chat"}"#),
            (.action, #"{"type":"set_draft","value":"after the scenario"}"#),
            (.action, #"{"type":"reset"}"#),
        ], scenario: .offlineQueuedMessage)
    }

    // MARK: - The readers, against the specs

    func testTheStreamedTextReaderReadsWhatTheSpecsRead() throws {
        let lines = [
            #"{"type":"text_delta","text":"a"}"#, #"{"type":"reasoning_delta","text":"b"}"#, #"{"type":"text_replace","text":"c"}"#,
            #"{"text":"d","type":"text_delta","id":3}"#, #"{"type":"text_delta","text":"x","text":"last"}"#,
            #"{"type":"text\u005fdelta","text":"escaped"}"#, #"{"type":"text_delta","text":"\u00e9\n"}"#,
        ]
        for line in lines {
            let bytes = Array(line.utf8)
            let (read, decoded) = try bytes.withUnsafeBufferPointer { b throws(CoreError) in
                try JSONParser.withTape(b, workspace: &workspace) { (tape) throws(CoreError) in
                    (ServerEvent.StreamedText(in: tape), try ServerEvent.wire.decode(tape: tape))
                }
            }
            XCTAssertEqual(read?.event, decoded, line)
            if let read, case .one(.chatStream(let stream)) = AppRouter.route(.server(decoded)) {
                XCTAssertEqual(AppRouter.route(read), stream, "the chat gets what the router gives it: \(line)")
            } else {
                XCTFail("\(line) is streamed text")
            }
        }
        // Anything else is left to the specs.
        for line in [
            #"{"type":"text_delta"}"#, #"{"type":"text_delta","text":null}"#, #"{"type":"text_delta","text":1}"#,
            #"{"type":"tool_input","delta":"x"}"#, #"{"type":"tokens","input":1,"output":2}"#, #"{"type":5,"text":"x"}"#,
        ] {
            let bytes = Array(line.utf8)
            let read = try bytes.withUnsafeBufferPointer { b throws(CoreError) in
                try JSONParser.withTape(b, workspace: &workspace) { tape in ServerEvent.StreamedText(in: tape) }
            }
            XCTAssertNil(read, line)
        }
    }

    /// A line exactly as the gateway writes a streamed event is read without
    /// tokenizing the object; any other is left to the tape.
    func testACanonicalLineIsReadAsTheSpecsReadIt() throws {
        for line in [
            #"{"type":"text_delta","text":"hello "}"#, #"{"type":"reasoning_delta","text":"why"}"#, #"{"type":"text_replace","text":""}"#,
            #"{"type":"text_delta","text":"q\"uote \\ \n \u00e9 \ud83d\ude00 é"}"#,
        ] {
            let bytes = Array(line.utf8)
            let read = bytes.withUnsafeBufferPointer { ServerEvent.StreamedText(canonicalLine: $0, workspace: &workspace) }
            let decoded = try bytes.withUnsafeBufferPointer { b throws(CoreError) in
                try JSONParser.withTape(b, workspace: &workspace) { (tape) throws(CoreError) in try ServerEvent.wire.decode(tape: tape) }
            }
            XCTAssertEqual(read?.event, decoded, line)
        }
        for line in [
            #"{"type":"text_delta","text":"a"} "#, #"{"type":"text_delta","text":"a","id":1}"#, #"{"type":"text_delta","text":"a\"}"#,
            #"{"type":"text_delta","text":5}"#, #"{"type":"text_delta","text":"a" }"#, #"{"type": "text_delta","text":"a"}"#,
            #"{"text":"a","type":"text_delta"}"#, #"{"type":"text_delta","text":"a"b"}"#, #"{"type":"text_delta","text":"\x"}"#,
            #"{"type":"text_delta","text":"}"#, #"{"type":"text_deltas","text":"a"}"#, #"{"type":"tool_input","text":"a"}"#,
        ] {
            let bytes = Array(line.utf8)
            XCTAssertNil(bytes.withUnsafeBufferPointer { ServerEvent.StreamedText(canonicalLine: $0, workspace: &workspace) }, line)
        }
    }

    func testTheKeystrokeReaderReadsWhatTheSpecReads() throws {
        for (input, expected) in [
            (#"{"type":"set_draft","value":"hi"}"#, Action.setDraft("hi")),
            (#"{"value":"swapped","type":"set_draft"}"#, .setDraft("swapped")),
            (#"{"type":"set_draft","value":"a","value":"b"}"#, .setDraft("b")),
            (#"{"type":"set_draft","value":"tab\tand é"}"#, .setDraft("tab\tand é")),
        ] {
            let bytes = Array(input.utf8)
            let (read, decoded) = try bytes.withUnsafeBufferPointer { b throws(CoreError) in
                try JSONParser.withTape(b, workspace: &workspace) { (tape) throws(CoreError) in
                    (Action.keystroke(in: tape), try Action.wire.decode(tape: tape))
                }
            }
            XCTAssertEqual(read, expected, input)
            XCTAssertEqual(decoded, expected, input)
        }
        XCTAssertFalse(Action.wire.spec(for: "set_draft")?.hasSecrets ?? true, "a keystroke is logged as it came")
        for input in [#"{"type":"set_draft","value":1}"#, #"{"type":"set_draft"}"#, #"{"type":"set_host","value":"x"}"#, "[]"] {
            let bytes = Array(input.utf8)
            let read = try bytes.withUnsafeBufferPointer { b throws(CoreError) in
                try JSONParser.withTape(b, workspace: &workspace) { tape in Action.keystroke(in: tape) }
            }
            XCTAssertNil(read, input)
        }
    }

    private var workspace = JSONParser.Workspace()

    // MARK: - What the store keeps between calls

    func testTheStoreKeepsEverySliceButTheTranscriptOfTheStateItComparesWith() {
        let state = Scenario.longRunningTask.state()
        var shadow = AppState()
        shadow.takeSlices(FeatureID.all, from: state)
        shadow.revision = state.revision
        XCTAssertEqual(shadow, state.withoutTranscript, "every slice is taken (a slice added to AppState must be added to takeSlices)")
        XCTAssertTrue(shadow.chat.transcript.entries.isEmpty, "never the transcript")
        XCTAssertEqual(FeatureID.allCases.map(\.bit), FeatureID.allCases.indices.map { 1 << UInt32($0) })
    }

    /// The snapshot kept member by member writes what `Snapshot.json` is.
    func testTheSnapshotWrittenFromItsKeptMembersIsTheSnapshot() {
        var state = Scenario.connectedChat.state()
        var written = Snapshot.Written(Snapshot(of: state))
        func check(_ what: String, changed: Bool, features: UInt32, file: StaticString = #filePath, line: UInt = #line) {
            XCTAssertEqual(written.update(from: state, features: features), changed, what, file: file, line: line)
            XCTAssertEqual(written.snapshot, Snapshot(of: state), what, file: file, line: line)
            XCTAssertEqual(written.json, Snapshot(of: state).json, what, file: file, line: line)
            var w = JSONWriter()
            written.write(to: &w)
            XCTAssertEqual(w.text, Snapshot(of: state).json.jsonString, what, file: file, line: line)
        }
        check("nothing", changed: false, features: FeatureID.all)
        state.composer.draft = "a \"draft\""
        check("the draft", changed: true, features: FeatureID.composer.bit)
        check("the same draft", changed: false, features: FeatureID.composer.bit)
        state.composer.draft = "not read"
        XCTAssertFalse(written.update(from: state, features: FeatureID.chat.bit), "a call that did not reach the composer does not read it")
        check("then read", changed: true, features: FeatureID.composer.bit)
        // The composer's member is written straight from the snapshot: with attachments too.
        state.composer.attachments = [
            Attachment(id: "a1", mediaType: "image/png", dataBase64: "iVBORw0KGgo="), Attachment(id: "a2", mediaType: "image/jpeg", dataBase64: "/9j/"),
        ]
        state.composer.nextAttachmentID = 3
        check("attachments", changed: true, features: FeatureID.composer.bit)
        state.chat.outbox.append(OutboxMessage(id: "o7", text: "queued", attachments: []))
        state.chat.nextOutboxID = 8
        check("the outbox", changed: true, features: FeatureID.chat.bit)
        state.session.id = "another-session"
        check("the session in use", changed: true, features: FeatureID.session.bit)
        state.lifecycle.deviceID = "device-2"
        check("the device", changed: true, features: FeatureID.lifecycle.bit)
        state.servers.selectedID = nil
        check("no server in use", changed: true, features: FeatureID.servers.bit)
    }

    /// A full log gives the entry it replaces' payload buffer to the new one:
    /// each entry still holds its own input.
    func testEveryLoggedInputIsItsOwnAfterTheLogWrapsAround() {
        var options = AppOptions()
        options.scenario = .connectedChat
        options.logCapacity = 3
        let app = JcodeMobileApp(options: options)
        let inputs = (1...7).map { #"{"type":"set_draft","value":"draft \#(String(repeating: "x", count: $0 * 10))"}"# }
        for input in inputs { _ = app.dispatch(json: input) }
        let entries = json(app.logsJSON(limit: 0).string)["entries"]?.arrayValue ?? []
        XCTAssertEqual(entries.map { $0["payload"]?.jsonString ?? "" }, inputs.suffix(3).map { json($0).jsonString })
    }
}
