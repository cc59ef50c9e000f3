/// Reasoning inside a history row's content.
///
/// When jcode shows persisted reasoning (its `reasoning_display` "full"
/// mode), a history row's content starts with it, one line per reasoning
/// line, each written as dim italic markdown: `*` + U+2063 + the line with
/// its markdown characters backslash-escaped + U+2063 + `*` and a hard
/// break (two spaces, newline); an empty line is a bare newline; a blank
/// line ends the block, and the answer follows. (jcode-base
/// `session/render.rs`, jcode-render-core `reasoning.rs`.) The app shows
/// reasoning apart from the answer, before it, so it takes that block out
/// of the text.
enum HistoryReasoning {
    /// The invisible separator jcode puts inside both ends of a reasoning line's emphasis.
    static let sentinel: Unicode.Scalar = "\u{2063}"

    /// The reasoning at the start of `content` (its lines, unescaped) and
    /// the answer after it; no reasoning and `content` whole when it does
    /// not start with a reasoning line.
    static func split(_ content: String) -> (reasoning: String, text: String) {
        let scalars = content.unicodeScalars
        guard isReasoningLine(scalars[...].prefix(while: { $0 != "\n" })) else { return ("", content) }
        var lines: [String] = []
        var rest = scalars[...]
        while let newline = rest.firstIndex(of: "\n") {
            let line = rest[..<newline]
            if line.isEmpty {
                // An empty reasoning line, or the blank line that ends the block.
                rest = rest[rest.index(after: newline)...]
                if let next = rest.firstIndex(of: "\n"), isReasoningLine(rest[..<next]) {
                    lines.append("")
                    continue
                }
                break
            }
            guard isReasoningLine(line) else { break }
            lines.append(unescaped(line))
            rest = rest[rest.index(after: newline)...]
        }
        return (lines.joined(separator: "\n"), String(String.UnicodeScalarView(rest)))
    }

    /// `*⁣…⁣*  `: a reasoning line with its hard break.
    private static func isReasoningLine(_ line: Substring.UnicodeScalarView) -> Bool {
        guard line.count >= 6 else { return false }
        let chars = Array(line.prefix(2)) + Array(line.suffix(4))
        return chars[0] == "*" && chars[1] == sentinel && chars[2] == sentinel && chars[3] == "*" && chars[4] == " " && chars[5] == " "
    }

    /// The line between the sentinels, its backslash escapes undone.
    private static func unescaped(_ line: Substring.UnicodeScalarView) -> String {
        var body = line.dropFirst(2).dropLast(4)
        var out = String.UnicodeScalarView()
        while let c = body.first {
            body = body.dropFirst()
            if c == "\\", let next = body.first {
                out.append(next)
                body = body.dropFirst()
            } else {
                out.append(c)
            }
        }
        return String(out)
    }
}
