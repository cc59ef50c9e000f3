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

    /// The largest line number a hunk may start at. A header naming a line
    /// past it (`@@ -9223372036854775807 …`) describes no real file; its
    /// start is taken as unknown, and counting on from it cannot overflow.
    static let maxLineNumber = 999_999_999

    init(limit: Int) { remaining = limit }

    /// `number` when it can be a line number (0 up to `maxLineNumber`), else nil.
    static func lineNumber(_ number: Int?) -> Int? {
        guard let number, number >= 0, number <= maxLineNumber else { return nil }
        return number
    }

    /// Starts a file described by `template` (its hunks and counts are filled here).
    mutating func beginFile(_ template: FileDiff) {
        endFile()
        file = template
        fileHasLines = false
    }

    /// Starts a hunk whose first old and new lines have the given numbers;
    /// a number that cannot be a line number (see `lineNumber`) becomes 1.
    mutating func beginHunk(oldStart: Int, newStart: Int, header: String? = nil) {
        endHunk()
        let oldStart = Self.lineNumber(oldStart) ?? 1, newStart = Self.lineNumber(newStart) ?? 1
        hunk = DiffHunk(oldStart: oldStart, newStart: newStart, lines: [], header: header)
        oldLine = oldStart
        newLine = newStart
    }

    /// Adds a line to the open hunk: counted always, kept while the limit allows.
    mutating func line(_ kind: DiffLine.Kind, _ text: Substring) {
        guard file != nil, hunk != nil else { return }
        fileHasLines = true
        let numbers = (old: kind == .added ? nil : oldLine, new: kind == .removed ? nil : newLine)
        // Saturating: a hunk starts at most at `maxLineNumber`, and its lines
        // are counted from the input, so this bound is never reached in practice.
        if kind != .added, oldLine < Int.max { oldLine += 1 }
        if kind != .removed, newLine < Int.max { newLine += 1 }
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
