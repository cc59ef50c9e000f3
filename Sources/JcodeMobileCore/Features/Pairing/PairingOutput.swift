/// What pairing tells the others.
public enum PairingOutput: Equatable, Sendable {
    /// `http_pair` went out.
    case pairingStarted
    /// The pairing request failed (the form shows why).
    case pairingFailed
    /// A pairing code was exchanged for a token.
    case paired(PairedServer)
    /// A QR pairing link filled the form.
    case pairingLinkScanned
    /// `GET /health` answered with the server's version.
    case serverVersionSeen(serverID: String, version: String?)
    /// Pairing needs this install's identity (the lifecycle asks the host once).
    case identityNeeded
}

/// A server just paired: where, what it said about itself, and its token
/// (a secret: it leaves the core only in `secure_store_write` and
/// `websocket_connect`).
public struct PairedServer: Equatable, Sendable, CustomStringConvertible {
    public var address: ServerAddress
    public var name: String
    public var serverVersion: String?
    /// Where this device's sessions run on the server (absolute).
    public var workingDir: String
    public var token: String

    public var description: String { "PairedServer(\(address.display), token redacted)" }
}
