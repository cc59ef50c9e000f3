/// How a turn ends and what happens to the message that started it
/// (docs/PROTOCOL.md "Answers" and "Turns and the outbox", docs/LIFECYCLE.md "The outbox").
///
/// jcode's server sends a turn's final `done` or `error` to every client of
/// the session, carrying the id the starting connection gave its `message`
/// (`client_lifecycle.rs`, `start_processing_message`: the terminal event
/// goes out on the session fan-out). Whether a `done` answers a request of
/// this socket is the answer table's to say (`GatewayAnswer`): `ping` and
/// `get_history` are never answered by `done`, a request already answered is
/// forgotten, and ids of an earlier socket mean nothing on this one. So
/// while a message of this device is in flight on this socket, only the
/// answer carrying its id ends the turn; when none is, any `done` that
/// answers no request of this socket ends the turn shown, as jcode's TUI
/// does (`server_events.rs`, "externally started turn").
extension ChatInteractor {
    /// The error jcode answers a `message` with when the connection is still
    /// processing one (`client_lifecycle.rs`, `start_processing_message`):
    /// the message was not taken. jcode's TUI recognises it by these words too.
    static let busyRefusal = "Already processing a message"

    /// The request id of this device's message whose turn has not been seen
    /// ending, when one is in flight on this socket.
    static func ownMessageInFlight(_ state: ChatState, _ facts: Facts) -> Int? {
        guard let head = state.outbox.first, head.delivery == .awaitingAck || head.delivery == .received else { return nil }
        return facts.connection.sentRequests.latest(.message)
    }

    /// The request of this socket that `event` carrying `id` answers, other
    /// than a message (a message's answers end its turn).
    static func answersOtherRequest(_ event: GatewayAnswer.Event, id: Int?, _ facts: Facts) -> GatewayRequest.Kind? {
        guard let kind = facts.connection.sentRequests.answered(by: event, id: id), kind != .message else { return nil }
        return kind
    }

    /// The message in flight may or may not have been taken (the socket
    /// went, or the server restarts): the next history says. Whether there was one.
    @discardableResult
    static func unconfirmInFlight(_ state: inout ChatState) -> Bool {
        guard let head = state.outbox.first, head.delivery == .awaitingAck || head.delivery == .received else { return false }
        state.outbox[0].delivery = .unconfirmed
        return true
    }

    func doneArrived(_ state: inout ChatState, id: Int?, _ facts: Facts) -> Emission {
        // The server also answers `subscribe`, `resume_session`, `clear` … with `done`: that ends no turn.
        if let kind = Self.answersOtherRequest(.done, id: id, facts) { return .note("done for \(kind.rawValue)") }
        if let own = Self.ownMessageInFlight(state, facts) {
            // Another client's turn (or a repeated done of an earlier message)
            // must not end the turn of the message on its way.
            // A done naming no request is taken as the answer to the turn in flight.
            guard id == nil || id == own else {
                return .note("done \(id.map(String.init) ?? "without id") while message \(state.outbox[0].id) is in flight; ignored", .ignored)
            }
            acknowledged(&state)
            return turnFinished(&state, facts, .done)
        }
        // Nothing of this device's is in flight: the turn shown ends, whoever started it.
        guard state.turn.isProcessing else {
            // Nothing runs, yet a phase or status of a turn seen only in part may still show.
            Self.endTurn(&state)
            return .note("done \(id.map(String.init) ?? "without id") for a turn this device did not see; nothing to end", .ignored)
        }
        return turnFinished(&state, facts, .done)
    }

    func errorArrived(_ state: inout ChatState, id: Int?, message: String, retryAfterSecs: Int?, _ facts: Facts) -> Emission {
        // The connection owns an error answering `subscribe` (it is why the link failed).
        if let id, id == facts.connection.subscribeRequestID { return .none }
        let banner = Emission.internal(.showError(ErrorBanner(message: message, retryAfterSecs: retryAfterSecs)))
        if let own = Self.ownMessageInFlight(state, facts) {
            // Only an error about the message on its way concerns its turn.
            guard id == nil || id == own else { return banner }
            if message == Self.busyRefusal { return refused(&state) }
            acknowledged(&state)
            Self.endTurn(&state)
            return banner + .tell(.turnEnded(outcome: .error, error: message)) + .announce(.turnFinished(outcome: .error))
                + flushOutbox(&state, facts)
        }
        // An error answering another request of this device (`set_model` …),
        // or one the server could not read (id 0), ends no turn.
        if let id, id == 0 || Self.answersOtherRequest(.error, id: id, facts) != nil { return banner }
        guard state.turn.isProcessing else { return banner }
        let resync = Self.resync(state, facts)
        Self.endTurn(&state)
        return banner + .tell(.turnEnded(outcome: .error, error: message)) + .announce(.turnFinished(outcome: .error))
            + resync + flushOutbox(&state, facts)
    }

    /// The server refused the message on its way: this connection is still
    /// processing a turn the device thought over. The message was not taken,
    /// so it goes again, once, when that turn is seen ending; the turn shows
    /// as running meanwhile. Refused a second time, it fails.
    private func refused(_ state: inout ChatState) -> Emission {
        let head = state.outbox[0]
        if head.isInTranscript, let i = state.transcript.entries.lastIndex(where: { $0.role == .user && $0.text == head.text }) {
            state.transcript.remove(at: i)
        }
        state.outbox[0].isInTranscript = false
        state.outbox[0].sent = nil
        state.turn.isProcessing = true
        if head.resent { return failed(&state, why: "refused again (\(Self.busyRefusal))") }
        state.outbox[0].delivery = .waiting
        state.outbox[0].resent = true
        return .internal(.notice(.info, "jcode is still busy with a turn: your message goes when it ends"))
            + .note("message \(head.id) refused (\(Self.busyRefusal)): it goes again when the running turn ends")
    }

    /// The head of the outbox was lost a second time: it stays, shown as not
    /// sent, until the person taps Retry.
    func failed(_ state: inout ChatState, why: String) -> Emission {
        state.outbox[0].delivery = .failed
        state.outbox[0].resent = false
        return .internal(.showError(ErrorBanner(message: Self.failedMessage)))
            + .note("message \(state.outbox[0].id) failed: \(why)", .dropped)
    }

    static let failedMessage = "A message could not be delivered. It is kept: tap Retry to send it again."

    /// `retry_message`: a failed message goes again (the automatic resend is
    /// available to it once more).
    func retry(_ state: inout ChatState, id: String, _ facts: Facts) -> Emission {
        guard let i = state.outbox.firstIndex(where: { $0.id == id }) else { return .note("retry_message: no message \(id) in the outbox") }
        guard state.outbox[i].delivery == .failed else { return .note("retry_message: message \(id) has not failed") }
        state.outbox[i].delivery = .waiting
        // Retried here: it goes to the session the chat shows now.
        state.outbox[i].writtenIn = facts.session.id
        return .note("message \(id) goes again") + flushOutbox(&state, facts)
    }

    /// `discard_message`: a failed message leaves the outbox, so the
    /// messages behind it go on. Nothing typed is lost: its text goes back
    /// to the draft (after what the draft holds, on a new line); its images
    /// go with it. Refused when the draft could not take the text.
    func discard(_ state: inout ChatState, id: String, _ facts: Facts) -> Emission {
        guard let i = state.outbox.firstIndex(where: { $0.id == id }) else { return .note("discard_message: no message \(id) in the outbox") }
        guard state.outbox[i].delivery == .failed else { return .note("discard_message: message \(id) has not failed") }
        let text = state.outbox[i].text
        let kept = facts.composer.draft.isEmpty ? text.utf8.count : facts.composer.draft.utf8.count &+ 1 &+ text.utf8.count
        guard kept <= ComposerState.keptTextLimit else {
            return .internal(.showError(ErrorBanner(message: Self.discardRefused)))
                + .note("discard_message: the draft cannot take message \(id)'s text; kept in the outbox")
        }
        let images = state.outbox[i].attachments.count
        state.outbox.remove(at: i)
        let back: Emission = text.isEmpty ? .none : .tell(.keepInDraft(text: text))
        let logged = Emission.note("message \(id) discarded: its text is back in the draft" + (images > 0 ? "; \(images) image(s) discarded with it" : ""))
        return back + logged + flushOutbox(&state, facts)
    }

    static let discardRefused = "The composer is too full to take the discarded message back. Send or clear the draft first."

    /// The history this socket waited for never reached the core: the host
    /// refused its frame (over the 16 MiB input limit: image-heavy sessions
    /// reach it), or it could not be read. The chat stops waiting: what it
    /// showed stays, a system entry says why and what helps, and the outbox
    /// flushes. A message whose arrival only that history could confirm
    /// fails (Retry): sending it again blindly could make it twice.
    func historyLost(_ state: inout ChatState, _ facts: Facts) -> Emission {
        guard !state.turn.historyLoaded else { return .note("history_lost with the history loaded; ignored", .ignored) }
        state.turn.historyLoaded = true
        state.transcript.finishStreaming()
        state.transcript.append(role: .system, text: Self.historyTooLarge)
        var emission = Emission.none
        if state.outbox.first?.delivery == .unconfirmed {
            state.outbox[0].sent = nil
            state.outbox[0].isInTranscript = false
            emission = failed(&state, why: "its arrival could not be checked (no history)")
        }
        return emission + flushOutbox(&state, facts)
    }

    static let historyTooLarge =
        "This conversation could not be loaded: it is too large for the phone (over 16 MiB, mostly images). "
        + "Earlier messages are not shown; new ones are. Compacting the conversation or starting a new one makes it fit."
}
