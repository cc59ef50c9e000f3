/// Soft interrupts: messages sent to the agent while a turn runs.
///
/// A queued interrupt shows as a queued user bubble at the end of the
/// transcript and goes out as `soft_interrupt`. When the agent receives it
/// (`soft_interrupt_injected`, which may merge several) the bubble becomes an ordinary message; when
/// the turn ends, whatever is still queued stops being shown as queued. The
/// bubble is a transcript entry, so interrupts belong to the conversation.
extension ChatInteractor {
    func queueInterrupt(
        _ state: inout ChatState, text: String, images: [Attachment] = [], urgent: Bool, _ facts: Facts
    ) -> Emission {
        let content = text.trimmingSpaces()
        guard !content.isEmpty || !images.isEmpty else { return .note("queue_interrupt: nothing to send") }
        guard state.turn.isProcessing, facts.connection.canSend else {
            // No turn to interrupt: it is an ordinary message.
            return send(&state, text: content, facts)
        }
        guard state.softInterrupts.count < ChatState.interruptLimit else {
            return Self.noRoom(for: content, fromDraft: false, Self.interruptsFull)
        }
        let serial = state.transcript.appendQueued(text: content, imageCount: images.count)
        state.softInterrupts.append(SoftInterrupt(entrySerial: serial, content: content, urgent: urgent))
        let payloads = images.map { GatewayRequest.ImagePayload(mediaType: $0.mediaType, dataBase64: $0.dataBase64) }
        return .send(.softInterrupt(content: content, images: payloads, urgent: urgent))
    }

    func cancelQueuedInterrupts(_ state: inout ChatState) -> Emission {
        guard !state.softInterrupts.isEmpty else { return .note("no queued interrupts to cancel") }
        state.transcript.removeQueued()
        state.softInterrupts = []
        return .send(.cancelSoftInterrupts)
    }

    /// The agent received soft interrupts. jcode drains its whole queue at a
    /// safe point and injects consecutive interrupts of one source as one
    /// message, their texts joined by a blank line (`agent/interrupts.rs`,
    /// `inject_soft_interrupts`): one `soft_interrupt_injected` may stand
    /// for several queued bubbles, which all become messages.
    func interruptInjected(_ state: inout ChatState, content: String, displayRole: String?) {
        // What the agent says next comes after the injected message.
        state.transcript.finishStreaming()
        if let run = Self.run(joinedAs: content, in: state.softInterrupts) {
            for interrupt in state.softInterrupts[run] { state.transcript.unqueue(serial: interrupt.entrySerial) }
            state.softInterrupts.removeSubrange(run)
        } else if let run = Self.run(joinedAs: content, in: state.outlivedInterrupts) {
            // Their turn ended first; they are already shown as sent.
            state.outlivedInterrupts.removeSubrange(run)
        } else {
            // Sent from another client.
            state.transcript.append(role: displayRole == "system" ? .system : .user, text: content)
        }
    }

    /// The consecutive interrupts of `queue` whose texts, joined as jcode
    /// joins them ("\n\n"), are `content`: the earliest such run.
    static func run(joinedAs content: String, in queue: [SoftInterrupt]) -> Range<Int>? {
        let target = content.utf8.count
        for start in queue.indices {
            var length = 0
            for end in start..<queue.count {
                length &+= (end > start ? 2 : 0) &+ queue[end].content.utf8.count
                if length > target { break }
                guard length == target else { continue }
                let joined = queue[start...end].map(\.content).joined(separator: "\n\n")
                if joined == content { return start..<(end &+ 1) }
            }
        }
        return nil
    }

    /// The turn ended: anything still queued stays with the server, which
    /// injects it later; it shows as sent, and its injection is recognised.
    func drainInterrupts(_ state: inout ChatState) {
        guard state.transcript.queuedCount > 0 || !state.softInterrupts.isEmpty else { return }
        state.transcript.unqueueAll()
        state.outlivedInterrupts.append(contentsOf: state.softInterrupts)
        if state.outlivedInterrupts.count > Self.outlivedLimit {
            state.outlivedInterrupts.removeFirst(state.outlivedInterrupts.count - Self.outlivedLimit)
        }
        state.softInterrupts = []
    }

    /// Outlived interrupts remembered at most (the server injects them at its next safe point).
    static let outlivedLimit = 16
}
