import JcodeMobileJSON
import JcodeMobileWire

/// Where a jcode gateway lives: host, port and whether to use TLS.
public struct ServerAddress: Equatable, Sendable {
    public static let defaultPort = 7643

    public var host: String
    public var port: Int
    public var useTLS: Bool

    public init(host: String, port: Int, useTLS: Bool) {
        self.host = host
        self.port = port
        self.useTLS = useTLS
    }

    /// The address an `http_pair` or `http_health` effect went to, read
    /// back from the effect's fields as the ledger keeps them.
    init?(effectFields fields: JSONObject) {
        guard let host = fields["host"]?.stringValue, let port = fields["port"]?.int64Value.flatMap({ Int(exactly: $0) }),
              let useTLS = fields["use_tls"]?.boolValue
        else { return nil }
        self.init(host: host, port: port, useTLS: useTLS)
    }

    /// Saved servers are keyed by `host:port`.
    public var serverID: String { "\(host):\(port)" }
    public var display: String { port == ServerAddress.defaultPort ? host : "\(host):\(port)" }
    public var webSocketURL: String { "\(useTLS ? "wss" : "ws")://\(host):\(port)/ws" }

    /// What the person typed into the host field, normalised.
    public struct Host: Equatable, Sendable {
        public var host: String
        /// A port written into the host field (`example.com:8443`).
        public var port: Int?
        public var useTLS: Bool
    }

    /// Normalises a host as typed: trims it, strips the scheme (`https://`
    /// and `wss://` mean TLS), user info, path, query and fragment, takes a
    /// port written after the host, and lowercases the name.
    ///
    /// - Returns: the host, or the message a person needs to fix it.
    public static func parseHost(_ raw: String) -> Result<Host, FieldMessage> {
        var text = Substring(raw.trimmingSpaces())
        guard !text.isEmpty else { return .failure(.hostMissing) }
        var useTLS = false
        if let range = text.range(ofLiteral: "://") {
            let scheme = text[..<range.lowerBound].lowercased()
            switch scheme {
            case "https", "wss": useTLS = true
            case "http", "ws": useTLS = false
            default: return .failure(.hostInvalid(raw.trimmingSpaces()))
            }
            text = text[range.upperBound...]
        }
        if let cut = text.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) { text = text[..<cut] }
        if let at = text.lastIndex(of: "@") { text = text[text.index(after: at)...] }
        var port: Int?
        var host: Substring
        if text.hasPrefix("[") {
            // [IPv6]:port
            guard let close = text.firstIndex(of: "]") else { return .failure(.hostInvalid(String(text))) }
            host = text[...close]
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":"), let p = parsePort(String(rest.dropFirst())) else {
                    return .failure(.hostInvalid(String(text)))
                }
                port = p
            }
            let inner = host.dropFirst().dropLast()
            guard !inner.isEmpty, inner.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else {
                return .failure(.hostInvalid(String(text)))
            }
        } else {
            host = text
            let colons = text.filter { $0 == ":" }.count
            if colons == 1, let colon = text.firstIndex(of: ":") {
                host = text[..<colon]
                guard let p = parsePort(String(text[text.index(after: colon)...])) else {
                    return .failure(.hostInvalid(String(text)))
                }
                port = p
            } else if colons > 1 {
                // A bare IPv6 address.
                guard text.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else {
                    return .failure(.hostInvalid(String(text)))
                }
                return .success(Host(host: "[\(text.lowercased())]", port: nil, useTLS: useTLS))
            }
            guard !host.isEmpty else { return .failure(.hostMissing) }
            guard host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == "_") }),
                  host.first != ".", host.first != "-", host.last != "-", !host.contains("..")
            else {
                return .failure(.hostInvalid(String(host)))
            }
        }
        return .success(Host(host: host.lowercased(), port: port, useTLS: useTLS))
    }

    /// A port as typed: digits only, 1…65535.
    public static func parsePort(_ raw: String) -> Int? {
        let text = raw.trimmingSpaces()
        guard !text.isEmpty, text.count <= 5, text.allSatisfy({ $0.isASCII && $0.isNumber }),
              let port = Int(text), IntegerRange.port.contains(Int64(port))
        else { return nil }
        return port
    }

    /// Whether `host` is a host as pairing saves one: what `parseHost`
    /// makes of what was typed (no scheme, port, path or spaces; lowercase;
    /// an IPv6 address in brackets). A saved server read back from a
    /// snapshot must have one, so nothing else reaches `websocket_connect`.
    public static func isSavedHost(_ host: String) -> Bool {
        guard case .success(let parsed) = parseHost(host) else { return false }
        return parsed.host == host && parsed.port == nil && !parsed.useTLS
    }
}

extension Substring {
    /// The first occurrence of `needle` (plain code-unit comparison).
    func range(ofLiteral needle: String) -> Range<Index>? {
        var start = startIndex
        while start < endIndex {
            if self[start...].hasPrefix(needle) {
                return start..<(index(start, offsetBy: needle.count))
            }
            start = index(after: start)
        }
        return nil
    }
}

extension String {
    /// The string without leading and trailing whitespace and newlines.
    func trimmingSpaces() -> String {
        guard let first = firstIndex(where: { !$0.isWhitespace }),
              let last = lastIndex(where: { !$0.isWhitespace })
        else { return "" }
        return String(self[first...last])
    }
}
