// Small scanners shared by the block and inline phases: HTML tags and blocks,
// table rows, link reference definitions, link destinations and labels.

enum HTMLScanner {
    /// Inline tags longer than this are text: it bounds the work per `<`.
    static let maxTagLength = 65_536

    private static let blockTags: Set<String> = [
        "address", "article", "aside", "base", "basefont", "blockquote", "body", "caption", "center", "col",
        "colgroup", "dd", "details", "dialog", "dir", "div", "dl", "dt", "fieldset", "figcaption", "figure",
        "footer", "form", "frame", "frameset", "h1", "h2", "h3", "h4", "h5", "h6", "head", "header", "hr",
        "html", "iframe", "legend", "li", "link", "main", "menu", "menuitem", "nav", "noframes", "ol",
        "optgroup", "option", "p", "param", "search", "section", "summary", "table", "tbody", "td", "tfoot",
        "th", "thead", "title", "tr", "track", "ul",
    ]
    private static let rawTags: Set<String> = ["script", "pre", "style", "textarea"]

    /// The HTML block type (1...7) starting at `i` (a "<"), if any.
    static func blockStart(_ b: UnsafeBufferPointer<UInt8>, _ i: Int, _ end: Int, allowType7: Bool) -> Int? {
        if hasPrefix(b, i, end, "<!--") { return 2 }
        if hasPrefix(b, i, end, "<?") { return 3 }
        if hasPrefix(b, i, end, "<![CDATA[") { return 5 }
        if i + 2 < end && b[i + 1] == UInt8(ascii: "!") && isLetter(b[i + 2]) { return 4 }
        let closing = i + 1 < end && b[i + 1] == UInt8(ascii: "/")
        var j = i + (closing ? 2 : 1)
        let nameStart = j
        while j < end && (isLetter(b[j]) || isDigit(b[j])) { j += 1 }
        let name = String(decoding: b[nameStart..<j], as: UTF8.self).lowercased()
        let after: UInt8 = j < end ? b[j] : 10
        let ends = after == 10 || isSpaceOrTab(after) || after == UInt8(ascii: ">")
        if !closing && rawTags.contains(name) && ends { return 1 }
        if blockTags.contains(name) && (ends || (after == UInt8(ascii: "/") && j + 1 < end && b[j + 1] == UInt8(ascii: ">"))) {
            return 6
        }
        if allowType7 && !rawTags.contains(name), let tagEnd = tag(b, i, end) {
            var k = tagEnd
            while k < end && isSpaceOrTab(b[k]) { k += 1 }
            if k == end { return 7 }
        }
        return nil
    }

    /// Whether the line holds the end condition of an HTML block of type 1...5.
    static func blockEnds(type: Int, _ b: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> Bool {
        switch type {
        case 1:
            var i = start
            while i < end {
                if b[i] == UInt8(ascii: "<") && i + 1 < end && b[i + 1] == UInt8(ascii: "/") {
                    for name in ["script>", "pre>", "style>", "textarea>"] where hasPrefix(b, i + 2, end, name, caseInsensitive: true) {
                        return true
                    }
                }
                i += 1
            }
            return false
        case 2: return find(b, start, end, "-->") != nil
        case 3: return find(b, start, end, "?>") != nil
        case 4: return find(b, start, end, ">") != nil
        default: return find(b, start, end, "]]>") != nil
        }
    }

    /// The end (after ">") of an open or closing tag starting at `i` (a "<"), if one is there.
    static func tag(_ b: UnsafeBufferPointer<UInt8>, _ i: Int, _ limit: Int) -> Int? {
        let end = min(limit, i + maxTagLength)
        var j = i + 1
        let closing = j < end && b[j] == UInt8(ascii: "/")
        if closing { j += 1 }
        guard j < end, isLetter(b[j]) else { return nil }
        while j < end && (isLetter(b[j]) || isDigit(b[j]) || b[j] == UInt8(ascii: "-")) { j += 1 }
        if closing {
            while j < end && isHTMLSpace(b[j]) { j += 1 }
            return j < end && b[j] == UInt8(ascii: ">") ? j + 1 : nil
        }
        while true {
            let spaceStart = j
            while j < end && isHTMLSpace(b[j]) { j += 1 }
            guard j < end else { return nil }
            if b[j] == UInt8(ascii: ">") { return j + 1 }
            if b[j] == UInt8(ascii: "/") { return j + 1 < end && b[j + 1] == UInt8(ascii: ">") ? j + 2 : nil }
            guard j > spaceStart, isLetter(b[j]) || b[j] == UInt8(ascii: "_") || b[j] == UInt8(ascii: ":") else { return nil }
            while j < end && (isLetter(b[j]) || isDigit(b[j]) || b[j] == UInt8(ascii: "_") || b[j] == UInt8(ascii: ".")
                              || b[j] == UInt8(ascii: ":") || b[j] == UInt8(ascii: "-")) { j += 1 }
            var k = j
            while k < end && isHTMLSpace(b[k]) { k += 1 }
            guard k < end, b[k] == UInt8(ascii: "=") else { continue }
            k += 1
            while k < end && isHTMLSpace(b[k]) { k += 1 }
            guard k < end else { return nil }
            if b[k] == UInt8(ascii: "\"") || b[k] == UInt8(ascii: "'") {
                let quote = b[k]
                k += 1
                while k < end && b[k] != quote { k += 1 }
                guard k < end else { return nil }
                j = k + 1
            } else {
                let valueStart = k
                while k < end && !isHTMLSpace(b[k]) && !"\"'=<>`".utf8.contains(b[k]) { k += 1 }
                guard k > valueStart else { return nil }
                j = k
            }
        }
    }

    static func hasPrefix(_ b: UnsafeBufferPointer<UInt8>, _ i: Int, _ end: Int, _ prefix: String, caseInsensitive: Bool = false) -> Bool {
        var j = i
        for p in prefix.utf8 {
            guard j < end else { return false }
            let c = caseInsensitive && b[j] >= 65 && b[j] <= 90 ? b[j] + 32 : b[j]
            guard c == p else { return false }
            j += 1
        }
        return true
    }

    static func find(_ b: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int, _ needle: String) -> Int? {
        var i = start
        while i < end {
            if hasPrefix(b, i, end, needle) { return i }
            i += 1
        }
        return nil
    }

    static func isLetter(_ c: UInt8) -> Bool { (c | 0x20) >= 97 && (c | 0x20) <= 122 }
    static func isHTMLSpace(_ c: UInt8) -> Bool { c == 32 || c == 9 || c == 10 || c == 13 || c == 12 }
}

/// GFM table rows.
package enum Table {
    /// The cells of a row: outer pipes dropped, split at unescaped pipes, trimmed, "\|" made "|".
    package static func cells<C: Collection>(_ row: C) -> [[UInt8]] where C.Element == UInt8, C.Index == Int {
        cellBounds(row).map { cell(row, $0) }
    }

    /// How many cells a row has (`cells(row).count`, none copied): for a
    /// caller in another module, which would call the generic `cells` unspecialized.
    package static func cellCount(_ row: [UInt8]) -> Int {
        cellBounds(row).count
    }

    /// The index of the cell that text appended to `row` (a row's line so
    /// far) goes on: its last cell, or the one after it when the line ends
    /// in an unescaped pipe (blanks after it aside); nil for a line without
    /// a cell.
    package static func openCell(_ row: [UInt8]) -> Int? {
        let cells = cellBounds(row)
        guard let last = cells.last else { return nil }
        var end = row.endIndex
        while end > row.startIndex && (isSpaceOrTab(row[end - 1]) || row[end - 1] == 10) { end -= 1 }
        return last.to < end ? cells.count : cells.count - 1
    }

    /// A cell of `row` (one of `cellBounds(row)`): copied once, trimmed, and
    /// built byte by byte only when it has a backslash.
    static func cell<C: Collection>(_ row: C, _ bounds: (from: Int, to: Int, escaped: Bool)) -> [UInt8]
    where C.Element == UInt8, C.Index == Int {
        let (from, to, escaped) = bounds
        guard escaped else { return trimmed(row[from..<to]) }
        var bytes: [UInt8] = []
        var k = from
        while k < to {
            if row[k] == UInt8(ascii: "\\") && k + 1 < to {
                if row[k + 1] != UInt8(ascii: "|") { bytes.append(row[k]) }
                bytes.append(row[k + 1])
                k += 2
            } else {
                bytes.append(row[k])
                k += 1
            }
        }
        return trimmed(bytes)
    }

    /// Where the cells of a row are (`cells`' split, untrimmed), and whether each has a
    /// backslash before some byte: indices into `row`, no copy of the line.
    static func cellBounds<C: Collection>(_ row: C) -> [(from: Int, to: Int, escaped: Bool)]
    where C.Element == UInt8, C.Index == Int {
        var start = row.startIndex, end = row.endIndex
        while start < end && (isSpaceOrTab(row[start]) || row[start] == 10) { start += 1 }
        while end > start && (isSpaceOrTab(row[end - 1]) || row[end - 1] == 10) { end -= 1 }
        if start < end && row[start] == UInt8(ascii: "|") { start += 1 }
        let empty = start == end
        var cells: [(from: Int, to: Int, escaped: Bool)] = []
        cells.reserveCapacity(8)  // most rows: one allocation, not one per doubling
        var cellStart = start
        var escaped = false  // the cell has a backslash before some byte
        var i = start
        var endsWithPipe = false
        while i < end {
            let c = row[i]
            endsWithPipe = false
            if c == UInt8(ascii: "\\") && i + 1 < end {
                escaped = true
                i += 2
                continue
            }
            if c == UInt8(ascii: "|") {
                cells.append((cellStart, i, escaped))
                cellStart = i + 1
                escaped = false
                endsWithPipe = true
            }
            i += 1
        }
        if !endsWithPipe || empty { cells.append((cellStart, end, escaped)) }
        return cells
    }

    /// The alignments of a delimiter row (`| :-- | :-: | --: |`), or nil when the line is not one.
    static func delimiterRow<C: Collection>(_ line: C) -> [MarkdownAlignment]? where C.Element == UInt8, C.Index == Int {
        // Only "|", ":", "-" and blanks can make one, with a "-": most lines are
        // refused here, before their cells are split.
        var dash = false
        for c in line {
            switch c {
            case UInt8(ascii: "-"): dash = true
            case UInt8(ascii: "|"), UInt8(ascii: ":"), 32, 9, 10: break
            default: return nil
            }
        }
        guard dash else { return nil }
        var alignments: [MarkdownAlignment] = []
        for cell in cells(line) {
            var body = cell[...]
            let left = body.first == UInt8(ascii: ":")
            if left { body = body.dropFirst() }
            let right = body.last == UInt8(ascii: ":")
            if right { body = body.dropLast() }
            guard !body.isEmpty, body.allSatisfy({ $0 == UInt8(ascii: "-") }) else { return nil }
            alignments.append(left && right ? .center : left ? .left : right ? .right : .none)
        }
        return alignments.isEmpty ? nil : alignments
    }
}

/// Link reference definitions at the start of a paragraph.
enum Definitions {
    /// Takes the definitions off the start of a paragraph's content; returns what is left.
    static func extract(_ content: [UInt8], into definitions: inout [(label: String, url: String)]) -> [UInt8] {
        guard content.first == UInt8(ascii: "[") else { return content }
        var position = 0
        while position < content.count, content[position] == UInt8(ascii: "["),
              let (label, url, end) = definition(content, position) {
            definitions.append((label, url))
            position = end
        }
        return position == 0 ? content : Array(content[position...])
    }

    /// One definition at `i`: its normalized label, its url and the start of the next line.
    private static func definition(_ s: [UInt8], _ i: Int) -> (String, String, Int)? {
        guard let labelEnd = LinkScanner.label(s, i), labelEnd < s.count, s[labelEnd] == UInt8(ascii: ":") else { return nil }
        let label = LinkScanner.normalize(s[(i + 1)..<(labelEnd - 1)])
        guard !label.isEmpty else { return nil }
        var j = LinkScanner.skipSpaceAndNewline(s, labelEnd + 1)
        guard let (url, destinationEnd) = LinkScanner.destination(s, j), destinationEnd > j || s[j] == UInt8(ascii: "<") else {
            return nil
        }
        j = destinationEnd
        let lineEndAfterDestination = restOfLineIsBlank(s, j)
        let titleStart = LinkScanner.skipSpaceAndNewline(s, j)
        if titleStart > j, let titleEnd = LinkScanner.title(s, titleStart), let end = restOfLineIsBlank(s, titleEnd) {
            return (label, url, end)
        }
        guard let end = lineEndAfterDestination else { return nil }
        return (label, url, end)
    }

    /// The start of the next line when only spaces remain on this one.
    private static func restOfLineIsBlank(_ s: [UInt8], _ i: Int) -> Int? {
        var j = i
        while j < s.count && isSpaceOrTab(s[j]) { j += 1 }
        if j == s.count { return j }
        return s[j] == 10 ? j + 1 : nil
    }
}

/// Link pieces: labels, destinations, titles, on the bytes of a paragraph.
enum LinkScanner {
    /// The end (after "]") of a link label starting at `i` (a "["): at most 999 characters, no unescaped brackets.
    static func label(_ s: [UInt8], _ i: Int) -> Int? {
        var j = i + 1
        var nonBlank = false
        while j < s.count && j - i <= 1000 {
            switch s[j] {
            case UInt8(ascii: "]"): return nonBlank ? j + 1 : nil
            case UInt8(ascii: "["): return nil
            case UInt8(ascii: "\\"):
                nonBlank = true
                j += j + 1 < s.count ? 2 : 1
                continue
            case 32, 9, 10: break
            default: nonBlank = true
            }
            j += 1
        }
        return nil
    }

    /// A label as definitions and references are matched: whitespace runs as one space, trimmed, case-folded
    /// (lowercased, uppercased, lowercased again: "ẞ", "ß" and "SS" all read "ss", as Unicode's full folding has it).
    static func normalize<C: Collection>(_ label: C) -> String where C.Element == UInt8 {
        var out: [UInt8] = []
        var space = false
        for c in label {
            if c == 32 || c == 9 || c == 10 || c == 13 {
                space = !out.isEmpty
            } else {
                if space { out.append(32); space = false }
                out.append(c)
            }
        }
        let lower = String(decoding: out, as: UTF8.self).lowercased()
        return lower.utf8.allSatisfy({ $0 < 0x80 }) ? lower : lower.uppercased().lowercased()
    }

    /// Skips spaces and tabs, with at most one newline among them.
    static func skipSpaceAndNewline(_ s: [UInt8], _ i: Int) -> Int {
        var j = i
        var newline = false
        while j < s.count {
            if isSpaceOrTab(s[j]) { j += 1 } else if s[j] == 10 && !newline { newline = true; j += 1 } else { break }
        }
        return j
    }

    /// A link destination at `i`: `<...>` or raw with balanced parentheses (at most 32 deep); its decoded url and end.
    static func destination(_ s: [UInt8], _ i: Int) -> (String, Int)? {
        guard i < s.count else { return nil }
        if s[i] == UInt8(ascii: "<") {
            var j = i + 1
            while j < s.count {
                switch s[j] {
                case UInt8(ascii: ">"): return (InlineParser.unescape(s[(i + 1)..<j]), j + 1)
                case UInt8(ascii: "<"), 10: return nil
                case UInt8(ascii: "\\"): j += 2
                default: j += 1
                }
            }
            return nil
        }
        var j = i
        var depth = 0
        loop: while j < s.count {
            let c = s[j]
            switch c {
            case UInt8(ascii: "\\") where j + 1 < s.count && isASCIIPunctuation(s[j + 1]):
                j += 2
                continue
            case UInt8(ascii: "("):
                depth += 1
                if depth > 32 { return nil }
            case UInt8(ascii: ")"):
                if depth == 0 { break loop }
                depth -= 1
            default:
                if c <= 32 || c == 127 { break loop }
            }
            j += 1
        }
        guard depth == 0 else { return nil }
        return (InlineParser.unescape(s[i..<j]), j)
    }

    /// The end of a link title at `i` ("...", '...' or (...)).
    static func title(_ s: [UInt8], _ i: Int) -> Int? {
        guard i < s.count else { return nil }
        let close: UInt8
        switch s[i] {
        case UInt8(ascii: "\""): close = UInt8(ascii: "\"")
        case UInt8(ascii: "'"): close = UInt8(ascii: "'")
        case UInt8(ascii: "("): close = UInt8(ascii: ")")
        default: return nil
        }
        var j = i + 1
        while j < s.count {
            let c = s[j]
            if c == UInt8(ascii: "\\") { j += 2; continue }
            if c == close { return j + 1 }
            if close == UInt8(ascii: ")") && c == UInt8(ascii: "(") { return nil }
            if c == 10 && j + 1 < s.count && blankLineFollows(s, j + 1) { return nil }
            j += 1
        }
        return nil
    }

    private static func blankLineFollows(_ s: [UInt8], _ i: Int) -> Bool {
        var j = i
        while j < s.count && isSpaceOrTab(s[j]) { j += 1 }
        return j == s.count || s[j] == 10
    }
}

@inline(__always) func isASCIIPunctuation(_ c: UInt8) -> Bool {
    (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126)
}
