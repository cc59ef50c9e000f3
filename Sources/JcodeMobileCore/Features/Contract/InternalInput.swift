/// What one feature tells the others. A feature never writes another's
/// state or calls another's functions: when something it owns happens that
/// matters elsewhere, it emits one of these and the owners of the other
/// slices react (the store runs them as follow-ups of the same host call,
/// and the log lists them).
public enum InternalInput: Equatable, Sendable {
    // Pairing → Servers, Connection, Notices, Navigation
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

    // Lifecycle → Pairing
    /// This install has its identity now (`device_id`).
    case identityReady
    /// The host answered `create_device_id` with an unusable value.
    case identityFailed

    // Servers → everyone
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

    // Connection → everyone
    /// The connection needs the selected server's token.
    case credentialsNeeded
    /// The server refused the token (401): it is forgotten.
    case credentialsRejected(serverID: String)
    /// A socket opened (a fresh connection: history follows).
    case socketOpened
    /// The socket is gone (closed, failed, refused, or the person disconnected).
    case connectionLost
    /// Send a gateway request on the open socket (the connection owns the ids).
    case send(GatewayRequest)

    // Session → Chat, Approvals
    /// The person switched to another session of the server.
    case sessionSwitched(sessionID: String)

    // Chat → Approvals, Composer
    /// A turn ended (done or interrupted): nothing waits on the agent any more.
    case turnEnded
    /// A message left the composer: clear what it took.
    case composerSent(clearDraft: Bool, clearAttachments: Bool)
    /// A message given as text (not from the draft) could not be taken (the
    /// outbox or the interrupt queue is full): it goes into the draft, so
    /// nothing the person wrote is lost.
    case keepInDraft(text: String)

    // Anyone → Navigation, Notices
    /// Show the chat.
    case openChat
    /// The node the person tapped takes the keyboard focus.
    case focus(nodeID: String)
    /// The message list scrolled (nil: to its end, following new messages).
    case scrollMessages(offset: Int?)
    /// Show an error banner.
    case showError(ErrorBanner)
    /// Add a notice line.
    case notice(Notice.Kind, String)

    /// The name the log and the test steps use.
    public var name: String { Input.wireName(of: self) }
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
