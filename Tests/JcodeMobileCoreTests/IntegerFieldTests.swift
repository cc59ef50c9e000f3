import XCTest
@testable import JcodeMobileCore

/// Every integer field has a range: a value outside it, however it is
/// written, is refused with `invalid_field` and a message naming the range.
/// Nothing is rounded, clamped or wrapped, and echoed numbers are exact.
final class IntegerFieldTests: XCTestCase {
    private func app(_ scenario: Scenario = .connectedChat) -> JcodeMobileApp {
        var options = AppOptions()
        options.scenario = scenario
        return JcodeMobileApp(options: options)
    }

    private func optionsError(_ text: String) -> String? {
        parseError(of: text, AppOptions.parse).map { JcodeMobileApp.errorDocument($0).text }
    }

    func testAnEffectIdBeyondSixtyFourBitsIsRefusedAsWrittenNotClamped() {
        let app = app()
        let cases: [(String, String)] = [
            ("9223372036854775808", #"{"ok":false,"error":{"code":"invalid_field","message":"field \"effect_id\" must be an integer from 1 to 9223372036854775807, got 9223372036854775808","field":"effect_id"}}"#),
            ("-9223372036854775809", #"{"ok":false,"error":{"code":"invalid_field","message":"field \"effect_id\" must be an integer from 1 to 9223372036854775807, got -9223372036854775809","field":"effect_id"}}"#),
            ("-9223372036854775808", #"{"ok":false,"error":{"code":"invalid_field","message":"field \"effect_id\" must be an integer from 1 to 9223372036854775807, got -9223372036854775808","field":"effect_id"}}"#),
            ("123456789012345678901234567890", #"{"ok":false,"error":{"code":"invalid_field","message":"field \"effect_id\" must be an integer from 1 to 9223372036854775807, got 123456789012345678901234567890","field":"effect_id"}}"#),
            ("0", #"{"ok":false,"error":{"code":"invalid_field","message":"field \"effect_id\" must be an integer from 1 to 9223372036854775807, got 0","field":"effect_id"}}"#),
            ("-0", #"{"ok":false,"error":{"code":"invalid_field","message":"field \"effect_id\" must be an integer from 1 to 9223372036854775807, got -0","field":"effect_id"}}"#),
            ("1.5", #"{"ok":false,"error":{"code":"invalid_field","message":"field \"effect_id\" must be an integer from 1 to 9223372036854775807, got 1.5","field":"effect_id"}}"#),
            ("1e400", #"{"ok":false,"error":{"code":"invalid_field","message":"field \"effect_id\" must be an integer from 1 to 9223372036854775807, got 1e400","field":"effect_id"}}"#),
            ("\"3\"", #"{"ok":false,"error":{"code":"invalid_field","message":"field \"effect_id\" must be an integer from 1 to 9223372036854775807, got string","field":"effect_id"}}"#),
            ("1" + String(repeating: "0", count: 99), #"{"ok":false,"error":{"code":"invalid_field","message":"field \"effect_id\" must be an integer from 1 to 9223372036854775807, got 10000000000000000000000000000000… (100 characters)","field":"effect_id"}}"#),
        ]
        let before = app.stateJSON()
        for (literal, expected) in cases {
            XCTAssertEqual(app.platformEvent(json: #"{"type":"websocket_opened","effect_id":\#(literal)}"#).string, expected, literal)
        }
        XCTAssertEqual(app.stateJSON(), before, "a refused event changes nothing")
    }

    func testAWholeNumberWrittenWithAFractionOrAnExponentIsThatInteger() {
        let app = app(.onboarding)
        XCTAssertEqual(json(app.dispatch(json: #"{"type":"set_port","value":7.643e3}"#).string)["ok"], true)
        XCTAssertEqual(json(app.stateJSON().string).at("/state/pairing/port"), "7643")
        XCTAssertEqual(json(app.dispatch(json: #"{"type":"set_port","value":8080.0}"#).string)["ok"], true)
        XCTAssertEqual(json(app.stateJSON().string).at("/state/pairing/port"), "8080")
    }

    func testAPortOutsideOneTo65535IsRefusedAndAStringIsKeptAsTyped() {
        let app = app(.onboarding)
        XCTAssertEqual(
            app.dispatch(json: #"{"type":"set_port","value":70000}"#).string,
            #"{"ok":false,"error":{"code":"invalid_field","message":"field \"value\" must be a string or an integer from 1 to 65535, got 70000","field":"value"}}"#)
        XCTAssertEqual(
            app.dispatch(json: #"{"type":"set_port","value":0}"#).string,
            #"{"ok":false,"error":{"code":"invalid_field","message":"field \"value\" must be a string or an integer from 1 to 65535, got 0","field":"value"}}"#)
        XCTAssertEqual(
            app.dispatch(json: #"{"type":"set_port","value":true}"#).string,
            #"{"ok":false,"error":{"code":"invalid_field","message":"field \"value\" must be a string or an integer from 1 to 65535, got boolean","field":"value"}}"#)
        // What the person typed is theirs: the form, not the decoder, says it is no port.
        XCTAssertEqual(app.dispatch(json: #"{"type":"set_port","value":"70000"}"#).string, #"{"ok":true,"revision":1,"effects":[]}"#)
        XCTAssertEqual(json(app.stateJSON().string).at("/state/pairing/port"), "70000")
    }

    func testASecretIntegerOutOfRangeIsNotRepeatedInTheMessage() {
        let app = app(.onboarding)
        XCTAssertEqual(
            app.dispatch(json: #"{"type":"set_pair_code","value":1234567}"#).string,
            #"{"ok":false,"error":{"code":"invalid_field","message":"field \"value\" must be a string or an integer from 0 to 999999, got another number","field":"value"}}"#)
        XCTAssertFalse(app.logsJSON(limit: 0).string.contains("1234567"), "nor logged")
    }

    func testCloseCodesAndHTTPStatusesHaveTheirWireRanges() {
        let app = app()
        XCTAssertEqual(
            app.platformEvent(json: #"{"type":"websocket_closed","effect_id":1,"code":70000}"#).string,
            #"{"ok":false,"error":{"code":"invalid_field","message":"field \"code\" must be an integer from 0 to 65535, got 70000","field":"code"}}"#)
        XCTAssertEqual(
            app.platformEvent(json: #"{"type":"websocket_failed","effect_id":1,"error":"refused","status":-1}"#).string,
            #"{"ok":false,"error":{"code":"invalid_field","message":"field \"status\" must be an integer from 100 to 999, got -1","field":"status"}}"#)
        XCTAssertEqual(
            app.platformEvent(json: #"{"type":"health_finished","effect_id":1,"ok":false,"status":1000}"#).string,
            #"{"ok":false,"error":{"code":"invalid_field","message":"field \"status\" must be an integer from 100 to 999, got 1000","field":"status"}}"#)
    }

    func testAppNewOptionsNameTheirRanges() {
        XCTAssertEqual(
            optionsError(#"{"log_capacity":100001}"#),
            #"{"ok":false,"error":{"code":"invalid_field","message":"field \"log_capacity\" must be an integer from 1 to 100000, got 100001","field":"log_capacity"}}"#)
        XCTAssertEqual(
            optionsError(#"{"log_capacity":1e20}"#),
            #"{"ok":false,"error":{"code":"invalid_field","message":"field \"log_capacity\" must be an integer from 1 to 100000, got 1e20","field":"log_capacity"}}"#)
        XCTAssertEqual(
            optionsError(#"{"log_capacity":18446744073709551617}"#),
            #"{"ok":false,"error":{"code":"invalid_field","message":"field \"log_capacity\" must be an integer from 1 to 100000, got 18446744073709551617","field":"log_capacity"}}"#)
        XCTAssertEqual(
            optionsError(#"{"viewport":{"width":0,"height":844}}"#),
            #"{"ok":false,"error":{"code":"invalid_field","message":"field \"width\" must be an integer from 1 to 100000, got 0","field":"viewport.width"}}"#)
        XCTAssertEqual(optionsError(#"{"log_capacity":1e5,"viewport":{"width":390.0,"height":8.44e2}}"#), nil, "whole numbers in any spelling")
    }

    private func subscribeError(_ text: String) -> String? {
        parseError(of: text, SubscribeOptions.parse).map { JcodeMobileApp.errorDocument($0).text }
    }

    func testSubscribeOptionsNameACapacityOutOfRangeAsWrittenLikeEveryOtherCall() {
        XCTAssertEqual(
            subscribeError(#"{"capacity":1e20}"#),
            #"{"ok":false,"error":{"code":"invalid_field","message":"field \"capacity\" must be an integer from 1 to 65536, got 1e20","field":"capacity"}}"#)
        XCTAssertEqual(
            subscribeError(#"{"capacity":18446744073709551617}"#),
            #"{"ok":false,"error":{"code":"invalid_field","message":"field \"capacity\" must be an integer from 1 to 65536, got 18446744073709551617","field":"capacity"}}"#)
        XCTAssertEqual(
            subscribeError(#"{"capacity":65537.0}"#),
            #"{"ok":false,"error":{"code":"invalid_field","message":"field \"capacity\" must be an integer from 1 to 65536, got 65537.0","field":"capacity"}}"#)
        XCTAssertEqual(
            subscribeError(#"{"capacity":1E+400}"#),
            #"{"ok":false,"error":{"code":"invalid_field","message":"field \"capacity\" must be an integer from 1 to 65536, got 1E+400","field":"capacity"}}"#)
        XCTAssertEqual(subscribeError(#"{"capacity":6.4e1,"kinds":["state","tree"]}"#), nil, "whole numbers in any spelling")
    }

    func testTapXYRefusesACoordinateThatIsNotFiniteAsHitTestDoes() {
        let app = app()
        let before = app.stateJSON()
        XCTAssertEqual(
            app.dispatch(json: #"{"type":"tap_xy","x":1e400,"y":10}"#).string,
            #"{"ok":false,"error":{"code":"invalid_field","message":"field \"x\" must be a finite number of points, got 1e400","field":"x"}}"#)
        XCTAssertEqual(
            app.dispatch(json: #"{"type":"tap_xy","x":10,"y":-1e400}"#).string,
            #"{"ok":false,"error":{"code":"invalid_field","message":"field \"y\" must be a finite number of points, got -1e400","field":"y"}}"#)
        XCTAssertEqual(
            app.hitTestDocument(x: .infinity, y: 10).text,
            #"{"ok":false,"error":{"code":"invalid_field","message":"field \"x\" must be a finite number of points, got inf","field":"x"}}"#)
        XCTAssertEqual(app.stateJSON(), before, "a refused tap changes nothing")
    }

    func testASnapshotVersionIsAnIntegerLikeAnyOther() {
        XCTAssertEqual(
            optionsError(#"{"snapshot":{"version":9223372036854775808}}"#),
            #"{"ok":false,"error":{"code":"unsupported_snapshot","message":"snapshot version 9223372036854775808 is newer than this library, which reads version 1","field":"snapshot.version"}}"#,
            "a newer library's, to be kept: not a damaged snapshot")
        XCTAssertEqual(
            optionsError(#"{"snapshot":{"version":-123456789012345678901234567890}}"#),
            #"{"ok":false,"error":{"code":"unsupported_snapshot","message":"snapshot version -123456789012345678901234567890 is not one this library reads; it reads version 1","field":"snapshot.version"}}"#)
        XCTAssertEqual(
            optionsError(#"{"snapshot":{"version":1.5}}"#),
            #"{"ok":false,"error":{"code":"invalid_snapshot","message":"snapshot.version must be an integer, got 1.5","field":"snapshot.version"}}"#)
        XCTAssertEqual(optionsError(#"{"snapshot":{"version":1.0}}"#), nil, "1.0 is version 1")
        XCTAssertEqual(optionsError(#"{"snapshot":{"version":1e0}}"#), nil)
    }

    func testAServerEventWithACountOutOfRangeIsDroppedNamingTheRange() {
        var store = SpecStore.turnRunning()
        store.frame(
            #"{"type":"tokens","input":-1,"output":5}"#,
            #"{"type":"tokens","input":9223372036854775808,"output":5}"#,
            #"{"type":"done","id":18446744073709551615}"#,
            notes: [
                #"malformed server event dropped: field "input" must be an integer from 0 to 9223372036854775807, got -1"#,
                #"malformed server event dropped: field "input" must be an integer from 0 to 9223372036854775807, got 9223372036854775808"#,
                #"malformed server event dropped: field "id" must be an integer from 0 to 9223372036854775807, got 18446744073709551615"#,
            ]
        ) { _ in }
    }

    func testTheChangeFeedEchoesSinceExactlyAsPassed() {
        let app = app()
        let revision = app.state.revision
        for (since, expected) in [
            (UInt64(9_223_372_036_854_775_808), #"{"ok":true,"revision":\#(revision),"since":9223372036854775808,"resync":true,"state":{"#),
            (UInt64(18_446_744_073_709_551_615), #"{"ok":true,"revision":\#(revision),"since":18446744073709551615,"resync":true,"state":{"#),
        ] {
            XCTAssertEqual(String(app.changesJSON(since: since).string.prefix(expected.count)), expected)
        }
    }

    func testAHistorysTotalTokensAreCountsOrIgnored() {
        XCTAssertEqual(TokenUsage(json: [10, 20.0]), TokenUsage(input: 10, output: 20))
        XCTAssertNil(TokenUsage(json: [-1, 20]), "a negative count is not understood")
        XCTAssertNil(TokenUsage(json: ["input": 1, "output": .double(1e19)]), "nor one beyond 64 bits")
    }

    func testTheReferenceShowsEachIntegerFieldsRange() {
        let reference = ABIReference.markdown()
        XCTAssertTrue(reference.contains("| `port` | integer from 1 to 65535 | yes |"))
        XCTAssertTrue(reference.contains("| `effect_id` | integer from 1 to 9223372036854775807 | yes |"))
        XCTAssertTrue(reference.contains("| `code` | integer from 0 to 65535 | no |"))
        XCTAssertTrue(reference.contains("| `log_capacity` | integer from 1 to 100000 | no |"))
        XCTAssertTrue(reference.contains("| `value` | string, or integer from 1 to 65535 | yes |"))
    }
}
