import JcodeMobileJSON

/// What a card shows of one tool call's input, its summary and its diffs,
/// read on as the input streams: each `read` scans only the bytes added
/// since the last one, the summary is made again only from what its
/// argument gained, and the input is parsed whole (and its diffs built)
/// only once its object has closed.
///
/// It answers what `ToolSummary.summary` and `ToolDiff.diffs` answer for
/// the input read (they are made with one).
package struct ToolInputReading {
    package let name: String
    /// The canonical tool name (`ToolName.canonical`).
    let tool: String
    private(set) var members = PartialJSON.Members()
    /// The input parsed, once it is one complete JSON object.
    private(set) var object: JSONObject?
    /// Bytes of the input read.
    private(set) var bytes = 0
    /// bash: the command's first line, read on as the command grows.
    private var firstLine = FirstLineReader()
    /// apply_patch, patch: the paths named, read on line by line.
    private var paths = PatchFormat.PathReader()
    /// The summary and the diffs of the input as last read (nil: not made yet).
    private var madeSummary: String?
    private var madeDiffs: [FileDiff]??

    package init(name: String) {
        self.name = name
        tool = ToolName.canonical(name)
    }

    /// Reads `input`, which must be the input last read followed by more
    /// (the first read: the whole input so far).
    package mutating func read(_ input: String) {
        let count = input.utf8.count
        guard count != bytes else { return }
        bytes = count
        members.read(input)
        object = ToolArguments.object(input, members)
        madeSummary = nil
        madeDiffs = nil
    }

    /// The card's one-line summary (`ToolSummary.summary`).
    package mutating func summary() -> String {
        if let madeSummary { return madeSummary }
        let made: String
        switch tool {
        case "bash" where object == nil:
            made = firstLine.summary(of: members.string("command") ?? "")
        case "apply_patch" where object == nil, "patch" where object == nil:
            let text = members.string("patch_text") ?? ""
            paths.read(text)
            var first = paths.paths.first
            var count = paths.paths.count
            if let last = paths.pathOfLastLine(in: text) {
                if first == nil { first = last }
                count &+= 1
            }
            guard let first else {
                made = ""
                break
            }
            made = ToolSummary.oneLine(count == 1 ? first : "\(first) and \(count &- 1) more")
        default:
            made = ToolSummary.oneLine(ToolSummary.mainText(tool: tool, ToolArguments(object: object, members: members)))
        }
        madeSummary = made
        return made
    }

    /// The files the call changes (`ToolDiff.diffs`): built once the input is complete.
    package mutating func diffs() -> [FileDiff]? {
        if let madeDiffs { return madeDiffs }
        let made = object.flatMap { ToolDiff.diffs(tool: tool, $0) }
        madeDiffs = .some(made)
        return made
    }
}

/// `oneLine(firstLine(text))` of a text that grows at its end (a bash
/// command while it streams): the lines are looked at once each, as they
/// end. The first line that is not blank is final once its line break has
/// arrived, and what follows it matters only until a line that is not
/// blank does.
struct FirstLineReader {
    /// Where the line not ended yet starts (bytes).
    private var lineStart = 0
    /// The first line that is not blank, once it has ended.
    private var first: Range<Int>?
    /// A line that is not blank has ended after `first`.
    private var more = false
    /// The summary of `first` alone and followed by more (made once each).
    private var alone: String?
    private var followed: String?

    /// The summary of `text`, which must be the text last given followed by more.
    mutating func summary(of text: String) -> String {
        let utf8 = text.utf8
        if !more && utf8.count > lineStart {
            var start = utf8.index(utf8.startIndex, offsetBy: lineStart)
            var i = start
            while i != utf8.endIndex {
                if utf8[i] == 0x0A {
                    let line = TextLines.line(text, from: start, to: i)
                    if !TextLines.isBlank(line) {
                        if first == nil {
                            first = utf8.distance(from: utf8.startIndex, to: start)..<utf8.distance(from: utf8.startIndex, to: line.endIndex)
                        } else {
                            more = true
                        }
                    }
                    start = utf8.index(after: i)
                    if more { break }
                }
                i = utf8.index(after: i)
            }
            lineStart = utf8.distance(from: utf8.startIndex, to: start)
        }
        // The last line, not ended yet (a line of its own, as `TextLines.split` makes it).
        var last: Substring = ""
        if !more && utf8.count > lineStart {
            last = TextLines.line(text, from: utf8.index(utf8.startIndex, offsetBy: lineStart), to: utf8.endIndex)
        }
        guard let first else { return TextLines.isBlank(last) ? "" : ToolSummary.oneLine(TextLines.trimmed(last)) }
        if more || !TextLines.isBlank(last) {
            if let followed { return followed }
            let made = ToolSummary.oneLine(String(TextLines.trimmed(line(first, in: text))) + " …")
            followed = made
            return made
        }
        if let alone { return alone }
        let made = ToolSummary.oneLine(TextLines.trimmed(line(first, in: text)))
        alone = made
        return made
    }

    private func line(_ range: Range<Int>, in text: String) -> Substring {
        let utf8 = text.utf8
        let start = utf8.index(utf8.startIndex, offsetBy: range.lowerBound)
        return text[start..<utf8.index(start, offsetBy: range.count)]
    }
}
