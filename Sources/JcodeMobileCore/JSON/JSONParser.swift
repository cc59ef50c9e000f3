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
/// - Decodes every escape, including surrogate pairs; a lone surrogate is
///   `invalid_json`.
/// - Integers that fit in Int64 are exact; other numbers are doubles.
/// - Reports `invalid_json` with the byte offset where parsing stopped.
/// - Never recurses and never allocates per character: string bodies are
///   scanned eight bytes at a time and copied once.
///
///     let value = try JSONParser.parse(#"{"type":"ping"}"#)
public struct JSONParser {
    private let base: UnsafePointer<UInt8>
    private let end: Int
    private let limits: JSONLimits
    private var pos = 0
    private var w: Workspace

    /// The parser's stacks, kept between parses by a caller that parses
    /// often (each app keeps one), so a parse allocates only its result.
    public struct Workspace: Sendable {
        /// Values of open containers, flattened: a container's members are
        /// the tail starting at its frame's `start` (keys are "" in arrays).
        var members: [(key: String, value: JSONValue)] = []
        var frames: [Frame] = []
        var scratch: [UInt8] = []
        var pendingKey = ""

        public init() {}

        /// Drops storage grown by an unusually large document.
        mutating func trim() {
            if members.capacity > 4096 { members = [] }
            if scratch.capacity > 1 << 20 { scratch = [] }
            if frames.capacity > 256 { frames = [] }
        }
    }

    struct Frame {
        var isObject: Bool
        var start: Int
        /// The key this container goes under in its parent ("" in an array).
        var key: String
    }

    /// Parses one JSON document from `buffer`.
    public static func parse(
        _ buffer: UnsafeBufferPointer<UInt8>, limits: JSONLimits = .default
    ) throws(CoreError) -> JSONValue {
        var workspace = Workspace()
        return try parse(buffer, limits: limits, workspace: &workspace)
    }

    /// Parses one JSON document from `buffer`, reusing `workspace`.
    public static func parse(
        _ buffer: UnsafeBufferPointer<UInt8>, limits: JSONLimits = .default, workspace: inout Workspace
    ) throws(CoreError) -> JSONValue {
        if buffer.count > limits.maxBytes {
            throw CoreError(
                .tooLarge, "input is \(buffer.count) bytes; the limit is \(limits.maxBytes)")
        }
        if let bad = UTF8Validation.firstInvalidOffset(buffer) {
            throw CoreError(.invalidUTF8, "invalid UTF-8 at byte \(bad)", offset: bad)
        }
        guard let base = buffer.baseAddress, buffer.count > 0 else {
            throw CoreError(.invalidJSON, "empty input: expected a JSON value", offset: 0)
        }
        var parser = JSONParser(base: base, end: buffer.count, limits: limits, workspace: Workspace())
        // The parser owns the stacks while it runs (uniquely, so appends never copy).
        swap(&parser.w, &workspace)
        defer {
            parser.w.members.removeAll(keepingCapacity: true)
            parser.w.frames.removeAll(keepingCapacity: true)
            parser.w.pendingKey = ""
            parser.w.trim()
            swap(&parser.w, &workspace)
        }
        return try parser.parseDocument()
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

    private init(base: UnsafePointer<UInt8>, end: Int, limits: JSONLimits, workspace: Workspace) {
        self.base = base
        self.end = end
        self.limits = limits
        self.w = workspace
    }

    // MARK: - Driver

    private mutating func parseDocument() throws(CoreError) -> JSONValue {
        skipWhitespace()
        var value = try parseValueOrOpen()
        while true {
            if let finished = value {
                // A value is complete: hand it to the enclosing container.
                guard let frame = w.frames.last else {
                    skipWhitespace()
                    if pos < end { throw error("unexpected trailing characters after the JSON value") }
                    return finished
                }
                w.members.append((w.pendingKey, finished))
                w.pendingKey = ""
                skipWhitespace()
                guard pos < end else { throw error("unexpected end of input inside \(frame.isObject ? "an object" : "an array")") }
                let c = base[pos]
                if c == UInt8(ascii: ",") {
                    pos &+= 1
                    skipWhitespace()
                    if frame.isObject { try parseKeyAndColon() }
                    value = try parseValueOrOpen()
                } else if frame.isObject && c == UInt8(ascii: "}") {
                    pos &+= 1
                    value = closeObject()
                } else if !frame.isObject && c == UInt8(ascii: "]") {
                    pos &+= 1
                    value = closeArray()
                } else {
                    throw error(frame.isObject ? "expected ',' or '}' in an object" : "expected ',' or ']' in an array")
                }
            } else {
                // A container was opened and its first value is due.
                value = try parseValueOrOpen()
            }
        }
    }

    /// Parses a scalar, an empty container, or opens a container (returning
    /// nil, with the key of a first object member already consumed).
    private mutating func parseValueOrOpen() throws(CoreError) -> JSONValue? {
        guard pos < end else { throw error("unexpected end of input: expected a value") }
        switch base[pos] {
        case UInt8(ascii: "{"):
            try checkDepth()
            pos &+= 1
            skipWhitespace()
            if pos < end && base[pos] == UInt8(ascii: "}") {
                pos &+= 1
                return .object(JSONObject())
            }
            w.frames.append(Frame(isObject: true, start: w.members.count, key: w.pendingKey))
            w.pendingKey = ""
            try parseKeyAndColon()
            return try parseValueOrOpen()
        case UInt8(ascii: "["):
            try checkDepth()
            pos &+= 1
            skipWhitespace()
            if pos < end && base[pos] == UInt8(ascii: "]") {
                pos &+= 1
                return .array([])
            }
            w.frames.append(Frame(isObject: false, start: w.members.count, key: w.pendingKey))
            w.pendingKey = ""
            skipWhitespace()
            return try parseValueOrOpen()
        case UInt8(ascii: "\""):
            return .string(try parseString())
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return try parseNumber()
        default:
            throw error("unexpected character \(describe(base[pos])): expected a value")
        }
    }

    private mutating func checkDepth() throws(CoreError) {
        if w.frames.count >= limits.maxDepth {
            throw CoreError(
                .tooDeep, "nesting deeper than \(limits.maxDepth) levels at byte \(pos)", offset: pos)
        }
    }

    private mutating func parseKeyAndColon() throws(CoreError) {
        guard pos < end, base[pos] == UInt8(ascii: "\"") else {
            throw error(pos < end ? "expected a string key in an object" : "unexpected end of input: expected a key")
        }
        w.pendingKey = try parseString()
        skipWhitespace()
        guard pos < end, base[pos] == UInt8(ascii: ":") else { throw error("expected ':' after an object key") }
        pos &+= 1
        skipWhitespace()
    }

    private mutating func closeArray() -> JSONValue {
        let frame = w.frames.removeLast()
        var elements: [JSONValue] = []
        elements.reserveCapacity(w.members.count &- frame.start)
        for i in frame.start..<w.members.count { elements.append(w.members[i].value) }
        w.members.removeSubrange(frame.start...)
        w.pendingKey = frame.key
        return .array(elements)
    }

    private mutating func closeObject() -> JSONValue {
        let frame = w.frames.removeLast()
        let object = JSONObject(Array(w.members[frame.start...]))
        w.members.removeSubrange(frame.start...)
        w.pendingKey = frame.key
        return .object(object)
    }

    // MARK: - Scalars

    @inline(__always)
    private mutating func skipWhitespace() {
        while pos < end {
            let c = base[pos]
            guard c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 else { return }
            pos &+= 1
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(CoreError) {
        let count = literal.utf8CodeUnitCount
        guard end &- pos >= count else { throw error("unexpected end of input in a literal") }
        let bytes = literal.utf8Start
        for i in 0..<count where base[pos &+ i] != bytes[i] {
            pos &+= i
            throw error("invalid literal: expected '\(literal)'")
        }
        pos &+= count
    }

    /// Scans a string starting at the opening quote. The common case (no
    /// escapes) is one SWAR scan and one copy.
    private mutating func parseString() throws(CoreError) -> String {
        pos &+= 1  // opening quote
        var runStart = pos
        var usedScratch = false
        let raw = UnsafeRawPointer(base)
        while true {
            // Eight bytes at a time: jump to the first '"', '\\' or control
            // character. (The lowest flagged byte is always a real match:
            // false flags only ever follow a true one.)
            while pos &+ 8 <= end {
                let w = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: pos, as: UInt64.self))
                let quote = w ^ 0x2222_2222_2222_2222
                let slash = w ^ 0x5C5C_5C5C_5C5C_5C5C
                let hasQuote = (quote &- 0x0101_0101_0101_0101) & ~quote
                let hasSlash = (slash &- 0x0101_0101_0101_0101) & ~slash
                let hasControl = (w &- 0x2020_2020_2020_2020) & ~w
                let hits = (hasQuote | hasSlash | hasControl) & 0x8080_8080_8080_8080
                if hits != 0 {
                    pos &+= hits.trailingZeroBitCount &>> 3
                    break
                }
                pos &+= 8
            }
            guard pos < end else { throw error("unexpected end of input inside a string") }
            let c = base[pos]
            if c == UInt8(ascii: "\"") {
                let run = UnsafeBufferPointer(start: base + runStart, count: pos &- runStart)
                pos &+= 1
                if !usedScratch { return String(decoding: run, as: UTF8.self) }
                w.scratch.append(contentsOf: run)
                return String(decoding: w.scratch, as: UTF8.self)
            } else if c == UInt8(ascii: "\\") {
                if !usedScratch {
                    usedScratch = true
                    w.scratch.removeAll(keepingCapacity: true)
                }
                w.scratch.append(contentsOf: UnsafeBufferPointer(start: base + runStart, count: pos &- runStart))
                try parseEscape()
                runStart = pos
            } else if c < 0x20 {
                throw error("unescaped control character \(describe(c)) inside a string")
            } else {
                pos &+= 1
            }
        }
    }

    private mutating func parseEscape() throws(CoreError) {
        pos &+= 1  // backslash
        guard pos < end else { throw error("unexpected end of input in an escape sequence") }
        let c = base[pos]
        pos &+= 1
        switch c {
        case UInt8(ascii: "\""): w.scratch.append(0x22)
        case UInt8(ascii: "\\"): w.scratch.append(0x5C)
        case UInt8(ascii: "/"): w.scratch.append(0x2F)
        case UInt8(ascii: "b"): w.scratch.append(0x08)
        case UInt8(ascii: "f"): w.scratch.append(0x0C)
        case UInt8(ascii: "n"): w.scratch.append(0x0A)
        case UInt8(ascii: "r"): w.scratch.append(0x0D)
        case UInt8(ascii: "t"): w.scratch.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try parseHex4()
            if scalar >= 0xD800 && scalar <= 0xDBFF {
                // A high surrogate must be followed by an escaped low surrogate.
                guard end &- pos >= 6, base[pos] == UInt8(ascii: "\\"), base[pos &+ 1] == UInt8(ascii: "u") else {
                    throw error("unpaired surrogate \\u\(hex(scalar)) in a string")
                }
                pos &+= 2
                let low = try parseHex4()
                guard low >= 0xDC00 && low <= 0xDFFF else {
                    pos &-= 6
                    throw error("unpaired surrogate \\u\(hex(scalar)) in a string")
                }
                scalar = 0x10000 &+ ((scalar &- 0xD800) << 10) &+ (low &- 0xDC00)
            } else if scalar >= 0xDC00 && scalar <= 0xDFFF {
                pos &-= 6
                throw error("unpaired surrogate \\u\(hex(scalar)) in a string")
            }
            appendUTF8(scalar)
        default:
            pos &-= 1
            throw error("invalid escape sequence \\\(describe(c))")
        }
    }

    private mutating func parseHex4() throws(CoreError) -> UInt32 {
        guard end &- pos >= 4 else { throw error("unexpected end of input in a \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = base[pos]
            let d: UInt32
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(c &- 0x30)
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(c &- 0x57)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(c &- 0x37)
            default: throw error("invalid hex digit \(describe(c)) in a \\u escape")
            }
            v = v << 4 | d
            pos &+= 1
        }
        return v
    }

    private mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case 0..<0x80:
            w.scratch.append(UInt8(scalar))
        case 0x80..<0x800:
            w.scratch.append(UInt8(0xC0 | scalar >> 6))
            w.scratch.append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            w.scratch.append(UInt8(0xE0 | scalar >> 12))
            w.scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            w.scratch.append(UInt8(0x80 | scalar & 0x3F))
        default:
            w.scratch.append(UInt8(0xF0 | scalar >> 18))
            w.scratch.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            w.scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            w.scratch.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    private mutating func parseNumber() throws(CoreError) -> JSONValue {
        let start = pos
        var negative = false
        if base[pos] == UInt8(ascii: "-") {
            negative = true
            pos &+= 1
        }
        guard pos < end, isDigit(base[pos]) else { throw error("expected a digit in a number") }
        let intStart = pos
        if base[pos] == UInt8(ascii: "0") {
            pos &+= 1
            if pos < end && isDigit(base[pos]) { throw error("leading zeros are not allowed in a number") }
        } else {
            while pos < end && isDigit(base[pos]) { pos &+= 1 }
        }
        let intEnd = pos
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
        if isInteger && intEnd &- intStart <= 19 {
            // Accumulate negatively so Int64.min is representable.
            var v: Int64 = 0
            var overflow = false
            for i in intStart..<intEnd {
                let (m, o1) = v.multipliedReportingOverflow(by: 10)
                let (s, o2) = m.subtractingReportingOverflow(Int64(base[i] &- 0x30))
                if o1 || o2 {
                    overflow = true
                    break
                }
                v = s
            }
            if !overflow {
                if negative { return .int(v) }
                if v != Int64.min { return .int(-v) }
            }
        }
        let text = String(decoding: UnsafeBufferPointer(start: base + start, count: pos &- start), as: UTF8.self)
        guard let d = Double(text) else {
            pos = start
            throw error("number out of range")
        }
        return .double(d)
    }

    // MARK: - Errors

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
