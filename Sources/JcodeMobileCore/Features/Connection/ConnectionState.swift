/// The link to the selected server: its phase, the socket, the request-id
/// counter and the reconnect schedule.
public struct ConnectionState: Equatable, Sendable {
    public enum Phase: String, Sendable {
        /// Not connected and not trying (never paired, or the person disconnected).
        case disconnected
        /// `http_pair` is in flight.
        case pairing
        /// The first `websocket_connect` is in flight.
        case connecting
        /// The socket is open.
        case connected
        /// The connection dropped; a reconnect is scheduled or in flight.
        case reconnecting
        /// The network is unreachable; reconnecting resumes when it returns.
        case offline
        /// Reconnecting stopped (token rejected, session closed); the reason says why.
        case failed
    }

    public var phase: Phase = .disconnected
    /// Reconnect attempts since the last successful connection.
    public var attempt = 0
    /// Why the connection is not up, in words a person understands.
    public var reason: String?
    /// The `websocket_connect` in flight or open: every socket event must carry its id.
    public var socketEffectID: EffectID?
    public var isSocketOpen = false
    /// The id of the next gateway request on this socket (from 1 per connection).
    public var nextRequestID = 1
    /// `subscribe` and `get_history` of this socket: a `done` for the
    /// subscribe is not the end of a turn.
    public var subscribeRequestID: Int?
    public var historyRequestID: Int?
    /// The pending reconnect timer and its delay.
    public var reconnectTimerID: String?
    public var reconnectDelayMS: Int?
    public var nextTimerSerial = 1
    /// The server announced a restart: reconnect after a short fixed delay.
    public var reconnectSoon = false
    /// The server closed the session (`session_close_requested`): when the
    /// socket goes, do not reconnect; this is the reason shown.
    public var closedByServer: String?

    public init() {}

    /// Whether requests can be sent now.
    public var canSend: Bool { isSocketOpen && phase == .connected }

    /// Exponential backoff: 1 s, 2 s, 4 s … capped at 30 s.
    public static func backoffMS(attempt: Int) -> Int {
        let exponent = min(max(attempt - 1, 0), 5)
        return min(1000 << exponent, 30_000)
    }

    public static let reloadDelayMS = 500

    var json: JSONValue {
        var o = JSONObject(capacity: 5)
        o.append("phase", .string(phase.rawValue))
        o.append("attempt", .int(Int64(attempt)))
        o.append("reason", .from(reason))
        o.append("socket_open", .bool(isSocketOpen))
        o.append("reconnect_delay_ms", .from(reconnectDelayMS))
        return .object(o)
    }
}

/// Auth tokens for the servers this device has paired with, held only in
/// memory while the app runs. Never encoded into state, tree, logs or
/// snapshots; a token leaves the core only in `secure_store_write` and
/// `websocket_connect`.
public struct Credentials: Equatable, Sendable, CustomStringConvertible, CustomReflectable {
    private var tokens: [String: String] = [:]

    public init() {}

    public subscript(serverID: String) -> String? {
        get { tokens[serverID] }
        set { tokens[serverID] = newValue }
    }

    public var description: String { "Credentials(\(tokens.count) token(s), redacted)" }
    public var customMirror: Mirror { Mirror(self, children: []) }
}
