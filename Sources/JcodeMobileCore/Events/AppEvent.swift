import JcodeMobileJSON

/// Something that happened in the app that a UI reacts to (a toast, a
/// sound, a scroll to the bottom), announced by the feature that owns it
/// and delivered to event-stream subscribers (`jcode_mobile_subscribe`).
///
/// An app event never carries a secret: the state's words, ids and counts.
public enum AppEvent: Equatable, Sendable {
    /// A pairing succeeded and the server was saved and selected.
    case serverPaired(serverID: String, serverName: String)
    /// A pairing attempt ended without a server; `message` is what the person is shown.
    case pairingFailed(message: String)
    /// A `history` replaced the transcript: `entries` rows arrived, the
    /// transcript now shows `shown` entries (tool rows join their calls).
    case historySynced(sessionID: String, entries: Int, shown: Int)
    /// The connection moved from one phase to another during one call.
    case connectionPhaseChanged(from: ConnectionState.Phase, to: ConnectionState.Phase)
    /// The agent's turn ended.
    case turnFinished(outcome: TurnOutcome)

    public enum TurnOutcome: String, Sendable, CaseIterable {
        /// The server said `done`.
        case done
        /// The turn was interrupted.
        case interrupted
        /// An error ended it (its banner is in the state).
        case error
    }

    /// The wire `type`.
    public var type: String {
        switch self {
        case .serverPaired: return "server_paired"
        case .pairingFailed: return "pairing_failed"
        case .historySynced: return "history_synced"
        case .connectionPhaseChanged: return "connection_phase_changed"
        case .turnFinished: return "turn_finished"
        }
    }

    /// The event's own fields, in the order its spec declares them.
    var fields: JSONObject {
        var o = JSONObject(capacity: 3)
        switch self {
        case .serverPaired(let id, let name):
            o.append("server_id", .string(id))
            o.append("server_name", .string(name))
        case .pairingFailed(let message):
            o.append("message", .string(message))
        case .historySynced(let sessionID, let entries, let shown):
            o.append("session_id", .string(sessionID))
            o.append("entries", .int(Int64(entries)))
            o.append("shown", .int(Int64(shown)))
        case .connectionPhaseChanged(let from, let to):
            o.append("from", .string(from.rawValue))
            o.append("to", .string(to.rawValue))
        case .turnFinished(let outcome):
            o.append("outcome", .string(outcome.rawValue))
        }
        return o
    }
}
