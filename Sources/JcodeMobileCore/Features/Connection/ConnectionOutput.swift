/// What the connection tells the others.
public enum ConnectionOutput: Equatable, Sendable {
    /// The connection needs the selected server's token.
    case credentialsNeeded
    /// The server refused the token (401): it is forgotten.
    case credentialsRejected(serverID: String)
    /// A socket opened (a fresh connection: history follows).
    case socketOpened
    /// The socket is gone (closed, failed, refused, or the person disconnected).
    case connectionLost
    /// The history this socket waited for never reached the core (the host
    /// refused its frame as too large, or it could not be read).
    case historyLost
}
