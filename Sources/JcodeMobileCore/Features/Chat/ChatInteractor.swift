/// Owns the conversation: sending messages through the outbox (exactly
/// once: see `OutboxMessage`), streaming text, reasoning and tool calls into
/// the transcript, the turn and how it ends, soft interrupts
/// (`ChatInteractor+Interrupts.swift`), and the server's authoritative history.
///
///     send_message → outbox (waiting) → message sent (awaiting_ack) → ack (received)
///       → its turn seen ending (done, interrupted, error): leaves the outbox
///     refused (already processing) → waiting again, once; then failed (Retry)
///     reloading, or the connection lost → unconfirmed → next history: arrived
///       (leaves) or sent again, once; then failed (Retry)
///
/// Turns end as the server ends them (docs/PROTOCOL.md, "Turns"): while a
/// message of this device is in flight only its own `done` ends the turn;
/// otherwise any `done`, `error` or `interrupted` ends the turn shown.
public struct ChatInteractor: Interactor {
    public init() {}

    /// What the chat acts on (the streamed events, which need nothing but
    /// this slice, are `Stream`'s).
    public enum Input: Equatable, Sendable {
        // Actions
        case sendMessage(text: String?)
        case interrupt
        case queueInterrupt(text: String, urgent: Bool)
        case cancelQueuedInterrupts
        case dismissInterruptedTurn
        case continueInterruptedTurn
        case checkTurn
        case loadOlderMessages
        case retryMessage(id: String)
        case discardMessage(id: String)
        // Server events
        case reasoningDone(durationSecs: Double?)
        case messageEnd(stopReason: String?)
        case providerGuardrail(message: String)
        case retryRollback(attempt: Int, max: Int)
        case toolStart(id: String, name: String)
        case toolExec(id: String, name: String)
        case toolDone(id: String, name: String, output: String, error: String?)
        case ack(id: Int?)
        case done(id: Int?)
        case interrupted
        case error(id: Int?, message: String, retryAfterSecs: Int?)
        case sessionCloseRequested
        case state(isProcessing: Bool?)
        case tokens(TokenUsage)
        case statusDetail(String)
        case connectionPhase(String)
        case softInterruptInjected(content: String, displayRole: String?)
        case history(ServerEvent.History)
        case compactedHistory(ServerEvent.CompactedHistory)
        case liveImages(sessionID: String, images: [HistoryImage])
        case generatedImage(id: String, path: String, outputFormat: String, revisedPrompt: String?)
        case reloading
        // Other features' outputs
        case connectionLost
        case socketOpened
        case serverChanged
        case sessionSwitched
        /// The server answered a `clear`: accepted (its `done`: the session is a fresh one) or refused.
        case clearAnswered(accepted: Bool)
        /// The history this socket waited for never reached the core.
        case historyLost
        // Platform events
        /// A timer fired: the connection's keep-alive tick is the turn watch's.
        case timerFired(timerID: String)
    }

    /// The streamed events, hundreds a second.
    public enum Stream: Equatable, Sendable {
        case textDelta(String)
        case textReplace(String)
        case reasoningDelta(String)
        case toolInput(delta: String)
    }

    public func interact(_ state: inout ChatState, _ input: Input, _ facts: Facts) -> Emission {
        let trimmed = state.transcript.trimmedEntries
        let emission = handleInput(&state, input, facts)
        guard state.transcript.trimmedEntries <= trimmed || state.transcript.trimmedEntries == 0 else {
            return emission + Self.trimNote(state)
        }
        return emission
    }

    private func handleInput(_ state: inout ChatState, _ input: Input, _ facts: Facts) -> Emission {
        if let id = state.leftBehindTurn, let dropped = leftBehind(&state, id, input, facts) { return dropped }
        switch input {
        case .sendMessage(let text):
            return send(&state, text: text, facts)
        case .interrupt:
            guard state.turn.isProcessing else { return .note("interrupt: no turn is running") }
            return .send(.cancel)
        case .clearAnswered(let accepted):
            // Only once the server cleared (a refused clear leaves everything
            // shown); what waited in the outbox goes now, to the session the answer left.
            guard accepted else { return flushOutbox(&state, facts) }
            state.transcript.removeAll()
            Self.endTurn(&state)
            state.softInterrupts = []
            state.outlivedInterrupts = []
            state.images = []
            state.wasInterrupted = false
            state.turn.tokens = nil
            state.serverUserRows = 0
            state.interruptedTurn = nil
            state.olderHistory = nil
            state.cutReplies = [:]
            // What waited for the clear goes to the fresh session (the answer's).
            for i in state.outbox.indices where state.outbox[i].delivery == .waiting { state.outbox[i].writtenIn = facts.session.id }
            return flushOutbox(&state, facts)
        case .queueInterrupt(let text, let urgent):
            return queueInterrupt(&state, text: text, urgent: urgent, facts)
        case .cancelQueuedInterrupts:
            return cancelQueuedInterrupts(&state)
        case .dismissInterruptedTurn:
            return dismissInterruptedTurn(&state)
        case .continueInterruptedTurn:
            return continueInterruptedTurn(&state, facts)
        case .checkTurn:
            return checkTurn(&state, facts)
        case .timerFired(let timerID):
            return timerFired(&state, timerID: timerID, facts)
        case .loadOlderMessages:
            return loadOlderMessages(&state, facts)
        case .retryMessage(let id):
            return retry(&state, id: id, facts)
        case .discardMessage(let id):
            return discard(&state, id: id, facts)

        // What the other features did
        case .connectionLost:
            state.leftBehindTurn = nil
            state.leftBehindSession = nil
            Self.keepCutReply(&state)
            Self.endTurn(&state)
            // A message on its way may or may not have arrived: the next history says.
            Self.unconfirmInFlight(&state)
            return .none
        case .historyLost:
            return historyLost(&state, facts)
        case .socketOpened:
            state.turn.historyLoaded = false
            return .none
        case .serverChanged:
            // Everything belonged to the old server; ids keep counting.
            var fresh = ChatState()
            fresh.transcript = state.transcript
            fresh.transcript.removeAll()
            fresh.nextOutboxID = state.nextOutboxID
            state = fresh
            return .none
        case .sessionSwitched:
            // The turn of this device's message may go on in the session left
            // behind, its events still reaching this connection: not this session's.
            var noted = Emission.none
            let own = state.leftBehindTurn ?? (state.turn.isProcessing ? Self.ownMessageInFlight(state, facts) : nil)
            if let own {
                // The session the turn runs in: where its message went.
                let turnSession = state.leftBehindSession ?? state.outbox.first?.sent?.sessionID ?? state.shownSessionID
                if turnSession == facts.session.id {
                    // Back in the session the turn runs in: its events are this session's again.
                    if state.leftBehindTurn != nil { noted = .note("back in the session whose turn was left behind: its events are shown again") }
                    state.leftBehindTurn = nil
                    state.leftBehindSession = nil
                } else {
                    state.leftBehindTurn = own
                    state.leftBehindSession = turnSession
                    noted = .note("the turn of request \(own) goes on in the session left behind: its events are not shown here")
                }
            }
            Self.keepCutReply(&state)
            // A message received by the session left behind: its turn ends out of sight.
            if state.outbox.first?.delivery == .received { state.outbox.removeFirst() }
            Self.rememberPreview(&state, leaving: facts.session.id)
            state.transcript.removeAll()
            Self.endTurn(&state)
            state.softInterrupts = []
            state.outlivedInterrupts = []
            state.images = []
            state.wasInterrupted = false
            state.interruptedTurn = nil
            state.olderHistory = nil
            state.turn.historyLoaded = false
            state.turn.tokens = nil
            state.serverUserRows = 0
            // The (empty) transcript is the new session's now.
            state.shownSessionID = facts.session.id
            return noted

        // What the server said
        case .reasoningDone(let secs):
            Self.heard(&state)
            state.turn.isReasoning = false
            if let index = state.transcript.streamingIndex, secs != nil {
                state.transcript.setReasoningSecs(secs, at: index)
            }
            return .none
        case .messageEnd(let raw):
            Self.heard(&state)
            let reason = TranscriptEntry.StopReason(provider: raw)
            if reason != .normal, let index = state.transcript.streamingIndex ?? state.transcript.entries.lastIndex(where: { $0.role == .assistant }) {
                state.transcript.setStopReason(reason, at: index)
            }
            state.transcript.finishStreaming()
            return .none
        case .providerGuardrail(let message):
            // The turn ends without an answer: say why, as its own entry.
            state.transcript.finishStreaming()
            state.transcript.append(role: .system, text: message.isEmpty ? "The model returned no response." : message)
            return .none
        case .retryRollback(let attempt, let max):
            Self.heard(&state)
            state.transcript.discardStreaming()
            state.turn.isReasoning = false
            state.turn.statusDetail = "Retrying (\(attempt)/\(max))"
            return .none

        case .toolStart(let id, let name):
            Self.heard(&state)
            state.turn.serverToolName = nil
            state.turn.isWriting = false
            return toolStarted(&state, id: id, name: name)
        case .toolExec(let id, let name):
            Self.heard(&state)
            let shown = toolRunning(&state, id: id, name: name)
            Self.toolStartedRunning(&state, id: id, name: name)
            return shown
        case .toolDone(let id, let name, let output, let error):
            Self.heard(&state)
            if state.turn.runningTool?.id == id {
                state.turn.runningTool = nil
                state.turn.toolTicks = 0
            }
            return toolFinished(&state, id: id, name: name, output: output, error: error)
        case .ack(let id):
            // Only the ack of the message on its way counts: received, not yet accepted.
            if let id, id == facts.connection.sentRequests.latest(.message), let head = state.outbox.first, head.delivery == .awaitingAck {
                // One sent to a session left behind: its turn ends out of sight, so the ack is the last word.
                if let sent = head.sent?.sessionID, sent != facts.session.id { acknowledged(&state) } else { state.outbox[0].delivery = .received }
            }
            return .none
        case .done(let id):
            return doneArrived(&state, id: id, facts)
        case .reloading:
            // The server restarts: a message it received may not have been
            // accepted (jcode refuses a message while a reload starts). The
            // history after the reconnect says.
            guard Self.unconfirmInFlight(&state) else { return .none }
            return .note("message \(state.outbox[0].id) is unconfirmed: the server is reloading")
        case .interrupted:
            acknowledged(&state)
            state.transcript.interruptOpenToolCalls()
            state.interruptionNoticeShown = true
            return turnFinished(&state, facts, .interrupted, notice: .internal(.notice(.info, "Interrupted", passes: .nextTurn)))
        case .error(let id, let message, let retryAfterSecs):
            return errorArrived(&state, id: id, message: message, retryAfterSecs: retryAfterSecs, facts)
        case .sessionCloseRequested:
            Self.endTurn(&state)
            return .none
        case .state(let isProcessing):
            if let isProcessing, isProcessing != state.turn.isProcessing {
                if isProcessing {
                    // A turn started elsewhere: the interrupted one is being continued.
                    state.turn.isProcessing = true
                    state.turn.isAdopted = true
                    return Self.turnStarted(&state)
                } else {
                    // `state` answers the debug request `get_state`, and its flag
                    // is the answering connection's (client_state.rs,
                    // `handle_get_state`), not the session's: the turn shown
                    // ends with its `done`, `error` or `interrupted`.
                    return .note("state with is_processing false ends no turn (it is the connection's flag); the turn ends with its done", .ignored)
                }
            }
            return .none

        case .tokens(let usage):
            Self.heard(&state)
            // One per API call: the turn's calls add up.
            state.turn.tokens = state.turn.tokens.map { $0 + usage } ?? usage
            return .none
        case .statusDetail(let detail):
            Self.heard(&state)
            state.turn.statusDetail = detail.isEmpty ? nil : detail
            return .none
        case .connectionPhase(let phase):
            // jcode sends it only inside a turn (turn_streaming_mpsc.rs): a
            // phone that joined mid-turn may see it before any text.
            Self.heard(&state)
            state.turn.serverPhase = phase.isEmpty ? nil : phase
            guard !phase.isEmpty, !state.turn.isProcessing else { return .none }
            state.turn.isProcessing = true
            state.turn.isAdopted = true
            return Self.turnStarted(&state)

        case .softInterruptInjected(let content, let displayRole):
            Self.heard(&state)
            interruptInjected(&state, content: content, displayRole: displayRole)
            return .none

        case .history(let history):
            return historyArrived(&state, history, facts)
        case .compactedHistory(let answer):
            return compactedHistoryArrived(&state, answer, facts)
        case .liveImages(let sessionID, let images):
            return liveImagesArrived(&state, sessionID: sessionID, images: images, facts)
        case .generatedImage(let id, let path, let format, let prompt):
            return imageGenerated(&state, id: id, path: path, outputFormat: format, revisedPrompt: prompt)
        }
    }

    /// The server's authoritative history replaced the transcript: the
    /// outbox is reconciled with it, and the next message goes once it is
    /// the last history this socket waits for.
    private func historyArrived(_ state: inout ChatState, _ history: ServerEvent.History, _ facts: Facts) -> Emission {
        if state.leftBehindSession == history.sessionID {
            // The connection is in the turn's session again (a resume refused, the server kept it).
            state.leftBehindTurn = nil
            state.leftBehindSession = nil
        }
        let wasProcessing = state.turn.isProcessing
        let reconciled = reconcile(&state, with: history)
        state.serverUserRows = history.messages.reduce(0) { $1.role == "user" ? $0 &+ 1 : $0 }
        // A compacted history's first row tells a terminal to scroll up: the
        // chat offers `chat.load_older` instead.
        let (older, rows) = Self.olderHistory(in: history.messages)
        var (entries, skipped, cutRows) = Self.entries(from: Array(rows))
        // A turn still running: what this device saw of it that the history lacks follows it.
        let shown = history.sessionID == state.shownSessionID && wasProcessing ? LiveTail.reply(in: state.transcript) : nil
        let live = shown ?? state.cutReplies[history.sessionID]
        state.cutReplies[history.sessionID] = nil
        if history.isProcessing == true, let live { entries = LiveTail.merge(live, into: entries) }
        state.shownSessionID = history.sessionID
        state.transcript.replaceAll(with: entries)
        state.olderHistory = older
        state.softInterrupts = []
        state.outlivedInterrupts = []
        state.images = history.images
        state.wasInterrupted = history.wasInterrupted ?? false
        state.interruptedTurn = Self.interruptedTurn(in: history, state)
        state.turn.isProcessing = history.isProcessing ?? false
        state.turn.isAdopted = state.turn.isProcessing
        state.turn.isReasoning = false
        keepInFlightMessage(&state, history)
        let turn = Self.historySaysOfTheTurn(&state, history, wasProcessing: wasProcessing)
        let synced = turn + Emission.announce(
            .historySynced(sessionID: history.sessionID, entries: history.messages.count, shown: state.transcript.entries.count))
        var dropped: Emission = skipped.isEmpty ? .none : .note("history rows with unknown roles skipped: \(skipped.joined(separator: ", "))", .dropped)
        if cutRows > 0 {
            dropped.append(.note("\(cutRows) history rows cut at \(Transcript.fieldLimit) bytes", .dropped))
        }
        if Self.anotherHistoryIsDue(after: history, facts) {
            // The answer to an earlier request, with the answer to a later
            // `get_history` or `resume_session` still to come: a message sent
            // now would be missing from that one, so the outbox waits for it.
            return reconciled + dropped + synced + .note("history answering request \(history.requestID ?? 0); the outbox waits for get_history")
        }
        state.turn.historyLoaded = true
        return reconciled + dropped + synced + flushOutbox(&state, facts)
    }

    // MARK: - Tool calls (one card per call id)

    private func toolStarted(_ state: inout ChatState, id: String, name: String) -> Emission {
        // A repeated start in the same turn (a frame sent twice) changes
        // nothing; the same id in a later turn is a new call (ids are per turn).
        if Self.isSameCall(id, state.transcript) { return .note("tool_start for call \(id), already shown; ignored", .ignored) }
        let index = state.transcript.streamingEntryWithRoomForToolCall()
        state.transcript.addToolCall(ToolCall(id: id, name: name, status: .pending), at: index)
        return .none
    }

    private func toolRunning(_ state: inout ChatState, id: String, name: String) -> Emission {
        let found = Self.isSameCall(id, state.transcript) && state.transcript.updateToolCall(id) { $0.status = .running }
        if !found {
            let index = state.transcript.streamingEntryWithRoomForToolCall()
            state.transcript.addToolCall(ToolCall(id: id, name: name, status: .running), at: index)
        }
        return .none
    }

    /// Whether an event naming the tool call `id` is about the card already
    /// shown: one of this turn, or one still open (a history taken mid-turn
    /// shows the running call). A finished card of an earlier turn is not:
    /// the id was reused, and the event is about a new call.
    static func isSameCall(_ id: String, _ transcript: Transcript) -> Bool {
        if transcript.isToolCallOfThisTurn(id) { return true }
        guard let (e, c) = transcript.locateToolCall(id) else { return false }
        let status = transcript.entries[e].toolCalls[c].status
        return status == .pending || status == .running
    }

    private func toolFinished(_ state: inout ChatState, id: String, name: String, output fullOutput: String, error: String?) -> Emission {
        let (output, wasCut) = Transcript.limited(fullOutput)
        let logged: Emission = wasCut ? Self.cut("tool_done output", fullOutput) : .none
        let status: ToolCall.Status = error == nil ? .succeeded : .failed
        let found = Self.isSameCall(id, state.transcript) && state.transcript.updateToolCall(id) {
            $0.output = output
            $0.status = status
            $0.error = error
        }
        if !found {
            let index = state.transcript.streamingEntryWithRoomForToolCall()
            state.transcript.addToolCall(ToolCall(id: id, name: name, output: output, status: status, error: error), at: index)
        }
        return logged
    }

    // MARK: - Sending

    func send(_ state: inout ChatState, text: String?, _ facts: Facts) -> Emission {
        let fromDraft = text == nil
        let content = (text ?? facts.composer.draft).trimmingSpaces()
        let attachments = facts.composer.attachments
        guard !content.isEmpty || !attachments.isEmpty else { return .note("send_message: nothing to send") }
        guard facts.servers.selected != nil else {
            return .internal(.showError(ErrorBanner(message: "Pair with a jcode server before sending messages.")))
        }
        if state.turn.isProcessing && facts.connection.canSend {
            // A turn is running: what the person types (and attaches) joins it as a soft interrupt.
            guard state.softInterrupts.count < ChatState.interruptLimit else {
                return Self.noRoom(for: content, fromDraft: fromDraft, Self.interruptsFull)
            }
            let taken: Emission =
                fromDraft || !attachments.isEmpty
                ? .tell(.composerSent(clearDraft: fromDraft, clearAttachments: !attachments.isEmpty)) : .none
            state.interruptedTurn = nil
            return taken + queueInterrupt(&state, text: content, images: attachments, urgent: false, facts)
        }
        guard state.outbox.count < ChatState.outboxLimit else {
            return Self.noRoom(for: content, fromDraft: fromDraft, Self.outboxFull)
        }
        let taken: Emission =
            (fromDraft && !facts.composer.draft.isEmpty) || !attachments.isEmpty
            ? .tell(.composerSent(clearDraft: fromDraft, clearAttachments: true)) : .none
        // A message of the person's own makes the offer to continue moot.
        state.interruptedTurn = nil
        var message = OutboxMessage(id: "o" + String(state.nextOutboxID), text: content, attachments: attachments)
        message.writtenIn = facts.session.id
        return taken + enqueue(&state, message, facts)
    }

    /// A message joins the outbox, and goes now when nothing holds it back.
    func enqueue(_ state: inout ChatState, _ message: OutboxMessage, _ facts: Facts) -> Emission {
        state.outbox.append(message)
        state.nextOutboxID &+= 1
        guard facts.connection.canSend, state.turn.historyLoaded, !state.turn.isProcessing, !facts.session.isClearing, state.outbox.count == 1 else {
            // Offline, still loading, clearing, or behind earlier messages: it waits its turn.
            return .note("message queued in the outbox")
        }
        return deliverHead(&state, facts)
    }

    static let outboxFull =
        "\(ChatState.outboxLimit) messages are already waiting to be sent. This one stays in the composer until they have gone."
    static let interruptsFull =
        "\(ChatState.interruptLimit) messages are already queued for the agent. This one stays in the composer until the turn ends."

    /// A message that found no room: it stays with the person (the draft
    /// keeps it: nothing is lost), who is told why.
    static func noRoom(for content: String, fromDraft: Bool, _ message: String) -> Emission {
        let kept: Emission = fromDraft ? .none : .tell(.keepInDraft(text: content))
        return kept + .internal(.showError(ErrorBanner(message: message))) + .note("not taken: \(message)", .dropped)
    }

    /// Sends the oldest outbox message: it shows in the transcript and stays
    /// in the outbox until the server acknowledges it.
    private func deliverHead(_ state: inout ChatState, _ facts: Facts) -> Emission {
        state.outbox[0].delivery = .awaitingAck
        state.outbox[0].sent = OutboxMessage.SentMark(sessionID: facts.session.id, userRowsBefore: state.serverUserRows)
        // A continuation is not the person's words: no user entry.
        state.outbox[0].isInTranscript = !state.outbox[0].isContinuation
        let message = state.outbox[0]
        state.transcript.finishStreaming()
        state.transcript.beginTurn()
        if !message.isContinuation {
            state.transcript.append(role: .user, text: message.text, imageCount: message.attachments.count)
        }
        state.turn.isProcessing = true
        state.turn.isAdopted = false
        state.turn.tokens = nil
        let images = message.attachments.map {
            GatewayRequest.ImagePayload(mediaType: $0.mediaType, dataBase64: $0.dataBase64)
        }
        return .send(.message(content: message.text, images: images, systemReminder: message.systemReminder)) + Self.turnStarted(&state)
    }

    /// A turn started: the offer to continue an interrupted one is moot, and
    /// so is the "Interrupted" notice of the last one, if this chat posted
    /// one since (the notices withdraw it).
    static func turnStarted(_ state: inout ChatState) -> Emission {
        state.interruptedTurn = nil
        guard state.interruptionNoticeShown else { return .none }
        state.interruptionNoticeShown = false
        return .tell(.turnStarted)
    }

    /// Sends the oldest outbox message when the connection is ready for it
    /// and nothing before it is still on its way.
    func flushOutbox(_ state: inout ChatState, _ facts: Facts) -> Emission {
        guard state.outbox.first?.delivery == .waiting, facts.connection.canSend, state.turn.historyLoaded, !state.turn.isProcessing,
            !facts.session.isClearing
        else { return .none }
        // The session whose history the transcript shows (the facts' may be a step behind a history).
        if let written = state.outbox[0].writtenIn, let shown = state.shownSessionID ?? facts.session.id, written != shown {
            // Words for another conversation: not sent here unless the person says so (Retry).
            return failed(&state, why: "written in session \(written), and the chat now shows \(shown)")
        }
        return deliverHead(&state, facts)
    }

    /// The turn of the message on its way was seen ending (the `done`,
    /// `interrupted` or `error` that ended it): it arrived and was taken, so
    /// it leaves the outbox.
    func acknowledged(_ state: inout ChatState) {
        guard state.outbox.first?.delivery == .awaitingAck || state.outbox.first?.delivery == .received else { return }
        state.outbox.removeFirst()
        state.serverUserRows &+= 1
    }

    /// A history arrived while a message was on its way (a reconnect): if a
    /// user row the server added since it was sent has its text, it arrived
    /// and leaves the outbox; otherwise it waits to be sent again. Either way
    /// it shows once: in the history, or in the outbox until it goes.
    private func reconcile(_ state: inout ChatState, with history: ServerEvent.History) -> Emission {
        // Only a message whose socket went before its ack: one still awaiting
        // its ack on the open socket (a session switch asks for history too) gets it there.
        guard let head = state.outbox.first, head.delivery == .unconfirmed else { return .none }
        if let sent = head.sent?.sessionID, sent != history.sessionID {
            // Only the history of the session it went to can say whether it
            // arrived (the person opened another session meanwhile): it waits for Retry.
            state.outbox[0].sent = nil
            state.outbox[0].isInTranscript = false
            return failed(&state, why: "sent to \(sent), and the history is of \(history.sessionID): whether it arrived is unknown")
        }
        if Self.history(history, shows: head) {
            state.outbox.removeFirst()
            return .note("message \(head.id) is in the server's history: not sent again")
        }
        state.outbox[0].sent = nil
        state.outbox[0].isInTranscript = false
        // Lost once, it goes again; lost a second time, it waits for Retry.
        if head.resent { return failed(&state, why: "not in the server's history after going again") }
        state.outbox[0].delivery = .waiting
        state.outbox[0].resent = true
        return .note("message \(head.id) is not in the server's history: it goes again")
    }

    /// A history replaced the transcript while a message awaits its ack on
    /// the open socket (the server sent it before reading the message): the
    /// message still shows once, and its turn still runs. If the history
    /// already holds it, its ack must not count it a second time.
    private func keepInFlightMessage(_ state: inout ChatState, _ history: ServerEvent.History) {
        guard let head = state.outbox.first, head.delivery == .awaitingAck || head.delivery == .received else { return }
        if head.delivery == .received, history.isProcessing != true, Self.history(history, shows: head) {
            // Received, in the history, and nothing runs: its turn is over (its done did not reach this device).
            acknowledged(&state)
            state.serverUserRows &-= 1
            return
        }
        state.turn.isProcessing = true
        if head.isContinuation {
            state.outbox[0].isInTranscript = false
        } else if Self.history(history, shows: head) {
            state.outbox[0].isInTranscript = true
            state.serverUserRows &-= 1
        } else if head.sent?.sessionID == nil || head.sent?.sessionID == history.sessionID {
            state.transcript.append(role: .user, text: head.text, imageCount: head.attachments.count)
            state.outbox[0].isInTranscript = true
        } else {
            // Sent to the session left behind: it shows with the outbox until its ack.
            state.outbox[0].isInTranscript = false
        }
    }

    /// Whether `history` answers an earlier request of this socket
    /// (`subscribe`, `resume_session`, `get_history`) while a `get_history`
    /// or `resume_session` sent after it is still to be answered. A history naming no request, or one this
    /// socket does not know, is taken as the last.
    static func anotherHistoryIsDue(after history: ServerEvent.History, _ facts: Facts) -> Bool {
        guard facts.connection.sentRequests.answered(by: .history, id: history.requestID) != nil, let id = history.requestID else { return false }
        // Each of these is answered with a history; the latest one sent is the one awaited.
        let awaited = [facts.connection.sentRequests.latest(.getHistory), facts.connection.sentRequests.latest(.resumeSession)].compactMap { $0 }.max()
        guard let awaited else { return false }
        return awaited > id
    }

    /// Whether the server's history holds `message`: a user row of the same
    /// session, after the rows it held when the message was sent, with the
    /// same text. A history with fewer user rows than then (compacted) can
    /// only show it as its latest user row.
    static func history(_ history: ServerEvent.History, shows message: OutboxMessage) -> Bool {
        guard let mark = message.sent else { return false }
        if let session = mark.sessionID, session != history.sessionID { return false }
        // A continuation has no words to find: jcode stops offering the
        // recovery once it accepted it (reload_recovery.rs), so a history
        // that still offers one says it did not arrive.
        if message.isContinuation { return history.reloadRecovery == nil && history.wasInterrupted != true }
        var userRows = 0
        var latest: String?
        for row in history.messages where row.role == "user" {
            if userRows >= mark.userRowsBefore && row.content.trimmingSpaces() == message.text { return true }
            userRows &+= 1
            latest = row.content
        }
        if userRows < mark.userRowsBefore, let latest, latest.trimmingSpaces() == message.text { return true }
        return false
    }

    // MARK: - Turns

    /// The link dropped or the person switched away while a reply streamed:
    /// it is kept for the next history of its session (`LiveTail`).
    static func keepCutReply(_ state: inout ChatState) {
        guard let session = state.shownSessionID, state.turn.isProcessing, let reply = LiveTail.reply(in: state.transcript) else { return }
        if state.cutReplies[session] == nil && state.cutReplies.count >= ChatState.cutRepliesLimit {
            state.cutReplies.removeAll()
        }
        state.cutReplies[session] = reply
    }

    /// While the turn of request `id` goes on in the session left behind:
    /// its events are dropped (nil for inputs that are not a turn's events),
    /// and its `done` or `error` ends the wait.
    private func leftBehind(_ state: inout ChatState, _ id: Int, _ input: Input, _ facts: Facts) -> Emission? {
        switch input {
        case .done(let answer?) where answer == id, .error(let answer?, _, _) where answer == id:
            state.leftBehindTurn = nil
            state.leftBehindSession = nil
            let note = Emission.note("the turn of request \(id), left behind in the other session, ended")
            // A message refused meanwhile (the connection was still busy with that turn) goes now.
            guard state.turn.isProcessing, Self.ownMessageInFlight(state, facts) == nil, state.outbox.first?.delivery == .waiting
            else { return note }
            Self.endTurn(&state)
            return note + flushOutbox(&state, facts)
        case .reasoningDone, .messageEnd, .providerGuardrail, .retryRollback, .toolStart, .toolExec, .toolDone, .interrupted,
            .statusDetail, .connectionPhase, .softInterruptInjected, .generatedImage:
            return Emission.none
        case .sendMessage, .interrupt, .queueInterrupt, .cancelQueuedInterrupts, .dismissInterruptedTurn, .continueInterruptedTurn,
            .loadOlderMessages, .retryMessage, .discardMessage, .ack, .done, .error, .sessionCloseRequested, .state, .tokens, .history,
            .compactedHistory, .liveImages, .reloading, .connectionLost, .socketOpened, .serverChanged, .sessionSwitched,
            .clearAnswered, .historyLost, .checkTurn, .timerFired:
            return nil
        }
    }

    /// A turn this device did not start shows running (its first event).
    static func adopt(_ state: inout ChatState) {
        state.turn.isProcessing = true
        state.turn.isAdopted = true
    }

    /// A turn this device did not start (or joined mid-way) ended: its
    /// history shows it whole (asked before the outbox goes on).
    static func resync(_ state: ChatState, _ facts: Facts) -> Emission {
        guard state.turn.isAdopted, facts.connection.canSend else { return .none }
        return .note("a turn this device did not start ended: asking for its history to show it whole") + .send(.getHistory)
    }

    /// Ends the running turn on this side: nothing is processing or
    /// streaming any more (a finished turn, or a lost connection).
    static func endTurn(_ state: inout ChatState) {
        forgetWatch(&state)
        state.turn.isProcessing = false
        state.turn.isReasoning = false
        state.turn.serverPhase = nil
        state.turn.statusDetail = nil
        state.transcript.finishStreaming()
        state.transcript.forgetTurnToolCalls()
    }

    /// The agent finished (done or interrupted): soft interrupts still
    /// queued were consumed or are moot, the turn ends, the others hear of it,
    /// and the next outbox message goes.
    func turnFinished(
        _ state: inout ChatState, _ facts: Facts, _ outcome: AppEvent.TurnOutcome, notice: Emission = .none
    ) -> Emission {
        drainInterrupts(&state)
        let resync = Self.resync(state, facts)
        Self.endTurn(&state)
        return notice + .tell(.turnEnded(outcome: outcome)) + .announce(.turnFinished(outcome: outcome)) + resync + flushOutbox(&state, facts)
    }

    // MARK: - Server events

    /// The streamed events, hundreds a second: they need nothing but this
    /// slice (the app routes them here directly).
    static func stream(_ state: inout ChatState, _ event: Stream) -> Emission {
        let trimmed = state.transcript.trimmedEntries
        heard(&state)
        let emission = streamed(&state, event)
        guard state.transcript.trimmedEntries == trimmed else { return emission + trimNote(state) }
        return emission
    }

    /// The transcript passed its text budget and dropped its oldest entries.
    static func trimNote(_ state: ChatState) -> Emission {
        .note(
            "transcript over \(state.transcript.textBudget) bytes of text: \(state.transcript.trimmedEntries) oldest entries dropped so far",
            .dropped)
    }

    private static func streamed(_ state: inout ChatState, _ event: Stream) -> Emission {
        // A turn left behind in another session (see `leftBehindTurn`).
        guard state.leftBehindTurn == nil else { return .none }
        switch event {
        case .textDelta(let text):
            let index = state.transcript.streamingEntryCreatingIfNeeded()
            let whole = state.transcript.appendText(text, at: index)
            if !state.turn.isProcessing { adopt(&state) }
            if !state.turn.isWriting { state.turn.isWriting = true }
            return whole ? .none : cut("text_delta", text)
        case .textReplace(let text):
            let index = state.transcript.streamingEntryCreatingIfNeeded()
            return state.transcript.setText(text, at: index) ? .none : cut("text_replace", text)
        case .reasoningDelta(let text):
            let index = state.transcript.streamingEntryCreatingIfNeeded()
            let whole = state.transcript.appendReasoning(text, at: index)
            if !state.turn.isReasoning { state.turn.isReasoning = true }
            if state.turn.isWriting { state.turn.isWriting = false }
            if !state.turn.isProcessing { adopt(&state) }
            return whole ? .none : cut("reasoning_delta", text)
        case .toolInput(let delta):
            switch state.transcript.appendToLatestToolInput(delta) {
            case nil: return .note("tool_input with no tool call; ignored", .ignored)
            case false?: return cut("tool_input", delta)
            case true?: return .none
            }
        }
    }

    /// A field reached `Transcript.fieldLimit`: what did not fit is logged.
    static func cut(_ what: String, _ text: String) -> Emission {
        .note("\(what) cut: the entry keeps \(Transcript.fieldLimit) bytes per field (\(text.utf8.count) bytes arrived)", .dropped)
    }


    /// The transcript of a `history` event, as today's jcode renders it
    /// (`session/render.rs`): user, assistant, system and background-task
    /// rows; an assistant row names its tool calls, and each `tool` row that
    /// follows carries one call's id, name, input (an object, shown as
    /// compact JSON) and output, which completes the matching call. Empty
    /// placeholders are skipped; rows of unknown roles are skipped and named.
    static func entries(from messages: [ServerEvent.History.Message]) -> (
        entries: [TranscriptEntry], skippedRoles: [String], cutRows: Int
    ) {
        var entries: [TranscriptEntry] = []
        var skipped: [String] = []
        var cutRows = 0
        entries.reserveCapacity(messages.count)
        for (n, message) in messages.enumerated() {
            if message.role == "tool" {
                if let data = message.toolData {
                    let (output, wasCut) = Transcript.limited(data.output ?? message.content)
                    if wasCut { cutRows &+= 1 }
                    attachToolResult(data, output: output, to: &entries)
                } else {
                    skipped.append("tool (no tool_data)")
                }
                continue
            }
            guard let role = TranscriptEntry.Role(rawValue: message.role) else {
                if !skipped.contains(message.role) { skipped.append(message.role) }
                continue
            }
            var calls: [ToolCall] = []
            if let data = message.toolData {
                // An older server put the call and its output on the assistant row.
                let status: ToolCall.Status = data.error != nil ? .failed : (data.output != nil ? .succeeded : .running)
                calls.append(
                    ToolCall(id: data.id, name: data.name, input: data.input, output: data.output ?? "", status: status, error: data.error))
            } else {
                for (k, name) in message.toolCalls.enumerated() {
                    calls.append(ToolCall(id: LiveTail.historyCallPrefix + "\(n).\(k)", name: name, status: .succeeded))
                }
            }
            if message.content.isEmpty && calls.isEmpty { continue }
            // An assistant row may start with its reasoning, shown apart.
            let (thought, answer) = role == .assistant ? HistoryReasoning.split(message.content) : ("", message.content)
            let (text, wasCut) = Transcript.limited(answer)
            let (reasoning, reasoningCut) = Transcript.limited(thought)
            if wasCut || reasoningCut { cutRows &+= 1 }
            entries.append(TranscriptEntry(serial: 0, role: role, text: text, reasoning: reasoning, toolCalls: calls))
        }
        return (entries, skipped, cutRows)
    }

    /// A `tool` row of history: completes the earliest call of that name the
    /// assistant rows listed without an id (calls of a turn run in the order
    /// listed), or, when none is waiting, adds the call to the latest
    /// assistant entry (or a new one).
    private static func attachToolResult(_ data: ServerEvent.History.ToolData, output: String, to entries: inout [TranscriptEntry]) {
        let result = ToolCall(
            id: data.id, name: data.name, input: data.input, output: output,
            status: data.error != nil ? .failed : .succeeded, error: data.error)
        for e in entries.indices.reversed() {
            guard entries[e].role == .assistant else {
                if entries[e].role == .user { break }
                continue
            }
            if let c = entries[e].toolCalls.firstIndex(where: { $0.id.hasPrefix(LiveTail.historyCallPrefix) && $0.name == data.name }) {
                entries[e].toolCalls[c] = result
                return
            }
        }
        if let last = entries.indices.last, entries[last].role == .assistant {
            entries[last].toolCalls.append(result)
        } else {
            entries.append(TranscriptEntry(serial: 0, role: .assistant, toolCalls: [result]))
        }
    }
}
