extension AppState {
    /// The top-level members of the state JSON, in the order they are written.
    /// Each is small except `transcript`, which is written straight from the
    /// entries and tracked by its own change journal.
    public enum Section: String, CaseIterable, Sendable {
        case revision, screen
        case focusedNodeID = "focused_node_id"
        case connection, pairing, servers
        case selectedServerID = "selected_server_id"
        case session, transcript
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
        case .screen: return .string(screen.rawValue)
        case .focusedNodeID: return .from(focusedNodeID)
        case .connection: return connection.json
        case .pairing: return pairing.json
        case .servers: return .array(servers.map(\.json))
        case .selectedServerID: return .from(selectedServerID)
        case .session: return session.json
        case .transcript: return .array(transcript.entries.map(\.json))
        case .softInterrupts: return .array(softInterrupts.map(\.json))
        case .outbox: return .array(outbox.map(\.json))
        case .permissionRequests: return .array(permissionRequests.map(\.json))
        case .stdinRequests: return .array(stdinRequests.map(\.json))
        case .notices: return .array(notices.map(\.json))
        case .banners: return ["error": errorBanner?.json ?? .null, "status": .from(statusBanner)]
        case .draft: return .string(draft)
        case .attachments: return .array(attachments.map(\.json))
        case .voice: return voice.json
        case .lifecycle: return lifecycle.json
        case .pendingEffects: return effects.json
        }
    }

    /// Writes the whole state as JSON.
    public func writeJSON(to w: inout JSONWriter) {
        w.objectStart()
        for section in Section.allCases {
            w.key(string: section.rawValue)
            if section == .transcript {
                w.arrayStart()
                for entry in transcript.entries { entry.write(to: &w) }
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
