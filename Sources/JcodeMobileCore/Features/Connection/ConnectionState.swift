/// The link to the selected server: its phase, the socket, the request-id
/// counter and the reconnect schedule.
public struct ConnectionState: Equatable, Sendable {
    public enum Phase: String, Sendable, CaseIterable {
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
    /// Reconnect attempts since the last connection that proved healthy (its
    /// history loaded): a server that accepts and then closes still backs off.
    public var attempt = 0
    /// Why the connection is not up (its words are the semantic layer's).
    public var issue: ConnectionIssue?
    /// The `websocket_connect` in flight or open: every socket event must carry its id.
    public var socketEffectID: EffectID?
    public var isSocketOpen = false
    /// The id of the next gateway request on this socket (from 1 per connection).
    public var nextRequestID = 1
    /// The `subscribe` of this socket: its `done` is not the end of a turn,
    /// and an `error` answering it is why the connection failed.
    public var subscribeRequestID: Int?
    /// The requests sent on this socket that jcode has not finished
    /// answering (`GatewayAnswer`): what an answer's id refers to. Each is
    /// forgotten once answered; a new socket starts with none.
    public var sentRequests = SentRequests()
    /// The request whose answer brings the history this socket waits for
    /// (`subscribe` naming a session, `resume_session`, `get_history`),
    /// while that history has not come. A `pong` to a later `ping` means it
    /// will not (`ConnectionInteractor.historyCheck`).
    public var awaitedHistory: Int?
    /// Already asked with `get_history`: a `pong` before its history means
    /// the history did not reach the core (asking again would not help).
    public var historyAskedAgain = false
    /// The server refused this socket's `subscribe`: why, kept for when the
    /// socket closes.
    public var subscribeRefusal: String?
    /// The pending reconnect timer and its delay (none while in the background).
    public var reconnectTimerID: String?
    public var reconnectDelayMS: Int?
    public var nextTimerSerial = 1
    /// The server announced a restart: reconnect after a short fixed delay.
    public var reconnectSoon = false
    /// The server asked this client to close (`session_close_requested`):
    /// when the socket goes, do not reconnect.
    public var closeRequest: CloseRequest?
    /// The keep-alive timer while connected in the foreground.
    public var keepAliveTimerID: String?
    /// A `ping` went out and its `pong` has not come back: if the next
    /// keep-alive tick finds it still missing, the link is dead.
    public var isPingOutstanding = false
    /// The link should come up as soon as the app is in front again: it was
    /// restored from a snapshot, or it dropped while in the background.
    public var resumesInForeground = false

    public init() {}

    /// How often a `ping` goes out while connected in the foreground; a
    /// `pong` missing by the next tick counts as a dropped connection.
    public static let keepAliveIntervalMS = 20_000

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
    /// The server refused the `subscribe` (its message).
    case subscribeRefused(message: String)
    /// The server refused the `subscribe` because of the working directory:
    /// reconnecting will not help until the person changes it.
    case workingDirRefused(message: String)
    /// The selected server has no working directory yet.
    case noWorkingDir(serverName: String)
    /// No token for the server in memory or in the secure store.
    case noCredentials(serverName: String)
    /// The server did not answer the keep-alive `ping`.
    case keepAliveTimeout
}

/// The server's `session_close_requested`, as it said it.
public struct CloseRequest: Equatable, Sendable {
    /// The server's reason; may be empty.
    public var reason: String
}
