import JcodeMobileMarkdown

/// The conversation: header, notices, messages with tool cards, requests
/// from the agent, and the composer.
enum ChatScreen {
    /// The screen's nodes. The message list's rows are not among them: the
    /// layout fills the list with the rows in and near the viewport
    /// (`MessageRows`). `tappableRows` puts the list's tappable rows (load
    /// older, an undelivered message's buttons) in it instead, for resolving
    /// `tap_node` without a layout.
    static func nodes(_ state: AppState, tappableRows: Bool) -> [SemanticNode] {
        var nodes: [SemanticNode] = [header(state)]
        nodes.append(
            SemanticNode("chat.notices", .list, label: "", visible: !state.notices.notices.isEmpty, children: state.notices.notices.map(notice)))
        if let turn = state.chat.interruptedTurn { nodes.append(interrupted(turn, processing: state.chat.turn.isProcessing)) }
        var messages: [SemanticNode] = []
        if tappableRows {
            if let older = state.chat.olderHistory { messages.append(loadOlder(older, processing: state.chat.turn.isProcessing)) }
            for pending in state.chat.outbox where !pending.isInTranscript { messages.append(outboxMessage(pending)) }
        }
        nodes.append(
            SemanticNode(
                "chat.messages", .list, label: "", value: nil,
                accessibilityLabel: "Conversation", accessibilityValue: conversationValue(state),
                children: messages))
        if !state.chat.turn.historyLoaded && state.connection.phase == .connected {
            nodes.append(.text("chat.loading", "Loading conversation…", role: .status))
        }
        nodes.append(emptyHint(state))
        nodes.append(activity(state))
        nodes.append(queued(state))
        if let request = state.approvals.permissionRequests.first { nodes.append(permissionSheet(request, pending: state.approvals.permissionRequests.count)) }
        if let request = state.approvals.stdinRequests.first { nodes.append(stdinSheet(request, focusedID: state.navigation.focusedNodeID)) }
        nodes.append(composer(state))
        return nodes
    }

    /// What an empty chat says to do (shown while nothing was said in it,
    /// its history loaded).
    static func emptyHint(_ state: AppState) -> SemanticNode {
        var waiting = false
        for pending in state.chat.outbox where !pending.isInTranscript { waiting = true }
        let empty = state.chat.transcript.count == 0 && !waiting && state.chat.olderHistory == nil && state.chat.turn.historyLoaded
        return .text(
            "chat.empty", "No messages yet. Ask jcode to explain, change or run something in your project: type below, then Send.",
            visible: empty)
    }

    /// "N messages": the transcript's entries and the messages still waiting to be sent.
    static func conversationValue(_ state: AppState) -> String {
        var waiting = 0
        for pending in state.chat.outbox where !pending.isInTranscript { waiting += 1 }
        return "\(state.chat.transcript.count + waiting) messages"
    }

    static func header(_ state: AppState) -> SemanticNode {
        let model = state.session.pendingModel.map { "Switching to \($0)…" } ?? state.session.model ?? "Model"
        let server = state.servers.selected?.name
        let title = SemanticText.sessionTitle(state.session.title, id: state.session.id)
        return SemanticNode(
            "chat.header", .header, label: title, value: server,
            accessibilityLabel: "Session \(title)",
            children: [
                .button("nav.sessions", "Sessions", .navigate(.sessions), icon: "list.bullet"),
                .button("nav.model_picker", model, .navigate(.modelPicker), accessibilityLabel: "Model: \(model)"),
                .button("nav.settings", "Settings", .navigate(.settings), icon: "gearshape"),
            ])
    }

    static func notice(_ notice: Notice) -> SemanticNode {
        var node = SemanticNode(
            "notice.\(notice.id)", .notice, label: notice.text,
            children: [
                .button("notice.\(notice.id).dismiss", "Dismiss", .dismissNotice(id: notice.id), accessibilityLabel: "Dismiss notice", icon: "xmark")
            ])
        // Its kind is how it is drawn, not words on the screen.
        node.variant = notice.kind.rawValue
        return node
    }

    static func speaker(_ role: TranscriptEntry.Role) -> String {
        switch role {
        case .user: return "You"
        case .assistant: return "jcode"
        case .system: return "System"
        case .backgroundTask: return "Background task"
        }
    }

    /// Why a reply stopped early, as the entry says it (nil for a normal end).
    static func stopNote(_ reason: TranscriptEntry.StopReason) -> String? {
        switch reason {
        case .normal: return nil
        case .maxTokens: return "Reply cut off: it reached the model's output limit."
        case .refusal: return "The model declined to answer."
        case .contentFilter: return "The provider's content filter stopped this reply."
        case .pause: return "The provider paused this turn."
        case .other: return "The reply stopped early."
        }
    }

    /// A turn the server stopped before it ended: Continue sends the
    /// continuation as a message's `system_reminder` (through the outbox,
    /// like any message); Dismiss closes the offer.
    static func interrupted(_ turn: InterruptedTurn, processing: Bool) -> SemanticNode {
        SemanticNode(
            "chat.interrupted", .banner, label: "The last turn stopped before it finished.", value: turn.reconnectNotice,
            accessibilityLabel: "The last turn was interrupted",
            children: [
                .button("chat.continue", "Continue", .continueInterruptedTurn, enabled: !processing,
                        accessibilityLabel: "Continue the interrupted turn"),
                .button("chat.interrupted.dismiss", "Dismiss", .dismissInterruptedTurn, accessibilityLabel: "Dismiss: do not continue"),
            ])
    }

    /// The top of a compacted conversation: older messages load on request.
    static func loadOlder(_ older: OlderHistory, processing: Bool) -> SemanticNode {
        let label: String
        if older.requested != nil {
            label = "Loading earlier messages…"
        } else if older.remaining > 0 {
            label = "Load earlier messages"
        } else {
            label = "All earlier messages shown"
        }
        let value = older.remaining == 1 ? "1 hidden" : "\(older.remaining) hidden"
        return .button(
            "chat.load_older", label, .loadOlderMessages, enabled: older.remaining > 0 && older.requested == nil && !processing,
            accessibilityLabel: older.remaining > 0 ? "Load earlier messages, \(value)" : label, value: value)
    }

    /// Where the images of the transcript belong: with a tool call, with a
    /// user prompt (by its ordinal), or after the last message.
    struct ImagePlaces {
        var byToolCall: [String: [Int]] = [:]
        var byPrompt: [Int: [Int]] = [:]
        var unanchored: [Int] = []

        init(_ images: [HistoryImage]) {
            for (k, image) in images.enumerated() {
                switch image.anchor {
                case .toolCall(let id)?: byToolCall[id, default: []].append(k)
                case .userPrompt(let n)?: byPrompt[n, default: []].append(k)
                case nil: unanchored.append(k)
                }
            }
        }
    }

    static func image(_ id: String, _ image: HistoryImage) -> SemanticNode {
        SemanticNode(
            id, .image, label: image.label ?? "Image", value: image.mediaType,
            accessibilityLabel: image.label.map { "Image: \($0)" } ?? "Image")
    }

    /// A transcript entry's row. An assistant's text shows as markdown
    /// blocks (parsed through `markdown` when given: a streamed reply then
    /// parses only its open block); the message's value keeps the text as
    /// written (what `copy` copies). Order: reasoning, images, the text's
    /// blocks, tool cards, why the reply stopped.
    static func message(
        _ entry: TranscriptEntry, images: ImagePlaces? = nil, prompt: Int? = nil, all: [HistoryImage] = [],
        navigation: NavigationState = NavigationState(), markdown: MarkdownCache? = nil, cards: ToolCardCache? = nil
    ) -> SemanticNode {
        let who = speaker(entry.role)
        var children: [SemanticNode] = []
        if !entry.reasoning.isEmpty { children.append(reasoning(entry, navigation: navigation)) }
        let anchored = prompt.flatMap { images?.byPrompt[$0] } ?? []
        if entry.imageCount > 0 && anchored.isEmpty {
            children.append(.text("message.\(entry.id).images", entry.imageCount == 1 ? "1 image" : "\(entry.imageCount) images", role: .image))
        }
        for k in anchored { children.append(image("message.\(entry.id).image.\(k)", all[k])) }
        let markdownShown = (entry.role == .assistant || entry.role == .backgroundTask) && !entry.text.isEmpty
        var long = false
        let open = markdownShown && replyOpen(entry, navigation)
        if markdownShown {
            let reply = replyBlocks(entry, whole: open, markdown: markdown)
            children.append(contentsOf: reply.nodes)
            long = reply.long
            if long { children.append(replyFold(entry, open: open)) }
        }
        for (call, cardID) in zip(entry.toolCalls, cardIDs(entry)) {
            children.append(
                toolCard(call, id: cardID, images: images?.byToolCall[call.id] ?? [], all: all, navigation: navigation, cards: cards))
        }
        if let stop = stopNote(entry.stopReason) {
            children.append(.text("message.\(entry.id).stop_reason", stop, value: entry.stopReason.wireName, role: .status))
        }
        var node = SemanticNode(
            "message.\(entry.id)", .message, label: who, value: entry.text,
            accessibilityLabel: entry.role == .user ? "You said" : (entry.isStreaming ? "\(who) is writing" : "\(who) said"),
            accessibilityValue: entry.isQueued ? "Queued: \(entry.text)" : entry.text,
            actions: entry.text.isEmpty ? [] : ["copy"], children: children)
        // Drawn, not said in the label: a reply still coming (a typing
        // indicator), a message queued for the running turn.
        if entry.isStreaming { node.variant = "typing" } else if entry.isQueued { node.variant = "queued" }
        if long { node.expanded = open }
        // Written in markdown: a screen reader reads the blocks, not the markers.
        if markdownShown { node.accessibilityValue = nil }
        return node
    }

    /// The ids of an entry's tool cards, unique in the tree: scoped by the
    /// message (a later turn may reuse a call id), and a repeated id within
    /// one message numbered.
    static func cardIDs(_ entry: TranscriptEntry) -> [String] {
        var cardIDs: [String] = []
        for call in entry.toolCalls {
            var cardID = "tool.\(entry.id).\(call.id)"
            if cardIDs.contains(cardID) {
                var n = 2
                while cardIDs.contains("\(cardID)~\(n)") { n += 1 }
                cardID = "\(cardID)~\(n)"
            }
            cardIDs.append(cardID)
        }
        return cardIDs
    }

    static func toolStatus(_ call: ToolCall) -> String {
        switch call.status {
        case .pending: return "Preparing"
        case .running: return "Running"
        case .succeeded: return "Done"
        case .failed: return "Failed"
        case .interrupted: return "Interrupted"
        }
    }

    static func outboxMessage(_ message: OutboxMessage) -> SemanticNode {
        var children: [SemanticNode] = []
        if !message.attachments.isEmpty {
            children.append(
                .text("outbox.\(message.id).images", message.attachments.count == 1 ? "1 image" : "\(message.attachments.count) images", role: .image))
        }
        if message.delivery == .failed {
            children.append(.button("outbox.\(message.id).retry", "Retry", .retryMessage(id: message.id), accessibilityLabel: "Send this message again"))
            children.append(
                .button("outbox.\(message.id).discard", "Discard", .discardMessage(id: message.id),
                    accessibilityLabel: "Discard this message; its text goes back to the message field"))
            var node = SemanticNode(
                "outbox.\(message.id)", .message, label: "You", value: message.text,
                accessibilityLabel: "You said, not delivered", accessibilityValue: message.text, children: children)
            node.variant = "failed"
            return node
        }
        let sent = message.delivery != .waiting
        var node = SemanticNode(
            "outbox.\(message.id)", .message, label: "You", value: message.text,
            accessibilityLabel: sent ? "You said, not confirmed by the server yet" : "You said, not sent yet", accessibilityValue: message.text,
            children: children)
        node.variant = sent ? "sending" : "waiting"
        return node
    }

    /// What the agent is doing, while a turn runs: the run status
    /// (`RunStatus`), with Retry when jcode is not answering.
    static func activity(_ state: AppState) -> SemanticNode {
        let turn = state.chat.turn
        let compacting = state.session.isCompacting
        let status = RunStatus.of(state)
        var text = status?.text ?? "jcode is working…"
        if compacting && status == nil { text = "Compacting the conversation…" }
        var value: String?
        if let tokens = turn.tokens { value = "\(tokens.input) in · \(tokens.output) out" }
        let stuck = status?.kind == .notAnswering
        return SemanticNode(
            "chat.activity", .status, label: text, value: value, visible: status != nil || compacting,
            accessibilityLabel: text,
            children: stuck ? [.button("chat.activity.retry", "Retry", .checkTurn, accessibilityLabel: "Ask jcode again whether the turn runs")] : [])
    }

    static func queued(_ state: AppState) -> SemanticNode {
        let n = state.chat.softInterrupts.count
        let label = n == 1 ? "1 message queued" : "\(n) messages queued"
        return SemanticNode(
            "chat.queued", .status, label: n == 0 ? "" : label, visible: n > 0,
            children: [.button("chat.cancel_queued", "Cancel", .cancelQueuedInterrupts, visible: n > 0, accessibilityLabel: "Cancel queued messages")])
    }

    static func permissionSheet(_ request: PermissionRequest, pending: Int) -> SemanticNode {
        let id = request.requestID
        let more = pending > 1 ? " (1 of \(pending))" : ""
        var children: [SemanticNode] = []
        if !request.detail.isEmpty { children.append(.text("permission.\(id).detail", request.detail)) }
        if !request.tier.isEmpty { children.append(.text("permission.\(id).tier", "Risk: \(request.tier)", value: request.tier)) }
        // In a row where their words fit (a wide screen), else one under the other.
        children.append(
            SemanticNode(
                "permission.\(id).actions", .group,
                children: [
                    .button("permission.\(id).approve", "Approve", .respondPermission(requestID: id, approved: true, remember: false)),
                    .button("permission.\(id).deny", "Deny", .respondPermission(requestID: id, approved: false, remember: false)),
                    .button(
                        "permission.\(id).always", "Always allow for this session",
                        .respondPermission(requestID: id, approved: true, remember: true)),
                ]))
        return SemanticNode(
            "permission.\(id)", .sheet, label: "Allow \(request.action)?\(more)", value: request.detail,
            accessibilityLabel: "jcode asks to run \(request.action)", children: children)
    }

    static func stdinSheet(_ request: StdinRequest, focusedID: String?) -> SemanticNode {
        let id = request.requestID
        var input = SemanticNode(
            // The sheet shows the prompt; the field under it needs no label of its own.
            "stdin.\(id).input", request.isPassword ? .secureField : .textField, label: "", value: nil,
            placeholder: request.isPassword ? "Password" : "Answer",
            accessibilityLabel: request.isPassword ? "\(request.prompt) (hidden input)" : request.prompt,
            actions: ["respond_stdin"], tap: .focus)
        input.focused = focusedID == input.id
        return SemanticNode(
            "stdin.\(id)", .sheet, label: request.prompt, value: request.isPassword ? "password" : nil,
            accessibilityLabel: "A tool asks: \(request.prompt)", children: [input])
    }

    /// The composer. While a sheet is up (an approval, a tool's question)
    /// only its Stop shows: the sheet is what the person answers, and the
    /// draft waits in the state.
    static func composer(_ state: AppState) -> SemanticNode {
        let processing = state.chat.turn.isProcessing
        let sheetUp = !state.approvals.permissionRequests.isEmpty || !state.approvals.stdinRequests.isEmpty
        let hasContent = !state.composer.draft.trimmingSpaces().isEmpty || !state.composer.attachments.isEmpty
        var children: [SemanticNode] = []
        if !state.composer.attachments.isEmpty {
            children.append(
                SemanticNode(
                    "chat.attachments", .list, label: "Attachments",
                    children: state.composer.attachments.map { a in
                        SemanticNode(
                            "attachment.\(a.id)", .image, label: "Image", value: "\(a.mediaType), \(formatBytes(a.byteCount))",
                            children: [.button("attachment.\(a.id).remove", "Remove", .removeAttachment(id: a.id), accessibilityLabel: "Remove image")])
                    }))
        }
        var draft = SemanticNode.field(
            "chat.draft", "Message", value: state.composer.draft, placeholder: processing ? "Queue a message…" : "Message jcode",
            editAction: "set_draft", focusedID: state.navigation.focusedNodeID)
        // Its placeholder says what it is: no form label over the composer (a screen reader still hears "Message").
        draft.label = ""
        if state.composer.voice.isListening { draft.accessibilityValue = "Listening: \(state.composer.draft)" }
        draft.visible = !sheetUp
        children.append(draft)
        children.append(
            .button(
                "chat.attach", "Attach image", .attachImage, enabled: state.composer.attachments.count < Attachment.limitPerMessage,
                visible: !sheetUp, icon: "paperclip"))
        let listening = state.composer.voice.isListening
        children.append(
            .button(
                "chat.voice", listening ? "Listening…" : "Dictate", .startVoiceInput, enabled: !listening, visible: !sheetUp,
                icon: listening ? "mic.fill" : "mic"))
        let queues = processing && state.composer.attachments.isEmpty
        children.append(
            .button(
                "chat.send", queues ? "Queue" : "Send", .sendMessage(text: nil), enabled: hasContent, visible: !sheetUp,
                accessibilityLabel: processing ? "Send to jcode while it works" : "Send message", icon: queues ? "arrow.up.to.line" : "arrow.up"))
        children.append(.button("chat.interrupt", "Stop", .interrupt, visible: processing, accessibilityLabel: "Stop jcode", icon: "stop.fill"))
        return SemanticNode("chat.composer", .group, label: "", children: children)
    }

    /// "1.4 s", "12 s", "3 min 20 s". Any finite, non-negative duration;
    /// the decoder drops the others.
    static func formatSeconds(_ secs: Double) -> String {
        guard secs.isFinite, secs >= 0 else { return "a while" }
        if secs < 10 { return "\(Double(Int(secs * 10)) / 10) s" }
        guard secs < 86_400 * 365 else { return "a long time" }
        let whole = Int(secs.rounded())
        return whole < 60 ? "\(whole) s" : "\(whole / 60) min \(whole % 60) s"
    }

    static func formatBytes(_ n: Int) -> String {
        if n < 1024 { return "\(n) B" }
        if n < 1024 * 1024 { return "\(n / 1024) KB" }
        return "\(n / (1024 * 1024)) MB"
    }
}
