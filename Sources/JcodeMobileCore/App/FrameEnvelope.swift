import JcodeMobileJSON

/// The envelope of a raw frame, `{"type":"websocket_event","effect_id":N,"line":"…"}`,
/// read without the tokenizer: the hot path of a streamed reply, where
/// the general reading of a five-token document costs more than the delta.
///
/// It reads only what it can read exactly as the general decoder does:
/// the members `type` (`"websocket_event"`), `effect_id` (a plain positive
/// integer, or null) and `line` (a string whose escapes are all one
/// character), each at most once, in any order, with any JSON whitespace.
/// Anything else (another member, a duplicate, a `\u` escape, a number
/// written another way, a document the tokenizer would refuse) is nil,
/// and the input takes the general way, with its errors and notes.
struct FrameEnvelope {
    var effectID: Int?
    /// The line's content between its quotes, as written (still escaped).
    var line: UnsafeBufferPointer<UInt8>
    /// Whether the line holds an escape.
    var escaped: Bool

    /// Effect ids above this take the general way (its range checks).
    private static let largestEffectID = 999_999_999_999_999

    init?(_ bytes: UnsafeBufferPointer<UInt8>, limits: JSONLimits = .default) {
        guard let base = bytes.baseAddress, bytes.count <= limits.maxBytes else { return nil }
        var reader = Reader(base: base, end: bytes.count)
        var type = false
        var effectID: Int??
        var line: (range: Range<Int>, escaped: Bool)?
        reader.skipWhitespace()
        guard reader.take(UInt8(ascii: "{")) else { return nil }
        repeat {
            reader.skipWhitespace()
            // A key is one of the three, quotes included (so `"types"` is none of them).
            if reader.takeLiteral(#""type""#) {
                guard !type, reader.colon(), reader.takeLiteral(#""websocket_event""#) else { return nil }
                type = true
            } else if reader.takeLiteral(#""line""#) {
                guard line == nil, reader.colon(), let value = reader.lineString() else { return nil }
                line = value
            } else if reader.takeLiteral(#""effect_id""#) {
                guard effectID == nil, reader.colon() else { return nil }
                if reader.takeLiteral("null") {
                    effectID = .some(nil)
                } else {
                    guard let n = reader.positiveInteger(upTo: Self.largestEffectID) else { return nil }
                    effectID = .some(n)
                }
            } else {
                return nil
            }
            reader.skipWhitespace()
        } while reader.take(UInt8(ascii: ","))
        guard reader.take(UInt8(ascii: "}")) else { return nil }
        reader.skipWhitespace()
        guard reader.pos == reader.end, type, let line else { return nil }
        // What the tokenizer checks of every input before reading it.
        guard UTF8Validation.firstInvalidOffset(bytes) == nil else { return nil }
        self.effectID = effectID ?? nil
        self.line = UnsafeBufferPointer(start: base + line.range.lowerBound, count: line.range.count)
        escaped = line.escaped
    }

    private struct Reader {
        let base: UnsafePointer<UInt8>
        let end: Int
        var pos = 0

        init(base: UnsafePointer<UInt8>, end: Int) {
            self.base = base
            self.end = end
        }

        mutating func skipWhitespace() {
            while pos < end {
                let c = base[pos]
                guard c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 else { return }
                pos &+= 1
            }
        }

        mutating func take(_ byte: UInt8) -> Bool {
            guard pos < end, base[pos] == byte else { return false }
            pos &+= 1
            return true
        }

        /// The bytes of `literal` (short: compared in place), passed over.
        mutating func takeLiteral(_ literal: StaticString) -> Bool {
            let n = literal.utf8CodeUnitCount
            guard end &- pos >= n else { return false }
            let bytes = literal.utf8Start
            var i = 0
            while i < n {
                guard base[pos &+ i] == bytes[i] else { return false }
                i &+= 1
            }
            pos &+= n
            return true
        }

        /// `:` between whitespace.
        mutating func colon() -> Bool {
            skipWhitespace()
            guard take(UInt8(ascii: ":")) else { return false }
            skipWhitespace()
            return true
        }

        /// 1 … `limit`, digits only, no leading zero, not followed by what
        /// would make it another number.
        mutating func positiveInteger(upTo limit: Int) -> Int? {
            guard pos < end, base[pos] >= UInt8(ascii: "1"), base[pos] <= UInt8(ascii: "9") else { return nil }
            var n = 0
            while pos < end, base[pos] >= UInt8(ascii: "0"), base[pos] <= UInt8(ascii: "9") {
                n = n &* 10 &+ Int(base[pos] &- UInt8(ascii: "0"))
                guard n <= limit else { return nil }
                pos &+= 1
            }
            if pos < end, base[pos] == UInt8(ascii: ".") || base[pos] == UInt8(ascii: "e") || base[pos] == UInt8(ascii: "E") {
                return nil
            }
            return n
        }

        /// A string whose escapes are all one character (`\"`, `\\`, `\/`,
        /// `\b`, `\f`, `\n`, `\r`, `\t`): its content's range, and whether
        /// it holds one. Eight bytes at a time to the next quote, backslash
        /// or control character.
        mutating func lineString() -> (range: Range<Int>, escaped: Bool)? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            let start = pos
            var escaped = false
            let raw = UnsafeRawPointer(base)
            while true {
                pos = StringScan.skipPlainWords(raw, from: pos, end: end)
                guard pos < end else { return nil }
                let c = base[pos]
                if c == UInt8(ascii: "\"") {
                    pos &+= 1
                    return (start..<(pos &- 1), escaped)
                }
                if c == UInt8(ascii: "\\") {
                    guard pos &+ 1 < end else { return nil }
                    switch base[pos &+ 1] {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                        UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        escaped = true
                        pos &+= 2
                    default:
                        return nil
                    }
                } else if c < 0x20 {
                    return nil
                } else {
                    pos &+= 1
                }
            }
        }
    }
}
