extension AppState {
    /// The top-level members of the state JSON, in the order they are written.
    /// Each is small except `transcript`, which is written straight from the
    /// entries and tracked by its own change journal.
    public enum Section: String, CaseIterable, Sendable {
        case revision, screen
        case focusedNodeID = "focused_node_id"
        case messagesScroll = "messages_scroll"
        case connection, pairing, servers
        case selectedServerID = "selected_server_id"
        case session, transcript, images
        case softInterrupts = "soft_interrupts"
        case outbox
        case permissionRequests = "permission_requests"
        case stdinRequests = "stdin_requests"
        case notices, banners, draft, attachments, voice, lifecycle
        case pendingEffects = "pending_effects"
    }

    /// The JSON of one section (the transcript too, though writers use `writeJSON`).
    public func json(of section: Section) -> JSONValue {
        switch section {
        case .revision: return .int(Int64(revision))
        case .screen: return .string(navigation.screen.rawValue)
        case .focusedNodeID: return .from(navigation.focusedNodeID)
        case .messagesScroll: return navigation.messagesScroll.map { .int(Int64($0)) } ?? .null
        case .connection: return connectionJSON
        case .pairing: return pairing.json
        case .servers: return .array(servers.list.map(\.json))
        case .selectedServerID: return .from(servers.selectedID)
        case .session: return sessionJSON
        case .transcript: return .array(chat.transcript.entries.map(\.json))
        case .images: return .array(chat.images.map(\.json))
        case .softInterrupts: return .array(chat.softInterrupts.map(\.json))
        case .outbox: return .array(chat.outbox.map(\.json))
        case .permissionRequests: return .array(approvals.permissionRequests.map(\.json))
        case .stdinRequests: return .array(approvals.stdinRequests.map(\.json))
        case .notices: return .array(notices.notices.map(\.json))
        case .banners:
            return ["error": notices.errorBanner.map(SemanticText.json(of:)) ?? .null, "status": .from(SemanticText.statusBanner(self))]
        case .draft: return .string(composer.draft)
        case .attachments: return .array(composer.attachments.map(\.json))
        case .voice: return composer.voice.json
        case .lifecycle: return lifecycle.json
        case .pendingEffects: return effects.json
        }
    }

    private var connectionJSON: JSONValue {
        var o = JSONObject(capacity: 5)
        o.append("phase", .string(connection.phase.rawValue))
        o.append("attempt", .int(Int64(connection.attempt)))
        o.append("reason", .from(connection.issue.map(SemanticText.issue)))
        o.append("socket_open", .bool(connection.isSocketOpen))
        o.append("reconnect_delay_ms", .from(connection.reconnectDelayMS))
        return .object(o)
    }

    /// The session's metadata and the running turn, as one member.
    private var sessionJSON: JSONValue {
        let s = session
        let turn = chat.turn
        var o = JSONObject(capacity: 24)
        o.append("id", .from(s.id))
        o.append("title", .from(s.title))
        o.append("all_sessions", .array(s.allSessions.map(\.json)))
        o.append("model", .from(s.model))
        o.append("pending_model", .from(s.pendingModel))
        o.append("provider", .from(s.provider))
        o.append("available_models", .array(s.availableModels.map(JSONValue.string)))
        o.append("reasoning_effort", .from(s.reasoningEffort))
        o.append("pending_reasoning_effort", .from(s.pendingReasoningEffort))
        o.append("server_version", .from(s.serverVersion))
        o.append("tokens", turn.tokens?.json ?? .null)
        o.append("total_tokens", s.currentTotalTokens?.json ?? .null)
        o.append("connection_type", .from(s.connectionType))
        o.append("upstream_provider", .from(s.upstreamProvider))
        o.append("was_interrupted", .bool(chat.wasInterrupted))
        o.append("is_processing", .bool(turn.isProcessing))
        o.append("is_reasoning", .bool(turn.isReasoning))
        o.append("server_phase", .from(turn.serverPhase))
        o.append("status_detail", .from(turn.statusDetail))
        o.append("history_loaded", .bool(turn.historyLoaded))
        o.append("is_compacting", .bool(s.isCompacting))
        return .object(o)
    }

    /// Writes the whole state as JSON.
    public func writeJSON(to w: inout JSONWriter) {
        w.objectStart()
        for section in Section.allCases {
            w.key(string: section.rawValue)
            if section == .transcript {
                w.arrayStart()
                for entry in chat.transcript.entries { entry.write(to: &w) }
                w.arrayEnd()
            } else {
                w.value(json(of: section))
            }
        }
        w.objectEnd()
    }

    public var json: JSONValue {
        var o = JSONObject(capacity: Section.allCases.count)
        for section in Section.allCases { o.append(section.rawValue, json(of: section)) }
        return .object(o)
    }
}
