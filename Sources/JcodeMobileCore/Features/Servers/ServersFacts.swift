/// What the servers feature lets the other features read (`Facts.servers`), taken
/// before each input from its slice: the only part of it they see.
public struct ServersFacts: Sendable {
    /// The saved servers.
    public var list: [SavedServer] = []
    /// The server in use.
    public var selectedID: String?
    /// Tokens in memory (secrets: read by the connection only).
    public var credentials = Credentials()

    public init() {}

    /// Read in place from the state (no copy of the slice).
    init(_ state: UnsafePointer<AppState>) {
        list = state.pointee.servers.list
        selectedID = state.pointee.servers.selectedID
        credentials = state.pointee.servers.credentials
    }

    /// The server in use, when one is selected.
    public var selected: SavedServer? {
        guard let id = selectedID else { return nil }
        return list.first(where: { $0.id == id })
    }

    /// The token of the server in use, when it is in memory.
    public var selectedToken: String? { selectedID.flatMap { credentials[$0] } }
}
