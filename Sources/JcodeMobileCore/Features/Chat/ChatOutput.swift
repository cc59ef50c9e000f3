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
