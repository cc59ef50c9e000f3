/// The whole domain state of the app: what `jcode_mobile_state` returns.
///
/// Feature state lives in its feature's folder; this type composes it.
/// Secrets (`credentials`) are part of the value but never of its JSON.
public struct AppState: Equatable, Sendable {
    /// Increases by one on every state change (assigned by the store).
    public var revision = 0
    public var screen: Screen = .onboarding
    /// The node that has keyboard focus (a text field tapped last).
    public var focusedNodeID: String?
    @Shared public var pairing = PairingForm()
    public var servers: [SavedServer] = []
    public var selectedServerID: String?
    @Shared public var connection = ConnectionState()
    @Shared public var session = SessionState()
    public var transcript = Transcript()
    public var softInterrupts: [SoftInterrupt] = []
    public var outbox: [OutboxMessage] = []
    public var permissionRequests: [PermissionRequest] = []
    public var stdinRequests: [StdinRequest] = []
    public var notices: [Notice] = []
    public var errorBanner: ErrorBanner?
    public var draft = ""
    public var attachments: [Attachment] = []
    public var voice = VoiceInput()
    @Shared public var lifecycle = LifecycleState()
    /// Unanswered effects (maintained by the store).
    @Shared public var effects = EffectLedger()
    /// Counters for the ids the core hands out.
    public var nextNoticeID = 1
    public var nextAttachmentID = 1
    public var nextOutboxID = 1
    /// Tokens, in memory only.
    public var credentials = Credentials()

    public init() {}

    public var selectedServer: SavedServer? {
        guard let id = selectedServerID else { return nil }
        return servers.first(where: { $0.id == id })
    }

    /// The status banner, derived from the connection: what a person should
    /// know about the link right now, or nil when all is well.
    public var statusBanner: String? {
        let name = selectedServer?.name ?? "the server"
        switch connection.phase {
        case .disconnected: return servers.isEmpty ? nil : (selectedServer == nil ? nil : "Disconnected from \(name)")
        case .pairing: return "Pairing with \(pairing.address?.display ?? name)…"
        case .connecting: return "Connecting to \(name)…"
        case .connected: return session.historyLoaded ? nil : "Loading conversation…"
        case .reconnecting:
            if let delay = connection.reconnectDelayMS {
                return "Connection lost, retrying in \(Self.seconds(delay)) (attempt \(connection.attempt))"
            }
            return "Reconnecting to \(name) (attempt \(connection.attempt))…"
        case .offline: return "Offline: waiting for the network"
        case .failed: return connection.reason ?? "Connection failed"
        }
    }

    static func seconds(_ ms: Int) -> String {
        ms % 1000 == 0 ? "\(ms / 1000) s" : "\(ms / 1000).\(ms % 1000 / 100) s"
    }
}
