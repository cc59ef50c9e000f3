/// A tolerant reader of the top level of a JSON object that may still be
/// arriving (a tool call's input while it streams): it gives a string
/// member's value as far as it has come, so a card can show a command
/// while the model is still writing it. It never throws; what it cannot
/// read yet is simply not there.
enum PartialJSON {
    /// The value of the top-level member `key` when it is a string, decoded
    /// up to where the input stops (an escape cut in half is left out).
    static func string(forKey key: String, in text: String) -> String? {
        firstMember(in: text) { $0 == key }
    }

    /// The first top-level member whose value is a string, as far as it has arrived.
    static func firstString(in text: String) -> String? {
        firstMember(in: text) { _ in true }
    }

    /// Walks the members in order and decodes the first string value whose
    /// key `wanted` accepts; other values are skipped without decoding.
    private static func firstMember(in text: String, where wanted: (String) -> Bool) -> String? {
        var reader = Reader(bytes: Array(text.utf8))
        guard reader.consume(UInt8(ascii: "{")) else { return nil }
        while true {
            reader.skipWhitespace()
            guard let byte = reader.peek, byte != UInt8(ascii: "}") else { return nil }
            if byte == UInt8(ascii: ",") { reader.index += 1; continue }
            guard byte == UInt8(ascii: "\""), let key = reader.readString(), key.complete,
                  reader.consume(UInt8(ascii: ":"))
            else { return nil }
            reader.skipWhitespace()
            guard let first = reader.peek else { return nil }
            if first == UInt8(ascii: "\"") {
                if wanted(key.text) { return reader.readString()?.text }
                guard reader.readString()?.complete == true else { return nil }
            } else {
                guard reader.skipValue() else { return nil }
            }
        }
    }

    /// A cursor over the input's UTF-8 bytes.
    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipWhitespace() {
            while let b = peek, b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 { index += 1 }
        }

        /// Skips whitespace, then `byte` if it is next.
        mutating func consume(_ byte: UInt8) -> Bool {
            skipWhitespace()
            guard peek == byte else { return false }
            index += 1
            return true
        }

        /// Decodes the string starting at the quote under the cursor;
        /// `complete` is false when the input ended inside it.
        mutating func readString() -> (text: String, complete: Bool)? {
            guard peek == UInt8(ascii: "\"") else { return nil }
            index += 1
            var out: [UInt8] = []
            while let b = peek {
                if b == UInt8(ascii: "\"") {
                    index += 1
                    return (String(decoding: out, as: UTF8.self), true)
                }
                if b != UInt8(ascii: "\\") {
                    out.append(b)
                    index += 1
                    continue
                }
                guard decodeEscape(into: &out) else { break }
            }
            return (String(decoding: out, as: UTF8.self), false)
        }

        /// Decodes the escape under the cursor; false when it is cut off by the end of the input.
        private mutating func decodeEscape(into out: inout [UInt8]) -> Bool {
            guard index + 1 < bytes.count else { return false }
            let letter = bytes[index + 1]
            if letter == UInt8(ascii: "u") {
                guard let scalar = unicodeEscape() else { return false }
                out.append(contentsOf: String(Character(scalar)).utf8)
                return true
            }
            index += 2
            switch letter {
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            default: out.append(letter)  // \" \\ \/ and, tolerantly, anything else as itself
            }
            return true
        }

        /// Reads `\uXXXX` (and its low surrogate when it is a high one); nil
        /// when the input ends before the escape does. Invalid code units become U+FFFD.
        private mutating func unicodeEscape() -> Unicode.Scalar? {
            guard let unit = hex4(at: index + 2) else { return nil }
            guard (0xD800..<0xDC00).contains(unit) else {
                index += 6
                return Unicode.Scalar(unit) ?? "\u{FFFD}"
            }
            let next = index + 6
            if next + 1 < bytes.count, bytes[next] == UInt8(ascii: "\\"), bytes[next + 1] == UInt8(ascii: "u") {
                guard let low = hex4(at: next + 2) else { return nil }
                if (0xDC00..<0xE000).contains(low) {
                    index += 12
                    return Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)) ?? "\u{FFFD}"
                }
            } else if next + 1 >= bytes.count {
                return nil  // the low half may still come
            }
            index += 6
            return "\u{FFFD}"
        }

        /// Four hex digits at `at`, or nil when they have not all arrived or are not hex.
        private func hex4(at start: Int) -> UInt32? {
            guard start + 4 <= bytes.count else { return nil }
            var value: UInt32 = 0
            for b in bytes[start..<start + 4] {
                guard let digit = hexDigit(b) else { return nil }
                value = value << 4 | digit
            }
            return value
        }

        private func hexDigit(_ b: UInt8) -> UInt32? {
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(b - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt32(b - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return UInt32(b - UInt8(ascii: "A") + 10)
            default: return nil
            }
        }

        /// Skips a non-string value (number, literal, array, object) up to
        /// the comma or brace that ends it; false when the input ends first.
        mutating func skipValue() -> Bool {
            var depth = 0
            while let b = peek {
                switch b {
                case UInt8(ascii: "\""):
                    guard readString()?.complete == true else { return false }
                    continue
                case UInt8(ascii: "["), UInt8(ascii: "{"):
                    depth += 1
                case UInt8(ascii: "]"), UInt8(ascii: "}"):
                    if depth == 0 { return true }
                    depth -= 1
                case UInt8(ascii: ","):
                    if depth == 0 { return true }
                default:
                    break
                }
                index += 1
            }
            return false
        }
    }
}
