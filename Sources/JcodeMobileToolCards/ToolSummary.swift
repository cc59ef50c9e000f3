import JcodeMobileJSON

/// The one line a tool card shows for a call: what the call is about, in
/// the words of its main argument (see `ToolArguments` for which argument
/// each jcode tool has).
public enum ToolSummary {
    /// Longest summary in characters (grapheme clusters), "…" included.
    public static let maxLength = 120

    /// One line a person can read for a tool call: bash → the command's first
    /// line ("…" when more follows); read, write, edit, multiedit → the file path;
    /// agentgrep/grep → `"pattern" in path`; glob → the pattern (`in path`); ls →
    /// the path; webfetch → the URL; websearch → the query; todo → "2 of 5 done";
    /// apply_patch/patch → the files touched ("src/a.rs and 2 more"); batch →
    /// "3 calls"; other known tools → their main argument; an unknown tool → its
    /// first string argument; nothing usable → "".
    ///
    /// At most `maxLength` characters (cut with "…"), on one line: line breaks,
    /// tabs and other control characters read as spaces. While `input` streams
    /// (incomplete JSON) it gives what has arrived, e.g. the command so far.
    public static func summary(name: String, input: String) -> String {
        var reading = ToolInputReading(name: name)
        reading.read(input)
        return reading.summary()
    }

    /// The summary before it is made one short line.
    static func mainText(tool: String, _ args: ToolArguments) -> String {
        switch tool {
        case "bash": return firstLine(args.string("command") ?? "")
        case "read", "write", "edit", "multiedit": return args.string("file_path") ?? ""
        case "agentgrep": return search(args)
        case "glob": return located(args.string("pattern"), in: args.string("path"))
        case "ls": return args.string("path") ?? ""
        case "webfetch": return args.string("url") ?? ""
        case "websearch", "session_search", "integration_tools": return args.string("query") ?? ""
        case "todo": return todoProgress(args)
        case "apply_patch", "patch": return filesTouched(args.string("patch_text") ?? "")
        case "batch": return callCount(args)
        case "open": return args.string("target") ?? ""
        case "debug_socket": return args.string("command") ?? ""
        case "subagent": return args.string("description") ?? args.string("prompt") ?? ""
        case "maintainer_feedback": return args.string("summary") ?? ""
        default: return args.firstString() ?? ""
        }
    }

    /// The first line that is not blank, trimmed, with " …" when more text follows it.
    static func firstLine(_ text: String) -> String {
        let lines = TextLines.split(text)
        guard let index = lines.firstIndex(where: { !TextLines.isBlank($0) }) else { return "" }
        let line = String(TextLines.trimmed(lines[index]))
        let more = lines[(index + 1)...].contains { !TextLines.isBlank($0) }
        return more ? line + " …" : line
    }

    /// agentgrep's search: the query (or its terms) in quotes, and where it looks.
    private static func search(_ args: ToolArguments) -> String {
        let place = args.string("path") ?? args.string("file") ?? args.string("file_path")
        if let query = args.string("query") ?? args.string("pattern") {
            return located("\"\(query)\"", in: place)
        }
        if let terms = args["terms"]?.arrayValue?.compactMap(\.stringValue), !terms.isEmpty {
            return located(terms.map { "\"\($0)\"" }.joined(separator: " "), in: place)
        }
        return place ?? ""
    }

    /// "what in where", or whichever of the two is there.
    private static func located(_ what: String?, in place: String?) -> String {
        switch (what, place) {
        case let (what?, place?) where !place.isEmpty: return "\(what) in \(place)"
        case let (what?, _): return what
        case let (nil, place?): return place
        case (nil, nil): return ""
        }
    }

    /// "2 of 5 done" from the todo list (completed items are done), once it has arrived whole.
    private static func todoProgress(_ args: ToolArguments) -> String {
        guard let todos = args["todos"]?.arrayValue else { return "" }
        if todos.isEmpty { return "no tasks" }
        let done = todos.filter { $0["status"]?.stringValue == "completed" }.count
        return "\(done) of \(todos.count) done"
    }

    /// "N calls" for a batch, once its list has arrived whole.
    private static func callCount(_ args: ToolArguments) -> String {
        guard let calls = args["tool_calls"]?.arrayValue else { return "" }
        return calls.count == 1 ? "1 call" : "\(calls.count) calls"
    }

    /// The files a patch names so far, in order, each once: "a.rs", or "a.rs and 2 more".
    static func filesTouched(_ patch: String) -> String {
        let paths = PatchFormat.paths(in: patch)
        guard let first = paths.first else { return "" }
        return paths.count == 1 ? first : "\(first) and \(paths.count - 1) more"
    }

    /// `text` as one line of at most `maxLength` characters: control
    /// characters and line separators become spaces, the ends are trimmed,
    /// and a longer text is cut at a character boundary with "…". Only the
    /// head of a long text is looked at.
    static func oneLine<S: StringProtocol>(_ text: S) -> String {
        // Twice the length leaves room for what trimming and merging
        // (a space taking a combining mark) remove.
        let head = text.prefix(2 * maxLength + 1)
        let wasCut = head.endIndex != text.endIndex
        var scalars = String.UnicodeScalarView()
        for scalar in head.unicodeScalars {
            scalars.append(breaksLine(scalar) ? " " : scalar)
        }
        let line = TextLines.trimmed(String(scalars))
        if line.isEmpty { return "" }
        if !wasCut && line.count <= maxLength { return String(line) }
        return String(TextLines.trimmedEnd(line.prefix(maxLength - 1))) + "…"
    }

    /// Whether a scalar would break or disturb a one-line label.
    private static func breaksLine(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .control || scalar == "\u{2028}" || scalar == "\u{2029}"
    }
}
