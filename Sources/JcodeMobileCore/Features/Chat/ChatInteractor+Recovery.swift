/// What the chat shows beyond the streamed turn: a turn the server stopped
/// (Continue or dismiss), the older part of a compacted history (loaded on
/// request, above what the person reads), and images as they arrive.
extension ChatInteractor {
    // MARK: - Interrupted turns

    /// What Continue sends when the server gave no words of its own: the
    /// agent is told its turn was cut off and to carry on without asking
    /// (as the TUI does on its own: jcode-tui remote/server_events.rs).
    static let continuationWording =
        "Your last turn was cut off before it finished (the app's connection dropped or the server restarted); a tool that was running was stopped and its result may be incomplete. Carry on from where you stopped, without asking me what to do next."

    /// The turn a history says was stopped before it ended (`was_interrupted`,
    /// or the server's `reload_recovery`), unless there is nothing to continue
    /// (an empty transcript, a turn running again) or the continuation is
    /// already waiting in the outbox.
    static func interruptedTurn(in history: ServerEvent.History, _ state: ChatState) -> InterruptedTurn? {
        guard history.reloadRecovery != nil || history.wasInterrupted == true else { return nil }
        guard !state.transcript.isEmpty, history.isProcessing != true else { return nil }
        let continuation = history.reloadRecovery?.continuationMessage.flatMap { $0.trimmingSpaces().isEmpty ? nil : $0 } ?? continuationWording
        if state.outbox.contains(where: { $0.systemReminder == continuation }) { return nil }
        return InterruptedTurn(continuation: continuation, reconnectNotice: history.reloadRecovery?.reconnectNotice)
    }

    /// `continue_interrupted_turn`: the continuation goes through the
    /// outbox (once; offline it waits there) as a message with an empty
    /// `content` and the continuation as `system_reminder`: jcode marks its
    /// reload recovery delivered only then (`client_lifecycle.rs`,
    /// `start_processing_message` → `reload_recovery.rs`,
    /// `mark_delivered_if_matching_continuation`), as the TUI sends it.
    func continueInterruptedTurn(_ state: inout ChatState, _ facts: Facts) -> Emission {
        guard let turn = state.interruptedTurn else { return .note("continue_interrupted_turn: no interrupted turn is shown") }
        guard !state.turn.isProcessing else { return .note("continue_interrupted_turn: a turn is running") }
        guard state.outbox.count < ChatState.outboxLimit else {
            return .internal(.showError(ErrorBanner(message: Self.outboxFull)))
        }
        state.interruptedTurn = nil
        var message = OutboxMessage(id: "o" + String(state.nextOutboxID), text: "", attachments: [], systemReminder: turn.continuation)
        message.writtenIn = facts.session.id
        return enqueue(&state, message, facts)
    }

    func dismissInterruptedTurn(_ state: inout ChatState) -> Emission {
        guard state.interruptedTurn != nil else { return .note("dismiss_interrupted_turn: no interrupted turn is shown") }
        state.interruptedTurn = nil
        return .none
    }

    // MARK: - Older history

    /// How many more compacted messages one `load_older_messages` asks for
    /// (the TUI's chunk: jcode-tui state_ui_messages.rs).
    static let olderHistoryChunk = 64

    /// The row today's server puts first in a compacted history
    /// (jcode-base session/render.rs): it tells a terminal user to scroll up.
    static let compactionMarker = "Earlier conversation compacted - "

    /// The compacted part of a history, read from the server's marker row
    /// (its first row, a system row), and the rows after it. Rows without
    /// the marker (or with wording this app cannot read) are all kept.
    static func olderHistory(in messages: [ServerEvent.History.Message]) -> (OlderHistory?, ArraySlice<ServerEvent.History.Message>) {
        guard let first = messages.first, first.role == "system", first.content.hasPrefix(compactionMarker) else {
            return (nil, messages[...])
        }
        let words = first.content.dropFirst(compactionMarker.count)
        var numbers: [Int] = []
        var current: Int?
        for byte in words.utf8 {
            if byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
                // A number too large for an Int is read as Int.max.
                let (m, o1) = (current ?? 0).multipliedReportingOverflow(by: 10)
                let (v, o2) = m.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
                current = o1 || o2 ? Int.max : v
            } else if let n = current {
                numbers.append(n)
                current = nil
            }
        }
        if let n = current { numbers.append(n) }
        let older: OlderHistory
        if words.hasPrefix("showing all "), numbers.count == 1 {
            older = OlderHistory(total: numbers[0], visible: numbers[0], remaining: 0)
        } else if numbers.count == 1 {
            older = OlderHistory(total: numbers[0], visible: 0, remaining: numbers[0])
        } else if numbers.count == 3 {
            older = OlderHistory(total: numbers[2], visible: numbers[1], remaining: numbers[0])
        } else {
            return (nil, messages[...])
        }
        return (older, messages.dropFirst())
    }

    func loadOlderMessages(_ state: inout ChatState, _ facts: Facts) -> Emission {
        guard let older = state.olderHistory, older.remaining > 0 else {
            return .note("load_older_messages: no older messages to load")
        }
        if older.requested != nil { return .note("load_older_messages: already asked; waiting for the answer") }
        if state.turn.isProcessing { return .note("load_older_messages: a turn is running; load once it ends") }
        if let refused = facts.requireConnection(to: "load older messages") { return refused }
        let wanted = min(older.visible &+ Self.olderHistoryChunk, older.total)
        state.olderHistory?.requested = wanted
        return .send(.getCompactedHistory(visibleMessages: wanted))
    }

    /// The answer to `get_compacted_history`: the whole transcript again,
    /// with more of the compacted messages. It replaces the transcript and
    /// tells the app how many entries now come before the ones shown
    /// before, so the list keeps them where the person was reading.
    func compactedHistoryArrived(_ state: inout ChatState, _ answer: ServerEvent.CompactedHistory, _ facts: Facts) -> Emission {
        guard let older = state.olderHistory, older.requested != nil else {
            return .note("compacted_history never asked for; ignored", .ignored)
        }
        guard answer.sessionID == facts.session.id else {
            return .note("compacted_history for session \(answer.sessionID), not the one open; ignored", .ignored)
        }
        guard !state.turn.isProcessing else {
            state.olderHistory?.requested = nil
            return .note("compacted_history arrived while a turn runs: not applied; load again once it ends", .ignored)
        }
        let (_, rows) = Self.olderHistory(in: answer.messages)
        let (entries, skipped, cutRows) = Self.entries(from: Array(rows))
        let before = state.transcript.count
        state.transcript.replaceAll(with: entries)
        state.images = answer.images
        state.serverUserRows = rows.reduce(0) { $1.role == "user" ? $0 &+ 1 : $0 }
        state.olderHistory = OlderHistory(total: answer.total, visible: answer.visible, remaining: answer.remaining)
        var logged: Emission = skipped.isEmpty ? .none : .note("compacted_history rows with unknown roles skipped: \(skipped.joined(separator: ", "))", .dropped)
        if cutRows > 0 { logged.append(.note("\(cutRows) compacted_history rows cut at \(Transcript.fieldLimit) bytes", .dropped)) }
        let added = state.transcript.count &- before
        return logged + (added > 0 ? .tell(.olderMessagesShown(count: added)) : .none)
    }

    // MARK: - Images as they arrive

    /// Images kept at most: the oldest go first (each is base64 data).
    static let imageLimit = 64

    func liveImagesArrived(_ state: inout ChatState, sessionID: String, images: [HistoryImage], _ facts: Facts) -> Emission {
        guard sessionID == facts.session.id else {
            return .note("side_pane_images for session \(sessionID), not the one open; ignored", .ignored)
        }
        guard !images.isEmpty else { return .note("side_pane_images with no images; ignored", .ignored) }
        state.images.append(contentsOf: images)
        guard state.images.count > Self.imageLimit else { return .none }
        let over = state.images.count &- Self.imageLimit
        state.images.removeFirst(over)
        return .note("more than \(Self.imageLimit) images: the \(over) oldest are not kept", .dropped)
    }

    /// A provider-native image generation call: its card, as the TUI shows
    /// it (jcode-tui remote/server_event_handlers.rs); the pixels follow
    /// with `side_pane_images`, anchored to the same call.
    func imageGenerated(_ state: inout ChatState, id: String, path: String, outputFormat: String, revisedPrompt: String?) -> Emission {
        var summary = "Generated image (\(outputFormat)) saved to \(path)."
        if let prompt = revisedPrompt?.trimmingSpaces(), !prompt.isEmpty { summary += "\n\nRevised prompt:\n" + prompt }
        let (output, _) = Transcript.limited(summary)
        if Self.isSameCall(id, state.transcript) {
            state.transcript.updateToolCall(id) {
                $0.output = output
                $0.status = .succeeded
            }
        } else {
            let index = state.transcript.streamingEntryWithRoomForToolCall()
            state.transcript.addToolCall(ToolCall(id: id, name: "image_generation", output: output, status: .succeeded), at: index)
        }
        return .none
    }
}
