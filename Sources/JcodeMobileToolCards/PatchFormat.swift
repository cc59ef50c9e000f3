/// The two patch formats jcode's tools take, both in `patch_text`:
///
/// - `apply_patch` takes only the envelope: `*** Begin Patch`, then per file
///   `*** Add File: p` (its lines each `+`), `*** Delete File: p`, or
///   `*** Update File: p` (optionally `*** Move to: q`) with chunks opened by
///   `@@` or `@@ context` holding ` `, `-`, `+` lines (a bare empty line is an
///   empty context line; `*** End of File` may close a chunk), and
///   `*** End Patch`. Chunks carry no line numbers.
/// - `patch` takes only a unified diff: `--- old` then `+++ new` (paths cut at
///   a tab, `a/` and `b/` taken off, `/dev/null` for a new or deleted file),
///   then `@@ -l,s +l,s @@ header` hunks of ` `, `-`, `+` lines; other lines
///   (`diff --git`, `index`, `\ No newline at end of file`) are skipped.
///
/// Both are read leniently, as jcode reads them, CRLF or LF.
enum PatchFormat {
    // MARK: the envelope (apply_patch)

    /// Collects the envelope's files; false when there is no `*** Begin Patch` or no file.
    static func collectEnvelope(_ text: String, into collector: inout DiffCollector) -> Bool {
        let lines = TextLines.split(text)
        guard let begin = lines.firstIndex(where: { TextLines.trimmed($0) == "*** Begin Patch" }) else { return false }
        var i = begin + 1
        var files = 0
        while i < lines.count {
            let line = TextLines.trimmedEnd(lines[i])
            if TextLines.trimmed(line) == "*** End Patch" { break }
            i += 1
            if let path = pathAfter("*** Add File: ", in: line) {
                collector.beginFile(FileDiff(path: path, isNewFile: true))
                collector.beginHunk(oldStart: 0, newStart: 1)
                while i < lines.count, !TextLines.begins(lines[i], with: "*** ") {
                    if TextLines.begins(lines[i], with: "+") { collector.line(.added, TextLines.dropping(1, from: lines[i])) }
                    i += 1
                }
            } else if let path = pathAfter("*** Delete File: ", in: line) {
                collector.beginFile(FileDiff(path: path, isDeletion: true))
            } else if let path = pathAfter("*** Update File: ", in: line) {
                var movedTo: String?
                if i < lines.count, let target = pathAfter("*** Move to: ", in: TextLines.trimmedEnd(lines[i])) {
                    movedTo = target
                    i += 1
                }
                collector.beginFile(FileDiff(path: path, movedTo: movedTo, relativeLineNumbers: true))
                collectChunks(lines, from: &i, into: &collector)
            } else {
                continue
            }
            files += 1
        }
        collector.endFile()
        return files > 0
    }

    /// The trimmed, non-empty path after `marker` when the line starts with it.
    private static func pathAfter(_ marker: StaticString, in line: Substring) -> String? {
        guard TextLines.begins(line, with: marker) else { return nil }
        let path = TextLines.trimmed(TextLines.dropping(marker.utf8CodeUnitCount, from: line))
        return path.isEmpty ? nil : String(path)
    }

    /// An update's chunks, up to the next `*** ` line or the first line that fits no chunk.
    private static func collectChunks(_ lines: [Substring], from i: inout Int, into collector: inout DiffCollector) {
        var isFirst = true
        while i < lines.count {
            let line = TextLines.trimmedEnd(lines[i])
            if TextLines.begins(line, with: "*** "), line != "*** End of File" { return }
            if line.isEmpty {
                i += 1
                continue
            }
            var header: String?
            if line == "@@" {
                i += 1
            } else if TextLines.begins(line, with: "@@ ") {
                header = String(TextLines.dropping(3, from: line))
                i += 1
            } else if !isFirst {
                return
            }
            isFirst = false
            collector.beginHunk(oldStart: 1, newStart: 1, header: header)
            collectChunkLines(lines, from: &i, into: &collector)
        }
    }

    /// One chunk's lines, up to `*** End of File` (taken), a `*** ` or `@@`
    /// line, or after its lines a line that is none of ` `, `-`, `+`.
    private static func collectChunkLines(_ lines: [Substring], from i: inout Int, into collector: inout DiffCollector) {
        var hadLines = false
        while i < lines.count {
            let line = lines[i]
            if line == "*** End of File" {
                i += 1
                return
            }
            if TextLines.begins(line, with: "*** ") || TextLines.begins(line, with: "@@") { return }
            if let kind = marker(line) {
                collector.line(kind, line.isEmpty ? line : TextLines.dropping(1, from: line))
                hadLines = true
            } else if hadLines {
                return
            }
            i += 1
        }
    }

    /// What a chunk line's first character makes it; an empty line is empty context.
    private static func marker(_ line: Substring) -> DiffLine.Kind? {
        switch line.utf8.first {
        case nil, UInt8(ascii: " "): return .context
        case UInt8(ascii: "+"): return .added
        case UInt8(ascii: "-"): return .removed
        default: return nil
        }
    }

    // MARK: the unified diff (patch)

    /// Collects the diff's files; false when it names none.
    static func collectUnified(_ text: String, into collector: inout DiffCollector) -> Bool {
        let lines = TextLines.split(text)
        var i = 0
        var files = 0
        while i < lines.count {
            guard TextLines.begins(lines[i], with: "---") else {
                i += 1
                continue
            }
            let oldPath = headerPath(lines[i], "--- ")
            i += 1
            guard i < lines.count, TextLines.begins(lines[i], with: "+++") else { continue }
            let newPath = headerPath(lines[i], "+++ ")
            i += 1
            let isNew = oldPath == "/dev/null", isDeletion = newPath == "/dev/null"
            let path = isDeletion ? stripping("a/", from: oldPath) : stripping("b/", from: newPath)
            collector.beginFile(FileDiff(path: String(path), isNewFile: isNew, isDeletion: isDeletion))
            while i < lines.count, !TextLines.begins(lines[i], with: "---") {
                if TextLines.begins(lines[i], with: "@@") {
                    collectHunk(lines, from: &i, into: &collector)
                } else {
                    i += 1
                }
            }
            collector.endFile(keepEmpty: isNew || isDeletion)
            files = collector.files.count
        }
        return files > 0
    }

    /// The path of a `---`/`+++` line: after the marker, up to a tab.
    private static func headerPath(_ line: Substring, _ marker: StaticString) -> Substring {
        guard TextLines.begins(line, with: marker) else { return "" }
        let rest = TextLines.dropping(marker.utf8CodeUnitCount, from: line)
        guard let tab = rest.utf8.firstIndex(of: UInt8(ascii: "\t")) else { return rest }
        return rest[..<tab]
    }

    private static func stripping(_ prefix: StaticString, from path: Substring) -> Substring {
        TextLines.begins(path, with: prefix) ? TextLines.dropping(prefix.utf8CodeUnitCount, from: path) : path
    }

    /// A hunk from its `@@ -a,b +c,d @@ header` line to the next `@@` or `---`
    /// line. A header with fewer than three words is skipped, as jcode skips it.
    private static func collectHunk(_ lines: [Substring], from i: inout Int, into collector: inout DiffCollector) {
        let headerLine = lines[i]
        i += 1
        let words = headerLine.split(whereSeparator: \.isWhitespace)
        guard words.count >= 3 else { return }
        let oldStart = rangeStart(words[1], "-") ?? 1
        let newStart = rangeStart(words[2], "+") ?? oldStart
        collector.beginHunk(oldStart: oldStart, newStart: newStart, header: hunkTitle(headerLine))
        while i < lines.count, !TextLines.begins(lines[i], with: "@@"), !TextLines.begins(lines[i], with: "---") {
            switch lines[i].utf8.first {
            case UInt8(ascii: " "): collector.line(.context, TextLines.dropping(1, from: lines[i]))
            case UInt8(ascii: "+"): collector.line(.added, TextLines.dropping(1, from: lines[i]))
            case UInt8(ascii: "-"): collector.line(.removed, TextLines.dropping(1, from: lines[i]))
            default: break
            }
            i += 1
        }
        collector.endHunk()
    }

    /// `l` of `-l,s` / `+l,s`; nil when it is missing or cannot be a line
    /// number (negative, past `DiffCollector.maxLineNumber`, 20 digits).
    private static func rangeStart(_ word: Substring, _ sign: String) -> Int? {
        guard word.hasPrefix(sign) else { return nil }
        return DiffCollector.lineNumber(Int(word.dropFirst().prefix { $0 != "," }))
    }

    /// The text after the closing `@@` of a hunk header, if any.
    private static func hunkTitle(_ line: Substring) -> String? {
        let afterOpening = line.dropFirst(2)
        guard let close = afterOpening.firstRange(of: "@@") else { return nil }
        let title = TextLines.trimmed(afterOpening[close.upperBound...])
        return title.isEmpty ? nil : String(title)
    }

    // MARK: paths for the summary

    /// The paths a patch text of either format names, as far as it has
    /// arrived, in order and each once.
    static func paths(in text: String) -> [String] {
        var reader = PathReader()
        reader.read(text)
        var paths = reader.paths
        if let last = reader.pathOfLastLine(in: text) { paths.append(last) }
        return paths
    }

    /// The paths of a patch text that grows at its end, read line by line
    /// from where the last read stopped; each path is kept once (a set
    /// says which are kept).
    struct PathReader {
        private static let fileMarkers: [StaticString] = ["*** Add File: ", "*** Update File: ", "*** Delete File: "]
        /// The paths of the lines read, in order, each once.
        private(set) var paths: [String] = []
        private var seen: Set<String> = []
        /// The old path of the last `--- ` line (for a `+++ /dev/null`).
        private var oldPath = ""
        /// The byte offset where the line not ended yet starts.
        private(set) var lineStart = 0

        /// Reads the lines `text` ends from `lineStart` on: `text` must be
        /// the text last read followed by more. The last line, not ended
        /// yet, is left for `pathOfLastLine`.
        mutating func read(_ text: String) {
            let utf8 = text.utf8
            guard utf8.count > lineStart else { return }
            var start = utf8.index(utf8.startIndex, offsetBy: lineStart)
            var i = start
            while i != utf8.endIndex {
                if utf8[i] == 0x0A {
                    if let path = take(TextLines.line(text, from: start, to: i)), seen.insert(path).inserted { paths.append(path) }
                    start = utf8.index(after: i)
                }
                i = utf8.index(after: i)
            }
            lineStart = utf8.distance(from: utf8.startIndex, to: start)
        }

        /// The path the text's last line (not ended yet) names when it is one not named before.
        func pathOfLastLine(in text: String) -> String? {
            let utf8 = text.utf8
            guard utf8.count > lineStart else { return nil }
            var copy = self
            guard let path = copy.take(TextLines.line(text, from: utf8.index(utf8.startIndex, offsetBy: lineStart), to: utf8.endIndex)),
                  !seen.contains(path)
            else { return nil }
            return path
        }

        /// The path one line names, if any (a `--- ` line names the old path for later).
        private mutating func take(_ line: Substring) -> String? {
            // Read as bytes, as jcode reads them: most lines begin with none of the markers' first bytes.
            guard let first = line.utf8.first,
                  first == UInt8(ascii: "*") || first == UInt8(ascii: "-") || first == UInt8(ascii: "+")
            else { return nil }
            var path: Substring?
            for marker in PathReader.fileMarkers where TextLines.begins(line, with: marker) {
                path = TextLines.trimmed(TextLines.dropping(marker.utf8CodeUnitCount, from: line))
            }
            if TextLines.begins(line, with: "--- ") { oldPath = String(stripping("a/", from: headerPath(line, "--- "))) }
            if TextLines.begins(line, with: "+++ ") {
                let newPath = headerPath(line, "+++ ")
                path = newPath == "/dev/null" ? Substring(oldPath) : stripping("b/", from: newPath)
            }
            guard let path, !path.isEmpty else { return nil }
            return String(path)
        }
    }
}
