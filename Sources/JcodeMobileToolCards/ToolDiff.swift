import JcodeMobileJSON

/// The diffs a tool call's input describes, for a card to show what the
/// agent changes while (or before) it changes it.
public enum ToolDiff {
    /// Most diff lines kept for one tool call, across all its files; lines
    /// past it are counted in `FileDiff.omittedLines` (and in added/removed).
    public static let lineLimit = 2_000

    /// The files a tool call changes, or nil when the tool makes no diff or
    /// its input is not a complete, well-formed call (a card then shows the
    /// summary, never an error).
    ///
    /// - edit: `old_string` → `new_string` as a line diff with 3 lines of
    ///   context, numbered within the snippet (`relativeLineNumbers`);
    ///   `replace_all` sets `replaceAll`.
    /// - multiedit: the hunks of each edit in turn, each numbered within its own snippet.
    /// - write: every line of `content` added (`isNewFile`, as far as the card knows).
    /// - apply_patch: the `*** Begin Patch` envelope; patch: a unified diff
    ///   (see `PatchFormat`); one `FileDiff` per file.
    public static func diffs(name: String, input: String) -> [FileDiff]? {
        guard let args = (try? JSONParser.parse(input))?.objectValue else { return nil }
        return diffs(tool: ToolName.canonical(name), args)
    }

    /// The diffs of a complete input parsed, for the tool `tool` (a canonical name).
    static func diffs(tool: String, _ args: JSONObject) -> [FileDiff]? {
        var collector = DiffCollector(limit: lineLimit)
        let made: Bool
        switch tool {
        case "edit": made = collectEdit(args, into: &collector)
        case "multiedit": made = collectMultiEdit(args, into: &collector)
        case "write": made = collectWrite(args, into: &collector)
        case "apply_patch": made = args["patch_text"]?.stringValue.map { PatchFormat.collectEnvelope($0, into: &collector) } ?? false
        case "patch": made = args["patch_text"]?.stringValue.map { PatchFormat.collectUnified($0, into: &collector) } ?? false
        default: made = false
        }
        return made ? collector.finish() : nil
    }

    /// One edit's strings and flag; nil when a string is missing or a field has the wrong type.
    private static func edit(_ value: JSONValue) -> (old: String, new: String, replaceAll: Bool)? {
        guard let old = value["old_string"]?.stringValue, let new = value["new_string"]?.stringValue else { return nil }
        switch value["replace_all"] {
        case nil, .null?: return (old, new, false)
        case .bool(let flag)?: return (old, new, flag)
        default: return nil
        }
    }

    private static func collectEdit(_ args: JSONObject, into collector: inout DiffCollector) -> Bool {
        guard let path = args["file_path"]?.stringValue, let edit = edit(.object(args)) else { return false }
        collector.beginFile(FileDiff(path: path, replaceAll: edit.replaceAll, relativeLineNumbers: true))
        LineDiff.collect(old: edit.old, new: edit.new, into: &collector)
        return true
    }

    private static func collectMultiEdit(_ args: JSONObject, into collector: inout DiffCollector) -> Bool {
        guard let path = args["file_path"]?.stringValue, let list = args["edits"]?.arrayValue else { return false }
        var edits: [(old: String, new: String, replaceAll: Bool)] = []
        for value in list {
            guard let edit = edit(value) else { return false }
            edits.append(edit)
        }
        let replaceAll = edits.contains { $0.replaceAll }
        collector.beginFile(FileDiff(path: path, replaceAll: replaceAll, relativeLineNumbers: true))
        for edit in edits { LineDiff.collect(old: edit.old, new: edit.new, into: &collector) }
        return true
    }

    private static func collectWrite(_ args: JSONObject, into collector: inout DiffCollector) -> Bool {
        guard let path = args["file_path"]?.stringValue, let content = args["content"]?.stringValue else { return false }
        collector.beginFile(FileDiff(path: path, isNewFile: true))
        collector.beginHunk(oldStart: 0, newStart: 1)
        for line in TextLines.split(content) { collector.line(.added, line) }
        return true
    }
}
