/// Splitting text into lines once, on its UTF-8 bytes.
enum TextLines {
    /// The lines of `text` without their terminators: `\n` ends a line and a
    /// `\r` just before it is dropped (CRLF files read like LF ones). A final
    /// newline does not start an extra empty line; text without one keeps its
    /// last line all the same. Empty text has no lines.
    static func split(_ text: String) -> [Substring] {
        var lines: [Substring] = []
        let utf8 = text.utf8
        var start = utf8.startIndex
        var i = start
        while i != utf8.endIndex {
            if utf8[i] == 0x0A {
                lines.append(line(text, from: start, to: i))
                start = utf8.index(after: i)
            }
            i = utf8.index(after: i)
        }
        if start != utf8.endIndex { lines.append(line(text, from: start, to: utf8.endIndex)) }
        return lines
    }

    /// Whether `line` begins with the bytes of `prefix` (a patch's ASCII
    /// marker). Compared as bytes, as jcode compares them: no grapheme
    /// clusters (a marker followed by a combining mark still begins the
    /// line), and no walk over the line's characters.
    static func begins<S: StringProtocol>(_ line: S, with prefix: StaticString) -> Bool {
        let utf8 = line.utf8
        let marker = UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount)
        var i = utf8.startIndex
        for byte in marker {
            guard i != utf8.endIndex, utf8[i] == byte else { return false }
            i = utf8.index(after: i)
        }
        return true
    }

    /// `line` after its first `count` bytes, which `begins(_:with:)` found
    /// to be an ASCII marker's (so the rest starts on a scalar).
    static func dropping<S: StringProtocol>(_ count: Int, from line: S) -> S.SubSequence {
        line[line.utf8.index(line.utf8.startIndex, offsetBy: count)...]
    }

    /// The bytes from `start` to `end`, less a trailing `\r`.
    static func line(_ text: String, from start: String.Index, to end: String.Index) -> Substring {
        var end = end
        if end != start {
            let last = text.utf8.index(before: end)
            if text.utf8[last] == 0x0D { end = last }
        }
        return text[start..<end]
    }

    /// Whether two lines have the same bytes (not merely canonically equivalent text).
    static func sameBytes<A: StringProtocol, B: StringProtocol>(_ a: A, _ b: B) -> Bool {
        a.utf8.count == b.utf8.count && a.utf8.elementsEqual(b.utf8)
    }

    /// Whether the line holds nothing but whitespace.
    static func isBlank<S: StringProtocol>(_ line: S) -> Bool {
        line.allSatisfy(\.isWhitespace)
    }

    /// `line` without leading and trailing whitespace.
    static func trimmed<S: StringProtocol>(_ line: S) -> S.SubSequence {
        trimmedEnd(line.drop(while: \.isWhitespace))
    }

    /// `line` without trailing whitespace.
    static func trimmedEnd<S: StringProtocol>(_ line: S) -> S.SubSequence {
        var end = line.endIndex
        while end != line.startIndex {
            let before = line.index(before: end)
            guard line[before].isWhitespace else { break }
            end = before
        }
        return line[line.startIndex..<end]
    }
}
