/// What the servers feature tells the others.
public enum ServersOutput: Equatable, Sendable {
    /// The selected server is another one (or none): what belonged to the
    /// old one — session, transcript, outbox, requests — is forgotten.
    case serverChanged(to: SavedServer?)
    /// Connect to this server (just paired, or picked from the list).
    case serverSelected(ServerSelection)
    /// The selected server's token was read from the secure store.
    case credentialsLoaded(serverID: String)
    /// The selected server has no usable token.
    case credentialsMissing(serverName: String)
    /// A saved server's working directory changed (the connection to it, if
    /// any, starts over so the server hears the new one).
    case workingDirChanged(serverID: String)
}

/// Which server to connect to, and why.
public struct ServerSelection: Equatable, Sendable {
    public enum Reason: Equatable, Sendable {
        /// Just paired; the version is the one the server reported then.
        case paired(serverVersion: String?)
        /// Picked from the saved servers.
        case chosen
    }

    public var server: SavedServer
    public var reason: Reason
}
