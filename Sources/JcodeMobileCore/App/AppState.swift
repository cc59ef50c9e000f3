/// The whole domain state of the app: what `jcode_mobile_state` returns.
///
/// Each feature owns one slice and is handed only that slice (see
/// `AppInteractor`); this type composes them. Secrets (the tokens in
/// `servers.credentials`) are part of the value but never of its JSON.
public struct AppState: Equatable, Sendable {
    /// Increases by one on every state change (assigned by the store).
    public var revision = 0
    public var navigation = NavigationState()
    @CopyOnWrite public var pairing = PairingForm()
    public var servers = ServersState()
    @CopyOnWrite public var connection = ConnectionState()
    @CopyOnWrite public var session = SessionState()
    public var chat = ChatState()
    public var approvals = ApprovalsState()
    public var notices = NoticesState()
    public var composer = ComposerState()
    @CopyOnWrite public var lifecycle = LifecycleState()
    /// Unanswered effects (owned by the store).
    @CopyOnWrite public var effects = EffectLedger()

    public init() {}
}

extension Facts {
    /// What every feature may read of the others, taken before an input.
    init(_ state: AppState) {
        self.init()
        canSend = state.connection.canSend
        connectionPhase = state.connection.phase
        subscribeRequestID = state.connection.subscribeRequestID
        sentRequests = state.connection.sentRequests
        servers = state.servers.list
        selectedServerID = state.servers.selectedID
        credentials = state.servers.credentials
        sessionID = state.session.id
        sessionTitle = state.session.title
        model = state.session.model
        pendingModel = state.session.pendingModel
        isTurnRunning = state.chat.turn.isProcessing
        draft = state.composer.draft
        attachments = state.composer.attachments
        screen = state.navigation.screen
        deviceID = state.lifecycle.deviceID
        pushToken = state.lifecycle.pushToken
        isNetworkReachable = state.lifecycle.isNetworkReachable
        isForeground = state.lifecycle.isForeground
        pendingEffects = state.effects
    }
}
