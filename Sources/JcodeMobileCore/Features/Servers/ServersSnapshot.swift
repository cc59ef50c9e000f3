import JcodeMobileJSON
import JcodeMobileWire

private typealias B = SchemaBuilder

extension Snapshot {
    /// What the snapshot keeps of the saved servers, the one in use and the session in use on it
    /// (newer than its `lastSessionID`).
    public struct Servers: Equatable, Sendable {
        public var list: [SavedServer] = []
        public var selectedServerID: String?
        public var sessionID: String?

        /// The features whose slices the part is read from.
        static let features: UInt32 = FeatureID.servers.bit | FeatureID.session.bit

        /// Reads the part again from `state`; true when it changed.
        @inline(__always) mutating func refresh(from state: AppState) -> Bool {
            guard list != state.servers.list || selectedServerID != state.servers.selectedID
                || sessionID != state.session.id else { return false }
            list = state.servers.list
            selectedServerID = state.servers.selectedID
            sessionID = state.session.id
            return true
        }

        /// Puts the part back into a first-launch state.
        func restore(into state: inout AppState) {
            state.servers.list = list
            state.servers.selectedID = selectedServerID
            state.session.id = sessionID
        }
    }

    /// What the snapshot keeps of the saved servers and the one in use.
    static let serversMembers: [Member] = [
        // Each server as `SavedServer.stored` writes it (its members'
        // schema is shared with the state's `saved_server`), the one in use
        // carrying the session in use as its last.
        Member(
            name: "servers",
            schema: { B.array(B.strictObject(SavedServer.storedMembersSchema)) },
            write: { s in
                .array(
                    s.servers.list.map { server in
                        var stored = server.stored
                        if server.id == s.servers.selectedServerID, let sessionID = s.servers.sessionID {
                            stored["last_session_id"] = .string(sessionID)
                        }
                        return .object(stored)
                    })
            },
            features: FeatureID.servers.bit | FeatureID.session.bit,
            read: { value, s, reader in
                guard let list = reader.array(value, "servers") else { return }
                // The first of each id, checked as pairing checks it (one
                // look-up per server: a long list restores in linear time).
                var seen = Set<String>()
                seen.reserveCapacity(min(list.count, 4 * ServersState.limit))
                for item in list {
                    guard let server = Snapshot.storedServer(item, &reader), seen.insert(server.id).inserted else {
                        reader.unreadableServers += 1
                        continue
                    }
                    s.servers.list.append(server)
                }
                reader.nameServerProblems()
            }),
        Member(
            name: "selected_server_id",
            schema: { B.nullableString },
            write: { .from($0.servers.selectedServerID) },
            features: FeatureID.servers.bit,
            read: { selected, s, reader in
                if let id = selected.stringValue, let server = s.servers.list.first(where: { $0.id == id }) {
                    s.servers.selectedServerID = id
                    s.servers.sessionID = server.lastSessionID
                } else {
                    reader.problems.append("the server in use")
                }
            }),
    ]

    /// A saved server read back (the `servers` member), checked as pairing
    /// checks what it saves; nil when it has no usable address or name.
    /// A working directory that is not absolute is left unset (the app asks
    /// for it again) and a last session that is not a string is left out:
    /// both are counted in `reader`, so the notice names them.
    private static func storedServer(_ value: JSONValue, _ reader: inout Reader) -> SavedServer? {
        guard let host = value["host"]?.stringValue, ServerAddress.isSavedHost(host),
              let port = value["port"]?.int64Value, IntegerRange.port.contains(port),
              let useTLS = value["use_tls"]?.boolValue,
              let name = value["name"]?.stringValue
        else { return nil }
        var workingDir = ""
        if let raw = value["working_dir"], !raw.isNull {
            if let text = raw.stringValue, case .success(let path) = WorkingDirectory.validate(text) {
                workingDir = path
            } else if raw.stringValue != "" {
                reader.workingDirsUnset += 1  // "" is a server whose directory was never set
            }
        }
        var lastSessionID: String?
        if let raw = value["last_session_id"], !raw.isNull {
            if let id = raw.stringValue { lastSessionID = id } else { reader.lastSessionsLost += 1 }
        }
        return SavedServer(
            address: ServerAddress(host: host, port: Int(port), useTLS: useTLS), name: name,
            serverVersion: value["server_version"]?.stringValue,
            workingDir: workingDir,
            lastSessionID: lastSessionID)
    }
}
