import XCTest
@testable import JcodeMobileCore

final class PairingTests: XCTestCase {
    let devbox = ServerAddress(host: "devbox.local", port: 7643, useTLS: false)

    func testEditingTheFormStoresWhatWasTyped() {
        var store = TestStore()
        store.send(.setHost("devbox.local")) { $0.pairing.host = "devbox.local" }
        store.send(.setPort("8443")) { $0.pairing.port = "8443" }
        store.send(.setPairCode("123 456")) { $0.pairing.code = "123 456" }
        store.send(.setDeviceName("Test iPhone")) { $0.pairing.deviceName = "Test iPhone" }
        XCTAssertEqual(store.state.pairing.validated?.code, "123456")
        XCTAssertEqual(store.state.pairing.validated?.address, ServerAddress(host: "devbox.local", port: 8443, useTLS: false))
    }

    func testSubmittingAnIncompleteFormShowsEveryMessageAndSendsNothing() {
        var store = TestStore()
        store.send(.submitPairing) { $0.pairing.showAllErrors = true }
        let errors = store.state.pairing.visibleErrors
        XCTAssertEqual(errors.host, .hostMissing)
        XCTAssertEqual(errors.code, .codeMissing)
        XCTAssertEqual(errors.deviceName, .deviceNameMissing)
        XCTAssertNil(errors.port, "an empty port means the default")
        XCTAssertEqual(store.lastNotes, ["pairing form is incomplete"])
    }

    func testValidationMessagesAppearForEditedFieldsOnly() {
        var store = TestStore()
        store.send(.setPairCode("12345")) { $0.pairing.code = "12345" }
        XCTAssertEqual(store.state.pairing.visibleErrors, FieldErrors(code: .codeInvalid))
        store.send(.setPort("99999")) { $0.pairing.port = "99999" }
        XCTAssertEqual(store.state.pairing.visibleErrors, FieldErrors(port: .portInvalid, code: .codeInvalid))
        store.send(.setHost("bad host")) { $0.pairing.host = "bad host" }
        XCTAssertEqual(store.state.pairing.visibleErrors.host, .hostInvalid("bad host"))
    }

    func testSubmittingAValidFormRequestsHTTPPair() {
        var store = TestStore(.pairingReady)
        store.send(
            .submitPairing,
            effects: [.http(.pair(host: "devbox.local", port: 7643, useTLS: false, code: "123456", deviceID: "fixture-device", deviceName: "Test iPhone", apnsToken: nil))]
        ) {
            $0.pairing.isSubmitting = true
            $0.pairing.code = ""
            $0.pairing.heldCode = "123456"
            $0.connection.phase = .pairing
        }
        store.send(.submitPairing) { _ in }
        XCTAssertEqual(store.lastNotes, ["pairing already in progress"])
    }

    func testSuccessfulPairingStoresTheTokenOnlyInTheKeychainAndConnects() {
        var store = TestStore(.pairingReady)
        store.submitTheReadyForm()
        let pairID = store.pendingID("http_pair")
        let server = SavedServer(address: devbox, name: "devbox", serverVersion: "0.9.2")
        store.event(
            #"{"type":"pair_finished","effect_id":\#(pairID),"ok":true,"token":"tok-secret","server_name":"devbox","server_version":"0.9.2"}"#,
            effects: [
                .secureStore(.write(key: "jcode.token.devbox.local:7643", value: "tok-secret")),
                .storage(.write(key: "servers", value: .array([server.json]))),
                .webSocket(.connect(url: "ws://devbox.local:7643/ws", authToken: "tok-secret")),
                .device(.haptic(style: .success)),
                .device(.registerPushNotifications),
            ]
        ) {
            $0.pairing.isSubmitting = false
            $0.pairing.heldCode = nil
            $0.servers = [server]
            $0.selectedServerID = "devbox.local:7643"
            $0.credentials["devbox.local:7643"] = "tok-secret"
            $0.session.serverVersion = "0.9.2"
            $0.connection.phase = .connecting
        }
        let stateJSON = store.state.json.jsonString
        XCTAssertFalse(stateJSON.contains("tok-secret"), "the token never appears in state")
        XCTAssertFalse(stateJSON.contains("123456"), "a used pairing code never appears in state")
    }

    func testRejectedCodeSaysSoAndClearsTheCode() {
        var store = TestStore(.pairingReady)
        store.submitTheReadyForm()
        let id = store.pendingID("http_pair")
        store.event(#"{"type":"pair_finished","effect_id":\#(id),"ok":false,"status":401,"error":"Invalid or expired pairing code"}"#, effects: [.device(.haptic(style: .error))]) {
            $0.pairing.isSubmitting = false
            $0.pairing.heldCode = nil
            $0.connection.phase = .disconnected
            $0.errorBanner = ErrorBanner(message: "Invalid or expired pairing code")
        }
    }

    func testUnreachableServerSaysItCouldNotBeReachedAndKeepsTheCodeOutOfStateForARetry() {
        var store = TestStore(.pairingReady)
        store.submitTheReadyForm()
        let id = store.pendingID("http_pair")
        store.event(#"{"type":"pair_finished","effect_id":\#(id),"ok":false,"error":"Connection refused"}"#, effects: [.device(.haptic(style: .error))]) {
            $0.pairing.isSubmitting = false
            $0.connection.phase = .disconnected
            $0.errorBanner = ErrorBanner(
                message: "Could not reach devbox.local:7643 (Connection refused). Check that jcode is running there with the gateway enabled and that this device is on the same network.")
        }
        XCTAssertFalse(store.state.json.jsonString.contains("123456"), "a used code is not in the state")
        XCTAssertEqual(SemanticTree.build(store.state).find("pair.code")?.placeholder, "Code kept from the last try")
        store.send(.submitPairing, effects: [.http(.pair(host: "devbox.local", port: 7643, useTLS: false, code: "123456", deviceID: "fixture-device", deviceName: "Test iPhone", apnsToken: nil))]) {
            $0.pairing.isSubmitting = true
            $0.connection.phase = .pairing
            $0.errorBanner = nil
        }
        store.send(.setPairCode("999999")) {
            $0.pairing.code = "999999"
            $0.pairing.heldCode = nil
        }
    }

    func testAServerErrorStatusIsReportedWithItsCode() {
        var store = TestStore(.pairingReady)
        store.submitTheReadyForm()
        let id = store.pendingID("http_pair")
        store.event(#"{"type":"pair_finished","effect_id":\#(id),"ok":false,"status":500}"#, effects: [.device(.haptic(style: .error))]) {
            $0.pairing.isSubmitting = false
            $0.connection.phase = .disconnected
            $0.errorBanner = ErrorBanner(message: "The server at devbox.local answered HTTP 500. Try again.")
        }
    }

    func testAnAnswerToAnUnknownEffectChangesNothing() {
        var store = TestStore(.pairingReady)
        store.event(#"{"type":"pair_finished","effect_id":99,"ok":true,"token":"forged"}"#) { _ in }
        XCTAssertEqual(store.lastNotes, ["pair_finished for effect 99, which is not a pending http_pair; ignored"])
        XCTAssertEqual(store.state.revision, 0, "nothing changed, so the revision stays")
    }

    func testScanningAPairingQRCodeFillsTheFormAndPairs() {
        var store = TestStore()
        store.send(.setDeviceName("Test iPhone")) { $0.pairing.deviceName = "Test iPhone" }
        store.send(.scanQR, effects: [.device(.requestCameraQRScan)])
        store.event(
            #"{"type":"qr_payload_scanned","payload":"jcode://pair?host=https%3A%2F%2Fdevbox.example.com&port=8443&code=654321"}"#,
            effects: [.http(.pair(host: "devbox.example.com", port: 8443, useTLS: true, code: "654321", deviceID: "fixture-device", deviceName: "Test iPhone", apnsToken: nil))]
        ) {
            $0.pairing.host = "https://devbox.example.com"
            $0.pairing.port = "8443"
            $0.pairing.heldCode = "654321"
            $0.pairing.isSubmitting = true
            $0.connection.phase = .pairing
        }
    }

    func testABadQRPayloadExplainsWhatToScan() {
        var store = TestStore()
        store.event(#"{"type":"qr_payload_scanned","payload":"https://example.com"}"#, effects: [.device(.haptic(style: .error))]) {
            $0.errorBanner = ErrorBanner(message: PairingLink.Problem.notJcode.message)
        }
        store.event(#"{"type":"qr_payload_scanned","payload":"jcode://pair?host=devbox"}"#, effects: [.device(.haptic(style: .error))]) {
            $0.errorBanner = ErrorBanner(message: PairingLink.Problem.missing("pairing code").message)
        }
    }

    func testHostNormalisationStripsSchemePathAndTakesTLS() {
        func parse(_ s: String) -> ServerAddress.Host? {
            if case .success(let h) = ServerAddress.parseHost(s) { return h }
            return nil
        }
        XCTAssertEqual(parse("  DevBox.Local  "), .init(host: "devbox.local", port: nil, useTLS: false))
        XCTAssertEqual(parse("https://devbox.example.com/ws?x=1"), .init(host: "devbox.example.com", port: nil, useTLS: true))
        XCTAssertEqual(parse("wss://devbox.example.com:9000/ws"), .init(host: "devbox.example.com", port: 9000, useTLS: true))
        XCTAssertEqual(parse("http://10.0.0.5:7643"), .init(host: "10.0.0.5", port: 7643, useTLS: false))
        XCTAssertEqual(parse("[::1]:7643"), .init(host: "[::1]", port: 7643, useTLS: false))
        XCTAssertEqual(parse("fe80::1"), .init(host: "[fe80::1]", port: nil, useTLS: false))
        XCTAssertNil(parse(""))
        XCTAssertNil(parse("ftp://devbox"))
        XCTAssertNil(parse("dev box"))
        XCTAssertNil(parse("devbox:99999"))
    }

    func testServerCheckReportsReachabilityAndIgnoresAnswersForAnEditedHost() {
        var store = TestStore(.pairingReady)
        store.send(.checkServer, effects: [.http(.health(host: "devbox.local", port: 7643, useTLS: false))]) {
            $0.pairing.health = .init(status: .checking, message: "Checking devbox.local…")
        }
        let first = store.pendingID("http_health")
        store.send(.setHost("other.local")) {
            $0.pairing.host = "other.local"
            $0.pairing.health = nil
        }
        store.event(#"{"type":"health_finished","effect_id":\#(first),"ok":true,"version":"0.9.2"}"#) { _ in }
        XCTAssertEqual(store.lastNotes, ["health_finished for devbox.local, no longer the address in the form; ignored"])
        store.send(.checkServer, effects: [.http(.health(host: "other.local", port: 7643, useTLS: false))]) {
            $0.pairing.health = .init(status: .checking, message: "Checking other.local…")
        }
        let second = store.pendingID("http_health")
        store.event(#"{"type":"health_finished","effect_id":\#(second),"ok":true,"version":"0.9.2"}"#) {
            $0.pairing.health = .init(status: .reachable, message: "jcode 0.9.2 is running at other.local.")
        }
    }
}
