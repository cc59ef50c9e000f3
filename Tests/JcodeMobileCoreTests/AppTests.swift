import XCTest
@testable import JcodeMobileCore
@testable import JcodeMobileJSON

/// The JSON boundary every ABI function goes through.
final class AppTests: XCTestCase {
    private func app(_ options: String? = nil) -> JcodeMobileApp {
        var text = options ?? ""
        return text.withUTF8 { bytes in
            do throws(CoreError) {
                return try JcodeMobileApp(optionsJSON: options == nil ? nil : bytes)
            } catch {
                XCTFail(error.message)
                return JcodeMobileApp(options: AppOptions())
            }
        }
    }

    private func optionsError(_ text: String) -> CoreError? {
        parseError(of: text, AppOptions.parse)
    }

    /// The state JSON of an app, parsed (`{"ok":true,"state":{…}}`).
    private func stateJSON(_ app: JcodeMobileApp, file: StaticString = #filePath, line: UInt = #line) -> JSONValue {
        json(app.stateJSON().string, file: file, line: line)
    }

    func testOptionsDefaultToAFirstLaunchAndRejectWhatTheyDoNotKnow() {
        XCTAssertEqual(stateJSON(app()).at("/state/screen"), "onboarding")
        XCTAssertEqual(stateJSON(app("")).at("/state/screen"), "onboarding")
        XCTAssertEqual(stateJSON(app("  {} ")).at("/state/screen"), "onboarding")
        // No shared default identity: null until app_new, a snapshot or the host (create_device_id) gives one.
        XCTAssertEqual(stateJSON(app()).at("/state/lifecycle/device_id"), .null)
        let chat = stateJSON(app(#"{"scenario":"connected_chat","device_id":"dev-42","device_name":"Pixel"}"#))
        XCTAssertEqual(chat.at("/state/screen"), "chat")
        XCTAssertEqual(chat.at("/state/lifecycle/device_id"), "dev-42")
        XCTAssertEqual(chat.at("/state/pairing/device_name"), "Test iPhone", "the fixture's device name is kept")
        XCTAssertEqual(stateJSON(app(#"{"device_name":"Pixel"}"#)).at("/state/pairing/device_name"), "Pixel")
        XCTAssertEqual(optionsError(#"{"scenario":"nope"}"#)?.code, .invalidScenario)
        XCTAssertEqual(optionsError(#"{"colour":"red"}"#)?.code, .invalidScenario)
        // "snapshot" is an option now: one without an integer version is refused as a snapshot.
        XCTAssertEqual(optionsError(#"{"snapshot":{}}"#)?.code, .invalidSnapshot)
        XCTAssertEqual(optionsError(#"{"log_capacity":"big"}"#)?.code, .invalidField)
        XCTAssertEqual(optionsError(#"{"log_capacity":0}"#)?.code, .invalidField)
        XCTAssertEqual(optionsError(#"{"viewport":{"width":0,"height":10}}"#)?.field, "viewport.width")
        XCTAssertEqual(optionsError("[1]")?.code, .invalidScenario)
        XCTAssertEqual(optionsError("{")?.code, .invalidJSON)
    }

    func testTheDispatchReportCarriesRevisionAndEffects() {
        let app = app(#"{"scenario":"pairing_ready"}"#)
        XCTAssertEqual(app.dispatch(json: #"{"type":"set_host","value":"devbox.local"}"#).string, #"{"ok":true,"revision":0,"effects":[]}"#, "same value: no change")
        XCTAssertEqual(app.dispatch(json: #"{"type":"set_host","value":"other"}"#).string, #"{"ok":true,"revision":1,"effects":[]}"#)
        XCTAssertEqual(
            app.dispatch(json: #"{"type":"submit_pairing"}"#).string,
            #"{"ok":true,"revision":2,"effects":[{"effect_id":1,"type":"http_pair","host":"other","port":7643,"use_tls":false,"code":"123456","device_id":"fixture-device","device_name":"Test iPhone"}]}"#)
    }

    func testErrorsHaveStableCodesAndChangeNothing() {
        let app = app(#"{"scenario":"connected_chat"}"#)
        let before = app.stateJSON()
        let cases: [(String, String)] = [
            ("{", #"{"ok":false,"error":{"code":"invalid_json","message":"unexpected end of input: expected a key at byte 1","offset":1}}"#),
            (#"{"type":"jump"}"#, #"{"ok":false,"error":{"code":"unknown_type","message":"unknown action type \"jump\"","field":"type"}}"#),
            (#"{"type":"set_draft","value":[1]}"#, #"{"ok":false,"error":{"code":"invalid_field","message":"field \"value\" must be a string, got array","field":"value"}}"#),
            (#"{"value":"x"}"#, #"{"ok":false,"error":{"code":"invalid_field","message":"missing required field \"type\"","field":"type"}}"#),
            (#"{"type":"load_scenario","scenario":"mars"}"#, #"{"ok":false,"error":{"code":"invalid_scenario","message":"unknown scenario \"mars\"","field":"scenario"}}"#),
        ]
        for (input, expected) in cases {
            XCTAssertEqual(app.dispatch(json: input).string, expected, input)
        }
        XCTAssertEqual(app.platformEvent(json: #"{"type":"set_host","value":"x"}"#).string.contains("unknown_type"), true, "actions are not platform events")
        XCTAssertEqual(app.stateJSON(), before)
        let logs = json(app.logsJSON(limit: 0).string)
        let kinds = logs["entries"]?.arrayValue?.compactMap { $0["kind"]?.stringValue }
        XCTAssertEqual(kinds, Array(repeating: "rejected", count: 6), "every rejected input is accounted for")
        XCTAssertEqual(logs["entries"]?.arrayValue?[1]["type"], "jump")
        XCTAssertEqual(logs["entries"]?.arrayValue?[1]["error"], "unknown_type")
    }

    func testLogsRecordTransitionsWithSecretsRedacted() {
        let app = app(#"{"scenario":"pairing_ready","log_capacity":3}"#)
        _ = app.dispatch(json: #"{"type":"set_pair_code","value":"654321"}"#)
        let submit = app.dispatch(json: #"{"type":"submit_pairing"}"#).string
        XCTAssertTrue(submit.contains("654321"), "the effect carries the code")
        let id = json(submit)["effects"]?.arrayValue?.first?["effect_id"]?.int64Value ?? -1
        let answer = app.platformEvent(json: #"{"type":"pair_finished","effect_id":\#(id),"ok":true,"token":"tok-XYZ","server_name":"devbox"}"#).string
        XCTAssertTrue(answer.contains("tok-XYZ"), "secure_store_write and websocket_connect carry the token")
        _ = app.dispatch(json: #"{"type":"set_draft","value":"hi"}"#)
        let logs = app.logsJSON(limit: 0).string
        XCTAssertFalse(logs.contains("654321") || logs.contains("tok-XYZ"), logs)
        XCTAssertFalse(app.stateJSON().string.contains("654321") || app.stateJSON().string.contains("tok-XYZ"))
        XCTAssertFalse(app.treeJSON().string.contains("654321") || app.treeJSON().string.contains("tok-XYZ"))
        let parsed = json(logs)
        XCTAssertEqual(parsed["capacity"], 3)
        XCTAssertEqual(parsed["next_seq"], 5)
        XCTAssertEqual(parsed["entries"]?.arrayValue?.compactMap { $0["seq"]?.int64Value }, [2, 3, 4], "bounded: the oldest went")
        let pairEntry = parsed["entries"]?.arrayValue?[1]
        XCTAssertEqual(pairEntry?["payload"]?["token"], "[redacted]")
        XCTAssertEqual(pairEntry?["effects"]?.arrayValue?.first?["value"], "[redacted]")
        XCTAssertEqual(json(app.logsJSON(limit: 1).string)["entries"]?.arrayValue?.count, 1)
    }

    func testALogEntryNamesTheInternalInputsItsHostCallRan() {
        let app = app(#"{"scenario":"pairing_ready"}"#)
        _ = app.dispatch(json: #"{"type":"tap_node","node_id":"pair.submit"}"#)
        _ = app.dispatch(json: #"{"type":"set_draft","value":"hi"}"#)
        let entries = json(app.logsJSON(limit: 2).string)["entries"]?.arrayValue ?? []
        XCTAssertEqual(entries.count, 2, "one entry per host call")
        XCTAssertEqual(entries.first?["type"], "tap_node")
        XCTAssertEqual(entries.first?["follow_ups"], ["submit_pairing", "pairing_started"])
        XCTAssertEqual(entries.last?["type"], "set_draft")
        XCTAssertNil(entries.last?["follow_ups"], "an entry with no follow-ups has no follow_ups member")
    }

    func testLargeInputsAreSummarisedInTheLog() {
        let app = app(#"{"scenario":"connected_chat"}"#)
        let input = #"{"type":"set_draft","value":""# + String(repeating: "x", count: 10_000) + #""}"#
        _ = app.dispatch(json: input)
        let entry = json(app.logsJSON(limit: 1).string)["entries"]?.arrayValue?.first
        XCTAssertEqual(entry?["payload"], ["type": "set_draft", "summary": .string("\(input.utf8.count) bytes, not kept in the log")])
    }

    func testStateAndTreeAreEnvelopedJSONWithTheSectionsInOrder() {
        let app = app(#"{"scenario":"connected_chat","viewport":{"width":320,"height":640}}"#)
        let state = json(app.stateJSON().string)
        XCTAssertEqual(state["ok"], true)
        XCTAssertEqual(state["state"]?["screen"], "chat")
        XCTAssertEqual(
            state["state"]?.objectValue?.keys,
            [
                "revision", "screen", "focused_node_id", "messages_scroll", "screen_scroll", "expanded_nodes", "connection", "pairing", "servers", "selected_server_id", "session", "transcript",
                "images", "run_status", "interrupted_turn", "older_history", "soft_interrupts", "outbox", "permission_requests", "stdin_requests", "notices", "banners", "draft", "attachments", "voice",
                "lifecycle", "pending_effects",
            ])
        let tree = json(app.treeJSON().string)
        XCTAssertEqual(tree["revision"], 0)
        XCTAssertEqual(tree["tree"]?["bounds"], ["x": 0, "y": 0, "width": 320, "height": 640])
        XCTAssertEqual(state["state"], SpecStore(.connectedChat).json, "the direct writer and the section encoder agree")
    }

    func testARawFrameOfSeveralLinesThroughTheABIStreamsText() {
        let app = app(#"{"scenario":"connected_chat"}"#)
        _ = app.dispatch(json: #"{"type":"send_message","text":"hi"}"#)
        let frame = JSONValue.string("{\"type\":\"text_delta\",\"text\":\"Hel\"}\n{\"type\":\"text_delta\",\"text\":\"lo\"}\n").jsonString
        let report = app.platformEvent(json: #"{"type":"websocket_event","line":\#(frame)}"#).string
        XCTAssertEqual(report, #"{"ok":true,"revision":2,"effects":[]}"#)
        let state = stateJSON(app)
        XCTAssertEqual(state.at("/state/revision"), 2)
        XCTAssertEqual(state.at("/state/transcript/4"), entryJSON("m5", "assistant", text: "Hello", isStreaming: true))
    }
}
