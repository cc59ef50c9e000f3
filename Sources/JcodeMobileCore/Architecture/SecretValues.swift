@_spi(Leaves) import JcodeMobileJSON

/// The secret values the core holds, so text that repeats one is masked
/// wherever the core keeps or shows it: redaction by value, beside the
/// redaction by field (`Redaction`, `FieldSpec.secret`).
///
/// It holds
/// * the auth token of every server whose token was in memory while the app
///   ran (the last `tokenLimit`, a forgotten server's too),
/// * the pairing code while it is live: the six digits typed into the form,
///   or the code held for `http_pair` (in flight, or kept for a retry) —
///   forgotten once pairing used it up,
/// * the answers typed into `stdin_request` prompts (the last `answerLimit`):
///   an answer to a password prompt of `passwordMinimum` characters or more,
///   any other of `answerMinimum` or more (so "y" or "main" is not a secret).
///
/// An occurrence is replaced by `mask` ("[redacted]", the placeholder of the
/// redaction by field). The store masks what the server writes as it enters
/// (every string of a server event, the server's words in HTTP and socket
/// results), the notes and local notifications the core composes, and the
/// log's copy of each input. The effects that need a secret (`http_pair`,
/// `websocket_connect`, `secure_store_write`, the `stdin_response` line) are
/// never masked. Text that arrived before a value became a secret is not
/// rewritten.
///
/// Scanning costs a few instructions per byte when nothing matches: a
/// 4 096-bit filter of every secret's first two bytes is checked at each
/// position, and only a hit compares whole secrets.
public struct SecretValues: Sendable {
    /// What replaces a secret's value.
    public static let mask = "[redacted]"
    /// Tokens kept at most (the oldest goes first).
    static let tokenLimit = 64
    /// Answers kept at most (the oldest goes first).
    static let answerLimit = 16
    /// The shortest answer to a password prompt taken as a secret, in characters.
    static let passwordMinimum = 4
    /// The shortest answer to any other prompt taken as a secret, in characters.
    static let answerMinimum = 8

    private(set) var tokens: [String] = []
    private(set) var answers: [String] = []
    private(set) var pairingCode: String?
    /// Every secret's UTF-8 bytes, and its JSON-escaped form when that
    /// differs (what a raw frame or a log line holds): longest first.
    private var patterns: [[UInt8]] = []
    /// Bit `hash(a, b)` is set when a pattern starts with bytes a, b.
    private var filter = [UInt64](repeating: 0, count: 64)
    /// The first bytes of the patterns (a match may start at a text's last byte).
    private var firstBytes = [UInt64](repeating: 0, count: 4)
    /// Bumped whenever the set changes (a stream's scanned tail is then scanned again).
    private(set) var generation = 0
    /// The longest pattern, in bytes.
    private(set) var longest = 0

    public init() {}

    public var isEmpty: Bool { patterns.isEmpty }

    // MARK: - Learning

    /// Adds the tokens not held yet.
    mutating func learnTokens(_ values: [String]) {
        var changed = false
        for token in values where !token.isEmpty && !tokens.contains(token) {
            if tokens.count == Self.tokenLimit { tokens.removeFirst() }
            tokens.append(token)
            changed = true
        }
        if changed { rebuild() }
    }

    /// The live pairing code (nil: none).
    mutating func setPairingCode(_ code: String?) {
        let code = code.flatMap { $0.isEmpty ? nil : $0 }
        guard code != pairingCode else { return }
        pairingCode = code
        rebuild()
    }

    /// An answer typed into a prompt, when it is long enough to be a secret.
    mutating func learnAnswer(_ answer: String, isPassword: Bool) {
        let trimmed = answer.trimmingSpaces()
        guard trimmed.count >= (isPassword ? Self.passwordMinimum : Self.answerMinimum), !answers.contains(trimmed) else { return }
        if answers.count == Self.answerLimit { answers.removeFirst() }
        answers.append(trimmed)
        rebuild()
    }

    private mutating func rebuild() {
        var all: [[UInt8]] = []
        for value in tokens + answers + (pairingCode.map { [$0] } ?? []) {
            let raw = Array(value.utf8)
            guard raw.count >= 2 else { continue }
            if !all.contains(raw) { all.append(raw) }
            let quoted = JSONValue.string(value).jsonBytes
            let escaped = Array(quoted[1..<(quoted.count - 1)])
            if escaped != raw && !all.contains(escaped) { all.append(escaped) }
        }
        all.sort { $0.count > $1.count }
        patterns = all
        filter = [UInt64](repeating: 0, count: 64)
        firstBytes = [UInt64](repeating: 0, count: 4)
        for p in all {
            let h = Self.hash(p[0], p[1])
            filter[h >> 6] |= 1 << UInt64(h & 63)
            firstBytes[Int(p[0]) >> 6] |= 1 << UInt64(p[0] & 63)
        }
        longest = all.first?.count ?? 0
        generation &+= 1
    }

    @inline(__always) private static func hash(_ a: UInt8, _ b: UInt8) -> Int {
        (Int(a) &<< 4 ^ Int(b)) & 0xFFF
    }

    // MARK: - Finding

    /// Where secrets occur in `bytes`, starting at positions from `start`
    /// on, left to right without overlap; `partial` when a secret's first
    /// bytes end the buffer (it may go on in text that follows).
    func occurrences(in bytes: UnsafeBufferPointer<UInt8>, from start: Int = 0) -> (ranges: [Range<Int>], partial: Bool) {
        var ranges: [Range<Int>] = []
        var partial = false
        guard let base = bytes.baseAddress, !patterns.isEmpty else { return ([], false) }
        let n = bytes.count
        filter.withUnsafeBufferPointer { filter in
            var i = max(start, 0)
            while i &+ 1 < n {
                let h = Self.hash(base[i], base[i &+ 1])
                if filter[h &>> 6] & (1 &<< UInt64(h & 63)) != 0 {
                    var matched = 0
                    for p in patterns where p[0] == base[i] && p[1] == base[i &+ 1] {
                        if i &+ p.count <= n {
                            if p.withUnsafeBufferPointer({ memcmpEqual(base + i, $0.baseAddress!, p.count) }) {
                                matched = p.count
                                break
                            }
                        } else if !partial && p.withUnsafeBufferPointer({ memcmpEqual(base + i, $0.baseAddress!, n &- i) }) {
                            partial = true
                        }
                    }
                    if matched > 0 {
                        ranges.append(i..<(i &+ matched))
                        i &+= matched
                        continue
                    }
                }
                i &+= 1
            }
            if !partial && i == n &- 1 && i >= start {
                let last = base[i]
                partial = firstBytes[Int(last) >> 6] & (1 << UInt64(last & 63)) != 0
            }
        }
        return (ranges, partial)
    }

    /// Whether any secret occurs in `bytes`.
    func occurs(in bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        !occurrences(in: bytes).ranges.isEmpty
    }

    // MARK: - Masking

    /// `text` with every secret replaced by `mask`; nil when it holds none
    /// (nothing is copied then).
    public func masking(_ text: String) -> String? {
        guard !patterns.isEmpty, text.utf8.count >= 2 else { return nil }
        var text = text
        return text.withUTF8 { bytes in
            let ranges = occurrences(in: bytes).ranges
            return ranges.isEmpty ? nil : Self.replacing(ranges, in: bytes)
        }
    }

    /// `text` with every secret replaced by `mask`.
    public func mask(_ text: String) -> String { masking(text) ?? text }

    /// `text?` masked.
    func mask(_ text: String?) -> String? { text.map { masking($0) ?? $0 } }

    /// `bytes` with `ranges` (ascending, apart) replaced by `mask`.
    static func replacing(_ ranges: [Range<Int>], in bytes: UnsafeBufferPointer<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var from = 0
        for r in ranges {
            out.append(contentsOf: bytes[from..<r.lowerBound])
            out.append(contentsOf: mask.utf8)
            from = r.upperBound
        }
        out.append(contentsOf: bytes[from..<bytes.count])
        return String(decoding: out, as: UTF8.self)
    }

    /// `value` with every string (keys included) masked; nil when none held a secret.
    func masking(_ value: JSONValue) -> JSONValue? {
        switch value {
        case .null, .bool, .int, .double: return nil
        case .string(let s): return masking(s).map(JSONValue.string)
        case .array(let items):
            var copy = items
            var changed = false
            for i in items.indices {
                if let m = masking(items[i]) { copy[i] = m; changed = true }
            }
            return changed ? .array(copy) : nil
        case .object(let object):
            var copy = object
            var changed = false
            for i in object.entries.indices {
                if let k = masking(object.entries[i].key) { copy.entries[i].key = k; changed = true }
                if let v = masking(object.entries[i].value) { copy.entries[i].value = v; changed = true }
            }
            return changed ? .object(copy) : nil
        }
    }
}
