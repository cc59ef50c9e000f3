/// Owns soft interrupts: messages sent to the agent while a turn runs.
///
/// A queued interrupt shows as a queued user bubble at the end of the
/// transcript and goes out as `soft_interrupt`. When the agent receives it
/// (`soft_interrupt_injected`) the bubble becomes an ordinary message; when
/// the turn ends, whatever is still queued stops being shown as queued.
public struct InterruptsInteractor: Interactor {
    public init() {}

    public func interact(_ state: inout AppState, _ input: Input) -> Emission {
        switch input {
        case .action(.queueInterrupt(let text, let urgent)):
            let content = text.trimmingSpaces()
            guard !content.isEmpty else { return .note("queue_interrupt: nothing to send") }
            guard state.session.isProcessing, state.connection.canSend else {
                // No turn to interrupt: it is an ordinary message.
                return .action(.sendMessage(text: content))
            }
            let serial = state.transcript.appendQueued(text: content)
            state.softInterrupts.append(SoftInterrupt(entrySerial: serial, content: content, urgent: urgent))
            return state.request(.softInterrupt(content: content, urgent: urgent))

        case .action(.cancelQueuedInterrupts):
            guard !state.softInterrupts.isEmpty else { return .note("no queued interrupts to cancel") }
            state.transcript.removeQueued()
            state.softInterrupts = []
            return state.request(.cancelSoftInterrupts)

        case .server(.softInterruptInjected(let content, let displayRole, _, _)):
            // What the agent says next comes after the injected message.
            state.transcript.finishStreaming()
            if let i = state.softInterrupts.firstIndex(where: { $0.content == content }) {
                let interrupt = state.softInterrupts.remove(at: i)
                state.transcript.unqueue(serial: interrupt.entrySerial)
            } else {
                // Sent from another client.
                state.transcript.append(role: displayRole == "system" ? .system : .user, text: content)
            }
            return .none

        case .server(.done(let id)) where id == nil || id != state.connection.subscribeRequestID:
            drain(&state)
            return .none
        case .server(.interrupted):
            drain(&state)
            return .none
        case .server(.history):
            state.softInterrupts = []
            return .none
        case .action(.clearConversation) where state.connection.canSend:
            state.softInterrupts = []
            return .none
        default:
            return .none
        }
    }

    /// The turn ended: anything still queued was consumed by the server or is moot.
    private func drain(_ state: inout AppState) {
        guard state.transcript.queuedCount > 0 || !state.softInterrupts.isEmpty else { return }
        state.transcript.unqueueAll()
        state.softInterrupts = []
    }
}
