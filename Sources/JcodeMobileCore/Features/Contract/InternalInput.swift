/// What features tell each other. A feature never writes another's state or
/// calls another's functions: when something it owns happens that matters
/// elsewhere, it emits one of its own *outputs* (`.tell(…)`), and the root
/// (`App/AppRouter.swift`) delivers it to the features that act on it — one
/// exhaustive switch names every addressee. The store runs these as
/// follow-ups of the same host call, and the log lists them by name.
///
/// Four requests have one owner whoever makes them: `send` (the connection
/// owns the request ids), `showError` and `notice` (the notices), and
/// `openChat` (navigation, the one writer of the screen).
public enum InternalInput: Equatable, Sendable {
    // Each output is boxed (`indirect`): inline, a small output inside this
    // enum's larger payload area left bytes the switch reads unwritten
    // (memcheck reported them under `make valgrind`); a box is one whole word.
    indirect case pairing(PairingOutput)
    indirect case lifecycle(LifecycleOutput)
    indirect case servers(ServersOutput)
    indirect case connection(ConnectionOutput)
    indirect case session(SessionOutput)
    indirect case chat(ChatOutput)
    indirect case approvals(ApprovalsOutput)
    indirect case app(AppOutput)

    /// Send a gateway request on the open socket (→ Connection).
    case send(GatewayRequest)
    /// Show an error banner (→ Notices).
    case showError(ErrorBanner)
    /// Add a notice line (→ Notices); `passes` names the condition whose end
    /// withdraws it (nil: it stays until dismissed).
    case notice(Notice.Kind, String, passes: Notice.Passing? = nil)
    /// Show the chat (→ Navigation).
    case openChat

    /// The name the log and the test steps use: the output's own case
    /// (`turn_ended`, `socket_opened`), never its sender.
    public var name: String {
        switch self {
        case .pairing(let output): return Input.wireName(of: output)
        case .lifecycle(let output): return Input.wireName(of: output)
        case .servers(let output): return Input.wireName(of: output)
        case .connection(let output): return Input.wireName(of: output)
        case .session(let output): return Input.wireName(of: output)
        case .chat(let output): return Input.wireName(of: output)
        case .approvals(let output): return Input.wireName(of: output)
        case .app(let output): return Input.wireName(of: output)
        case .send, .showError, .notice, .openChat: return Input.wireName(of: self)
        }
    }
}

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

/// What the lifecycle tells the others.
public enum LifecycleOutput: Equatable, Sendable {
    /// This install has its identity now (`device_id`).
    case identityReady
    /// The host answered `create_device_id` with an unusable value.
    case identityFailed
    /// A notification about another session was opened while the link is
    /// down: that session is the one to subscribe to when it comes up.
    case sessionAskedOffline(sessionID: String)
    /// A notification about another session was opened while requests can
    /// go out: that session is resumed now.
    case sessionAsked(sessionID: String)
    /// A notification was opened while the link is down and not coming up:
    /// connect now.
    case reconnectAsked
}

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

/// What the session tells the others.
public enum SessionOutput: Equatable, Sendable {
    /// The person switched to another session of the server.
    case sessionSwitched(sessionID: String)
    /// The server answered a `clear`: accepted (the session is a fresh one,
    /// so the conversation shown empties) or refused (nothing changed).
    /// Either way the outbox, held while the clear was unanswered, goes on.
    case clearAnswered(accepted: Bool)
}

/// What the chat tells the others.
public enum ChatOutput: Equatable, Sendable {
    /// A turn ended (done, interrupted, or an error, whose message is
    /// `error`): nothing waits on the agent any more.
    case turnEnded(outcome: AppEvent.TurnOutcome, error: String? = nil)
    /// A message left the composer: clear what it took.
    case composerSent(clearDraft: Bool, clearAttachments: Bool)
    /// A message given as text (not from the draft) could not be taken (the
    /// outbox or the interrupt queue is full): it goes into the draft, so
    /// nothing the person wrote is lost.
    case keepInDraft(text: String)
    /// A turn started (a message of this device went out, or the server
    /// reports one running) after an "Interrupted" notice: it is moot.
    case turnStarted
    /// Older messages of a compacted history now come first: `count`
    /// entries before the ones shown before (the list keeps its place).
    case olderMessagesShown(count: Int)
}

/// What the approvals feature tells the others.
public enum ApprovalsOutput: Equatable, Sendable {
    /// A new `permission_request` waits for the person: the tool asks to run
    /// `action` ("bash") in `sessionID` (the request's, when it names one).
    case permissionAsked(action: String, sessionID: String?)
    /// A new `stdin_request` waits for the person's typed answer.
    case inputAsked(prompt: String)
}

/// What the app root tells navigation (resolved against the whole screen).
public enum AppOutput: Equatable, Sendable {
    /// The node the person tapped takes the keyboard focus.
    case focus(nodeID: String)
    /// The message list scrolled (nil: to its end, following new messages).
    case scrollMessages(offset: Int?)
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
