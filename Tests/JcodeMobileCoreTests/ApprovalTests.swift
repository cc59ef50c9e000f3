import XCTest
@testable import JcodeMobileCore

final class ApprovalTests: XCTestCase {
    let bashRequest = PermissionRequest(requestID: "perm-1", sessionID: "session-fox", action: "bash", detail: "cargo test -p jcode-mobile-core", tier: "medium")

    func testAPermissionRequestShowsTheApprovalSheet() {
        let state = Scenario.toolApprovalRequired.state()
        XCTAssertEqual(state.permissionRequests, [bashRequest])
        let sheet = SemanticTree.build(state).find("permission.perm-1")
        XCTAssertEqual(sheet?.label, "Allow bash?")
        XCTAssertEqual(sheet?.value, "cargo test -p jcode-mobile-core")
        XCTAssertEqual(sheet?.children.map(\.id), [
            "permission.perm-1.detail", "permission.perm-1.tier", "permission.perm-1.approve", "permission.perm-1.deny", "permission.perm-1.always",
        ])
        XCTAssertEqual(sheet?.find("permission.perm-1.always")?.label, "Always allow for this session")
    }

    func testApprovingSendsPermissionResponseAndClosesTheSheet() {
        var store = TestStore(.toolApprovalRequired)
        store.send(.tapNode(id: "permission.perm-1.approve"), effects: [
            .webSocket(.send(#"{"id":4,"type":"permission_response","request_id":"perm-1","approved":true,"remember":false}"#)),
        ]) {
            $0.permissionRequests = []
            $0.connection.nextRequestID = 5
        }
    }

    func testAlwaysAllowRemembersAndDenyDenies() {
        var store = TestStore(.toolApprovalRequired)
        store.send(.tapNode(id: "permission.perm-1.always"), effects: [
            .webSocket(.send(#"{"id":4,"type":"permission_response","request_id":"perm-1","approved":true,"remember":true}"#)),
        ]) {
            $0.permissionRequests = []
            $0.connection.nextRequestID = 5
        }
        var other = TestStore(.toolApprovalRequired)
        other.send(.respondPermission(requestID: "perm-1", approved: false, remember: false), effects: [
            .webSocket(.send(#"{"id":4,"type":"permission_response","request_id":"perm-1","approved":false,"remember":false}"#)),
        ]) {
            $0.permissionRequests = []
            $0.connection.nextRequestID = 5
        }
    }

    func testSeveralRequestsAreKeptInOrderAndShownOneAtATime() {
        var store = TestStore(.toolApprovalRequired)
        let second = PermissionRequest(requestID: "perm-2", sessionID: nil, action: "write_file", detail: "src/lib.rs", tier: "high")
        store.server(#"{"type":"permission_request","request_id":"perm-2","action":"write_file","detail":"src/lib.rs","tier":"high"}"#,
                     effects: [.device(.haptic(style: .warning))]) {
            $0.permissionRequests.append(second)
        }
        XCTAssertEqual(SemanticTree.build(store.state).find("permission.perm-1")?.label, "Allow bash? (1 of 2)")
        store.send(.respondPermission(requestID: "perm-1", approved: true, remember: false), effects: [
            .webSocket(.send(#"{"id":4,"type":"permission_response","request_id":"perm-1","approved":true,"remember":false}"#)),
        ]) {
            $0.permissionRequests = [second]
            $0.connection.nextRequestID = 5
        }
        XCTAssertNotNil(SemanticTree.build(store.state).find("permission.perm-2.approve"))
    }

    func testAnswersToUnknownRequestsAreIgnoredAndAnswersWhileOfflineWait() {
        var store = TestStore(.toolApprovalRequired)
        store.send(.respondPermission(requestID: "nope", approved: true, remember: false)) { _ in }
        XCTAssertEqual(store.lastNotes, ["respond_permission: no pending request nope"])
        store.loseTheConnection()
        store.send(.respondPermission(requestID: "perm-1", approved: true, remember: false)) {
            $0.errorBanner = ErrorBanner(message: "Not connected: your answer was not sent. It will be waiting when the connection is back.")
        }
        XCTAssertEqual(store.state.permissionRequests, [bashRequest], "nothing the person decided is lost")
    }

    func testAStdinRequestShowsAPromptMaskedForPasswords() {
        let state = Scenario.stdinRequestPending.state()
        XCTAssertEqual(state.stdinRequests, [StdinRequest(requestID: "stdin-1", prompt: "[sudo] password for dev:", isPassword: true, toolCallID: "call_apt")])
        let input = SemanticTree.build(state).find("stdin.stdin-1.input")
        XCTAssertEqual(input?.role, .secureField)
        XCTAssertEqual(input?.supportedActions, ["tap", "respond_stdin"])
        XCTAssertEqual(input?.accessibilityLabel, "[sudo] password for dev: (hidden input)")
    }

    func testAnsweringAStdinRequestSendsStdinResponseAndNeverLogsTheAnswer() {
        let app = JcodeMobileApp(options: { var o = AppOptions(); o.scenario = .stdinRequestPending; return o }())
        let report = app.dispatch(json: #"{"type":"respond_stdin","request_id":"stdin-1","input":"hunter2"}"#).string
        XCTAssertTrue(report.contains(#"stdin_response"#) && report.contains("hunter2"), "the host gets the answer: \(report)")
        XCTAssertEqual(app.state.stdinRequests, [])
        let logs = app.logsJSON(limit: 0).string
        XCTAssertFalse(logs.contains("hunter2"), logs)
    }

    func testATurnThatEndsClosesWhatItWasAsking() {
        var store = TestStore(.toolApprovalRequired)
        store.server(#"{"type":"done","id":3}"#) {
            $0.permissionRequests = []
            $0.session.isProcessing = false
            $0.transcript.finishStreaming()
        }
    }
}
