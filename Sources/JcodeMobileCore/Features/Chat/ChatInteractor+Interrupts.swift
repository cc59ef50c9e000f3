/// Soft interrupts: messages sent to the agent while a turn runs.
///
/// A queued interrupt shows as a queued user bubble at the end of the
/// transcript and goes out as `soft_interrupt`. When the agent receives it
/// (`soft_interrupt_injected`) the bubble becomes an ordinary message; when
/// the turn ends, whatever is still queued stops being shown as queued. The
/// bubble is a transcript entry, so interrupts belong to the conversation.
extension ChatInteractor {
    func queueInterrupt(_ state: inout ChatState, text: String, urgent: Bool, _ facts: Facts) -> Emission {
        let content = text.trimmingSpaces()
        guard !content.isEmpty else { return .note("queue_interrupt: nothing to send") }
        guard state.turn.isProcessing, facts.canSend else {
            // No turn to interrupt: it is an ordinary message.
            return .action(.sendMessage(text: content))
        }
        let serial = state.transcript.appendQueued(text: content)
        state.softInterrupts.append(SoftInterrupt(entrySerial: serial, content: content, urgent: urgent))
        return .send(.softInterrupt(content: content, urgent: urgent))
    }

    func cancelQueuedInterrupts(_ state: inout ChatState) -> Emission {
        guard !state.softInterrupts.isEmpty else { return .note("no queued interrupts to cancel") }
        state.transcript.removeQueued()
        state.softInterrupts = []
        return .send(.cancelSoftInterrupts)
    }

    func interruptInjected(_ state: inout ChatState, content: String, displayRole: String?) {
        // What the agent says next comes after the injected message.
        state.transcript.finishStreaming()
        if let i = state.softInterrupts.firstIndex(where: { $0.content == content }) {
            let interrupt = state.softInterrupts.remove(at: i)
            state.transcript.unqueue(serial: interrupt.entrySerial)
        } else {
            // Sent from another client.
            state.transcript.append(role: displayRole == "system" ? .system : .user, text: content)
        }
    }

    /// The turn ended: anything still queued was consumed by the server or is moot.
    func drainInterrupts(_ state: inout ChatState) {
        guard state.transcript.queuedCount > 0 || !state.softInterrupts.isEmpty else { return }
        state.transcript.unqueueAll()
        state.softInterrupts = []
    }
}
