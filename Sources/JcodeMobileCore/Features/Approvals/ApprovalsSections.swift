import JcodeMobileJSON

private typealias B = SchemaBuilder

extension ApprovalsState {
    /// The approvals's sections of the state JSON (`StateSection`), in the
    /// order written; `StateSection.all` places them.
    static let sections: [StateSection] = [
        StateSection(
            "permission_requests", owner: .approvals,
            schema: {
                B.array(B.strictObject([
                    ("request_id", B.string), ("session_id", B.nullableString), ("action", B.string), ("detail", B.string), ("tier", B.string),
                ]))
            },
            json: { .array($0.pointee.approvals.permissionRequests.map(\.json)) },
            changed: { $0.pointee.approvals.permissionRequests != $1.pointee.approvals.permissionRequests }),
        StateSection(
            "stdin_requests", owner: .approvals,
            schema: {
                B.array(B.strictObject([
                    ("request_id", B.string), ("prompt", B.string), ("is_password", B.boolean), ("tool_call_id", B.nullableString),
                ]))
            },
            json: { .array($0.pointee.approvals.stdinRequests.map(\.json)) },
            changed: { $0.pointee.approvals.stdinRequests != $1.pointee.approvals.stdinRequests }),
    ]
}
