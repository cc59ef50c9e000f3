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
