/// The semantic tree as plain text, one visible node per line, indented by
/// depth: for logs, terminals and tests. Every word comes from the tree; this
/// only chooses a mark per role.
///
///     # Connect to jcode
///       Host: 127.0.0.1
///       Pairing code: (123456)
///       [Pair] (disabled)
///
/// Marks: `# title` a screen, `## text` a heading (`#` per level of a
/// message's heading), `[Label]` a button
/// (`(disabled)` when it cannot be tapped), `Label: value` a field (its
/// placeholder in parentheses when empty, `*` when focused), `Speaker: text`
/// a message, `tool name [status]` a tool card, `! text` an error, `~ text` a
/// status line, `* text` a notice, `>> title` a sheet; a message's markdown:
/// its paragraphs as they read, `• text` / `1. text` / `[x] text` list
/// items (the item's marker, or its check box), `>` a quote (its blocks
/// under it), ```` ```lang ```` then the code for a code block,
/// `| a | b |` a table row, `---` a divider; a diff `diff path +n −m` with
/// `+ `, `- ` and `  ` lines; reasoning `(thought) title`. Hidden nodes and
/// their children are left out; a node with nothing to say (an unlabelled
/// group) adds no line and no indentation.
public enum ScreenText {
    public static func render(_ root: SemanticNode) -> String {
        var lines: [String] = []
        append(root, depth: 0, to: &lines)
        return lines.joined(separator: "\n")
    }

    /// The lines of `node` and its visible descendants.
    /// A message's `variant` in words: the pictures draw it.
    static let messageStates: [String: String] = [
        "typing": "typing", "queued": "queued", "waiting": "waiting to send", "sending": "sent, not confirmed yet",
        "failed": "not delivered",
    ]

    public static func lines(_ node: SemanticNode) -> [String] {
        var lines: [String] = []
        append(node, depth: 0, to: &lines)
        return lines
    }

    private static func append(_ node: SemanticNode, depth: Int, to lines: inout [String]) {
        guard node.visible else { return }
        var childDepth = depth
        if let text = line(for: node) {
            let indent = String(repeating: "  ", count: depth)
            for (i, part) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                lines.append(trimmingTrailingSpaces(indent + (i == 0 ? "" : "  ") + part))
            }
            childDepth += 1
        }
        for child in node.children { append(child, depth: childDepth, to: &lines) }
    }

    /// The node's own line, or nil when it only groups its children.
    public static func line(for node: SemanticNode) -> String? {
        let label = node.label
        let value = node.value ?? ""
        switch node.role {
        case .screen: return label.isEmpty ? nil : "# \(label)"
        case .group, .list: return label.isEmpty ? nil : label
        case .heading:
            guard let level = node.level else { return "## \(label)" }
            return String(repeating: "#", count: max(1, min(level, 6))) + " " + value
        case .paragraph: return value
        case .listItem:
            let mark = node.checked.map { $0 ? "[x]" : "[ ]" } ?? label
            return value.isEmpty ? mark : "\(mark) \(value)"
        case .quote: return ">"
        case .codeBlock:
            let fence = "```" + (node.language ?? "")
            return node.variant == "open" ? "\(fence)\n\(value)" : "\(fence)\n\(value)\n```"
        case .table: return nil
        case .tableRow: return "| " + node.children.map { $0.value ?? "" }.joined(separator: " | ") + " |"
        case .tableCell: return nil
        case .divider: return "---"
        case .diff:
            let counts = node.counts.map { " +\($0.added) −\($0.removed)" } ?? ""
            return "diff \(label)\(counts)"
        case .diffHunk: return label.isEmpty ? nil : label
        case .diffLine:
            switch node.variant {
            case "added": return "+ " + value
            case "removed": return "- " + value
            default: return "  " + value
            }
        case .reasoning: return "(thought) " + joined(label, node.expanded == true ? value : "", ": ")
        case .header: return joined(label, value, " — ")
        case .button:
            var text = "[\(label)]"
            if node.selected == true { text += " ✓" }
            if !value.isEmpty { text += " \(value)" }
            if !node.enabled { text += " (disabled)" }
            return text
        case .textField, .secureField:
            let shown = value.isEmpty ? "(\(node.placeholder ?? ""))" : value
            let text = label.isEmpty ? shown : joined(label, shown, ": ")
            return node.focused ? text + " *" : text
        case .message:
            // What the picture draws (a typing indicator, a waiting message's look) said in words.
            let label = Self.messageStates[node.variant ?? ""].map { "\(label) (\($0))" } ?? label
            // A message written in markdown shows it as its children.
            if value.isEmpty || node.children.contains(where: \.role.isMarkdownBlock) { return label }
            return "\(label): \(value)"
        case .toolCall: return value.isEmpty ? "tool \(label)" : "tool \(label) [\(value)]"
        case .banner, .errorText: return "! " + joined(label, value, ": ")
        case .status: return "~ " + joined(label, value, " · ")
        case .notice: return "* " + label
        case .sheet: return ">> " + label
        case .image: return "[image] " + joined(label, value, ": ")
        case .text: return joined(label, value, ": ")
        }
    }

    /// `label: value`, or the one that is there; the value is left out when
    /// the label already ends with it.
    private static func joined(_ label: String, _ value: String, _ separator: String) -> String {
        if value.isEmpty || label.hasSuffix(value) { return label }
        if label.isEmpty { return value }
        if separator == ": " && label.hasSuffix(":") { return "\(label) \(value)" }
        return label + separator + value
    }

    private static func trimmingTrailingSpaces(_ s: String) -> String {
        var s = Substring(s)
        while s.last == " " { s = s.dropLast() }
        return String(s)
    }
}
