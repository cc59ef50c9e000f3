import JcodeMobileJSON

private typealias B = SchemaBuilder

extension ConnectionState {
    /// The connection's sections of the state JSON (`StateSection`), in the
    /// order written; `StateSection.all` places them.
    static let sections: [StateSection] = [
        StateSection(
            "connection", owner: .connection,
            schema: {
                B.strictObject([
                    ("phase", B.enumeration(ConnectionState.Phase.allCases.map(\.rawValue))),
                    ("attempt", B.integer(.count)),
                    ("reason", B.described(B.nullableString, "why the connection is not up")),
                    ("socket_open", B.boolean),
                    ("reconnect_delay_ms", B.nullableInteger(.count)),
                ])
            },
            json: { state in
                let c = state.pointee.connection
                var o = JSONObject(capacity: 5)
                o.append("phase", .string(c.phase.rawValue))
                o.append("attempt", .int(Int64(c.attempt)))
                o.append("reason", .from(c.issue.map(SemanticText.issue)))
                o.append("socket_open", .bool(c.isSocketOpen))
                o.append("reconnect_delay_ms", .from(c.reconnectDelayMS))
                return .object(o)
            },
            changed: { $0.pointee.$connection != $1.pointee.$connection }),
    ]
}
