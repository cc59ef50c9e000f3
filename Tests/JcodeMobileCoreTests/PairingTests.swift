import XCTest
@testable import JcodeMobileCore
@testable import JcodeMobileJSON

final class PairingTests: XCTestCase {
    /// The error banner as the state JSON writes it.
    private func errorBanner(_ message: String) -> JSONValue {
        ["message": .string(message), "retry_after_secs": nil, "text": .string(message)]
    }

    func testEditingTheFormStoresWhatWasTypedAndPairsWithTheNormalisedValues() {
        var store = SpecStore()
        store.send(.setHost("devbox.local")) { $0["/pairing/host"] = "devbox.local" }
        store.send(.setPort("8443")) { $0["/pairing/port"] = "8443" }
        store.send(.setPairCode("123 456")) { $0["/pairing/pair_code"] = "123 456" }
        store.send(.setDeviceName("Test iPhone")) { $0["/pairing/device_name"] = "Test iPhone" }
        store.send(.setWorkingDir("/home/me/jcode", serverID: nil)) {
            $0["/pairing/working_dir"] = "/home/me/jcode"
            $0["/pairing/can_submit"] = true
        }
        // The code is sent without its space, to the typed port.
        store.send(
            .submitPairing,
            effects: [.http(.pair(host: "devbox.local", port: 8443, useTLS: false, code: "123456", deviceID: "fixture-device", deviceName: "Test iPhone", apnsToken: nil))], followUps: ["pairing_started"]
        ) {
            $0["/pairing/pair_code"] = ""
            $0["/pairing/has_held_code"] = true
            $0["/pairing/is_submitting"] = true
            $0["/pairing/can_submit"] = false
            $0["/connection/phase"] = "pairing"
            $0["/banners/status"] = "Pairing with devbox.local:8443…"
        }
    }

    func testSubmittingAnIncompleteFormShowsEveryMessageAndSendsNothing() {
        var store = SpecStore()
        store.send(.submitPairing, notes: ["pairing form is incomplete: host, pair_code, device_name, working_dir"]) {
            $0["/pairing/errors/host"] = "Enter the host name or IP address of the computer running jcode."
            $0["/pairing/errors/pair_code"] = "Enter the 6-digit pairing code shown by `jcode pair`."
            $0["/pairing/errors/device_name"] = "Give this device a name so you can recognise it on the server."
            $0["/pairing/errors/working_dir"] = "Enter the folder on the server where jcode should work, e.g. /home/you/project."
            // An empty port means the default: no message for it.
        }
        XCTAssertEqual(store["/pairing/errors/port"], .null)
    }

    func testSubmittingAnIncompleteFormShowsEachMessageUnderItsFieldAndTheReportSaysWhatIsMissing() {
        let app = try! JcodeMobileApp(optionsJSON: nil)
        _ = app.dispatch(json: #"{"type":"set_host","value":"devbox.local"}"#)
        _ = app.dispatch(json: #"{"type":"set_device_name","value":"Test iPhone"}"#)
        XCTAssertEqual(
            String(decoding: app.dispatch(json: #"{"type":"submit_pairing"}"#), as: UTF8.self),
            #"{"ok":true,"revision":3,"effects":[],"refused":"pairing form is incomplete: pair_code, working_dir"}"#)
        let tree = app.tree()
        XCTAssertEqual(tree.find("pair.code.error")?.label, "Enter the 6-digit pairing code shown by `jcode pair`.")
        XCTAssertEqual(
            tree.find("pair.working_dir.error")?.label, "Enter the folder on the server where jcode should work, e.g. /home/you/project.")
        XCTAssertNil(tree.find("pair.host.error"))
        XCTAssertNil(tree.find("pair.device_name.error"))
        // A complete form's report has no `refused`.
        _ = app.dispatch(json: #"{"type":"set_pair_code","value":"123456"}"#)
        _ = app.dispatch(json: #"{"type":"set_working_dir","value":"/home/me/jcode"}"#)
        XCTAssertFalse(String(decoding: app.dispatch(json: #"{"type":"submit_pairing"}"#), as: UTF8.self).contains("refused"))
    }

    func testPairAgainOpensTheFormFilledFromTheSavedServerWithoutACode() {
        // As after a restart: the saved server came back from the snapshot, the form did not.
        var restarted = Scenario.networkReconnect.build().state
        restarted.pairing = PairingForm()
        var store = SpecStore(state: restarted)
        store.fireTheReconnect()
        let socket = store.pendingID("websocket_connect")
        store.event(
            #"{"type":"websocket_failed","effect_id":\#(socket),"error":"Unauthorized","status":401}"#,
            effects: [.secureStore(.delete(key: "jcode.token.devbox.local:7643")), .device(.haptic(style: .error))],
            followUps: ["credentials_rejected", "connection_lost"]
        ) {
            $0["/connection/phase"] = "failed"
            $0["/connection/reason"] = "This device is no longer paired with the server. Re-pair to reconnect."
            $0["/banners/status"] = "This device is no longer paired with the server. Re-pair to reconnect."
        }
        XCTAssertEqual(store.node("connection.repair")?.visible, true)
        // Only a new code is missing: the device name is this device's, typed again.
        store.send(.tapNode(id: "connection.repair"), followUps: ["pair_again"]) {
            $0["/screen"] = "onboarding"
            $0["/pairing/host"] = "devbox.local"
            $0["/pairing/port"] = "7643"
            $0["/pairing/working_dir"] = "/home/me/jcode"
        }
        XCTAssertEqual(store.node("pair.host")?.value, "devbox.local")
        XCTAssertEqual(store.node("server.devbox.local:7643")?.label, "devbox")
    }

    func testPairAgainForAnUnknownServerLeavesTheFormAsItIs() {
        var store = SpecStore()
        store.dispatch(#"{"type":"pair_again","server_id":"nowhere:7643"}"#, notes: ["pair_again: no saved server nowhere:7643"])
    }

    func testValidationMessagesAppearForEditedFieldsOnly() {
        var store = SpecStore()
        store.send(.setPairCode("12345")) {
            $0["/pairing/pair_code"] = "12345"
            $0["/pairing/errors/pair_code"] = "The pairing code is 6 digits."
        }
        store.send(.setPort("99999")) {
            $0["/pairing/port"] = "99999"
            $0["/pairing/errors/port"] = "The port must be a number from 1 to 65535 (jcode uses 7643)."
        }
        store.send(.setHost("bad host")) {
            $0["/pairing/host"] = "bad host"
            $0["/pairing/errors/host"] = #""bad host" is not a valid host name or IP address."#
        }
        XCTAssertEqual(store["/pairing/errors/device_name"], .null, "the device name was not edited")
    }

    func testSubmittingAValidFormRequestsHTTPPairOnce() {
        var store = SpecStore(.pairingReady)
        store.submitTheReadyForm()
        store.send(.submitPairing, notes: ["pairing already in progress"])
    }

    func testSuccessfulPairingStoresTheTokenOnlyInTheKeychainAndConnects() {
        var store = SpecStore(.pairingReady)
        store.submitTheReadyForm()
        let pairID = store.pendingID("http_pair")
        store.event(
            #"{"type":"pair_finished","effect_id":\#(pairID),"ok":true,"token":"tok-secret","server_name":"devbox","server_version":"0.9.2"}"#,
            effects: [
                .secureStore(.write(key: "jcode.token.devbox.local:7643", value: "tok-secret")),
                .webSocket(.connect(url: "ws://devbox.local:7643/ws", authToken: "tok-secret")),
                .device(.haptic(style: .success)),
                .device(.registerPushNotifications),
            ], followUps: ["paired", "server_changed", "server_selected"]
        ) {
            $0["/pairing/is_submitting"] = false
            $0["/pairing/has_held_code"] = false
            $0["/servers"] = [["id": "devbox.local:7643", "name": "devbox", "host": "devbox.local", "port": 7643, "use_tls": false, "server_version": "0.9.2", "working_dir": "/home/me/jcode", "last_session_id": nil, "working_dir_error": nil]]
            $0["/selected_server_id"] = "devbox.local:7643"
            $0["/session/server_version"] = "0.9.2"
            $0["/connection/phase"] = "connecting"
            $0["/banners/status"] = "Connecting to devbox…"
        }
        let stateJSON = store.json.jsonString
        XCTAssertFalse(stateJSON.contains("tok-secret"), "the token never appears in state")
        XCTAssertFalse(stateJSON.contains("123456"), "a used pairing code never appears in state")
    }

    func testRejectedCodeSaysSoAndForgetsTheCode() {
        var store = SpecStore(.pairingReady)
        store.submitTheReadyForm()
        store.pairingRejected()
    }

    func testUnreachableServerSaysItCouldNotBeReachedAndKeepsTheCodeOutOfStateForARetry() {
        var store = SpecStore(.pairingReady)
        store.submitTheReadyForm()
        store.pairingFails(#""error":"Connection refused""#, banner: "Could not reach devbox.local:7643 (Connection refused). Check that jcode is running there with the gateway enabled and that this device is on the same network.")
        XCTAssertFalse(store.json.jsonString.contains("123456"), "a used code is not in the state")
        XCTAssertEqual(store.node("pair.code")?.placeholder, "Code kept from the last try")
        store.send(.submitPairing, effects: [.http(.pair(host: "devbox.local", port: 7643, useTLS: false, code: "123456", deviceID: "fixture-device", deviceName: "Test iPhone", apnsToken: nil))], followUps: ["pairing_started"]) {
            $0["/pairing/is_submitting"] = true
            $0["/pairing/can_submit"] = false
            $0["/connection/phase"] = "pairing"
            $0["/banners/status"] = "Pairing with devbox.local…"
            $0["/banners/error"] = nil
        }
        // A newly typed code replaces the kept one.
        store.send(.setPairCode("999999")) {
            $0["/pairing/pair_code"] = "999999"
            $0["/pairing/has_held_code"] = false
        }
    }

    func testAServerErrorStatusIsReportedWithItsCode() {
        var store = SpecStore(.pairingReady)
        store.submitTheReadyForm()
        store.pairingFails(#""status":500"#, banner: "The server at devbox.local answered HTTP 500. Try again.")
    }

    func testAnotherHTTPStatusWithAnErrorTextPutsTheTextInTheBanner() {
        var store = SpecStore(.pairingReady)
        store.submitTheReadyForm()
        store.pairingFails(#""status":500,"error":"boom""#, banner: "The server at devbox.local answered HTTP 500: boom. Try again.")
        XCTAssertEqual(store.node("banner.error")?.label, "The server at devbox.local answered HTTP 500: boom. Try again.")
    }

    func testTappingDismissOnTheErrorBannerClosesIt() {
        var store = SpecStore(.pairingReady)
        store.submitTheReadyForm()
        store.pairingRejected()
        XCTAssertEqual(store.node("banner.error")?.visible, true)
        XCTAssertEqual(store.node("banner.error.dismiss")?.visible, true)
        store.send(.tapNode(id: "banner.error.dismiss"), followUps: ["dismiss_error"]) { $0["/banners/error"] = nil }
        XCTAssertEqual(store.node("banner.error")?.visible, false)
        // The form is kept for another try.
        XCTAssertEqual(store["/pairing/host"], "devbox.local")
        XCTAssertEqual(store.node("pair.submit")?.enabled, true)
    }

    func testAnAnswerToAnUnknownEffectChangesNothing() {
        var store = SpecStore(.pairingReady)
        store.event(
            #"{"type":"pair_finished","effect_id":99,"ok":true,"token":"forged"}"#,
            notes: ["pair_finished for effect 99, which is not a pending http_pair; ignored"])
        XCTAssertEqual(store["/revision"], 0, "nothing changed, so the revision stays")
    }

    func testScanningAPairingQRCodeFillsTheFormAndPairs() {
        var store = SpecStore()
        store.send(.scanQR, effects: [.device(.requestCameraQRScan)])
        store.scanACompletePairingLink(
            "jcode://pair?host=https%3A%2F%2Fdevbox.example.com&port=8443&code=654321", workingDir: "/srv/app",
            pairs: ServerAddress(host: "devbox.example.com", port: 8443, useTLS: true), form: "https://devbox.example.com", port: "8443",
            status: "Pairing with devbox.example.com:8443…")
    }

    func testABadQRPayloadExplainsWhatToScan() {
        var store = SpecStore()
        store.event(#"{"type":"qr_payload_scanned","payload":"https://example.com"}"#, effects: [.device(.haptic(style: .error))], followUps: ["show_error"]) {
            $0["/banners/error"] = self.errorBanner(
                "That QR code is not a jcode pairing code. Run `jcode pair` on your computer and scan the code it shows.")
        }
        store.event(#"{"type":"qr_payload_scanned","payload":"jcode://pair?host=devbox"}"#, effects: [.device(.haptic(style: .error))], followUps: ["show_error"]) {
            $0["/banners/error"] = self.errorBanner(
                "That pairing QR code has no pairing code. Run `jcode pair` again and scan the new code.")
        }
    }

    /// Types `typed` into the empty host field and checks the server: the
    /// check goes to the normalised address.
    private func assertTypedHost(
        _ typed: String, isChecked expected: Effect, showing message: String, file: StaticString = #filePath, line: UInt = #line
    ) {
        var store = SpecStore(file: file, line: line)
        store.send(.setHost(typed), file: file, line: line) { $0["/pairing/host"] = .string(typed) }
        store.send(.checkServer, effects: [expected], file: file, line: line) {
            $0["/pairing/health"] = ["status": "checking", "message": .string(message)]
        }
    }

    /// Types `typed` into the empty host field: it is refused with `message`.
    private func assertTypedHost(_ typed: String, isRefusedWith message: String, file: StaticString = #filePath, line: UInt = #line) {
        var store = SpecStore(file: file, line: line)
        store.send(.setHost(typed), file: file, line: line) {
            $0["/pairing/host"] = .string(typed)
            $0["/pairing/errors/host"] = .string(message)
        }
    }

    func testHostNormalisationStripsSchemePathAndTakesTLS() {
        assertTypedHost("  DevBox.Local  ", isChecked: .http(.health(host: "devbox.local", port: 7643, useTLS: false)), showing: "Checking devbox.local…")
        assertTypedHost("https://devbox.example.com/ws?x=1", isChecked: .http(.health(host: "devbox.example.com", port: 7643, useTLS: true)), showing: "Checking devbox.example.com…")
        assertTypedHost("wss://devbox.example.com:9000/ws", isChecked: .http(.health(host: "devbox.example.com", port: 9000, useTLS: true)), showing: "Checking devbox.example.com:9000…")
        assertTypedHost("http://10.0.0.5:7643", isChecked: .http(.health(host: "10.0.0.5", port: 7643, useTLS: false)), showing: "Checking 10.0.0.5…")
        assertTypedHost("[::1]:7643", isChecked: .http(.health(host: "[::1]", port: 7643, useTLS: false)), showing: "Checking [::1]…")
        assertTypedHost("fe80::1", isChecked: .http(.health(host: "[fe80::1]", port: 7643, useTLS: false)), showing: "Checking [fe80::1]…")
        assertTypedHost("ftp://devbox", isRefusedWith: #""ftp://devbox" is not a valid host name or IP address."#)
        assertTypedHost("dev box", isRefusedWith: #""dev box" is not a valid host name or IP address."#)
        assertTypedHost("devbox:99999", isRefusedWith: #""devbox:99999" is not a valid host name or IP address."#)
        // An empty host cannot be checked: the form shows what is missing.
        var store = SpecStore()
        store.send(.setHost(""))
        store.send(.checkServer, notes: ["check_server: the host or port is invalid"]) {
            $0["/pairing/errors/host"] = "Enter the host name or IP address of the computer running jcode."
            $0["/pairing/errors/pair_code"] = "Enter the 6-digit pairing code shown by `jcode pair`."
            $0["/pairing/errors/device_name"] = "Give this device a name so you can recognise it on the server."
            $0["/pairing/errors/working_dir"] = "Enter the folder on the server where jcode should work, e.g. /home/you/project."
        }
    }

    func testServerCheckReportsReachabilityAndIgnoresAnswersForAnEditedHost() {
        var store = SpecStore(.pairingReady)
        store.send(.checkServer, effects: [.http(.health(host: "devbox.local", port: 7643, useTLS: false))]) {
            $0["/pairing/health"] = ["status": "checking", "message": "Checking devbox.local…"]
        }
        let first = store.pendingID("http_health")
        store.send(.setHost("other.local")) {
            $0["/pairing/host"] = "other.local"
            $0["/pairing/health"] = nil
        }
        store.event(
            #"{"type":"health_finished","effect_id":\#(first),"ok":true,"version":"0.9.2"}"#,
            notes: ["health_finished for devbox.local, no longer the address in the form; ignored"])
        store.send(.checkServer, effects: [.http(.health(host: "other.local", port: 7643, useTLS: false))]) {
            $0["/pairing/health"] = ["status": "checking", "message": "Checking other.local…"]
        }
        let second = store.pendingID("http_health")
        store.event(#"{"type":"health_finished","effect_id":\#(second),"ok":true,"version":"0.9.2"}"#, followUps: ["server_version_seen"]) {
            $0["/pairing/health"] = ["status": "reachable", "message": "jcode 0.9.2 is running at other.local."]
        }
    }
}
