@_spi(Leaves) import JcodeMobileJSON
import JcodeMobileWire

// A reply's hot path, from the host's bytes to the store, in one place.
//
// Most platform events a session sees are `websocket_event`s of one
// streamed text event (`text_delta`, `reasoning_delta`, `text_replace`):
// one per token. They are read here without building the frame, and run by
// `Store.sendFrame`, which hands them to the chat as the general path would
// deliver them:
//
//   1. `FrameEnvelope`: a raw frame's envelope, read without the tokenizer;
//      or `frameEvent`: the `event` or `line` of a tokenized `websocket_event`;
//   2. `oneEvent`: its line, when it holds exactly one server event;
//   3. `ServerEvent.StreamedText`: that event, when it is streamed text,
//      read from the line as the gateway writes it or from the tape.
//
// Each step reads only what it can read exactly as the general decoder
// (`PlatformEvent.wire`, `ServerFrame`, `ServerEvent.wire`) does, and the
// streamed events' type and member are declared once, here, for both
// (CheapInputTests and WireSpecTests hold the two to the same answers);
// anything else takes the general way, with its errors and notes.

/// A `websocket_event` of one server event, as the hot path read it
/// (`FrameEnvelope`, `frameEvent`): what `Store.sendFrame` runs.
enum FrameRead {
    /// Streamed text (the hot path: small, nothing boxed). `exact`: the
    /// input holds nothing but the text and the fixed shape around it
    /// (its log copy then holds a secret only if the text does).
    case streamed(effectID: EffectID?, ServerEvent.StreamedText, exact: Bool = false)
    /// Any other event.
    indirect case event(effectID: EffectID?, ServerEvent)
}

extension JcodeMobileApp {
    /// The one server event of a `websocket_event` (its `event`, or the one
    /// line of its `line`), read from the tape with no frame built; nil for
    /// any other input, and for anything the general decoder would refuse
    /// or drop a line of (it then reads the input, with its errors and
    /// notes). What it reads, `PlatformEvent.wire` reads the same.
    func frameEvent(in tape: JSONTape) -> FrameRead? {
        guard tape.kind(at: 0) == .object else { return nil }
        var type: Int?
        var effectID: Int?
        var event: Int?
        var line: Int?
        // The last member of a name wins, as in every decoder. `exact`: no
        // member but these three, none twice (nothing else a server wrote).
        var exact = true
        var i = 1
        let end = tape.next(after: 0)
        while i < end {
            let value = i &+ 1
            if tape.stringEquals(i, "type") {
                if type != nil { exact = false }
                type = value
            } else if tape.stringEquals(i, "effect_id") {
                if effectID != nil { exact = false }
                effectID = value
            } else if tape.stringEquals(i, "event") {
                if event != nil { exact = false }
                event = value
            } else if tape.stringEquals(i, "line") {
                line = value
                exact = false
            } else {
                exact = false
            }
            i = tape.next(after: value)
        }
        guard let type, tape.kind(at: type) == .string, tape.stringEquals(type, "websocket_event") else { return nil }
        // Absent and null read alike; anything else must be what is declared.
        if let t = effectID, tape.kind(at: t) == .null { effectID = nil }
        if let t = event, tape.kind(at: t) == .null { event = nil }
        if let t = line, tape.kind(at: t) == .null { line = nil }
        var id: EffectID?
        if let t = effectID {
            guard let n = tape.integer(at: t), n >= 1, let exact = Int(exactly: n) else { return nil }
            id = EffectID(exact)
        }
        if let t = line, tape.kind(at: t) != .string { return nil }
        if let event {
            guard tape.kind(at: event) == .object else { return nil }
            if let text = ServerEvent.StreamedText(in: tape, at: event) {
                // The event's type and text, and nothing else: the log's copy
                // then holds a secret only if the text does.
                return .streamed(effectID: id, text, exact: exact && tape.memberCount(of: event) == 2)
            }
            guard let decoded = try? ServerEvent.wire.decode(tape: tape, at: event) else { return nil }
            return .event(effectID: id, decoded)
        }
        guard let line else { return nil }
        return oneEvent(ofLine: tape.rawBytes(at: line), escaped: tape.isEscaped(line), effectID: id)
    }

    /// The server event of a raw frame that holds exactly one (`raw`: the
    /// line's content as written, `escaped` when it holds an escape),
    /// decoded as `ServerFrame.items` would; nil otherwise.
    /// `exactEnvelope`: the input is the frame's envelope and nothing else (`FrameEnvelope`).
    func oneEvent(
        ofLine raw: UnsafeBufferPointer<UInt8>, escaped: Bool, effectID id: EffectID?, exactEnvelope: Bool = false
    ) -> FrameRead? {
        guard raw.count <= lineBuffer.count, let buffer = lineBuffer.baseAddress else { return nil }
        // The canonical line of plain text, read where it is written.
        if escaped, let text = ServerEvent.StreamedText(escapedCanonicalLine: raw) {
            return .streamed(effectID: id, text, exact: exactEnvelope)
        }
        let n: Int
        if escaped {
            n = JSONTape.unescape(raw, into: lineBuffer)
        } else {
            if let source = raw.baseAddress { buffer.update(from: source, count: raw.count) }
            n = raw.count
        }
        // Exactly one line that is not blank (`ServerFrame` skips blank ones).
        var found: Range<Int>?
        var start = 0
        while start <= n {
            var stop = start
            // To the next newline, eight bytes at a time.
            while stop &+ 8 <= n {
                let w = UInt64(littleEndian: UnsafeRawPointer(buffer + stop).loadUnaligned(as: UInt64.self)) ^ 0x0A0A_0A0A_0A0A_0A0A
                let hit = (w &- 0x0101_0101_0101_0101) & ~w & 0x8080_8080_8080_8080
                if hit != 0 {
                    stop &+= hit.trailingZeroBitCount &>> 3
                    break
                }
                stop &+= 8
            }
            while stop < n && buffer[stop] != UInt8(ascii: "\n") { stop &+= 1 }
            var j = start
            while j < stop, buffer[j] == 0x20 || buffer[j] == 0x0D || buffer[j] == 0x09 { j &+= 1 }
            if j < stop {
                guard found == nil else { return nil }
                found = start..<stop
            }
            start = stop &+ 1
        }
        guard let found else { return nil }
        let bytes = UnsafeBufferPointer(start: buffer + found.lowerBound, count: found.count)
        // The line is a string of the input, validated, unescaped: valid UTF-8.
        if let text = ServerEvent.StreamedText(canonicalLine: bytes, workspace: &lineWorkspace) {
            return .streamed(effectID: id, text, exact: exactEnvelope)
        }
        return try? JSONParser.withTape(bytes, workspace: &lineWorkspace, knownValidUTF8: true) { (tape) throws(CoreError) -> FrameRead in
            guard tape.kind(at: 0) == .object else { throw CoreError(.invalidJSON, "not an object") }
            if let text = ServerEvent.StreamedText(in: tape) { return .streamed(effectID: id, text) }
            return .event(effectID: id, try ServerEvent.wire.decode(tape: tape))
        }
    }
}

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

extension ServerEvent {
    /// A streamed text event, `{"type": T, "text": …}` with T `text_delta`,
    /// `text_replace` or `reasoning_delta`: what the hot path of a reply
    /// reads straight from the tape, as the specs below decode it
    /// (`WireSpecTests` holds the two to the same answers).
    public struct StreamedText: Equatable, Sendable {
        public enum Kind: Sendable, CaseIterable {
            case textDelta, textReplace, reasoningDelta

            /// The event's `type`; its spec (`ServerEvent.specs`) is declared with it.
            var type: StaticString {
                switch self {
                case .textDelta: return "text_delta"
                case .textReplace: return "text_replace"
                case .reasoningDelta: return "reasoning_delta"
                }
            }

            /// The same, as the spec's name.
            var name: String { type.description }
        }

        /// The member that holds the text, and its declaration in the three specs.
        static let textMember = "text"
        static let textField = FieldSpec(textMember, .string)
        public var kind: Kind
        public var text: String

        /// The event the specs decode.
        public var event: ServerEvent {
            switch kind {
            case .textDelta: return .textDelta(text)
            case .textReplace: return .textReplace(text)
            case .reasoningDelta: return .reasoningDelta(text)
            }
        }

        /// A line exactly as the gateway writes these events,
        /// `{"type":"text_delta","text":"…"}` (no space, these two members in
        /// this order), read without tokenizing the object: its text is the
        /// one JSON string between the fixed head and the closing brace
        /// (validated by the tokenizer, as a document of its own). nil for
        /// any other line, which is then read as a whole. `line` is valid UTF-8.
        init?(canonicalLine line: UnsafeBufferPointer<UInt8>, workspace: inout JSONParser.Workspace) {
            guard let base = line.baseAddress, line.count > 2, line[line.count &- 1] == UInt8(ascii: "}"),
                  line[line.count &- 2] == UInt8(ascii: "\"")
            else { return nil }
            guard let (kind, head) = Self.head(of: line, escaped: false) else { return nil }
            // From the value's opening quote to the closing one before the brace.
            let value = UnsafeBufferPointer(start: base + head, count: line.count &- head &- 1)
            guard value.count >= 2, value[0] == UInt8(ascii: "\"") else { return nil }
            self.kind = kind
            // Text with nothing to unescape (no quote, backslash or control
            // character inside) is taken as it is; anything else is read by
            // the tokenizer, which also refuses what is not one string.
            let content = UnsafeBufferPointer(start: base + (head &+ 1), count: value.count &- 2)
            if Self.isPlain(content) {
                text = String(decoding: content, as: UTF8.self)
                return
            }
            guard let text = try? JSONParser.withTape(value, workspace: &workspace, knownValidUTF8: true, { (tape) throws(CoreError) -> String? in
                tape.kind(at: 0) == .string ? tape.string(at: 0) : nil
            })
            else { return nil }
            self.text = text
        }

        /// The same line as a raw frame writes it inside its `line` string,
        /// escapes not decoded: `{\"type\":\"text_delta\",\"text\":\"…\"}`.
        /// Only text with nothing to unescape is read here (then the decoded
        /// line is the canonical one, and this its text); nil otherwise, and
        /// the line is decoded and read as `canonicalLine`. `raw` is valid UTF-8.
        init?(escapedCanonicalLine raw: UnsafeBufferPointer<UInt8>) {
            guard let base = raw.baseAddress, raw.count > 3, raw[raw.count &- 1] == UInt8(ascii: "}"),
                  raw[raw.count &- 2] == UInt8(ascii: "\""), raw[raw.count &- 3] == UInt8(ascii: "\\")
            else { return nil }
            guard let (kind, head) = Self.head(of: raw, escaped: true) else { return nil }
            let count = raw.count &- head &- 3
            guard count >= 0 else { return nil }
            let content = UnsafeBufferPointer(start: base + head, count: count)
            guard Self.isPlain(content) else { return nil }
            self.kind = kind
            text = String(decoding: content, as: UTF8.self)
        }

        /// Whether `bytes` hold no quote, backslash or control character
        /// (eight bytes at a time): JSON string content that means itself.
        private static func isPlain(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
            guard let base = bytes.baseAddress else { return true }
            let raw = UnsafeRawPointer(base)
            let n = bytes.count
            // Eight bytes at a time, then the rest (and the flagged byte) one by one.
            var i = StringScan.skipPlainWords(raw, from: 0, end: n)
            while i < n {
                let c = base[i]
                if c < 0x20 || c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") { return false }
                i &+= 1
            }
            return true
        }

        /// The kind whose fixed head `line` starts with, and the head's length
        /// in bytes (`escaped`: as written inside a JSON string).
        private static func head(of line: UnsafeBufferPointer<UInt8>, escaped: Bool) -> (Kind, Int)? {
            guard let base = line.baseAddress else { return nil }
            for head in escaped ? escapedHeads : heads where line.count > head.count && memcmpEqual(base, head.bytes, head.count) {
                return (head.kind, head.count)
            }
            return nil
        }

        /// A kind's fixed head: its bytes, made once from the declarations
        /// above and kept for the life of the process.
        private struct Head {
            let kind: Kind
            let bytes: UnsafePointer<UInt8>
            let count: Int

            init(_ kind: Kind, _ parts: [String]) {
                let text = Array(parts.joined().utf8)
                let bytes = UnsafeMutablePointer<UInt8>.allocate(capacity: text.count)
                bytes.initialize(from: text, count: text.count)
                self.kind = kind
                self.bytes = UnsafePointer(bytes)
                count = text.count
            }
        }

        /// Each kind's head as the gateway writes it: `{"type":"text_delta","text":`.
        nonisolated(unsafe) private static let heads: [Head] = Kind.allCases.map {
            Head($0, [#"{"type":""#, $0.name, #"",""#, textMember, #"":"#])
        }
        /// The same heads as written inside a JSON string, with the value's
        /// opening quote: `{\"type\":\"text_delta\",\"text\":\"`.
        nonisolated(unsafe) private static let escapedHeads: [Head] = Kind.allCases.map {
            Head($0, [#"{\"type\":\""#, $0.name, #"\",\""#, textMember, #"\":\""#])
        }

        /// The object at `object` of `tape`, when it is one of these events;
        /// nil for any other event, and for one whose `text` is missing or
        /// not a string (the specs then say why).
        init?(in tape: JSONTape, at object: Int = 0) {
            let (type, text) = tape.members("type", "text", of: object)  // "text": `textMember`
            guard let type, let text, tape.kind(at: type) == .string, tape.kind(at: text) == .string else { return nil }
            if tape.stringEquals(type, Kind.textDelta.type) {
                kind = .textDelta
            } else if tape.stringEquals(type, Kind.reasoningDelta.type) {
                kind = .reasoningDelta
            } else if tape.stringEquals(type, Kind.textReplace.type) {
                kind = .textReplace
            } else {
                return nil
            }
            self.text = tape.string(at: text)
        }
    }
}
