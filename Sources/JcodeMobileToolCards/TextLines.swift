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
