/// Limits every parse enforces. Both answer with a JSON error instead of
/// exhausting memory or the stack: the parser is iterative, so nesting depth
/// costs heap, never recursion.
public struct JSONLimits: Sendable, Equatable {
    /// Largest accepted input in bytes (`too_large` beyond it).
    public var maxBytes: Int
    /// Deepest accepted nesting of arrays and objects (`too_deep` beyond it).
    public var maxDepth: Int

    public init(maxBytes: Int = JSONLimits.defaultMaxBytes, maxDepth: Int = JSONLimits.defaultMaxDepth) {
        self.maxBytes = maxBytes
        self.maxDepth = maxDepth
    }

    /// 16 MiB: room for a photo attachment in base64, far beyond any event.
    public static let defaultMaxBytes = 16 * 1024 * 1024
    /// 128 levels: the deepest jcode message nests about six.
    public static let defaultMaxDepth = 128
    public static let `default` = JSONLimits()
}

/// The core's JSON parser: RFC 8259, strict.
///
/// - Validates UTF-8 first (`invalid_utf8` with the offset of the first bad byte).
/// - Validates every escape, including surrogate pairs; a lone surrogate is
///   `invalid_json`.
/// - Integers that fit in Int64 are exact; other numbers are doubles.
/// - Reports `invalid_json` with the byte offset where parsing stopped.
/// - Never recurses and never allocates per character.
///
/// Parsing produces a `JSONTape`: the document validated into a flat list of
/// tokens over the input bytes. Decoders read the fields they need straight
/// from the tape (`withTape`), so only values actually used become Swift
/// strings; `parse` builds the whole `JSONValue` when a value is wanted.
///
///     let value = try JSONParser.parse(#"{"type":"ping"}"#)
public enum JSONParser {
    /// The token storage, kept between parses by a caller that parses often
    /// (each app keeps one), so a parse allocates only what it returns.
    ///
    /// Tokens live in `malloc` memory whose growth can fail: an input whose
    /// tokens do not fit in memory is `out_of_memory`, never a crash, and
    /// the workspace stays usable.
    public struct Workspace: ~Copyable {
        var tokens: RawArray<JSONTape.Token>
        var open: [Int] = []

        public init() { tokens = RawArray() }

        /// A workspace that holds at most `tokenLimit` tokens, as if memory
        /// ran out beyond them (tests).
        init(tokenLimit: Int) { tokens = RawArray(limit: tokenLimit) }

        deinit { tokens.deallocate() }

        /// Drops storage grown by an unusually large document.
        @usableFromInline mutating func trim() {
            if tokens.capacity > 1 << 16 { tokens.release() } else { tokens.removeAll() }
            // (Empty after every complete parse: only an error leaves containers open.)
            if open.capacity > 256 { open = [] } else if !open.isEmpty { open.removeAll(keepingCapacity: true) }
        }
    }

    /// Validates `buffer` and hands its tape to `body`. The tape (and the
    /// bytes it points into) is valid only inside `body`.
    ///
    /// `knownValidUTF8`: the bytes are the content of a string of a document
    /// already validated, unescaped (escapes only ever decode to valid
    /// UTF-8), so they are not checked again.
    @inlinable
    public static func withTape<R>(
        _ buffer: UnsafeBufferPointer<UInt8>, limits: JSONLimits = .default, workspace: inout Workspace,
        knownValidUTF8: Bool = false, _ body: (JSONTape) throws(CoreError) -> R
    ) throws(CoreError) -> R {
        // Generic over the body's result, so inlined where it is called
        // (specialised there, the body's closure with it); the work is `tokenize`.
        let tape = try tokenize(buffer, limits: limits, workspace: &workspace, knownValidUTF8: knownValidUTF8)
        defer { workspace.trim() }
        return try body(tape)
    }

    /// Validates `buffer` and writes its tokens into `workspace`: the tape
    /// `withTape` hands on, valid until the workspace is trimmed or used again.
    @usableFromInline
    static func tokenize(
        _ buffer: UnsafeBufferPointer<UInt8>, limits: JSONLimits, workspace: inout Workspace, knownValidUTF8: Bool
    ) throws(CoreError) -> JSONTape {
        if buffer.count > limits.maxBytes {
            throw CoreError(.tooLarge, "input is \(buffer.count) bytes; the limit is \(limits.maxBytes)")
        }
        if !knownValidUTF8, let bad = UTF8Validation.firstInvalidOffset(buffer) {
            throw CoreError(.invalidUTF8, "invalid UTF-8 at byte \(bad)", offset: bad)
        }
        guard let base = buffer.baseAddress, buffer.count > 0 else {
            throw CoreError(.invalidJSON, "empty input: expected a JSON value", offset: 0)
        }
        var tokenizer = Tokenizer(base: base, end: buffer.count, maxDepth: limits.maxDepth)
        // The tokenizer owns the storage while it runs, so appends never copy.
        swap(&tokenizer.tokens, &workspace.tokens)
        swap(&tokenizer.open, &workspace.open)
        var failure: CoreError?
        do { try tokenizer.run() } catch { failure = error }
        swap(&tokenizer.tokens, &workspace.tokens)
        swap(&tokenizer.open, &workspace.open)
        if let failure {
            // What `withTape` trims after its body, trimmed now: there is none.
            workspace.trim()
            throw failure
        }
        return JSONTape(tokens: workspace.tokens.elements, base: base)
    }

    /// Parses one JSON document from `buffer`, reusing `workspace`.
    public static func parse(
        _ buffer: UnsafeBufferPointer<UInt8>, limits: JSONLimits = .default, workspace: inout Workspace
    ) throws(CoreError) -> JSONValue {
        try withTape(buffer, limits: limits, workspace: &workspace) { (tape) throws(CoreError) -> JSONValue in
            tape.value(at: 0)
        }
    }

    /// Parses one JSON document from `buffer`.
    public static func parse(_ buffer: UnsafeBufferPointer<UInt8>, limits: JSONLimits = .default) throws(CoreError) -> JSONValue {
        var workspace = Workspace()
        return try parse(buffer, limits: limits, workspace: &workspace)
    }

    /// Parses one JSON document from a Swift string.
    public static func parse(_ text: String, limits: JSONLimits = .default) throws(CoreError) -> JSONValue {
        var text = text
        let result = text.withUTF8 { buffer -> Result<JSONValue, CoreError> in
            do throws(CoreError) {
                return .success(try parse(buffer, limits: limits))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}

/// Validates a document into tokens.
struct Tokenizer {
    let base: UnsafePointer<UInt8>
    let end: Int
    let maxDepth: Int
    var pos = 0
    var tokens = RawArray<JSONTape.Token>()
    /// Indices of the containers still open.
    var open: [Int] = []

    init(base: UnsafePointer<UInt8>, end: Int, maxDepth: Int) {
        self.base = base
        self.end = end
        self.maxDepth = maxDepth
    }

    mutating func run() throws(CoreError) {
        skipWhitespace()
        var completed = try valueOrOpen()
        while true {
            if completed {
                guard let container = open.last else {
                    skipWhitespace()
                    if pos < end { throw error("unexpected trailing characters after the JSON value") }
                    return
                }
                let isObject = tokens[container].kind == .object
                skipWhitespace()
                guard pos < end else { throw error("unexpected end of input inside \(isObject ? "an object" : "an array")") }
                let c = base[pos]
                if c == UInt8(ascii: ",") {
                    pos &+= 1
                    skipWhitespace()
                    if isObject { try keyAndColon() }
                    completed = try valueOrOpen()
                } else if c == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                    pos &+= 1
                    close(container)
                    completed = true
                } else {
                    throw error(isObject ? "expected ',' or '}' in an object" : "expected ',' or ']' in an array")
                }
            } else {
                // A container was opened and its first value is due.
                completed = try valueOrOpen()
            }
        }
    }

    /// Reads a scalar or an empty container (true), or opens a container
    /// (false, with the key of a first object member already read).
    private mutating func valueOrOpen() throws(CoreError) -> Bool {
        guard pos < end else { throw error("unexpected end of input: expected a value") }
        let start = pos
        switch base[pos] {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            let isObject = base[pos] == UInt8(ascii: "{")
            if open.count >= maxDepth {
                throw CoreError(.tooDeep, "nesting deeper than \(maxDepth) levels at byte \(pos)", offset: pos)
            }
            pos &+= 1
            skipWhitespace()
            let index = tokens.count
            try push(JSONTape.Token(kind: isObject ? .object : .array, start: start, end: pos, next: index &+ 1))
            if pos < end && base[pos] == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                pos &+= 1
                return true
            }
            open.append(index)
            if isObject { try keyAndColon() }
            return false
        case UInt8(ascii: "\""):
            try string()
            return true
        case UInt8(ascii: "t"):
            try literal("true", .trueValue)
            return true
        case UInt8(ascii: "f"):
            try literal("false", .falseValue)
            return true
        case UInt8(ascii: "n"):
            try literal("null", .null)
            return true
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            try number()
            return true
        default:
            throw error("unexpected character \(describe(base[pos])): expected a value")
        }
    }

    private mutating func close(_ container: Int) {
        open.removeLast()
        tokens[container].nextIndex = tokens.count
    }

    private mutating func keyAndColon() throws(CoreError) {
        guard pos < end, base[pos] == UInt8(ascii: "\"") else {
            throw error(pos < end ? "expected a string key in an object" : "unexpected end of input: expected a key")
        }
        try string()
        skipWhitespace()
        guard pos < end, base[pos] == UInt8(ascii: ":") else { throw error("expected ':' after an object key") }
        pos &+= 1
        skipWhitespace()
    }

    @inline(__always)
    private mutating func skipWhitespace() {
        while pos < end {
            let c = base[pos]
            guard c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 else { return }
            pos &+= 1
        }
    }

    private mutating func literal(_ literal: StaticString, _ kind: JSONTape.Kind) throws(CoreError) {
        let count = literal.utf8CodeUnitCount
        guard end &- pos >= count else { throw error("unexpected end of input in a literal") }
        let bytes = literal.utf8Start
        for i in 0..<count where base[pos &+ i] != bytes[i] {
            pos &+= i
            throw error("invalid literal: expected '\(literal)'")
        }
        try push(JSONTape.Token(kind: kind, start: pos, end: pos &+ count, next: tokens.count &+ 1))
        pos &+= count
    }

    /// A string token spans its content (between the quotes); escapes are
    /// validated here and decoded when the string is read.
    private mutating func string() throws(CoreError) {
        pos &+= 1  // opening quote
        let start = pos
        var escaped = false
        let raw = UnsafeRawPointer(base)
        while true {
            // Eight bytes at a time: jump to the first '"', '\\' or control character.
            pos = StringScan.skipPlainWords(raw, from: pos, end: end)
            guard pos < end else { throw error("unexpected end of input inside a string") }
            let c = base[pos]
            if c == UInt8(ascii: "\"") {
                var token = JSONTape.Token(kind: .string, start: start, end: pos, next: tokens.count &+ 1)
                token.flag = escaped
                try push(token)
                pos &+= 1
                return
            } else if c == UInt8(ascii: "\\") {
                escaped = true
                // A one-character escape (a raw frame's quotes) inline; \u and errors in `escape()`.
                if pos &+ 1 < end {
                    switch base[pos &+ 1] {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                        UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        pos &+= 2
                        continue
                    default:
                        break
                    }
                }
                try escape()
            } else if c < 0x20 {
                throw error("unescaped control character \(describe(c)) inside a string")
            } else {
                pos &+= 1
            }
        }
    }

    private mutating func escape() throws(CoreError) {
        pos &+= 1  // backslash
        guard pos < end else { throw error("unexpected end of input in an escape sequence") }
        let c = base[pos]
        pos &+= 1
        switch c {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
            UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            return
        case UInt8(ascii: "u"):
            let scalar = try hex4()
            if scalar >= 0xD800 && scalar <= 0xDBFF {
                // A high surrogate must be followed by an escaped low surrogate.
                guard end &- pos >= 6, base[pos] == UInt8(ascii: "\\"), base[pos &+ 1] == UInt8(ascii: "u") else {
                    throw error("unpaired surrogate \\u\(hex(scalar)) in a string")
                }
                pos &+= 2
                let low = try hex4()
                guard low >= 0xDC00 && low <= 0xDFFF else {
                    pos &-= 6
                    throw error("unpaired surrogate \\u\(hex(scalar)) in a string")
                }
            } else if scalar >= 0xDC00 && scalar <= 0xDFFF {
                pos &-= 6
                throw error("unpaired surrogate \\u\(hex(scalar)) in a string")
            }
        default:
            pos &-= 1
            throw error("invalid escape sequence \\\(describe(c))")
        }
    }

    private mutating func hex4() throws(CoreError) -> UInt32 {
        guard end &- pos >= 4 else { throw error("unexpected end of input in a \\u escape") }
        guard let v = JSONTape.hex4(base + pos) else {
            var i = pos
            while JSONTape.hexValue(base[i]) != nil { i &+= 1 }
            pos = i
            throw error("invalid hex digit \(describe(base[i])) in a \\u escape")
        }
        pos &+= 4
        return v
    }

    /// A number token; `flag` marks an integer short enough for the exact
    /// fast path (no fraction, no exponent, at most 19 digits).
    private mutating func number() throws(CoreError) {
        let start = pos
        if base[pos] == UInt8(ascii: "-") { pos &+= 1 }
        guard pos < end, isDigit(base[pos]) else { throw error("expected a digit in a number") }
        let intStart = pos
        if base[pos] == UInt8(ascii: "0") {
            pos &+= 1
            if pos < end && isDigit(base[pos]) { throw error("leading zeros are not allowed in a number") }
        } else {
            while pos < end && isDigit(base[pos]) { pos &+= 1 }
        }
        let intDigits = pos &- intStart
        var isInteger = true
        if pos < end && base[pos] == UInt8(ascii: ".") {
            isInteger = false
            pos &+= 1
            guard pos < end, isDigit(base[pos]) else { throw error("expected a digit after the decimal point") }
            while pos < end && isDigit(base[pos]) { pos &+= 1 }
        }
        if pos < end && (base[pos] == UInt8(ascii: "e") || base[pos] == UInt8(ascii: "E")) {
            isInteger = false
            pos &+= 1
            if pos < end && (base[pos] == UInt8(ascii: "+") || base[pos] == UInt8(ascii: "-")) { pos &+= 1 }
            guard pos < end, isDigit(base[pos]) else { throw error("expected a digit in an exponent") }
            while pos < end && isDigit(base[pos]) { pos &+= 1 }
        }
        var token = JSONTape.Token(kind: .number, start: start, end: pos, next: tokens.count &+ 1)
        token.flag = isInteger && intDigits <= 19
        try push(token)
    }

    @inline(__always)
    private mutating func push(_ token: JSONTape.Token) throws(CoreError) {
        guard tokens.append(token) else {
            throw CoreError(.outOfMemory, "out of memory: the tokens of this \(end)-byte input do not fit (\(tokens.count) did)")
        }
    }

    @inline(__always) private func isDigit(_ c: UInt8) -> Bool { c &- 0x30 < 10 }

    private func error(_ message: String) -> CoreError {
        CoreError(.invalidJSON, "\(message) at byte \(pos)", offset: pos)
    }

    private func describe(_ c: UInt8) -> String {
        if c >= 0x21 && c < 0x7F { return "'\(Character(Unicode.Scalar(c)))'" }
        return "0x\(hex(UInt32(c), width: 2))"
    }

    private func hex(_ v: UInt32, width: Int = 4) -> String {
        let digits = String(v, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
