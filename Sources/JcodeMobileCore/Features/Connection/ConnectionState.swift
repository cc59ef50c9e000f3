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
        /// Reconnecting stopped (token rejected, session closed); the issue says why.
        case failed
    }

    public var phase: Phase = .disconnected
    /// Reconnect attempts since the last successful connection.
    public var attempt = 0
    /// Why the connection is not up (its words are the semantic layer's).
    public var issue: ConnectionIssue?
    /// The `websocket_connect` in flight or open: every socket event must carry its id.
    public var socketEffectID: EffectID?
    public var isSocketOpen = false
    /// The id of the next gateway request on this socket (from 1 per connection).
    public var nextRequestID = 1
    /// The `subscribe` of this socket: its `done` is not the end of a turn.
    public var subscribeRequestID: Int?
    /// The pending reconnect timer and its delay.
    public var reconnectTimerID: String?
    public var reconnectDelayMS: Int?
    public var nextTimerSerial = 1
    /// The server announced a restart: reconnect after a short fixed delay.
    public var reconnectSoon = false
    /// The server asked this client to close (`session_close_requested`):
    /// when the socket goes, do not reconnect.
    public var closeRequest: CloseRequest?

    public init() {}

    /// Whether requests can be sent now.
    public var canSend: Bool { isSocketOpen && phase == .connected }

    /// Exponential backoff: 1 s, 2 s, 4 s … capped at 30 s.
    public static func backoffMS(attempt: Int) -> Int {
        let exponent = min(max(attempt - 1, 0), 5)
        return min(1000 << exponent, 30_000)
    }

    public static let reloadDelayMS = 500
}

/// Why the link to the server is down, as data; the semantic layer words it.
public enum ConnectionIssue: Equatable, Sendable {
    /// The socket closed (by either side), with the close code and reason when known.
    case closed(code: Int?, reason: String?)
    /// The socket could not open or broke.
    case failed(error: String)
    /// The server refused the token (HTTP 401 at the upgrade).
    case tokenRejected
    /// The server asked this client to close the session.
    case closedByServer(CloseRequest)
    /// No token for the server in memory or in the secure store.
    case noCredentials(serverName: String)
}

/// The server's `session_close_requested`, as it said it.
public struct CloseRequest: Equatable, Sendable {
    /// The server's reason; may be empty.
    public var reason: String
}
