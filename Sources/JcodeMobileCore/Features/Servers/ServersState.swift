import JcodeMobileJSON

/// The servers this device has paired with, the one in use, and their
/// tokens while the app runs.
public struct ServersState: Equatable, Sendable {
    public var list: [SavedServer] = []
    public var selectedID: String?
    /// Tokens, in memory only.
    public var credentials = Credentials()

    public init() {}

    /// At most this many servers are saved: pairing with one more forgets
    /// the oldest not in use (its token too), and a snapshot holding more
    /// is restored with the newest (and the one in use).
    public static let limit = 64

    public var selected: SavedServer? {
        guard let id = selectedID else { return nil }
        return list.first(where: { $0.id == id })
    }
}

/// A server this device has paired with. Its token is never here: it lives
/// in the platform's secure store (and, while the app runs, in `Credentials`).
public struct SavedServer: Equatable, Sendable {
    public var address: ServerAddress
    public var name: String
    public var serverVersion: String?
    /// The absolute path on the server where this device's sessions run
    /// (`subscribe.working_dir`). Empty: not set yet, so nothing connects.
    public var workingDir: String
    /// Why the last edit of the working directory was refused (the old
    /// value stays), shown under the settings field.
    public var workingDirError: FieldMessage?
    /// The session this device last used on this server, resumed when the
    /// server is chosen again (for the server in use, the session's own id
    /// is newer: see `Snapshot`).
    public var lastSessionID: String?

    public init(
        address: ServerAddress, name: String, serverVersion: String? = nil, workingDir: String, workingDirError: FieldMessage? = nil,
        lastSessionID: String? = nil
    ) {
        self.address = address
        self.name = name
        self.serverVersion = serverVersion
        self.workingDir = workingDir
        self.workingDirError = workingDirError
        self.lastSessionID = lastSessionID
    }

    public var id: String { address.serverID }

    /// The secure-store key of this server's token.
    public var tokenKey: String { "jcode.token.\(id)" }

    var json: JSONValue {
        var o = stored
        o.append("working_dir_error", .from(workingDirError?.text))
        return .object(o)
    }

    /// What the snapshot keeps of the server for the next launch (never its token).
    var stored: JSONObject {
        var o = JSONObject(capacity: 9)
        o.append("id", .string(id))
        o.append("name", .string(name))
        o.append("host", .string(address.host))
        o.append("port", .int(Int64(address.port)))
        o.append("use_tls", .bool(address.useTLS))
        o.append("server_version", .from(serverVersion))
        o.append("working_dir", .string(workingDir))
        o.append("last_session_id", .from(lastSessionID))
        return o
    }
}

/// Auth tokens for the servers this device has paired with, held only in
/// memory while the app runs. Never encoded into state, tree, logs or
/// snapshots; a token leaves the core only in `secure_store_write` and
/// `websocket_connect`.
public struct Credentials: Equatable, Sendable, CustomStringConvertible, CustomReflectable {
    private var tokens: [String: String] = [:]

    public init() {}

    public subscript(serverID: String) -> String? {
        get { tokens[serverID] }
        set { tokens[serverID] = newValue }
    }

    /// Every token held (for redaction by value: `SecretValues`).
    var all: [String] { Array(tokens.values) }

    public var description: String { "Credentials(\(tokens.count) token(s), redacted)" }
    public var customMirror: Mirror { Mirror(self, children: []) }
}
