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

extension AppState {
    /// The state without the transcript: what the store compares a call's
    /// state against (the transcript reports its own changes, and a copy
    /// that held it would make every append copy it).
    var withoutTranscript: AppState {
        var copy = self
        copy.chat.transcript = Transcript()
        return copy
    }

    /// Takes from `other` the slices of the features in `features`
    /// (`FeatureID.bit`s), the transcript excepted; boxed slices are shared,
    /// not copied, so comparing them again is a pointer comparison.
    mutating func takeSlices(_ features: UInt32, from other: AppState) {
        if features & FeatureID.navigation.bit != 0 { navigation = other.navigation }
        if features & FeatureID.pairing.bit != 0 { _pairing = other._pairing }
        if features & FeatureID.servers.bit != 0 { servers = other.servers }
        if features & FeatureID.connection.bit != 0 { _connection = other._connection }
        if features & FeatureID.session.bit != 0 { _session = other._session }
        if features & FeatureID.chat.bit != 0 {
            var chat = other.chat
            chat.transcript = Transcript()
            self.chat = chat
        }
        if features & FeatureID.approvals.bit != 0 { approvals = other.approvals }
        if features & FeatureID.notices.bit != 0 { notices = other.notices }
        if features & FeatureID.composer.bit != 0 { composer = other.composer }
        if features & FeatureID.lifecycle.bit != 0 { _lifecycle = other._lifecycle }
        if features & FeatureID.store.bit != 0 { _effects = other._effects }
    }
}
