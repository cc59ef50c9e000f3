import JcodeMobileJSON

/// A tolerant reader of the top level of a JSON object that may still be
/// arriving (a tool call's input while it streams): it gives a string
/// member's value as far as it has come, so a card can show a command
/// while the model is still writing it. It never throws; what it cannot
/// read yet is simply not there.
///
/// `Members` reads on from where it stopped: fed an input that grew at its
/// end, it scans only the new bytes (a streamed input then costs what it
/// adds, not what it holds).
enum PartialJSON {
    /// The value of the top-level member `key` when it is a string, decoded
    /// up to where the input stops (an escape cut in half is left out).
    static func string(forKey key: String, in text: String) -> String? {
        var members = Members()
        members.read(text)
        return members.string(key)
    }

    /// The first top-level member whose value is a string, as far as it has arrived.
    static func firstString(in text: String) -> String? {
        var members = Members()
        members.read(text)
        return members.firstString
    }

    /// The top-level members of an object read so far: its string members
    /// decoded (the last one as far as it has arrived), other values
    /// skipped. Reading stops for good at the object's closing brace or at
    /// what no object can hold there; until then, each `read` goes on from
    /// the byte the last one stopped at (an escape cut in half is read
    /// again whole).
    struct Members {
        struct Member {
            var key: String
            var value: String
            /// Its closing quote has been read.
            var complete: Bool
        }

        /// The members whose value is a string, in order.
        private(set) var strings: [Member] = []
        /// Bytes of the input read: the next `read` starts there.
        private(set) var consumed = 0
        /// The object's closing brace was read (the input may be a complete object).
        private(set) var closed = false
        /// Nothing more will be read: the object closed, or the input is not one.
        private(set) var stopped = false
        private var state = State.start
        /// The key being decoded, then the key of the value after it.
        private var key = ""
        /// Nesting inside a skipped (non-string) value.
        private var depth = 0
        /// A string inside a skipped value, decoded and dropped.
        private var scratch = ""

        private enum State {
            case start, beforeKey, key, afterKey, beforeValue, stringValue, skipping, skippingString
        }

        /// The first string member named `key`, as far as it has arrived.
        func string(_ key: String) -> String? {
            for member in strings where member.key == key { return member.value }
            return nil
        }

        var firstString: String? { strings.first?.value }

        /// Reads `input` from `consumed` on: `input` must be the input last
        /// read (or less) followed by more.
        mutating func read(_ input: String) {
            guard !stopped, input.utf8.count > consumed else { return }
            var input = input
            input.withUTF8 { scan($0) }
        }

        private mutating func scan(_ b: UnsafeBufferPointer<UInt8>) {
            let end = b.count
            while consumed < end {
                switch state {
                case .start:
                    Self.skipWhitespace(b, &consumed)
                    guard consumed < end else { return }
                    guard b[consumed] == UInt8(ascii: "{") else { return stop() }
                    consumed &+= 1
                    state = .beforeKey
                case .beforeKey:
                    Self.skipWhitespace(b, &consumed)
                    guard consumed < end else { return }
                    switch b[consumed] {
                    case UInt8(ascii: "}"):
                        closed = true
                        return stop()
                    case UInt8(ascii: ","):
                        consumed &+= 1
                    case UInt8(ascii: "\""):
                        consumed &+= 1
                        key = ""
                        state = .key
                    default:
                        return stop()
                    }
                case .key:
                    switch Self.decode(b, &consumed, into: &key) {
                    case .complete: state = .afterKey
                    case .cut: return
                    case .stuck: return stop()
                    }
                case .afterKey:
                    Self.skipWhitespace(b, &consumed)
                    guard consumed < end else { return }
                    guard b[consumed] == UInt8(ascii: ":") else { return stop() }
                    consumed &+= 1
                    state = .beforeValue
                case .beforeValue:
                    Self.skipWhitespace(b, &consumed)
                    guard consumed < end else { return }
                    if b[consumed] == UInt8(ascii: "\"") {
                        consumed &+= 1
                        strings.append(Member(key: key, value: "", complete: false))
                        state = .stringValue
                    } else {
                        depth = 0
                        state = .skipping
                    }
                case .stringValue:
                    let last = strings.count &- 1
                    switch Self.decode(b, &consumed, into: &strings[last].value) {
                    case .complete:
                        strings[last].complete = true
                        state = .beforeKey
                    case .cut: return
                    case .stuck: return stop()
                    }
                case .skipping:
                    // A number, literal, array or object, up to the comma or
                    // brace that ends it (left for the members' loop).
                    let byte = b[consumed]
                    switch byte {
                    case UInt8(ascii: "\""):
                        consumed &+= 1
                        scratch = ""
                        state = .skippingString
                        continue
                    case UInt8(ascii: "["), UInt8(ascii: "{"):
                        depth &+= 1
                    case UInt8(ascii: "]"), UInt8(ascii: "}"):
                        if depth == 0 {
                            state = .beforeKey
                            continue
                        }
                        depth &-= 1
                    case UInt8(ascii: ","):
                        if depth == 0 {
                            state = .beforeKey
                            continue
                        }
                    default:
                        break
                    }
                    consumed &+= 1
                case .skippingString:
                    switch Self.decode(b, &consumed, into: &scratch) {
                    case .complete: state = .skipping
                    case .cut: return
                    case .stuck: return stop()
                    }
                }
            }
        }

        private mutating func stop() {
            stopped = true
            scratch = ""
        }

        private static func skipWhitespace(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) {
            while i < b.count {
                let c = b[i]
                guard c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 else { return }
                i &+= 1
            }
        }

        private enum Decoded {
            /// The closing quote was read.
            case complete
            /// The input ended (in the string, or in an escape: read again from its backslash).
            case cut
            /// An escape no more input can complete (`\u` with a letter that
            /// is not hex): the string, and the object, are read no further.
            case stuck
        }

        /// Decodes a string's bytes from `i` (after its opening quote) into `out`.
        private static func decode(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int, into out: inout String) -> Decoded {
            let end = b.count
            var run = i
            while i < end {
                let c = b[i]
                if c != UInt8(ascii: "\""), c != UInt8(ascii: "\\") {
                    i &+= 1
                    continue
                }
                // The bytes before: valid UTF-8 cut at an ASCII byte.
                if i > run { out.append(String(decoding: UnsafeBufferPointer(rebasing: b[run..<i]), as: UTF8.self)) }
                if c == UInt8(ascii: "\"") {
                    i &+= 1
                    return .complete
                }
                switch escape(b, &i, into: &out) {
                case .complete: break
                case .cut: return .cut
                case .stuck: return .stuck
                }
                run = i
            }
            if i > run { out.append(String(decoding: UnsafeBufferPointer(rebasing: b[run..<i]), as: UTF8.self)) }
            return .cut
        }

        /// Decodes the escape at `i` (its backslash); `.cut` (nothing read)
        /// when the input ends inside it, `.stuck` when it never can be read.
        private static func escape(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int, into out: inout String) -> Decoded {
            guard i &+ 1 < b.count else { return .cut }
            let letter = b[i &+ 1]
            if letter == UInt8(ascii: "u") {
                switch unicodeEscape(b, &i) {
                case .scalar(let scalar):
                    out.unicodeScalars.append(scalar)
                    return .complete
                case .cut: return .cut
                case .stuck: return .stuck
                }
            }
            guard letter < 0x80 else {
                // A backslash before a multi-byte character: the character as itself.
                i &+= 1
                return .complete
            }
            i &+= 2
            switch letter {
            case UInt8(ascii: "n"): out.append("\n")
            case UInt8(ascii: "t"): out.append("\t")
            case UInt8(ascii: "r"): out.append("\r")
            case UInt8(ascii: "b"): out.append("\u{08}")
            case UInt8(ascii: "f"): out.append("\u{0C}")
            default:
                // \" \\ \/ and, tolerantly, anything else as itself.
                out.unicodeScalars.append(Unicode.Scalar(letter))
            }
            return .complete
        }

        private enum UnicodeEscape {
            case scalar(Unicode.Scalar)
            case cut
            case stuck
        }

        /// Reads `\uXXXX` (and its low surrogate when it is a high one).
        /// Invalid code units become U+FFFD; digits that are not hex make it stuck.
        private static func unicodeEscape(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> UnicodeEscape {
            guard let unit = hex4(b, at: i &+ 2) else { return hasRoom(b, i &+ 2) ? .stuck : .cut }
            guard (0xD800..<0xDC00).contains(unit) else {
                i &+= 6
                return .scalar(Unicode.Scalar(unit) ?? "\u{FFFD}")
            }
            let next = i &+ 6
            if next &+ 1 < b.count, b[next] == UInt8(ascii: "\\"), b[next &+ 1] == UInt8(ascii: "u") {
                guard let low = hex4(b, at: next &+ 2) else { return hasRoom(b, next &+ 2) ? .stuck : .cut }
                if (0xDC00..<0xE000).contains(low) {
                    i &+= 12
                    return .scalar(Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)) ?? "\u{FFFD}")
                }
            } else if next &+ 1 >= b.count {
                return .cut  // the low half may still come
            }
            i &+= 6
            return .scalar("\u{FFFD}")
        }

        /// Whether four bytes from `start` have arrived.
        private static func hasRoom(_ b: UnsafeBufferPointer<UInt8>, _ start: Int) -> Bool { start &+ 4 <= b.count }

        /// Four hex digits at `start`, or nil when they have not all arrived or are not hex.
        private static func hex4(_ b: UnsafeBufferPointer<UInt8>, at start: Int) -> UInt32? {
            guard start &+ 4 <= b.count else { return nil }
            var value: UInt32 = 0
            for k in start..<start &+ 4 {
                guard let digit = hexDigit(b[k]) else { return nil }
                value = value << 4 | digit
            }
            return value
        }

        private static func hexDigit(_ b: UInt8) -> UInt32? {
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(b - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt32(b - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return UInt32(b - UInt8(ascii: "A") + 10)
            default: return nil
            }
        }
    }
}
