/// What the session lets the other features read (`Facts.session`), taken
/// before each input from its slice: the only part of it they see.
public struct SessionFacts: Sendable {
    /// The session in use.
    public var id: String?
    /// The session's title, when the server gave one.
    public var title: String?
    /// The model in use.
    public var model: String?
    /// A model asked for and not yet confirmed.
    public var pendingModel: String?
    /// A `clear` awaits its answer: what is sent meanwhile would land in the
    /// session it replaces or the fresh one, so the outbox waits.
    public var isClearing: Bool = false

    public init() {}

    /// Read in place from the state (no copy of the slice).
    init(_ state: UnsafePointer<AppState>) {
        id = state.pointee.session.id
        title = state.pointee.session.title
        model = state.pointee.session.model
        pendingModel = state.pointee.session.pendingModel
        isClearing = state.pointee.session.isClearing
    }
}
