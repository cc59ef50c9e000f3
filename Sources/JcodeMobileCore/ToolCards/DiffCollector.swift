/// Builds the file diffs of one tool call line by line, numbering the lines
/// and keeping at most `limit` of them across all files; lines past the
/// limit are counted, not kept.
struct DiffCollector {
    private(set) var files: [FileDiff] = []
    private var remaining: Int
    private var file: FileDiff?
    private var fileHasLines = false
    private var hunk: DiffHunk?
    private var oldLine = 0
    private var newLine = 0

    init(limit: Int) { remaining = limit }

    /// Starts a file described by `template` (its hunks and counts are filled here).
    mutating func beginFile(_ template: FileDiff) {
        endFile()
        file = template
        fileHasLines = false
    }

    /// Starts a hunk whose first old and new lines have the given numbers.
    mutating func beginHunk(oldStart: Int, newStart: Int, header: String? = nil) {
        endHunk()
        hunk = DiffHunk(oldStart: oldStart, newStart: newStart, lines: [], header: header)
        oldLine = oldStart
        newLine = newStart
    }

    /// Adds a line to the open hunk: counted always, kept while the limit allows.
    mutating func line(_ kind: DiffLine.Kind, _ text: Substring) {
        guard file != nil, hunk != nil else { return }
        fileHasLines = true
        let numbers = (old: kind == .added ? nil : oldLine, new: kind == .removed ? nil : newLine)
        if kind != .added { oldLine += 1 }
        if kind != .removed { newLine += 1 }
        switch kind {
        case .added: file?.added += 1
        case .removed: file?.removed += 1
        case .context: break
        }
        guard remaining > 0 else {
            file?.omittedLines += 1
            return
        }
        remaining -= 1
        hunk?.lines.append(DiffLine(kind: kind, text: String(text), oldLine: numbers.old, newLine: numbers.new))
    }

    /// Closes the open hunk; an empty one is dropped.
    mutating func endHunk() {
        if let hunk, !hunk.lines.isEmpty { file?.hunks.append(hunk) }
        hunk = nil
    }

    /// Closes the open file. With `keepEmpty` false a file that got no lines is dropped.
    mutating func endFile(keepEmpty: Bool = true) {
        endHunk()
        if let file, keepEmpty || fileHasLines { files.append(file) }
        file = nil
    }

    /// Every file, the last one closed.
    mutating func finish() -> [FileDiff] {
        endFile()
        return files
    }
}
