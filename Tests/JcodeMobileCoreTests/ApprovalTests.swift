import XCTest
@testable import JcodeMobileCore
@testable import JcodeMobileJSON

final class ApprovalTests: XCTestCase {
    /// The request of `tool_approval_required`, as the state JSON writes it.
    let bashRequest: JSONValue = [
        "request_id": "perm-1", "session_id": "session-fox", "action": "bash", "detail": "cargo test -p jcode-mobile-core", "tier": "medium",
    ]

    func testAPermissionRequestShowsTheApprovalSheet() {
        let store = SpecStore(.toolApprovalRequired)
        XCTAssertEqual(store["/permission_requests"], [bashRequest])
        let sheet = store.node("permission.perm-1")
        XCTAssertEqual(sheet?.label, "Allow bash?")
        XCTAssertEqual(sheet?.value, "cargo test -p jcode-mobile-core")
        XCTAssertEqual(sheet?.children.map(\.id), ["permission.perm-1.detail", "permission.perm-1.tier", "permission.perm-1.actions"])
        XCTAssertEqual(
            sheet?.find("permission.perm-1.actions")?.children.map(\.id),
            ["permission.perm-1.approve", "permission.perm-1.deny", "permission.perm-1.always"])
        XCTAssertEqual(sheet?.find("permission.perm-1.always")?.label, "Always allow for this session")
    }

    func testApprovingSendsPermissionResponseAndClosesTheSheet() {
        var store = SpecStore(.toolApprovalRequired)
        store.answerTheOnlyPermission(.tapNode(id: "permission.perm-1.approve"), approved: true, remember: false, followUps: ["respond_permission", "send"])
    }

    func testAlwaysAllowRemembersAndDenyDenies() {
        var store = SpecStore(.toolApprovalRequired)
        store.answerTheOnlyPermission(.tapNode(id: "permission.perm-1.always"), approved: true, remember: true, followUps: ["respond_permission", "send"])
        var other = SpecStore(.toolApprovalRequired)
        other.answerTheOnlyPermission(.respondPermission(requestID: "perm-1", approved: false, remember: false), approved: false, remember: false, followUps: ["send"])
    }

    func testSeveralRequestsAreKeptInOrderAndShownOneAtATime() {
        var store = SpecStore(.toolApprovalRequired)
        store.server(#"{"type":"permission_request","request_id":"perm-2","action":"write_file","detail":"src/lib.rs","tier":"high"}"#,
                     effects: [.device(.haptic(style: .warning))], followUps: ["permission_asked"]) {
            $0.append("/permission_requests", ["request_id": "perm-2", "session_id": nil, "action": "write_file", "detail": "src/lib.rs", "tier": "high"])
        }
        XCTAssertEqual(store.node("permission.perm-1")?.label, "Allow bash? (1 of 2)")
        store.send(.respondPermission(requestID: "perm-1", approved: true, remember: false), effects: [
            .webSocket(.send(#"{"id":4,"type":"permission_response","request_id":"perm-1","approved":true,"remember":false}"#)),
        ], followUps: ["send"]) {
            $0.remove("/permission_requests/0")
        }
        XCTAssertNotNil(store.node("permission.perm-2.approve"))
    }

    func testAStdinRequestShowsAPromptMaskedForPasswords() {
        let store = SpecStore(.stdinRequestPending)
        XCTAssertEqual(store["/stdin_requests"], [
            ["request_id": "stdin-1", "prompt": "[sudo] password for dev:", "is_password": true, "tool_call_id": "call_apt"],
        ])
        let input = store.node("stdin.stdin-1.input")
        XCTAssertEqual(input?.role, .secureField)
        XCTAssertEqual(input?.supportedActions, ["tap", "respond_stdin"])
        XCTAssertEqual(input?.accessibilityLabel, "[sudo] password for dev: (hidden input)")
    }

    func testAnsweringAStdinRequestSendsStdinResponseAndNeverLogsTheAnswer() {
        let app = JcodeMobileApp(options: { var o = AppOptions(); o.scenario = .stdinRequestPending; return o }())
        let report = String(decoding: app.dispatch(json: #"{"type":"respond_stdin","request_id":"stdin-1","input":"hunter2"}"#), as: UTF8.self)
        XCTAssertTrue(report.contains(#"stdin_response"#) && report.contains("hunter2"), "the host gets the answer: \(report)")
        let state = try? JSONParser.parse(String(decoding: app.stateJSON(), as: UTF8.self))
        XCTAssertEqual(state?.at("/state/stdin_requests"), [])
        let logs = String(decoding: app.logsJSON(limit: 0), as: UTF8.self)
        XCTAssertFalse(logs.contains("hunter2"), logs)
    }

    func testATurnThatEndsClosesWhatItWasAsking() {
        var store = SpecStore(.toolApprovalRequired)
        store.server(#"{"type":"done","id":3}"#, followUps: ["turn_ended"]) {
            $0["/permission_requests"] = []
            $0["/session/is_processing"] = false
            $0["/transcript/4/is_streaming"] = false
            $0["/outbox"] = []
        }
    }

    func testRespondPermissionWithoutRememberSendsRememberFalse() {
        var store = SpecStore(.toolApprovalRequired)
        store.dispatch(#"{"type":"respond_permission","request_id":"perm-1","approved":true}"#, effects: [
            .webSocket(.send(#"{"id":4,"type":"permission_response","request_id":"perm-1","approved":true,"remember":false}"#)),
        ], followUps: ["send"]) {
            $0["/permission_requests"] = []
        }
        XCTAssertNil(store.node("permission.perm-1"))
    }

    func testAnsweringARequestThatIsNotPendingIsRefusedWithANoteAndSendsNothing() {
        var store = SpecStore(.toolApprovalRequired)
        store.dispatch(
            #"{"type":"respond_permission","request_id":"perm-unknown","approved":true,"remember":true}"#,
            notes: ["respond_permission: no pending request perm-unknown"])
        // No sheet shows it, so it has no buttons to tap either.
        store.send(
            .tapNode(id: "permission.perm-unknown.approve"),
            notes: ["tap_node: no tappable node \"permission.perm-unknown.approve\" on this screen"])
        XCTAssertEqual(store["/permission_requests"], [bashRequest], "the shown request is untouched")
        XCTAssertEqual(store["/revision"], 0, "nothing changed")
    }

    func testAPendingRequestBehindTheShownOneCanBeAnswered() {
        var store = SpecStore(.toolApprovalRequired)
        store.server(#"{"type":"permission_request","request_id":"perm-2","session_id":"session-fox","action":"write","detail":"src/lib.rs","tier":"medium"}"#,
                     effects: [.device(.haptic(style: .warning))], followUps: ["permission_asked"]) {
            $0.append("/permission_requests", ["request_id": "perm-2", "session_id": "session-fox", "action": "write", "detail": "src/lib.rs", "tier": "medium"])
        }
        XCTAssertNil(store.node("permission.perm-2"), "one sheet at a time, oldest first")
        store.dispatch(#"{"type":"respond_permission","request_id":"perm-2","approved":false}"#, effects: [
            .webSocket(.send(#"{"id":4,"type":"permission_response","request_id":"perm-2","approved":false,"remember":false}"#)),
        ], followUps: ["send"]) {
            $0.remove("/permission_requests/1")
        }
        XCTAssertEqual(store.node("permission.perm-1")?.label, "Allow bash?")
    }

    func testRequestsWithoutTheirOptionalFieldsTakeTheirDefaults() {
        var store = SpecStore.turnRunning()
        // No session_id, detail or tier.
        store.frame(#"{"type":"permission_request","request_id":"perm-9","action":"bash"}"#, effects: [.device(.haptic(style: .warning))],
                    followUps: ["permission_asked"]) {
            $0["/permission_requests"] = [["request_id": "perm-9", "session_id": nil, "action": "bash", "detail": "", "tier": ""]]
        }
        XCTAssertEqual(store.node("permission.perm-9")?.label, "Allow bash?")
        // No is_password or tool_call_id: a plain, unmasked prompt.
        store.frame(#"{"type":"stdin_request","request_id":"stdin-9","prompt":"Name?"}"#, followUps: ["input_asked"]) {
            $0["/stdin_requests"] = [["request_id": "stdin-9", "prompt": "Name?", "is_password": false, "tool_call_id": nil]]
        }
        XCTAssertEqual(store.node("stdin.stdin-9.input")?.role, .textField)
    }
}
