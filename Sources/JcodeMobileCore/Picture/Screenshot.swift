import JcodeMobileMarkdown

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
    static let fontSize = Layout.bodyGrid.fontSize
    /// From a line's top to its baseline.
    static let baseline = Layout.bodyGrid.baseline

    struct Style {
        var fill: String?
        var stroke: String?
        var text = "#111827"
        var secondary = "#4b5563"
        var bold = false
        var radius = 6
        /// The value's text bold too (a heading, a table's header cell).
        var valueBold = false
        /// An outline in dashes (a message not sent yet).
        var dashed = false
    }

    static func style(of node: SemanticNode) -> Style {
        switch node.role {
        case .screen, .list, .group: return Style(fill: nil, stroke: nil)
        case .header: return Style(fill: "#f3f4f6", stroke: nil, bold: true, radius: 0)
        case .heading: return Style(fill: nil, stroke: nil, bold: true, valueBold: true)
        case .text, .paragraph, .listItem, .tableRow, .divider: return Style(fill: nil, stroke: nil)
        case .tableCell: return Style(fill: nil, stroke: "#d1d5db", radius: 0)
        case .diffHunk: return Style(fill: nil, stroke: nil, text: "#6b7280", secondary: "#6b7280")
        case .diffLine:
            switch node.variant {
            case "added": return Style(fill: "#dcfce7", stroke: nil, text: "#166534", secondary: "#15803d", radius: 0)
            case "removed": return Style(fill: "#fee2e2", stroke: nil, text: "#991b1b", secondary: "#b91c1c", radius: 0)
            default: return Style(fill: nil, stroke: nil, text: "#374151", secondary: "#9ca3af", radius: 0)
            }
        case .reasoning: return Style(fill: nil, stroke: nil, text: "#4b5563", secondary: "#4b5563")
        case .quote: return Style(fill: nil, stroke: nil, text: "#4b5563")
        case .table: return Style(fill: nil, stroke: nil)
        case .codeBlock: return Style(fill: "#f6f8fa", stroke: "#d1d5db", text: "#1f2937", secondary: "#6b7280")
        case .diff: return Style(fill: "#ffffff", stroke: "#d1d5db", secondary: "#374151")
        case .message:
            let mine = node.id.hasPrefix("outbox.") || node.label.hasPrefix("You")
            switch node.variant {
            case "waiting", "sending", "queued":
                // Not sent (or not taken) yet: a paler bubble, outlined in dashes.
                return Style(fill: "#f8fafc", stroke: "#60a5fa", text: "#374151", secondary: "#1e40af", radius: 10, dashed: true)
            case "failed": return Style(fill: "#fef2f2", stroke: "#dc2626", text: "#111827", secondary: "#991b1b", radius: 10)
            default:
                return Style(fill: mine ? "#dbeafe" : "#f3f4f6", stroke: nil, text: "#111827", secondary: mine ? "#1e40af" : "#374151", bold: false, radius: 10)
            }
        case .toolCall: return Style(fill: "#fffbeb", stroke: "#f59e0b", secondary: "#92400e")
        case .banner: return Style(fill: "#fef2f2", stroke: "#dc2626", text: "#991b1b", secondary: "#991b1b")
        case .status: return Style(fill: "#eff6ff", stroke: nil, text: "#1e3a8a", secondary: "#1d4ed8")
        case .notice:
            // By its kind (`variant`): a warning amber, the rest a quiet grey-blue.
            if node.variant == "warning" { return Style(fill: "#fefce8", stroke: "#eab308", text: "#713f12", secondary: "#854d0e") }
            return Style(fill: "#f8fafc", stroke: "#cbd5e1", text: "#334155", secondary: "#475569")
        case .sheet: return Style(fill: "#f9fafb", stroke: "#6b7280", bold: true, radius: 12)
        case .image: return Style(fill: "#e5e7eb", stroke: "#9ca3af")
        case .errorText: return Style(fill: nil, stroke: nil, text: "#b91c1c", secondary: "#b91c1c")
        case .button: return buttonStyle(node)
        case .textField, .secureField: return Style(fill: "#ffffff", stroke: node.focused ? "#2563eb" : "#9ca3af")
        }
    }

    /// A button by its variant: `primary` filled blue, `secondary` white
    /// with a grey border, `destructive` outlined in red (Deny never looks
    /// like Approve); a disabled one grey whatever its variant.
    static func buttonStyle(_ node: SemanticNode) -> Style {
        // Disabled: a flat grey, its words still readable (4.5:1 and more).
        guard node.enabled else { return Style(fill: "#f3f4f6", stroke: nil, text: "#4b5563", secondary: "#4b5563", radius: 8) }
        switch node.variant {
        case "secondary": return Style(fill: "#ffffff", stroke: "#9ca3af", text: "#111827", secondary: "#111827", radius: 8)
        case "destructive": return Style(fill: "#fef2f2", stroke: "#dc2626", text: "#b91c1c", secondary: "#b91c1c", radius: 8)
        default: return Style(fill: "#2563eb", stroke: nil, text: "#ffffff", secondary: "#ffffff", radius: 8)
        }
    }

    /// The SVG document of `root` (a tree laid out by `SemanticTree.build`),
    /// in the light palette or, `appearance` dark, in the dark one.
    public static func svg(_ root: SemanticNode, appearance: Appearance = .light, safeArea: Layout.Insets? = nil) -> String {
        let light = svg(root, safeArea: safeArea)
        return appearance == .dark ? darkened(light) : light
    }

    /// The SVG document of `root` in the light palette; `safeArea` the
    /// viewport's as the host gave it (nil: `Layout.safeArea`'s by shape).
    public static func svg(_ root: SemanticNode, safeArea: Layout.Insets? = nil) -> String {
        var out = Output()
        let w = root.bounds.width, h = root.bounds.height
        let viewport = SemanticTree.Viewport(width: w, height: h, safeArea: safeArea)
        out.append(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(w)\" height=\"\(h)\" viewBox=\"0 0 \(w) \(h)\" font-family=\"\(proseFontFamily)\" font-size=\"\(fontSize)\">\n")
        out.append("<rect data-id=\"background\" x=\"0\" y=\"0\" width=\"\(w)\" height=\"\(h)\" fill=\"#ffffff\"/>\n")
        drawStatusBar(viewport, into: &out)
        draw(root, clip: root.bounds, into: &out)
        drawHomeIndicator(viewport, into: &out)
        out.append("</svg>\n")
        return out.text
    }

    /// What a phone draws in the top safe area (`Layout.safeTop`): a clock
    /// and a battery, the same in every picture. None on its side.
    static func drawStatusBar(_ viewport: SemanticTree.Viewport, into out: inout Output) {
        let band = Layout.safeTop(viewport)
        guard band > 0 else { return }
        let y = band / 2 + 6
        let right = viewport.width - 24
        out.append(
            "<g data-id=\"status_bar\"><text x=\"32\" y=\"\(y)\" fill=\"#111827\" font-size=\"15\" font-weight=\"bold\">9:41</text>"
                + "<rect x=\"\(right - 25)\" y=\"\(y - 11)\" width=\"23\" height=\"12\" rx=\"3\" fill=\"none\" stroke=\"#111827\"/>"
                + "<rect x=\"\(right - 23)\" y=\"\(y - 9)\" width=\"17\" height=\"8\" rx=\"1.5\" fill=\"#111827\"/>"
                + "<rect x=\"\(right - 1)\" y=\"\(y - 7)\" width=\"2\" height=\"4\" rx=\"1\" fill=\"#111827\"/></g>\n")
    }

    /// What a phone draws in the bottom safe area: its home indicator, a
    /// rounded bar across the middle, 8 points above the bottom edge (none
    /// when the safe area has no bottom: a phone with a home button).
    static func drawHomeIndicator(_ viewport: SemanticTree.Viewport, into out: inout Output) {
        guard Layout.safeArea(viewport).bottom > 0 else { return }
        let width = 134
        out.append(
            "<rect data-id=\"home_indicator\" x=\"\((viewport.width - width) / 2)\" y=\"\(viewport.height - 13)\" width=\"\(width)\" height=\"5\" rx=\"2.5\" fill=\"#111827\"/>\n")
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

    /// `header`: the node is in a table's header row (its text bold).
    /// `mono`: the node is inside one drawn in monospace.
    private static func draw(_ node: SemanticNode, clip: SemanticNode.Bounds, header: Bool = false, mono inherited: Bool = false, into out: inout Output) {
        guard node.visible, intersects(node.bounds, clip) else { return }
        let mono = inherited || isMonospace(node)
        // Code, a diff, a command or a path: its subtree in monospace.
        let face = mono && !inherited ? " font-family=\"\(fontFamily)\"" : ""
        out.append("<g data-id=\"\(escaped(node.id))\" data-role=\"\(node.role.rawValue)\"\(face)>\n")
        var style = style(of: node)
        if header { style.valueBold = true }
        let b = node.bounds
        switch node.role {
        case .button: drawButton(node, style, clip: clip, into: &out)
        case .textField, .secureField: drawField(node, style, clip: clip, into: &out)
        case .screen, .table, .tableRow: break  // a screen's label is the title the header shows; a table is its cells
        case .list, .group:
            if !node.label.isEmpty { drawLine(node.label, x: b.x, y: b.y, style.secondary, bold: true, clip: clip, into: &out) }
        case .divider:
            let y = b.y + b.height / 2
            out.append("<line x1=\"\(b.x)\" y1=\"\(y)\" x2=\"\(b.x + b.width)\" y2=\"\(y)\" stroke=\"#d1d5db\"/>\n")
        case .quote:
            out.append("<rect x=\"\(b.x)\" y=\"\(b.y)\" width=\"3\" height=\"\(b.height)\" fill=\"#d1d5db\"/>\n")
            drawText(node, style, mono: mono, clip: clip, into: &out)
        case .reasoning:
            out.append("<rect x=\"\(b.x)\" y=\"\(b.y)\" width=\"2\" height=\"\(b.height)\" fill=\"#d1d5db\"/>\n")
            drawText(node, style, italic: true, mono: mono, clip: clip, into: &out)
            drawChevron(node, style, clip: clip, into: &out)
        default:
            if style.fill != nil || style.stroke != nil { rect(b, style, into: &out) }
            if node.role == .header {
                // The header's bottom edge: what scrolls under it stops there.
                out.append("<line x1=\"0\" y1=\"\(b.y + b.height)\" x2=\"\(b.x * 2 + b.width)\" y2=\"\(b.y + b.height)\" stroke=\"#d1d5db\"/>\n")
            }
            drawText(node, style, mono: mono, clip: clip, into: &out)
            if node.role == .toolCall { drawChevron(node, style, clip: clip, into: &out) }
            if node.role == .message { drawMessageState(node, style, clip: clip, into: &out) }
        }
        let inHeader = header || (node.role == .tableRow && node.variant == "header")
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
            for child in node.children { draw(child, clip: inner, header: inHeader, mono: mono, into: &out) }
            out.append("</g>\n</g>\n")
        } else {
            for child in node.children { draw(child, clip: clip, header: inHeader, mono: mono, into: &out) }
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
        if style.dashed { s += " stroke-dasharray=\"5 3\"" }
        out.append(s + "/>\n")
    }

    /// Whether a text line from `y` is wholly inside `clip`: a line cut by
    /// the list's edge (under the header, above the composer) is not drawn
    /// at all rather than half.
    static func fits(_ y: Int, _ height: Int, _ clip: SemanticNode.Bounds) -> Bool {
        y >= clip.y && y + height <= clip.y + clip.height
    }

    /// The label's lines, then the value's, from the top of the box (the
    /// same lines the layout counted): a code block's language above its
    /// code, a list item's marker and a diff line's sign in its gutter, a
    /// heading larger, styled runs (`spans`) as they are styled.
    private static func drawText(
        _ node: SemanticNode, _ style: Style, italic: Bool = false, mono: Bool = false, clip: SemanticNode.Bounds, into out: inout Output
    ) {
        let b = node.bounds
        let frame = Layout.textFrame(node)
        let perLine = Layout.charactersPerLine(frame.width)
        var top = frame.y + (node.role == .diffLine ? 0 : Layout.padding)
        let shown = Layout.shownValue(node)
        let hasValue = shown != nil
        // With a value, the label is its caption (a speaker, a tool's name),
        // but for a list item, whose label is its marker.
        let labelColor = hasValue ? style.secondary : style.text
        let labelBold = style.bold || (hasValue && node.role != .text)
        if node.role != .listItem && !node.label.isEmpty {
            for line in Layout.lines(node.label, perLine: perLine) {
                drawLine(line, x: frame.x, y: top, labelColor, bold: labelBold, italic: italic, clip: clip, into: &out)
                top += Layout.lineHeight
            }
        }
        let header = Layout.headerHeight(node)
        if header > 0 {
            // The language at the left of the header, across from its buttons.
            if let language = node.language, !language.isEmpty, fits(top, header, clip) {
                let room = max(1, (b.width - 2 * Layout.padding - node.children.reduce(0) { $0 + $1.bounds.width + Layout.gap }) / Layout.charWidth)
                out.append("<text x=\"\(b.x + Layout.padding)\" y=\"\(top + header / 2 + 4)\" fill=\"\(style.secondary)\" font-size=\"11\" xml:space=\"preserve\">\(escaped(fitted(language, room)))</text>\n")
            }
            top += header
        }
        let grid = Layout.grid(node)
        let gutter = Layout.gutter(node)
        let x = frame.x + gutter
        if node.role == .listItem { drawMarker(node, style, y: top, clip: clip, into: &out) }
        guard let value = shown else { return }
        if node.role == .diff {
            drawCounts(value, x: x, y: top, clip: clip, into: &out)
            return
        }
        let valuePerLine = Layout.valueCharactersPerLine(node, width: frame.width)
        let runs = Runs(node.spans, value: value)
        var font = ""
        if grid.fontSize != fontSize { font += " font-size=\"\(grid.fontSize)\"" }
        if style.valueBold { font += " font-weight=\"bold\"" }
        if italic { font += " font-style=\"italic\"" }
        let sign: String? = node.role == .diffLine ? (node.variant == "added" ? "+" : (node.variant == "removed" ? "-" : " ")) : nil
        var first = true
        var scan = Runs.Cursor()
        Layout.forEachLine(value, perLine: valuePerLine) { range in
            defer { top += grid.lineHeight; first = false }
            guard top < clip.y + clip.height, fits(top, grid.lineHeight, clip) else { return }
            if let sign, first, sign != " " {
                out.append("<text x=\"\(b.x + Layout.padding)\" y=\"\(top + grid.baseline)\" fill=\"\(style.secondary)\">\(sign)</text>\n")
            }
            let line = value[range]
            guard !line.isEmpty else { return }
            let left = x + Layout.padding
            let baseline = top + grid.baseline
            if let runs {
                runs.draw(
                    value, range, cursor: &scan, x: left, y: baseline, top: top, grid: grid, color: style.text, font: font,
                    bold: style.valueBold, mono: mono, into: &out)
            } else {
                out.append("<text x=\"\(left)\" y=\"\(baseline)\" fill=\"\(style.text)\"\(font) xml:space=\"preserve\">\(escaped(line))</text>\n")
            }
        }
    }

    /// A list item's marker, and a task item's check box after it.
    private static func drawMarker(_ node: SemanticNode, _ style: Style, y: Int, clip: SemanticNode.Bounds, into out: inout Output) {
        guard fits(y, Layout.lineHeight, clip) else { return }
        let x = node.bounds.x + Layout.padding
        out.append("<text x=\"\(x)\" y=\"\(y + baseline)\" fill=\"#4b5563\" xml:space=\"preserve\">\(escaped(node.label))</text>\n")
        guard let checked = node.checked else { return }
        let boxX = x + (node.label.unicodeScalars.count + 1) * Layout.charWidth
        out.append(
            "<rect data-check=\"\(checked)\" x=\"\(boxX)\" y=\"\(y + 4)\" width=\"12\" height=\"12\" rx=\"2\" fill=\"\(checked ? "#2563eb" : "#ffffff")\" stroke=\"\(checked ? "#2563eb" : "#6b7280")\"/>\n")
        if checked {
            out.append("<path d=\"M\(boxX + 3) \(y + 10) l3 3 l6 -6\" fill=\"none\" stroke=\"#ffffff\" stroke-width=\"2\"/>\n")
        }
    }

    /// A diff's "+3 −1": the added count green, the removed red.
    private static func drawCounts(_ value: String, x: Int, y: Int, clip: SemanticNode.Bounds, into out: inout Output) {
        guard fits(y, Layout.lineHeight, clip) else { return }
        var s = "<text x=\"\(x + Layout.padding)\" y=\"\(y + baseline)\" fill=\"#374151\" xml:space=\"preserve\">"
        var firstWord = true
        for word in value.split(separator: " ", omittingEmptySubsequences: false) {
            if !firstWord { s += " " }
            firstWord = false
            let color = word.hasPrefix("+") ? "#15803d" : (word.hasPrefix("−") || word.hasPrefix("-") ? "#b91c1c" : nil)
            if let color { s += "<tspan fill=\"\(color)\">\(escaped(word))</tspan>" } else { s += escaped(word) }
        }
        out.append(s + "</text>\n")
    }

    /// A message's state on its first line, after its speaker: three dots
    /// while the reply is being written, else at the right what became of
    /// a message not taken yet ("Waiting to send", "Sending…", "Queued",
    /// "Not delivered").
    private static func drawMessageState(_ node: SemanticNode, _ style: Style, clip: SemanticNode.Bounds, into out: inout Output) {
        let b = node.bounds
        let top = b.y + Layout.padding
        guard let variant = node.variant, fits(top, Layout.lineHeight, clip) else { return }
        if variant == "typing" {
            let x = b.x + Layout.padding + node.label.unicodeScalars.count * Layout.charWidth + 8
            for k in 0..<3 {
                out.append("<circle data-typing=\"\(k)\" cx=\"\(x + k * 8)\" cy=\"\(top + 11)\" r=\"2.5\" fill=\"#9ca3af\"/>\n")
            }
            return
        }
        let words: String
        switch variant {
        case "waiting": words = "Waiting to send"
        case "sending": words = "Sending…"
        case "queued": words = "Queued"
        case "failed": words = "Not delivered"
        default: return
        }
        let color = variant == "failed" ? "#b91c1c" : "#1d4ed8"
        out.append(
            "<text x=\"\(b.x + b.width - Layout.padding)\" y=\"\(top + baseline)\" fill=\"\(color)\" font-size=\"11\" text-anchor=\"end\" xml:space=\"preserve\">\(words)</text>\n")
    }

    /// A collapsible node's state, at its top right: ▸ closed, ▾ open.
    private static func drawChevron(_ node: SemanticNode, _ style: Style, clip: SemanticNode.Bounds, into out: inout Output) {
        guard let expanded = node.expanded else { return }
        let b = node.bounds
        let y = b.y + Layout.padding
        guard fits(y, Layout.lineHeight, clip) else { return }
        out.append(
            "<text x=\"\(b.x + b.width - Layout.padding)\" y=\"\(y + baseline)\" fill=\"\(style.secondary)\" text-anchor=\"end\">\(expanded ? "▾" : "▸")</text>\n")
    }

    private static func drawLine<S: StringProtocol>(
        _ line: S, x: Int, y: Int, _ color: String, bold: Bool, italic: Bool = false, clip: SemanticNode.Bounds, into out: inout Output
    ) {
        guard !line.isEmpty, fits(y, Layout.lineHeight, clip) else { return }
        let weight = (bold ? " font-weight=\"bold\"" : "") + (italic ? " font-style=\"italic\"" : "")
        out.append("<text x=\"\(x + Layout.padding)\" y=\"\(y + baseline)\" fill=\"\(color)\"\(weight) xml:space=\"preserve\">\(escaped(line))</text>\n")
    }

    private static func drawButton(_ node: SemanticNode, _ style: Style, clip: SemanticNode.Bounds, into out: inout Output) {
        let b = node.bounds
        rect(b, style, into: &out)
        let top = b.y + (b.height - Layout.lineHeight) / 2
        guard fits(top, Layout.lineHeight, clip) else { return }
        guard node.selected == nil else {
            drawOption(node, style, top: top, into: &out)
            return
        }
        if let icon = node.icon, let glyph = glyph(icon, fill: style.text) {
            out.append(
                "<g data-icon=\"\(escaped(icon))\" transform=\"translate(\(b.x + b.width / 2) \(b.y + b.height / 2))\" fill=\"none\" stroke=\"\(style.text)\" stroke-width=\"2\" stroke-linecap=\"round\" stroke-linejoin=\"round\">\(glyph)</g>\n")
            return
        }
        let text = fitted(node.label, Layout.charactersPerLine(b.width))
        out.append(
            "<text x=\"\(b.x + b.width / 2)\" y=\"\(top + baseline)\" fill=\"\(style.text)\" text-anchor=\"middle\" xml:space=\"preserve\">\(escaped(text))</text>\n")
    }

    /// A simple drawing of an SF Symbol, about 18 points across, centred on
    /// (0, 0), its filled parts in `fill`. Nil for a name not drawn here
    /// (the button then shows its words).
    static func glyph(_ name: String, fill FILL: String) -> String? {
        switch name {
        case "arrow.up": return "<path d=\"M0 8 V-8 M-7 -1 L0 -8 L7 -1\"/>"
        case "arrow.up.to.line": return "<path d=\"M0 9 V-4 M-6 2 L0 -4 L6 2 M-8 -9 H8\"/>"
        case "stop.fill": return "<rect x=\"-6\" y=\"-6\" width=\"12\" height=\"12\" rx=\"2\" fill=\"\(FILL)\"/>"
        case "paperclip": return "<path d=\"M6 -2 L-1 5 A3 3 0 0 1 -5 1 L3 -7 A5 5 0 0 1 10 0 L2 8 A7 7 0 0 1 -8 -2 L-2 -8\"/>"
        case "mic", "mic.fill":
            let fill = name == "mic.fill" ? " fill=\"\(FILL)\"" : ""
            return "<rect x=\"-3.5\" y=\"-9\" width=\"7\" height=\"12\" rx=\"3.5\"\(fill)/><path d=\"M-7 -1 A7 7 0 0 0 7 -1 M0 6 V9 M-4 9 H4\"/>"
        case "list.bullet":
            return "<path d=\"M-3 -6 H8 M-3 0 H8 M-3 6 H8\"/><circle cx=\"-7\" cy=\"-6\" r=\"1.3\" fill=\"\(FILL)\"/><circle cx=\"-7\" cy=\"0\" r=\"1.3\" fill=\"\(FILL)\"/><circle cx=\"-7\" cy=\"6\" r=\"1.3\" fill=\"\(FILL)\"/>"
        case "gearshape":
            return "<circle r=\"6\"/><circle r=\"2.5\"/><path d=\"M0 -9 V-6 M0 6 V9 M-9 0 H-6 M6 0 H9 M-6.4 -6.4 L-4.2 -4.2 M4.2 4.2 L6.4 6.4 M-6.4 6.4 L-4.2 4.2 M4.2 -4.2 L6.4 -6.4\"/>"
        case "chevron.left": return "<path d=\"M3 -8 L-5 0 L3 8\"/>"
        case "xmark": return "<path d=\"M-6 -6 L6 6 M6 -6 L-6 6\"/>"
        case "doc.on.doc": return "<rect x=\"-4\" y=\"-4\" width=\"10\" height=\"12\" rx=\"2\"/><path d=\"M-7 4 V-7 A1 1 0 0 1 -6 -8 H3\"/>"
        default: return nil
        }
    }

    /// An option of a choice (a session, a model, an effort) as a row of a
    /// list: its label at the left, its value (a session's last message)
    /// under it, paler, and a check mark at the right of the one in use.
    private static func drawOption(_ node: SemanticNode, _ style: Style, top: Int, into out: inout Output) {
        let b = node.bounds
        let mark = 2 * Layout.charWidth
        let value = node.value ?? ""
        let first = value.isEmpty ? top : b.y + Layout.padding
        let text = fitted(node.label, Layout.charactersPerLine(b.width - mark))
        out.append("<text x=\"\(b.x + Layout.padding + 4)\" y=\"\(first + baseline)\" fill=\"\(style.text)\" xml:space=\"preserve\">\(escaped(text))</text>\n")
        if !value.isEmpty {
            let line = fitted(value, Layout.charactersPerLine(b.width - mark))
            out.append(
                "<text x=\"\(b.x + Layout.padding + 4)\" y=\"\(first + Layout.lineHeight + baseline)\" fill=\"#4b5563\" xml:space=\"preserve\">\(escaped(line))</text>\n")
        }
        guard node.selected == true else { return }
        let x = b.x + b.width - Layout.padding - mark
        let y = b.y + b.height / 2
        out.append(
            "<path data-selected=\"true\" d=\"M\(x) \(y) l4 4 l8 -9\" fill=\"none\" stroke=\"\(node.enabled ? "#2563eb" : "#9ca3af")\" stroke-width=\"2\"/>\n")
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
        // A placeholder paler than what is typed, yet readable (4.8:1 on white).
        let color = value.isEmpty ? "#6b7280" : style.text
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

extension Screenshot {
    /// A text's styled runs, by where they start and end in its value
    /// (counted in Unicode scalars, as the layout counts characters).
    struct Runs {
        let spans: MarkdownSpans
        /// The scalar offset after each span.
        let ends: [Int]

        /// Nil without spans, or when their texts are not the value (drawn plain then).
        init?(_ spans: MarkdownSpans?, value: String) {
            guard let spans, !spans.isEmpty else { return nil }
            var ends: [Int] = []
            ends.reserveCapacity(spans.count)
            var total = 0
            var joined = ""
            for span in spans {
                total &+= span.text.unicodeScalars.count
                ends.append(total)
                joined += span.text
            }
            guard joined == value else { return nil }
            self.spans = spans
            self.ends = ends
        }

        /// Where the last line drawn started: lines come in order, so each
        /// offset is counted on from the last.
        struct Cursor {
            var index: String.Index?
            var offset = 0
        }

        /// One line of the value (`range`, as the layout broke it) as a
        /// `<text>` with a `<tspan>` per piece of a run, each at its column
        /// on the grid; a code run over a light box; a link's underline and
        /// a struck run's line as lines after it.
        /// `mono`: the text is code (each run at its grid column); else prose,
        /// each run where the ones before it end in the proportional face
        /// (`advance`), bold (`bold`, or the run's) wider, a code run in monospace.
        func draw(
            _ value: String, _ range: Range<String.Index>, cursor: inout Cursor, x: Int, y: Int, top: Int, grid: Layout.TextGrid,
            color: String, font: String, bold: Bool = false, mono: Bool = false, into out: inout Screenshot.Output
        ) {
            let scalars = value.unicodeScalars
            var offset = cursor.offset + scalars.distance(from: cursor.index ?? scalars.startIndex, to: range.lowerBound)
            cursor.index = range.lowerBound
            cursor.offset = offset
            var span = 0
            while span < ends.count - 1 && ends[span] <= offset { span += 1 }
            var boxes = ""
            var lines = ""
            var text = "<text x=\"\(x)\" y=\"\(y)\" fill=\"\(color)\"\(font) xml:space=\"preserve\">"
            var column = 0
            // Prose: where the next run starts, in points from `x`.
            var advanced = 0.0
            var i = range.lowerBound
            while i < range.upperBound {
                while span < ends.count - 1 && ends[span] <= offset { span += 1 }
                // The piece of this span on this line.
                var piece = String.UnicodeScalarView()
                let start = column
                while i < range.upperBound && offset < ends[span] {
                    piece.append(scalars[i])
                    i = scalars.index(after: i)
                    offset += 1
                    column += 1
                }
                if piece.isEmpty {  // an empty span (cannot take the line's characters)
                    if span == ends.count - 1 { break }
                    span += 1
                    continue
                }
                let styles = spans[span].styles
                let px: Int
                let width: Int
                if mono {
                    px = x + start * grid.charWidth
                    width = (column - start) * grid.charWidth
                } else {
                    px = x + Int(advanced.rounded())
                    let heavy = bold || styles.contains(.bold)
                    for scalar in piece {
                        advanced += Screenshot.advance(scalar, fontSize: grid.fontSize, bold: heavy, mono: styles.contains(.code))
                    }
                    width = x + Int(advanced.rounded()) - px
                }
                if styles.contains(.code) {
                    boxes += "<rect x=\"\(px - 1)\" y=\"\(top + 2)\" width=\"\(width + 2)\" height=\"\(grid.lineHeight - 4)\" rx=\"3\" fill=\"#eef0f3\"/>\n"
                }
                let face = styles.contains(.code) && !mono ? " font-family=\"\(Screenshot.fontFamily)\"" : ""
                text += "<tspan x=\"\(px)\"\(face)\(Self.attributes(styles))>\(Screenshot.escaped(String(piece)))</tspan>"
                // The lines drawn too: cairo (the PNGs) ignores text-decoration.
                let end = px + width - 1
                if styles.contains(.link) {
                    lines += "<line x1=\"\(px)\" y1=\"\(y + 2)\" x2=\"\(end)\" y2=\"\(y + 2)\" stroke=\"#2563eb\"/>\n"
                }
                if styles.contains(.strikethrough) {
                    let color = styles.contains(.link) ? "#2563eb" : (styles.contains(.code) ? "#9d174d" : color)
                    lines += "<line x1=\"\(px)\" y1=\"\(y - 4)\" x2=\"\(end)\" y2=\"\(y - 4)\" stroke=\"\(color)\"/>\n"
                }
            }
            out.append(boxes + text + "</text>\n" + lines)
        }

        /// A run's look: bold, italic, code (its own colour, over a box),
        /// struck through, a link blue and underlined.
        static func attributes(_ styles: TextSpan.Style) -> String {
            var s = ""
            if styles.contains(.bold) { s += " font-weight=\"bold\"" }
            if styles.contains(.italic) { s += " font-style=\"italic\"" }
            if styles.contains(.link) {
                s += " fill=\"#2563eb\""
            } else if styles.contains(.code) {
                s += " fill=\"#9d174d\""
            }
            let lines = (styles.contains(.link) ? ["underline"] : []) + (styles.contains(.strikethrough) ? ["line-through"] : [])
            if !lines.isEmpty { s += " text-decoration=\"\(lines.joined(separator: " "))\"" }
            return s
        }
    }
}

extension Screenshot {
    /// The dark palette: each colour the light one uses, and what it is in
    /// the dark (backgrounds dark, text light; every pair at the same
    /// contrast or more, which the goldens' test checks).
    static let darkColors: [String: String] = [
        // Backgrounds
        "#ffffff": "#0b0f17", "#f3f4f6": "#1f2937", "#f6f8fa": "#161b22", "#f8fafc": "#111827", "#f9fafb": "#111827",
        "#dbeafe": "#1e3a8a", "#fef2f2": "#3f1d1d", "#fffbeb": "#2d2410", "#eff6ff": "#172554", "#fefce8": "#2c2a12",
        "#e5e7eb": "#374151", "#dcfce7": "#0f2e1a", "#fee2e2": "#3b1212", "#eef0f3": "#273142", "#2563eb": "#60a5fa",
        // Text
        "#111827": "#f3f4f6", "#1f2937": "#e5e7eb", "#374151": "#d1d5db", "#4b5563": "#c2c8d0", "#6b7280": "#9ca3af",
        "#1e40af": "#bfdbfe", "#1e3a8a": "#bfdbfe", "#1d4ed8": "#93c5fd", "#991b1b": "#fecaca", "#b91c1c": "#fca5a5",
        "#92400e": "#fcd34d", "#713f12": "#fde68a", "#854d0e": "#fde68a", "#166534": "#bbf7d0", "#15803d": "#86efac",
        "#9d174d": "#f9a8d4", "#334155": "#e2e8f0", "#475569": "#cbd5e1",
        // Lines
        "#d1d5db": "#374151", "#9ca3af": "#6b7280", "#f59e0b": "#d97706", "#dc2626": "#ef4444", "#eab308": "#ca8a04",
        "#60a5fa": "#60a5fa", "#cbd5e1": "#475569",
    ]

    /// A light picture in the dark palette: every `"#rrggbb"` it holds
    /// (they are all the palette's) swapped for its dark one.
    static func darkened(_ svg: String) -> String {
        var out = String.UnicodeScalarView()
        let scalars = Array(svg.unicodeScalars)
        var i = 0
        while i < scalars.count {
            if scalars[i] == "\"", i + 8 < scalars.count, scalars[i + 1] == "#", scalars[i + 8] == "\"" {
                let color = String(String.UnicodeScalarView(scalars[(i + 1)...(i + 7)]))
                if let dark = darkColors[color] {
                    out.append("\"")
                    out.append(contentsOf: dark.unicodeScalars)
                    out.append("\"")
                    i += 9
                    continue
                }
            }
            out.append(scalars[i])
            i += 1
        }
        return String(out)
    }
}

extension Screenshot {
    /// The proportional face prose and controls are drawn in; code, diffs,
    /// commands and paths stay in `fontFamily` (monospace).
    public static let proseFontFamily = "DejaVu Sans, sans-serif"

    /// DejaVu Sans's advance widths of the printable ASCII characters (space
    /// … "~"), in thousandths of the font size, regular and bold: where a
    /// styled run of prose starts on its line. Other characters count as
    /// `otherAdvance`. DejaVu Sans Mono's is `monoAdvance` for every one.
    static let proseAdvances: [Int] = [
        318, 401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361, 318, 337, 636, 636, 636,
        636, 636, 636, 636, 636, 636, 636, 337, 337, 838, 838, 838, 531, 1000, 684, 686, 698, 770, 632,
        575, 775, 752, 295, 295, 656, 557, 863, 748, 787, 603, 787, 695, 635, 611, 732, 684, 989, 685,
        611, 685, 390, 337, 390, 838, 500, 500, 613, 635, 550, 635, 615, 352, 635, 634, 278, 278, 579,
        278, 974, 634, 612, 635, 635, 411, 521, 392, 634, 592, 818, 592, 592, 525, 636, 337, 636, 838,
    ]
    static let boldProseAdvances: [Int] = [
        348, 456, 521, 838, 696, 1002, 872, 306, 457, 457, 523, 838, 380, 415, 380, 365, 696, 696, 696,
        696, 696, 696, 696, 696, 696, 696, 400, 400, 838, 838, 838, 580, 1000, 774, 762, 734, 830, 683,
        683, 821, 837, 372, 372, 775, 637, 995, 837, 850, 733, 850, 770, 720, 682, 812, 774, 1103, 771,
        724, 725, 457, 365, 457, 838, 500, 500, 675, 716, 593, 716, 678, 435, 716, 712, 343, 343, 665,
        343, 1042, 712, 687, 716, 716, 493, 595, 478, 712, 652, 924, 645, 652, 582, 712, 365, 712, 838,
    ]
    static let otherAdvance = 640
    static let monoAdvance = 602

    /// The width of `scalar` drawn at `fontSize` in prose (bold or not), or in monospace (code), in points.
    static func advance(_ scalar: Unicode.Scalar, fontSize: Int, bold: Bool, mono: Bool) -> Double {
        let thousandths: Int
        if mono {
            thousandths = monoAdvance
        } else if scalar.value >= 32 && scalar.value < 127 {
            thousandths = (bold ? boldProseAdvances : proseAdvances)[Int(scalar.value) - 32]
        } else {
            thousandths = otherAdvance
        }
        return Double(thousandths * fontSize) / 1000
    }

    /// Whether a node's words are code, a diff, a command or a path: drawn
    /// in monospace (its subtree with it), the rest in `proseFontFamily`.
    static func isMonospace(_ node: SemanticNode) -> Bool {
        switch node.role {
        case .codeBlock, .diff, .diffHunk, .diffLine: return true
        default:
            // A tool card's summary (a command, a path), its input and its output.
            return node.id.hasPrefix("tool.") && (node.id.hasSuffix(".summary") || node.id.hasSuffix(".input") || node.id.hasSuffix(".output"))
        }
    }
}
