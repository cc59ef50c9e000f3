import JcodeMobileJSON

private typealias B = SchemaBuilder

extension ServersState {
    /// The servers's sections of the state JSON (`StateSection`), in the
    /// order written; `StateSection.all` places them.
    static let sections: [StateSection] = [
        StateSection(
            "servers", owner: .servers,
            schema: { B.array(B.ref("saved_server")) },
            json: { .array($0.pointee.servers.list.map(\.json)) },
            changed: { $0.pointee.servers.list != $1.pointee.servers.list }),
        StateSection(
            "selected_server_id", owner: .servers,
            schema: { B.nullableString },
            json: { .from($0.pointee.servers.selectedID) },
            changed: { $0.pointee.servers.selectedID != $1.pointee.servers.selectedID }),
    ]
}

extension SavedServer {
    /// The schema's `saved_server`; `storedMembersSchema` is shared with the snapshot's `servers`.
    static var schema: JSONValue {
        B.strictObject(storedMembersSchema + [("working_dir_error", B.nullableString)], description: "A server this device has paired with.")
    }

    static var storedMembersSchema: [(String, JSONValue)] {
        [
            ("id", B.described(B.string, "host:port")), ("name", B.string), ("host", B.string), ("port", B.integer(.port)),
            ("use_tls", B.boolean), ("server_version", B.nullableString), ("working_dir", B.string),
            ("last_session_id", B.nullableString),
        ]
    }
}
