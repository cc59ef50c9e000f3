/// A picture of the current screen: SVG drawn from the laid-out semantic
/// tree, the same for the same tree on every machine (no clock, no random,
/// no font metrics: the layout's text grid decides every line).
///
/// Each visible node is a `<g data-id="…" data-role="…">` holding its shape
/// and text, nested like the tree, so two screenshots can be compared node
/// by node. What scrolled out of the message list, or lies outside the
/// viewport, is not drawn.
public enum Screenshot {
    /// The font the text grid assumes (8 points per character at 13 points).
    public static let fontFamily = "DejaVu Sans Mono, monospace"
    static let fontSize = 13
    /// From a line's top to its baseline.
    static let baseline = 15

    struct Style {
        var fill: String?
        var stroke: String?
        var text = "#111827"
        var secondary = "#4b5563"
        var bold = false
        var radius = 6
    }

    static func style(of node: SemanticNode) -> Style {
        switch node.role {
        case .screen, .list, .group: return Style(fill: nil, stroke: nil)
        case .header: return Style(fill: "#f3f4f6", stroke: nil, bold: true, radius: 0)
        case .heading: return Style(fill: nil, stroke: nil, bold: true)
        case .text, .paragraph, .listItem, .tableRow, .tableCell, .divider, .diffHunk, .diffLine, .reasoning:
            return Style(fill: nil, stroke: nil)
        case .quote, .table: return Style(fill: nil, stroke: "#d1d5db")
        case .codeBlock, .diff: return Style(fill: "#f3f4f6", stroke: "#d1d5db")
        case .message:
            let mine = node.id.hasPrefix("outbox.") || node.label.hasPrefix("You")
            return Style(fill: mine ? "#dbeafe" : "#f3f4f6", stroke: nil, text: "#111827", secondary: mine ? "#1e40af" : "#374151", bold: false, radius: 10)
        case .toolCall: return Style(fill: "#fffbeb", stroke: "#f59e0b", secondary: "#92400e")
        case .banner: return Style(fill: "#fef2f2", stroke: "#dc2626", text: "#991b1b", secondary: "#991b1b")
        case .status: return Style(fill: "#eff6ff", stroke: nil, text: "#1e3a8a", secondary: "#1d4ed8")
        case .notice: return Style(fill: "#fefce8", stroke: "#eab308", text: "#713f12", secondary: "#854d0e")
        case .sheet: return Style(fill: "#f9fafb", stroke: "#6b7280", bold: true, radius: 12)
        case .image: return Style(fill: "#e5e7eb", stroke: "#9ca3af")
        case .errorText: return Style(fill: nil, stroke: nil, text: "#dc2626", secondary: "#dc2626")
        case .button:
            return node.enabled
                ? Style(fill: "#2563eb", stroke: nil, text: "#ffffff", secondary: "#ffffff", radius: 8)
                : Style(fill: "#e5e7eb", stroke: nil, text: "#9ca3af", secondary: "#9ca3af", radius: 8)
        case .textField, .secureField: return Style(fill: "#ffffff", stroke: node.focused ? "#2563eb" : "#9ca3af")
        }
    }

    /// The SVG document of `root` (a tree laid out by `SemanticTree.build`).
    public static func svg(_ root: SemanticNode) -> String {
        var out = Output()
        let w = root.bounds.width, h = root.bounds.height
        out.append(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(w)\" height=\"\(h)\" viewBox=\"0 0 \(w) \(h)\" font-family=\"\(fontFamily)\" font-size=\"\(fontSize)\">\n")
        out.append("<rect data-id=\"background\" x=\"0\" y=\"0\" width=\"\(w)\" height=\"\(h)\" fill=\"#ffffff\"/>\n")
        draw(root, clip: root.bounds, into: &out)
        out.append("</svg>\n")
        return out.text
    }

    struct Output {
        var text = ""
        var clips = 0
        init() { text.reserveCapacity(16_384) }
        mutating func append(_ s: String) { text += s }
    }

    private static func intersects(_ a: SemanticNode.Bounds, _ b: SemanticNode.Bounds) -> Bool {
        a.width > 0 && a.height > 0 && a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height
    }

    private static func draw(_ node: SemanticNode, clip: SemanticNode.Bounds, into out: inout Output) {
        guard node.visible, intersects(node.bounds, clip) else { return }
        out.append("<g data-id=\"\(escaped(node.id))\" data-role=\"\(node.role.rawValue)\">\n")
        let style = style(of: node)
        let b = node.bounds
        switch node.role {
        case .button: drawButton(node, style, into: &out)
        case .textField, .secureField: drawField(node, style, clip: clip, into: &out)
        case .screen: break  // its label is the title the header shows
        case .list, .group:
            if !node.label.isEmpty { drawLine(node.label, x: b.x, y: b.y, style.secondary, bold: true, clip: clip, into: &out) }
        default:
            if style.fill != nil || style.stroke != nil { rect(b, style, into: &out) }
            drawText(node, style, clip: clip, into: &out)
        }
        if let scroll = node.scroll {
            // The list's children are clipped to its frame.
            out.clips += 1
            let id = "clip\(out.clips)"
            // Its children are in its content coordinates: moved by its top and its offset.
            let dy = b.y - scroll.offset
            out.append(
                "<clipPath id=\"\(id)\"><rect x=\"\(b.x)\" y=\"\(b.y)\" width=\"\(b.width)\" height=\"\(b.height)\"/></clipPath>\n<g clip-path=\"url(#\(id))\" data-scroll-offset=\"\(scroll.offset)\">\n<g transform=\"translate(0 \(dy))\">\n")
            var inner = intersection(clip, b)
            inner.y -= dy
            for child in node.children { draw(child, clip: inner, into: &out) }
            out.append("</g>\n</g>\n")
        } else {
            for child in node.children { draw(child, clip: clip, into: &out) }
        }
        out.append("</g>\n")
    }

    private static func intersection(_ a: SemanticNode.Bounds, _ b: SemanticNode.Bounds) -> SemanticNode.Bounds {
        let x = max(a.x, b.x), y = max(a.y, b.y)
        let right = min(a.x + a.width, b.x + b.width), bottom = min(a.y + a.height, b.y + b.height)
        return SemanticNode.Bounds(x: x, y: y, width: max(0, right - x), height: max(0, bottom - y))
    }

    private static func rect(_ b: SemanticNode.Bounds, _ style: Style, into out: inout Output) {
        var s = "<rect x=\"\(b.x)\" y=\"\(b.y)\" width=\"\(b.width)\" height=\"\(b.height)\""
        if style.radius > 0 { s += " rx=\"\(style.radius)\"" }
        s += " fill=\"\(style.fill ?? "none")\""
        if let stroke = style.stroke { s += " stroke=\"\(stroke)\"" }
        out.append(s + "/>\n")
    }

    /// The label's lines, then the value's, from the top of the box (the
    /// same lines the layout counted).
    private static func drawText(_ node: SemanticNode, _ style: Style, clip: SemanticNode.Bounds, into out: inout Output) {
        let perLine = Layout.charactersPerLine(node.bounds.width)
        var top = node.bounds.y + Layout.padding
        let shown = Layout.shownValue(node)
        let hasValue = shown != nil
        // With a value, the label is its caption (a speaker, a tool's name).
        let labelColor = hasValue ? style.secondary : style.text
        let labelBold = style.bold || (hasValue && node.role != .text)
        for line in Layout.lines(node.label, perLine: perLine) where !node.label.isEmpty {
            drawLine(line, x: node.bounds.x, y: top, labelColor, bold: labelBold, clip: clip, into: &out)
            top += Layout.lineHeight
        }
        if let value = shown {
            for line in Layout.lines(value, perLine: perLine) {
                if top >= clip.y + clip.height { break }
                drawLine(line, x: node.bounds.x, y: top, style.text, bold: false, clip: clip, into: &out)
                top += Layout.lineHeight
            }
        }
    }

    private static func drawLine<S: StringProtocol>(
        _ line: S, x: Int, y: Int, _ color: String, bold: Bool, clip: SemanticNode.Bounds, into out: inout Output
    ) {
        guard !line.isEmpty, y + Layout.lineHeight > clip.y, y < clip.y + clip.height else { return }
        let weight = bold ? " font-weight=\"bold\"" : ""
        out.append("<text x=\"\(x + Layout.padding)\" y=\"\(y + baseline)\" fill=\"\(color)\"\(weight) xml:space=\"preserve\">\(escaped(line))</text>\n")
    }

    private static func drawButton(_ node: SemanticNode, _ style: Style, into out: inout Output) {
        let b = node.bounds
        rect(b, style, into: &out)
        let text = fitted(node.label, Layout.charactersPerLine(b.width))
        out.append(
            "<text x=\"\(b.x + b.width / 2)\" y=\"\(b.y + (b.height - Layout.lineHeight) / 2 + baseline)\" fill=\"\(style.text)\" text-anchor=\"middle\" xml:space=\"preserve\">\(escaped(text))</text>\n")
    }

    private static func drawField(_ node: SemanticNode, _ style: Style, clip: SemanticNode.Bounds, into out: inout Output) {
        let b = node.bounds
        var top = b.y
        if !node.label.isEmpty {
            drawLine(fitted(node.label, Layout.charactersPerLine(b.width)), x: b.x - Layout.padding, y: top, "#374151", bold: false, clip: clip, into: &out)
            top += Layout.lineHeight
        }
        let box = SemanticNode.Bounds(x: b.x, y: top, width: b.width, height: Layout.fieldBoxHeight)
        var s = "<rect x=\"\(box.x)\" y=\"\(box.y)\" width=\"\(box.width)\" height=\"\(box.height)\" rx=\"6\" fill=\"\(style.fill ?? "none")\""
        if let stroke = style.stroke { s += " stroke=\"\(stroke)\"" + (node.focused ? " stroke-width=\"2\"" : "") }
        out.append(s + "/>\n")
        let value = node.value ?? ""
        let shown = value.isEmpty ? (node.placeholder ?? "") : value
        let color = value.isEmpty ? "#9ca3af" : style.text
        // A long value shows its end, where the person is typing.
        let text = tail(shown.split(separator: "\n", omittingEmptySubsequences: false).last.map(String.init) ?? "", Layout.charactersPerLine(b.width))
        drawLine(text, x: box.x, y: box.y + (Layout.fieldBoxHeight - Layout.lineHeight) / 2, color, bold: false, clip: clip, into: &out)
    }

    /// `text` cut to `limit` characters, ending in "…" when cut.
    static func fitted(_ text: String, _ limit: Int) -> String {
        let scalars = text.unicodeScalars
        guard scalars.count > limit else { return text }
        guard limit > 1 else { return "…" }
        var result = String.UnicodeScalarView()
        result.append(contentsOf: scalars.prefix(limit - 1))
        result.append("…")
        return String(result)
    }

    /// The last `limit` characters of `text`, starting with "…" when cut.
    static func tail(_ text: String, _ limit: Int) -> String {
        let scalars = text.unicodeScalars
        guard scalars.count > limit else { return text }
        guard limit > 1 else { return "…" }
        var result = String.UnicodeScalarView()
        result.append("…")
        result.append(contentsOf: scalars.suffix(limit - 1))
        return String(result)
    }

    /// Text as XML character data or an attribute value: markup characters
    /// escaped, a tab drawn as a space, and the characters XML cannot hold
    /// (other controls, U+FFFE, U+FFFF) drawn as U+FFFD.
    static func escaped<S: StringProtocol>(_ text: S) -> String {
        var result = String.UnicodeScalarView()
        for c in text.unicodeScalars {
            switch c {
            case "&": result.append(contentsOf: "&amp;".unicodeScalars)
            case "<": result.append(contentsOf: "&lt;".unicodeScalars)
            case ">": result.append(contentsOf: "&gt;".unicodeScalars)
            case "\"": result.append(contentsOf: "&quot;".unicodeScalars)
            case "\t": result.append(" ")
            default:
                if c.value < 0x20 || c.value == 0xFFFE || c.value == 0xFFFF {
                    result.append("\u{FFFD}")
                } else {
                    result.append(c)
                }
            }
        }
        return String(result)
    }
}
