import JcodeMobileJSON

/// The words for what the state holds as data: connection issues, the error
/// banner, the status line. Formatting lives here, never in features or hosts.
public enum SemanticText {
    /// A session as the person sees it named: the title the server gave it
    /// (`session_renamed`, a history or session list that carries one), or
    /// else its name from the id as jcode shows it (`session_fox_1700…` is
    /// "Fox": `crates/jcode-core/src/id.rs`, `extract_session_name`, and
    /// `process_title.rs`, `terminal_session_label`), or else the id itself;
    /// "New session" only before the server named one.
    public static func sessionTitle(_ title: String?, id: String?) -> String {
        if let title, !title.isEmpty { return title }
        guard let id, !id.isEmpty else { return "New session" }
        guard id.hasPrefix("session_") else { return id }
        let rest = id.dropFirst("session_".count)
        guard let end = rest.firstIndex(of: "_"), end > rest.startIndex else { return id }
        let name = rest[..<end]
        return name.prefix(1).uppercased() + name.dropFirst()
    }

    /// Why the connection is not up, in words a person understands.
    public static func issue(_ issue: ConnectionIssue) -> String {
        switch issue {
        case .closed(let code, let reason):
            if let reason, !reason.isEmpty { return "Connection closed: \(reason)" }
            if let code { return "Connection closed (code \(code))" }
            return "Connection closed"
        case .failed(let error):
            return error.isEmpty ? "Connection failed" : "Connection failed: \(error)"
        case .tokenRejected:
            return "This device is no longer paired with the server. Re-pair to reconnect."
        case .closedByServer(let request):
            return request.reason.isEmpty ? "Server closed this session" : request.reason
        case .noCredentials(let serverName):
            return "No saved credentials for \(serverName). Pair again to reconnect."
        case .subscribeRefused(let message):
            return "The server refused the connection: \(message)"
        case .workingDirRefused(let message):
            return "The server refused the working directory (\(message)). Set it in Settings, then reconnect."
        case .noWorkingDir(let serverName):
            return "Set the working directory for \(serverName) in Settings to connect."
        case .keepAliveTimeout:
            return "The server stopped answering"
        }
    }

    /// The error banner's message.
    public static func message(of banner: ErrorBanner) -> String {
        switch banner.problem {
        case .text(let text): return text
        case .connection(let issue): return Self.issue(issue)
        }
    }

    /// The banner as shown: "overloaded (retry in 15 s)".
    public static func text(of banner: ErrorBanner) -> String {
        let message = message(of: banner)
        guard let secs = banner.retryAfterSecs else { return message }
        return "\(message) (retry in \(secs) s)"
    }

    /// The error banner as the state JSON writes it.
    static func json(of banner: ErrorBanner) -> JSONValue {
        ["message": .string(message(of: banner)), "retry_after_secs": .from(banner.retryAfterSecs), "text": .string(text(of: banner))]
    }

    /// `text` cut to its first `lines` lines as the layout wraps them at
    /// `perLine` characters, its last line ending in "…"; nil when it fits.
    static func folded(_ text: String, lines: Int, perLine: Int) -> String? {
        var kept = 0
        var last: Range<String.Index>?
        Layout.forEachLine(text, perLine: perLine) { range in
            kept += 1
            if kept == lines { last = range }
        }
        guard kept > lines, let last else { return nil }
        var end = last.upperBound
        // Room for the "…" on the last line: its last word goes (or, in one long word, its last character).
        if text.unicodeScalars[last].count >= perLine {
            let line = text[last]
            if let space = line.lastIndex(of: " ") {
                end = space
            } else if !line.isEmpty {
                end = text.unicodeScalars.index(before: last.upperBound)
            }
        }
        var head = text[..<end]
        while head.last == " " || head.last == "," || head.last == "\n" { head.removeLast() }
        return head + "…"
    }

    /// An error as a person reads it, and the text it came from when the
    /// words are not that text. The server refusing a request it cannot
    /// read (jcode answers `Invalid request: unknown variant
    /// `permission_response`, expected one of …` and the ~80 requests it
    /// knows: `client_lifecycle.rs`) says which feature this server lacks.
    public static func plain(of banner: ErrorBanner) -> (words: String, details: String?) {
        let raw = text(of: banner)
        guard case .text(let message) = banner.problem, message.hasPrefix(invalidRequest) else { return (raw, nil) }
        let retry = banner.retryAfterSecs.map { " (retry in \($0) s)" } ?? ""
        let rest = message.dropFirst(invalidRequest.count)
        if rest.hasPrefix(unknownVariant) {
            let name = rest.dropFirst(unknownVariant.count).prefix { $0 != "`" }
            if let kind = GatewayRequest.Kind(rawValue: String(name)) {
                return ("This server does not support \(feature(kind)). Updating jcode on the server may help.\(retry)", raw)
            }
        }
        return ("The server could not read a request from this app. Updating jcode on the server may help.\(retry)", raw)
    }

    private static let invalidRequest = "Invalid request: "
    private static let unknownVariant = "unknown variant `"

    /// What a request does, as a person names the feature.
    static func feature(_ kind: GatewayRequest.Kind) -> String {
        switch kind {
        case .subscribe: return "connecting this app"
        case .getHistory: return "loading the conversation"
        case .message: return "sending messages"
        case .cancel: return "stopping a turn"
        case .softInterrupt: return "sending messages while jcode works"
        case .cancelSoftInterrupts: return "cancelling queued messages"
        case .resumeSession: return "switching sessions"
        case .setModel: return "switching models"
        case .setReasoningEffort: return "changing the reasoning effort"
        case .compact: return "compacting the conversation"
        case .renameSession: return "renaming sessions"
        case .clear: return "clearing the conversation"
        case .permissionResponse: return "approvals"
        case .stdinResponse: return "answering a tool's questions"
        case .ping: return "checking the connection"
        case .getCompactedHistory: return "loading earlier messages"
        }
    }

    /// The status line, derived from the connection: what a person should
    /// know about the link right now, or nil when all is well.
    public static func statusBanner(_ state: AppState) -> String? {
        withUnsafePointer(to: state) { statusBanner($0) }
    }

    /// `statusBanner(_:)`, read in place (the state JSON's section reads it
    /// so: the state is not copied).
    static func statusBanner(_ state: UnsafePointer<AppState>) -> String? {
        let server = state.pointee.servers.selected
        let name = server?.name ?? "the server"
        let connection = state.pointee.connection
        switch connection.phase {
        case .disconnected: return state.pointee.servers.list.isEmpty ? nil : (server == nil ? nil : "Disconnected from \(name)")
        case .pairing: return "Pairing with \(state.pointee.pairing.address?.display ?? name)…"
        case .connecting: return "Connecting to \(name)…"
        case .connected: return state.pointee.chat.turn.historyLoaded ? nil : "Loading conversation…"
        case .reconnecting:
            if let delay = connection.reconnectDelayMS {
                return "Connection lost, retrying in \(seconds(delay)) (attempt \(connection.attempt))"
            }
            return "Reconnecting to \(name) (attempt \(connection.attempt))…"
        case .offline: return "Offline: waiting for the network"
        case .failed: return connection.issue.map(issue) ?? "Connection failed"
        }
    }

    /// Whether what `statusBanner` reads differs: the connection, the saved
    /// servers and the selection, the pairing form, whether the history
    /// loaded (a token count or a streamed delta leaves them as they were).
    static func statusBannerInputsDiffer(_ a: UnsafePointer<AppState>, _ b: UnsafePointer<AppState>) -> Bool {
        a.pointee.$connection != b.pointee.$connection || a.pointee.servers.list != b.pointee.servers.list
            || a.pointee.servers.selectedID != b.pointee.servers.selectedID || a.pointee.$pairing != b.pointee.$pairing
            || a.pointee.chat.turn.historyLoaded != b.pointee.chat.turn.historyLoaded
    }

    static func seconds(_ ms: Int) -> String {
        ms % 1000 == 0 ? "\(ms / 1000) s" : "\(ms / 1000).\(ms % 1000 / 100) s"
    }
}
