/// A read-only view of what the other features own, taken before each
/// input: the one way a feature learns about state that is not its own.
/// Every fact has one owner (named on it); features read facts, never the
/// other slices.
public struct Facts: Sendable {
    // Connection
    /// Requests can be sent now (the socket is open and connected).
    public var canSend = false
    public var connectionPhase: ConnectionState.Phase = .disconnected
    /// The request id of this socket's `subscribe` (its `done` ends no turn).
    public var subscribeRequestID: Int?
    /// The requests sent on this socket, by id (what a `done` or `error` answers).
    public var sentRequests = SentRequests()
    /// The keep-alive's pending timer: its tick is the chat's turn watch.
    public var keepAliveTimerID: String?
    // Servers
    public var servers: [SavedServer] = []
    public var selectedServerID: String?
    /// Tokens in memory (secrets: read by the connection only).
    public var credentials = Credentials()
    // Session
    public var sessionID: String?
    /// The session's title, when the server gave one.
    public var sessionTitle: String?
    public var model: String?
    public var pendingModel: String?
    /// A `clear` awaits its answer: what is sent meanwhile would land in the
    /// session it replaces or the fresh one, so the outbox waits.
    public var isClearing = false
    // Chat
    public var isTurnRunning = false
    // Composer
    public var draft = ""
    public var attachments: [Attachment] = []
    // Navigation
    public var screen: Screen = .onboarding
    // Lifecycle
    /// This install's identity; nil until the host gave one.
    public var deviceID: String?
    public var pushToken: String?
    public var isNetworkReachable = true
    public var isForeground = true
    // Store
    /// Effects the host has not answered yet.
    public var pendingEffects = EffectLedger()

    public init() {}

    public var selectedServer: SavedServer? {
        guard let id = selectedServerID else { return nil }
        return servers.first(where: { $0.id == id })
    }

    /// The token of the selected server, when it is in memory.
    public var selectedToken: String? { selectedServerID.flatMap { credentials[$0] } }

    /// The pending effect with `id`, if it is still awaited.
    public func pending(_ id: EffectID) -> EffectLedger.Entry? { pendingEffects.pending(id) }

    /// Whether a `websocket_connect` is still awaited (a socket opening or open).
    public var hasPendingConnect: Bool { pendingEffects.contains(.websocketConnect) }
}

extension Facts {
    /// The rule for what needs the server: nil when requests can go out,
    /// otherwise what tells the person to connect first ("Connect to the
    /// server to switch sessions.").
    public func requireConnection(to task: String) -> Emission? {
        canSend ? nil : .internal(.showError(ErrorBanner(message: "Connect to the server to \(task).")))
    }
}
