/// A read-only view of what the other features own, taken before each
/// input: the one way a feature learns about state that is not its own.
/// Every fact has one owner (named on it); features read facts, never the
/// other slices.
public struct Facts: Sendable {
    // Each feature's facts are declared in its folder (`Features/<Name>/<Name>Facts.swift`).
    public var connection = ConnectionFacts()
    public var servers = ServersFacts()
    public var session = SessionFacts()
    public var chat = ChatFacts()
    public var composer = ComposerFacts()
    public var navigation = NavigationFacts()
    public var lifecycle = LifecycleFacts()
    // Store
    /// Effects the host has not answered yet.
    public var pendingEffects = EffectLedger()

    public init() {}

    /// What every feature may read of the others, read in place from the
    /// state (the root interactor's way: no copy of the state).
    init(_ state: UnsafePointer<AppState>) {
        connection = ConnectionFacts(state)
        servers = ServersFacts(state)
        session = SessionFacts(state)
        chat = ChatFacts(state)
        composer = ComposerFacts(state)
        navigation = NavigationFacts(state)
        lifecycle = LifecycleFacts(state)
        pendingEffects = state.pointee.effects
    }

    /// The same, of a state value.
    init(_ state: AppState) {
        self = withUnsafePointer(to: state) { Facts($0) }
    }

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
        connection.canSend ? nil : .internal(.showError(ErrorBanner(message: "Connect to the server to \(task).")))
    }
}
