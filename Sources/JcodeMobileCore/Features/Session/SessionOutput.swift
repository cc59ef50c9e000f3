/// What the session tells the others.
public enum SessionOutput: Equatable, Sendable {
    /// The person switched to another session of the server.
    case sessionSwitched(sessionID: String)
    /// The server answered a `clear`: accepted (the session is a fresh one,
    /// so the conversation shown empties) or refused (nothing changed).
    /// Either way the outbox, held while the clear was unanswered, goes on.
    case clearAnswered(accepted: Bool)
}
