/// One line of a diff.
public struct DiffLine: Equatable, Sendable {
    public enum Kind: String, Sendable {
        case added, removed, context
    }

    public var kind: Kind
    /// The line's text, without its +/-/space marker and without its line break.
    public var text: String
    /// Its number in the old text (nil for an added line).
    public var oldLine: Int?
    /// Its number in the new text (nil for a removed line).
    public var newLine: Int?

    public init(kind: Kind, text: String, oldLine: Int?, newLine: Int?) {
        self.kind = kind
        self.text = text
        self.oldLine = oldLine
        self.newLine = newLine
    }
}

/// A run of changed lines with the unchanged lines around them.
public struct DiffHunk: Equatable, Sendable {
    /// Number of the hunk's first old line (as in `@@ -oldStart`); 0 when the old side is empty (a new file).
    public var oldStart: Int
    /// Number of the hunk's first new line.
    public var newStart: Int
    public var lines: [DiffLine]
    /// The text after `@@ … @@` (unified diff) or after `@@ ` (apply_patch), if any.
    public var header: String?

    public init(oldStart: Int, newStart: Int, lines: [DiffLine], header: String? = nil) {
        self.oldStart = oldStart
        self.newStart = newStart
        self.lines = lines
        self.header = header
    }
}

/// What a tool call changes in one file.
public struct FileDiff: Equatable, Sendable {
    public var path: String
    /// Only non-empty hunks; hunks whose lines were all past the line limit are left out.
    public var hunks: [DiffHunk]
    /// Added and removed lines, all of them, including those past the line limit.
    public var added: Int
    public var removed: Int
    public var isNewFile: Bool
    public var isDeletion: Bool
    /// Lines not kept because the diff passed `ToolDiff.lineLimit` (counts still count them).
    public var omittedLines: Int
    /// An edit with `replace_all`: the change applies at every place the old text occurs.
    public var replaceAll: Bool
    /// Where apply_patch moves the file (`*** Move to:`), if anywhere.
    public var movedTo: String?
    /// True when line numbers count from the start of the snippet the tool
    /// was given, not of the file (edit, multiedit: the core never sees the
    /// file; apply_patch: its chunks carry no line numbers).
    public var relativeLineNumbers: Bool

    public init(
        path: String, hunks: [DiffHunk] = [], added: Int = 0, removed: Int = 0,
        isNewFile: Bool = false, isDeletion: Bool = false, omittedLines: Int = 0,
        replaceAll: Bool = false, movedTo: String? = nil, relativeLineNumbers: Bool = false
    ) {
        self.path = path
        self.hunks = hunks
        self.added = added
        self.removed = removed
        self.isNewFile = isNewFile
        self.isDeletion = isDeletion
        self.omittedLines = omittedLines
        self.replaceAll = replaceAll
        self.movedTo = movedTo
        self.relativeLineNumbers = relativeLineNumbers
    }
}
