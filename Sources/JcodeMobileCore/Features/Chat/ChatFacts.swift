/// What the chat lets the other features read (`Facts.chat`), taken
/// before each input from its slice: the only part of it they see.
public struct ChatFacts: Sendable {
    /// A turn runs.
    public var isTurnRunning: Bool = false

    public init() {}

    /// Read in place from the state (no copy of the slice).
    init(_ state: UnsafePointer<AppState>) {
        isTurnRunning = state.pointee.chat.turn.isProcessing
    }
}
