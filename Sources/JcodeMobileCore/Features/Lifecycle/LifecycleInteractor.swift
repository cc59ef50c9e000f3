import JcodeMobileJSON

/// Owns what the host reports about the app and the device: foreground and
/// background, the network, this install's identity, push registration and
/// notifications.
///
///     identity_needed (pairing) → create_device_id (once)
///     device_id_created         → identity_ready, or identity_failed
///     turn_ended (chat), permission_asked / input_asked (approvals),
///     in the background         → show_local_notification (one each; a
///                                 permission's names the kind of tool, never its command)
///     push_notification_opened  → the chat of its session
public struct LifecycleInteractor: Interactor {
    public init() {}

    /// What the lifecycle acts on.
    public enum Input: Equatable, Sendable {
        // Platform events
        case foreground
        case background
        case networkReachabilityChanged(reachable: Bool)
        case pushNotificationOpened(payload: JSONObject)
        case appearanceChanged(Appearance)
        case deviceIDCreated(effectID: EffectID, deviceID: String)
        case pushTokenReceived(token: String)
        // Pairing's outputs
        case identityNeeded
        // Chat's and approvals' outputs: what a person away from the app is told
        case turnEnded(outcome: AppEvent.TurnOutcome, error: String?)
        case permissionAsked(action: String, sessionID: String?)
        case inputAsked(prompt: String)
    }

    public func interact(_ state: inout LifecycleState, _ input: Input, _ facts: Facts) -> Emission {
        switch input {
        case .foreground:
            state.isForeground = true
            return .none
        case .background:
            state.isForeground = false
            return .none
        case .networkReachabilityChanged(let reachable):
            state.isNetworkReachable = reachable
            return .none
        case .appearanceChanged(let appearance):
            state.appearance = appearance
            return .none
        case .identityNeeded:
            if state.deviceID != nil { return .tell(.identityReady) }
            guard !facts.pendingEffects.contains(.createDeviceID) else { return .note("device id already requested") }
            return .effect(.device(.createDeviceID))
        case .deviceIDCreated(let id, let value):
            guard facts.pending(id)?.kind == .createDeviceID else {
                return .note("device_id_created for effect \(id), which is not a pending create_device_id; ignored", .ignored)
            }
            guard LifecycleState.isValidDeviceID(value) else {
                return .settle(id) + .note("device_id_created: not 1 to 128 printable ASCII characters without spaces; ignored", .ignored)
                    + .tell(.identityFailed)
            }
            // The first identity stays: an install never changes who it is.
            if state.deviceID == nil { state.deviceID = value }
            return .settle(id) + .tell(.identityReady)
        case .pushTokenReceived(let token):
            state.pushToken = token
            return .none
        case .turnEnded(let outcome, let error):
            switch outcome {
            case .done: return Self.notify(state, facts, "The agent finished", about: facts.session.id)
            case .interrupted: return Self.notify(state, facts, "The agent was interrupted", about: facts.session.id)
            case .error:
                let reason = Self.oneLine(error ?? "", limit: Self.reasonLimit)
                return Self.notify(state, facts, reason.isEmpty ? "The agent stopped" : "The agent stopped: \(reason)", about: facts.session.id)
            }
        case .permissionAsked(let action, let sessionID):
            // A notification can be read on a locked screen: it says what kind
            // of approval is asked, never the command (the sheet in the app shows it).
            return Self.notify(state, facts, "The agent asks permission to \(Self.kind(ofTool: action))", about: sessionID ?? facts.session.id)
        case .inputAsked(let prompt):
            // The prompt may be shown (the tool printed it); the answer never is, and is not known here.
            let question = Self.oneLine(prompt, limit: Self.reasonLimit)
            return Self.notify(state, facts, question.isEmpty ? "The agent waits for your answer" : "The agent waits for your answer: \(question)", about: facts.session.id)
        case .pushNotificationOpened(let payload):
            // A notification about a session (an approval waiting, a finished
            // task) opens that session's chat.
            guard facts.servers.selected != nil else { return .note("push opened with no paired server") }
            var emission = Emission.internal(.openChat)
            let sessionID = payload["session_id"]?.stringValue
            if let sessionID, sessionID != facts.session.id, facts.connection.canSend {
                emission.append(.tell(.sessionAsked(sessionID: sessionID)))
                return emission
            }
            if let sessionID, sessionID != facts.session.id {
                // Offline: the reconnect's `subscribe` names that session, which resumes it.
                emission.append(.tell(.sessionAskedOffline(sessionID: sessionID)))
            }
            if facts.connection.phase != .connected && facts.connection.phase != .connecting {
                emission.append(.tell(.reconnectAsked))
            }
            return emission
        }
    }

    // MARK: - Local notifications

    /// The longest session title a notification shows, in characters.
    static let titleLimit = 60
    /// The longest error, tool name or prompt a notification shows, in characters.
    static let reasonLimit = 100

    /// A local notification about `sessionID`, titled with the current
    /// session's title, only while the app is in the background: in front,
    /// the chat itself shows what happened.
    static func notify(_ state: LifecycleState, _ facts: Facts, _ body: String, about sessionID: String?) -> Emission {
        guard !state.isForeground else { return .none }
        let title = oneLine(facts.session.title ?? "", limit: titleLimit)
        return .effect(.device(.showLocalNotification(
            title: title.isEmpty ? "jcode" : title, body: body, sessionID: sessionID)))
    }

    /// What a tool named `action` does, in words a lock screen may show: a
    /// known tool's kind ("run a command"), else "use a tool". Never the
    /// server's text itself, which may be a whole command line.
    static func kind(ofTool action: String) -> String {
        switch action.trimmingSpaces().lowercased() {
        case "bash", "shell", "sh", "run", "exec", "execute", "command", "run_command", "terminal": return "run a command"
        case "write", "edit", "multiedit", "patch", "apply_patch", "write_file", "edit_file", "create_file", "delete", "delete_file",
             "move", "mv", "rm":
            return "change files"
        case "read", "read_file", "glob", "grep", "ls", "list", "search", "find": return "read files"
        case "webfetch", "web_fetch", "fetch", "websearch", "web_search", "browser", "browse": return "use the web"
        default: return "use a tool"
        }
    }

    /// `text` on one line (each run of whitespace and newlines becomes one
    /// space), cut to `limit` characters, the last one "…", when longer.
    static func oneLine(_ text: String, limit: Int) -> String {
        let line = text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        guard line.count > limit else { return line }
        return String(line.prefix(limit - 1)).trimmingSpaces() + "…"
    }
}
