import XCTest
@testable import JcodeMobileCore
@testable import JcodeMobileJSON

/// The runtime schema (`jcode_mobile_schema`) describes what the core really
/// reads and writes: every example decodes, every output of every scenario
/// and of a whole journey validates, and an output with a member added,
/// dropped or retyped does not.
final class SchemaTests: XCTestCase {
    let schema = RuntimeSchema.document
    let validator = runtimeSchemaValidator
    var defs: JSONObject { RuntimeSchema.definitions }

    // MARK: - The document

    func testTheDocumentIsA2020_12SchemaOfThisLibraryVersion() {
        XCTAssertEqual(schema["$schema"], "https://json-schema.org/draft/2020-12/schema")
        XCTAssertEqual(schema["$id"], "urn:jcode-mobile:schema:0.7.0")
        XCTAssertNotNil(schema["title"]?.stringValue)
        XCTAssertEqual(SchemaValidator.unsupportedKeywords(in: schema), [], "keywords the test validator does not check")
    }

    func testTheAnswerIsTheDocumentSerialisedOnce() throws {
        let answer = try JSONParser.parse(RuntimeSchema.answerBytes.string)
        XCTAssertEqual(answer["ok"], true)
        XCTAssertEqual(answer["schema"], schema)
        assertValid(answer, "schema_answer")
    }

    func testEveryRefResolves() {
        var refs: [String] = []
        func walk(_ value: JSONValue) {
            switch value {
            case .object(let o):
                for (key, member) in o.entries {
                    if key == "$ref", let ref = member.stringValue { refs.append(ref) } else { walk(member) }
                }
            case .array(let a): a.forEach(walk)
            default: break
            }
        }
        walk(schema)
        XCTAssertEqual(refs.count, 224)
        for ref in refs {
            XCTAssertTrue(ref.hasPrefix("#/$defs/"), ref)
            XCTAssertNotNil(defs[String(ref.dropFirst(8))], "unresolved \(ref)")
        }
        for (name, entry) in schema["x-functions"]?.objectValue?.entries ?? [] {
            for key in ["input", "answer", "events"] {
                guard let pointer = entry[key]?.stringValue else { continue }
                XCTAssertNotNil(defs[String(pointer.dropFirst(8))], "\(name).\(key): \(pointer)")
            }
        }
    }

    func testTheDefinitionsBesidesTheUnionMembers() {
        let names = defs.keys.filter { !$0.contains(".") }
        XCTAssertEqual(names, [
            "action", "platform_event", "effect", "gateway_request", "server_event", "stream_event",
            "app_options", "subscribe_options",
            "state", "transcript_entry", "tool_call", "token_usage", "attachment", "saved_server", "tree_node",
            "patch_op", "tree_op", "tree_changes_answer", "change_record", "log_entry", "snapshot", "error", "error_answer",
            "dispatch_answer", "state_answer", "tree_answer", "logs_answer", "changes_answer", "snapshot_answer",
            "last_error_answer", "next_event_answer", "schema_answer", "hit_test_answer", "screenshot_answer",
        ])
    }

    func testEveryMemberOfEveryUnionHasItsDefinition() {
        func members(_ union: String) -> [String] {
            (defs[union]?["oneOf"]?.arrayValue ?? []).compactMap { $0["$ref"]?.stringValue.map { String($0.dropFirst(8)) } }
        }
        XCTAssertEqual(members("action"), Action.wire.members.map { "action." + $0.type })
        XCTAssertEqual(members("platform_event"), PlatformEvent.wire.members.map { "platform_event." + $0.type })
        XCTAssertEqual(members("effect"), Effect.specs.map { "effect." + $0.type })
        XCTAssertEqual(members("gateway_request"), GatewayRequest.specs.map { "gateway_request." + $0.type })
        XCTAssertEqual(members("server_event"), ServerEvent.wire.members.map { "server_event." + $0.type })
        XCTAssertEqual(members("stream_event"), StreamEvent.specs.map { "stream_event." + $0.type })
        XCTAssertEqual(
            ["action", "platform_event", "effect", "gateway_request", "server_event", "stream_event"].map { members($0).count },
            [48, 20, 19, 16, 72, 11])
        XCTAssertEqual(defs.keys.filter { $0.contains(".") }.count, 48 + 20 + 19 + 16 + 72 + 11, "a definition outside the unions")
        XCTAssertEqual(members("stream_event"), [
            "stream_event.subscribed", "stream_event.state_changed", "stream_event.tree_changed", "stream_event.effects_requested",
            "stream_event.server_paired", "stream_event.pairing_failed", "stream_event.history_synced",
            "stream_event.connection_phase_changed", "stream_event.turn_finished", "stream_event.events_lost", "stream_event.closed",
        ])
    }

    func testTheFunctionsMap() {
        let expected: JSONValue = [
            "jcode_mobile_app_new": [
                "input": "#/$defs/app_options",
                "note": "returns a handle, or NULL; why it failed: jcode_mobile_last_error (last_error_answer)",
            ],
            "jcode_mobile_dispatch": ["input": "#/$defs/action", "answer": "#/$defs/dispatch_answer"],
            "jcode_mobile_platform_event": ["input": "#/$defs/platform_event", "answer": "#/$defs/dispatch_answer"],
            "jcode_mobile_state": ["answer": "#/$defs/state_answer"],
            "jcode_mobile_tree": ["answer": "#/$defs/tree_answer"],
            "jcode_mobile_logs": ["answer": "#/$defs/logs_answer"],
            "jcode_mobile_changes": ["answer": "#/$defs/changes_answer"],
            "jcode_mobile_tree_changes": ["answer": "#/$defs/tree_changes_answer"],
            "jcode_mobile_snapshot": ["answer": "#/$defs/snapshot_answer"],
            "jcode_mobile_last_error": ["answer": "#/$defs/last_error_answer"],
            "jcode_mobile_subscribe": [
                "input": "#/$defs/subscribe_options", "events": "#/$defs/stream_event",
                "note": "starts a subscription to the event stream; its events are stream_event objects",
            ],
            "jcode_mobile_subscribe_callback": [
                "events": "#/$defs/stream_event", "note": "delivers each stream_event of a subscription to a callback",
            ],
            "jcode_mobile_next_event": ["answer": "#/$defs/next_event_answer"],
            "jcode_mobile_schema": ["answer": "#/$defs/schema_answer"],
            "jcode_mobile_hit_test": ["answer": "#/$defs/hit_test_answer"],
            "jcode_mobile_screenshot_svg": ["answer": "#/$defs/screenshot_answer"],
        ]
        XCTAssertEqual(schema["x-functions"], expected)
    }

    func testErrorCodesCarryTheirMeanings() {
        let codes = defs["error"]?["properties"]?["code"]?["oneOf"]?.arrayValue ?? []
        XCTAssertEqual(codes.compactMap { $0["const"]?.stringValue }, ErrorCode.allCases.map(\.rawValue))
        XCTAssertEqual(codes.count, 13)
        XCTAssertEqual(codes.first?["description"], "a required pointer argument was NULL (`field` names it)")
    }

    func testFieldsMapToTheirSchemas() {
        XCTAssertEqual(defs["action.set_port"]?["properties"]?["value"], [
            "anyOf": [["type": "string"], ["type": "integer", "minimum": 1, "maximum": 65535]],
        ])
        XCTAssertEqual(defs["action.set_pair_code"]?["properties"]?["value"]?["x-secret"], true)
        // An optional input may be null; an optional output is left out.
        XCTAssertEqual(defs["action.send_message"]?["properties"]?["text"]?["type"], ["string", "null"])
        XCTAssertEqual(defs["effect.http_pair"]?["properties"]?["apns_token"], ["type": "string", "description": "the push token, when the host has one"])
        XCTAssertEqual(defs["effect.http_pair"]?["required"], ["effect_id", "type", "host", "port", "use_tls", "code", "device_id", "device_name"])
        XCTAssertEqual(defs["effect.http_pair"]?["additionalProperties"], false)
        XCTAssertNil(defs["action.send_message"]?["additionalProperties"])
        XCTAssertEqual(defs["effect.websocket_send"]?["properties"]?["line"]?["contentSchema"], ["$ref": "#/$defs/gateway_request"])
        XCTAssertEqual(defs["stream_event.state_changed"]?["properties"]?["ops"]?["items"], ["$ref": "#/$defs/patch_op"])
        XCTAssertEqual(defs["state"]?["properties"]?["focused_node_id"], ["type": ["string", "null"]])
        XCTAssertEqual(defs["state"]?["required"]?.arrayValue?.compactMap(\.stringValue), StateSection.all.map(\.name))
    }

    // MARK: - Examples

    func testEveryExampleValidatesAndTheInputsDecode() {
        var checked = 0
        for (name, def) in defs.entries {
            guard let examples = def["examples"]?.arrayValue else { continue }
            for example in examples {
                checked += 1
                assertValid(example, name, "the example of \(name)")
                if name.hasPrefix("action.") { XCTAssertNoThrow(try Action.wire.decode(example), name) }
                if name.hasPrefix("platform_event.") { XCTAssertNoThrow(try PlatformEvent.wire.decode(example), name) }
                if name.hasPrefix("server_event.") { XCTAssertNoThrow(try ServerEvent.wire.decode(example), name) }
                if name.hasPrefix("effect.") || name.hasPrefix("gateway_request.") || name.hasPrefix("stream_event.") {
                    // Outputs: the example also matches the union (exactly one member).
                    assertValid(example, String(name.prefix(while: { $0 != "." })), "the example of \(name) in its union")
                }
            }
        }
        XCTAssertEqual(checked, 48 + 20 + 19 + 16 + 72 + 11)
    }

    // MARK: - Outputs of every scenario

    func testEveryOutputOfEveryScenarioValidates() throws {
        for scenario in Scenario.allCases {
            let app = AppDriver(#"{"scenario":"\#(scenario.rawValue)"}"#).app
            let name = scenario.rawValue
            assertValid(json(app.stateJSON().string), "state_answer", "\(name): state")
            assertValid(json(app.treeJSON().string), "tree_answer", "\(name): tree")
            assertValid(json(app.logsJSON(limit: 0).string), "logs_answer", "\(name): logs")
            assertValid(json(app.snapshotDocument().bytes.string), "snapshot_answer", "\(name): snapshot")
            let fromZero = json(app.changesJSON(since: 0).string)
            assertValid(fromZero, "changes_answer", "\(name): changes from 0")
            let resync = json(app.changesJSON(since: UInt64.max).string)
            XCTAssertEqual(resync["resync"], true)
            XCTAssertEqual(resync["since"], .double(18446744073709551615.0))
            assertValid(resync, "changes_answer", "\(name): resync")
            // A change after the scenario: one record.
            let revision = app.state.revision
            _ = app.dispatch(json: #"{"type":"set_draft","value":"hello"}"#)
            let changes = json(app.changesJSON(since: UInt64(revision)).string)
            XCTAssertEqual(changes["changes"]?.arrayValue?.count, 1, name)
            assertValid(changes, "changes_answer", "\(name): changes")
        }
        XCTAssertEqual(Scenario.allCases.count, 18)
    }

    func testTheAppOptionsOfEveryScenarioValidate() {
        for scenario in Scenario.allCases {
            assertValid(json(#"{"scenario":"\#(scenario.rawValue)","log_capacity":16,"viewport":{"width":390,"height":844}}"#), "app_options")
        }
        XCTAssertFalse(validator.isValid(json(#"{"scenario":"nope"}"#), def: "app_options"))
        XCTAssertFalse(validator.isValid(json(#"{"log_capacity":0}"#), def: "app_options"))
        XCTAssertFalse(validator.isValid(json(#"{"colour":"blue"}"#), def: "app_options"), "the core refuses an unknown option")
        XCTAssertTrue(validator.isValid(json(#"{"capacity":16,"kinds":["state","app"]}"#), def: "subscribe_options"))
        XCTAssertFalse(validator.isValid(json(#"{"kinds":["everything"]}"#), def: "subscribe_options"))
        XCTAssertFalse(validator.isValid(json(#"{"capacity":65537}"#), def: "subscribe_options"))
    }

    // MARK: - A whole journey

    /// Pairing, connecting, a streamed reply with tool calls, a permission
    /// and a stdin request, a server error: every report, every line sent
    /// (checked by AppDriver), the state, the tree, the logs, the changes,
    /// the snapshot and the stream events validate.
    func testTheOutputsOfAJourneyValidate() {
        let world = SimulatedWorld()
        world.driver.app.collectsEvents = true
        world.pair()
        XCTAssertEqual(world.driver.app.state.connection.phase, .connected)
        world.dispatch(#"{"type":"send_message","text":"Run the tests"}"#)
        let driver = world.driver
        driver.dispatch(#"{"type":"send_message","text":"and fix them"}"#)
        driver.server(#"{"type":"ack","id":4}"#)
        driver.server(#"{"type":"reasoning_delta","text":"Let me look"}"#)
        driver.server(#"{"type":"reasoning_done","duration_secs":2.5}"#)
        driver.server(#"{"type":"text_delta","text":"Running "}"#)
        driver.server(#"{"type":"tool_start","id":"call_1","name":"bash"}"#)
        driver.server(#"{"type":"tool_input","delta":"{\"command\":"}"#)
        driver.server(#"{"type":"tool_input","delta":"\"cargo test\"}"}"#)
        driver.server(#"{"type":"tool_exec","id":"call_1","name":"bash"}"#)
        driver.server(#"{"type":"permission_request","request_id":"perm-1","action":"bash","detail":"cargo test","tier":"medium"}"#)
        assertOutputsValid(driver, "a permission request")
        driver.dispatch(#"{"type":"respond_permission","request_id":"perm-1","approved":true,"remember":false}"#)
        driver.server(#"{"type":"stdin_request","request_id":"stdin-1","prompt":"[sudo] password:","is_password":true,"tool_call_id":"call_1"}"#)
        driver.dispatch(#"{"type":"respond_stdin","request_id":"stdin-1","input":"hunter2"}"#)
        driver.server(#"{"type":"tool_done","id":"call_1","name":"bash","output":"2 passed","error":null}"#)
        driver.server(#"{"type":"tokens","input":1200,"output":34,"cache_read_input":900}"#)
        driver.server(#"{"type":"error","message":"overloaded","retry_after_secs":15}"#)
        assertOutputsValid(driver, "a server error")
        driver.dispatch(#"{"type":"attach_image"}"#)
        driver.dispatch(#"{"type":"navigate","screen":"sessions"}"#)
        driver.dispatch(#"{"type":"dismiss_error"}"#)
        world.dropLink()
        assertOutputsValid(driver, "the link dropped")
        let logs = json(driver.app.logsJSON(limit: 0).string)
        XCTAssertGreaterThan(logs["entries"]?.arrayValue?.count ?? 0, 30)
        XCTAssertTrue(logs.jsonString.contains("[redacted]"), "the token and the typed password are redacted in the logs")
        let events = driver.app.takeEvents()
        XCTAssertGreaterThan(events.count, 40)
        var types = Set<String>()
        for event in events {
            let value = json(event.bytes.string)
            types.insert(value["type"]?.stringValue ?? "")
            assertValid(value, "stream_event", "stream event \(event.seq)")
        }
        XCTAssertTrue(types.isSuperset(of: ["state_changed", "effects_requested", "server_paired", "history_synced", "connection_phase_changed", "turn_finished"]), "\(types)")
        for marker in [StreamEvent.subscribed(revision: 3, nextSeq: 8), StreamEvent.eventsLost(count: 3, firstSeq: 8, lastSeq: 10, effects: 1),
                       StreamEvent.closed(.appFreed)] {
            assertValid(json(marker.string), "stream_event", marker.string)
        }
        assertValid(["ok": true, "event": .null], "next_event_answer")
        assertValid(["ok": true, "event": json(events[0].bytes.string)], "next_event_answer")
    }

    /// The state, tree, logs, changes from 0 and from the previous revision, and snapshot of `driver` validate.
    private func assertOutputsValid(_ driver: AppDriver, _ moment: String, file: StaticString = #filePath, line: UInt = #line) {
        let app = driver.app
        assertValid(json(app.stateJSON().string), "state_answer", "\(moment): state", file: file, line: line)
        assertValid(json(app.treeJSON().string), "tree_answer", "\(moment): tree", file: file, line: line)
        assertValid(json(app.logsJSON(limit: 0).string), "logs_answer", "\(moment): logs", file: file, line: line)
        assertValid(json(app.changesJSON(since: 0).string), "changes_answer", "\(moment): changes from 0", file: file, line: line)
        let recent = json(app.changesJSON(since: UInt64(max(0, app.state.revision - 5))).string)
        XCTAssertNotNil(recent["changes"], "\(moment): recent changes are records", file: file, line: line)
        assertValid(recent, "changes_answer", "\(moment): recent changes", file: file, line: line)
        assertValid(json(app.snapshotDocument().bytes.string), "snapshot_answer", "\(moment): snapshot", file: file, line: line)
    }

    // MARK: - Errors

    func testEveryErrorAnswerOfBadInputValidates() throws {
        let app = JcodeMobileApp(options: AppOptions())
        let cases: [(String, String)] = [
            ("{", "invalid_json"), ("[1]", "invalid_field"), (#"{"text":"hi"}"#, "invalid_field"),
            (#"{"type":42}"#, "invalid_field"), (#"{"type":"fly"}"#, "unknown_type"),
            (#"{"type":"set_port","value":70000}"#, "invalid_field"), (#"{"type":"load_scenario","scenario":"nope"}"#, "invalid_scenario"),
            (String(repeating: "[", count: 200) + String(repeating: "]", count: 200), "too_deep"),
        ]
        for (input, code) in cases {
            let answer = json(app.dispatch(json: input).string)
            XCTAssertEqual(answer["error"]?["code"]?.stringValue, code, input)
            assertValid(answer, "error_answer", input)
            assertValid(answer, "dispatch_answer", input)
        }
        let badUTF8: [UInt8] = [0x7B, 0x22, 0xFF, 0x22, 0x7D]
        let answer = json(badUTF8.withUnsafeBufferPointer { app.dispatch($0) }.string)
        XCTAssertEqual(answer["error"]?["code"], "invalid_utf8")
        assertValid(answer, "dispatch_answer")
        let event = json(app.platformEvent(json: #"{"type":"pair_finished","effect_id":0,"ok":true}"#).string)
        XCTAssertEqual(event["error"]?["code"], "invalid_field")
        assertValid(event, "dispatch_answer")
        for (options, code) in [(#"{"scenario":"nope"}"#, "invalid_scenario"), (#"{"snapshot":{"version":2}}"#, "unsupported_snapshot"),
                                (#"{"snapshot":[]}"#, "invalid_snapshot"), (#"{"log_capacity":0}"#, "invalid_field")] {
            let error = try XCTUnwrap(AppDriver.refusal(options), options)
            let last = json(JcodeMobileApp.errorBytes(error).string)
            XCTAssertEqual(last["error"]?["code"]?.stringValue, code, options)
            assertValid(last, "last_error_answer", options)
        }
        assertValid(["ok": true], "last_error_answer")
        assertValid(json(#"{"ok":false,"error":{"code":"out_of_memory","message":"not enough memory"}}"#), "state_answer")
        let logs = json(app.logsJSON(limit: 0).string)
        XCTAssertEqual(logs["entries"]?.arrayValue?.filter { $0["kind"] == "rejected" }.count, 10)
        assertValid(logs, "logs_answer")
    }

    // MARK: - Strictness

    func testAStateWithAMemberAddedDroppedOrRetypedFails() throws {
        let app = AppDriver(#"{"scenario":"connected_chat"}"#).app
        let state = json(app.stateJSON().string)["state"] ?? .null
        XCTAssertTrue(validator.isValid(state, def: "state"))
        func mutated(_ change: (inout JSONObject) -> Void) -> JSONValue {
            guard case .object(var o) = state else { return .null }
            change(&o)
            return .object(o)
        }
        XCTAssertEqual(validator.errors(mutated { $0["colour"] = "blue" }, def: "state"), [#"$: unexpected member "colour""#])
        XCTAssertEqual(validator.errors(mutated { $0["revision"] = "7" }, def: "state"), [#"$.revision: expected integer, got string "7""#])
        XCTAssertEqual(validator.errors(mutated { $0["draft"] = nil }, def: "state"), [#"$: missing required member "draft""#])
        XCTAssertEqual(validator.errors(mutated { $0["screen"] = "home" }, def: "state").count, 1)
        // Nested objects are strict too.
        let connection = mutated {
            guard case .object(var c)? = $0["connection"] else { return }
            c["socket"] = 5
            $0["connection"] = .object(c)
        }
        XCTAssertEqual(validator.errors(connection, def: "state"), [#"$.connection: unexpected member "socket""#])
        let transcript = mutated {
            guard case .array(var entries)? = $0["transcript"], case .object(var first)? = entries.first else { return }
            first["image_count"] = -1
            entries[0] = .object(first)
            $0["transcript"] = .array(entries)
        }
        XCTAssertEqual(validator.errors(transcript, def: "state"), ["$.transcript[0].image_count: -1 is below 0"])
    }

    func testAnEffectOrRequestMissingOrAddingAMemberFails() {
        XCTAssertTrue(validator.isValid(json(#"{"effect_id":9,"type":"websocket_send","line":"{}"}"#), def: "effect"))
        XCTAssertEqual(validator.errors(json(#"{"effect_id":9,"type":"websocket_send"}"#), def: "effect.websocket_send"),
                       [#"$: missing required member "line""#])
        XCTAssertFalse(validator.isValid(json(#"{"effect_id":9,"type":"websocket_send"}"#), def: "effect"))
        XCTAssertFalse(validator.isValid(json(#"{"effect_id":9,"type":"websocket_send","line":"{}","urgent":true}"#), def: "effect"))
        XCTAssertFalse(validator.isValid(json(#"{"effect_id":0,"type":"websocket_send","line":"{}"}"#), def: "effect"))
        XCTAssertFalse(validator.isValid(json(#"{"effect_id":9,"type":"teleport"}"#), def: "effect"))
        XCTAssertFalse(validator.isValid(json(#"{"ok":true,"revision":3,"effects":[{"effect_id":9,"type":"haptic","style":"loud"}]}"#), def: "dispatch_answer"))
        XCTAssertTrue(validator.isValid(json(#"{"id":3,"type":"ping"}"#), def: "gateway_request"))
        XCTAssertFalse(validator.isValid(json(#"{"id":3,"type":"ping","extra":1}"#), def: "gateway_request"))
        // Inputs allow members the core ignores.
        XCTAssertTrue(validator.isValid(json(#"{"type":"set_host","value":"devbox","source":"keyboard"}"#), def: "action"))
        XCTAssertFalse(validator.isValid(json(#"{"type":"set_host"}"#), def: "action"))
        XCTAssertTrue(validator.isValid(json(#"{"type":"text_delta","text":"hi","extra":{}}"#), def: "server_event"))
    }

    func testPatchOpsAndChangeRecords() {
        XCTAssertTrue(validator.isValid(json(#"{"op":"append","path":"/transcript/4/text","value":"lo"}"#), def: "patch_op"))
        XCTAssertTrue(validator.isValid(json(#"{"op":"remove","path":"/notices/0"}"#), def: "patch_op"))
        XCTAssertTrue(validator.isValid(json(#"{"op":"replace","path":"/draft","value":null}"#), def: "patch_op"))
        XCTAssertFalse(validator.isValid(json(#"{"op":"append","path":"/draft","value":3}"#), def: "patch_op"))
        XCTAssertFalse(validator.isValid(json(#"{"op":"move","path":"/a","from":"/b"}"#), def: "patch_op"))
        XCTAssertFalse(validator.isValid(json(#"{"op":"remove","path":"/a","value":1}"#), def: "patch_op"))
        XCTAssertTrue(validator.isValid(json(#"{"revision":4,"ops":[]}"#), def: "change_record"))
        XCTAssertTrue(validator.isValid(json(#"{"ok":true,"revision":4,"since":18446744073709551615,"resync":true,"state":\#(JcodeMobileApp(options: AppOptions()).state.json.jsonString)}"#), def: "changes_answer"))
    }
}

final class SchemaValidatorTests: XCTestCase {
    let validator = SchemaValidator(json(#"""
        {"$defs":{
          "point":{"type":"object","properties":{"x":{"type":"integer","minimum":0,"maximum":10},"tag":{"type":["string","null"]}},"required":["x"],"additionalProperties":false},
          "list":{"type":"array","items":{"$ref":"#/$defs/point"}},
          "kind":{"enum":["a","b"]},
          "either":{"oneOf":[{"type":"string"},{"const":3}]},
          "any":{"anyOf":[{"type":"boolean"},{"type":"null"}],"description":"ignored","x-note":1},
          "bad":{"pattern":"^a"},
          "dangling":{"$ref":"#/$defs/nowhere"}
        }}
        """#))

    func testTypesAndNumbers() {
        XCTAssertEqual(validator.errors(json(#"{"x":3}"#), def: "point"), [])
        XCTAssertEqual(validator.errors(json(#"{"x":3.0,"tag":null}"#), def: "point"), [], "3.0 is an integer")
        XCTAssertEqual(validator.errors(json(#"{"x":3.5}"#), def: "point"), ["$.x: expected integer, got number 3.5"])
        XCTAssertEqual(validator.errors(json(#"{"x":11}"#), def: "point"), ["$.x: 11 is above 10"])
        XCTAssertEqual(validator.errors(json(#"{"x":-1}"#), def: "point"), ["$.x: -1 is below 0"])
        XCTAssertEqual(validator.errors(json(#"{"x":1,"tag":5}"#), def: "point"), ["$.tag: expected string or null, got integer 5"])
    }

    func testObjectsArraysAndRefs() {
        XCTAssertEqual(validator.errors(json(#"{}"#), def: "point"), [#"$: missing required member "x""#])
        XCTAssertEqual(validator.errors(json(#"{"x":1,"y":2}"#), def: "point"), [#"$: unexpected member "y""#])
        XCTAssertEqual(validator.errors(json(#"[{"x":1},{"x":"1"}]"#), def: "list"), [#"$[1].x: expected integer, got string "1""#])
        XCTAssertEqual(validator.errors(json("1"), def: "dangling"), [##"$: unresolvable $ref "#/$defs/nowhere""##])
    }

    func testEnumConstOneOfAnyOfAndUnknownKeywords() {
        XCTAssertEqual(validator.errors(json(#""a""#), def: "kind"), [])
        XCTAssertEqual(validator.errors(json(#""c""#), def: "kind"), [#"$: "c" is not one of ["a","b"]"#])
        XCTAssertEqual(validator.errors(json("3.0"), def: "either"), [], "const compares numbers by value")
        XCTAssertEqual(validator.errors(json("4"), def: "either").count, 1)
        XCTAssertEqual(validator.errors(json("null"), def: "any"), [])
        XCTAssertEqual(validator.errors(json("1"), def: "any").count, 1)
        XCTAssertEqual(validator.errors(json(#""a""#), def: "bad"), [#"$: unsupported keyword "pattern""#])
        XCTAssertEqual(SchemaValidator.unsupportedKeywords(in: validator.root), ["pattern"])
        XCTAssertTrue(SchemaValidator.equal(json(#"{"a":1,"b":[2.0]}"#), json(#"{"b":[2],"a":1.0}"#)))
    }
}
