@_spi(Leaves) import JcodeMobileJSON

/// The core's own layout: where every node of the semantic tree sits on a
/// screen of the viewport's size, in points, origin top-left. Hosts may draw
/// their own way, but hit-testing, screenshots and the simulator use this
/// one, so they agree with each other on every machine.
///
/// The model is deliberately plain — a monospaced text grid and stacks:
///
/// - Text wraps at `charWidth` points per character (hard-wrapped at a space
///   where one is on the line), `lineHeight` points per line.
/// - Nodes stack top to bottom, `gap` apart; a header's buttons, and a run of two or more
///   childless buttons in a group (the composer's), share a row, unless
///   their words would be cut (then they stack); an icon button is a
///   `buttonHeight` square; the composer's field shares its buttons' row
///   when it keeps `fieldInRowWidth` (`fieldRun`).
/// - Content stays inside the safe area (`safeArea`: the status bar's
///   band and the home indicator's upright, the notch's room at the sides
///   on its side); a
///   screen without a message list that is taller than the viewport scrolls
///   (`scroll_screen`): its root carries `scroll`, its nodes are in its
///   content's coordinates.
/// - The chat screen has three regions: what comes before the message list
///   (banners, header, notices) from the top, what comes after it (activity,
///   sheets, composer) anchored to the bottom, and the message list filling
///   the space between, scrolled by `scroll_messages`. The list carries a
///   `scroll` record; its rows and everything in them are in the list's
///   content coordinates: x as on the screen, y from the top of the
///   content, so a row sits on the screen at `list.y - scroll.offset + y`.
///   Scrolling, or a reply growing at the end, moves no row.
/// - A hidden node has zero size where it would have been.
public enum Layout {
    public static let margin = 16
    public static let charWidth = 8
    public static let lineHeight = 20
    /// Inner padding of a box (message, button, field) on each side.
    public static let padding = 8
    /// Space after a leaf and between the buttons of a row.
    public static let gap = 8
    public static let buttonHeight = 44
    /// A field: a label line, then its box (a touch target's height).
    public static let fieldBoxHeight = 44
    /// How much a message's or tool card's children are indented.
    public static let indent = 8
    /// The id of the one scrolling list.
    public static let messagesID = "chat.messages"
    /// The top safe area: a phone's status bar (and notch) covers the top
    /// of the screen, so every screen's content starts this far down (the
    /// 47 points of a 390 × 844 iPhone). Hit-testing and the pictures share it.
    public static let safeAreaTop = 47

    /// The bottom safe area upright: a phone's home indicator (34 points).
    public static let safeAreaBottom = 34
    /// On its side: the notch's room at each side (47) and the home indicator's at the bottom (21).
    public static let safeAreaSide = 47
    public static let safeAreaBottomOnItsSide = 21

    /// How far from each edge of a viewport content stays.
    public struct Insets: Equatable, Sendable {
        public var top, left, bottom, right: Int
        public init(top: Int, left: Int, bottom: Int, right: Int) {
            self.top = top
            self.left = left
            self.bottom = bottom
            self.right = right
        }
    }

    /// The safe area of a viewport: the host's (`viewport.safe_area` of
    /// app_new's options), else as a 390 × 844 iPhone has it: upright,
    /// its status bar at the top (`safeAreaTop`) and its home indicator at
    /// the bottom (`safeAreaBottom`); on its side (wider than tall), no
    /// status bar, the notch's room at each side (`safeAreaSide`) and a
    /// lower home indicator (`safeAreaBottomOnItsSide`). The layout,
    /// hit-testing and the pictures share it.
    public static func safeArea(_ viewport: SemanticTree.Viewport) -> Insets {
        if let given = viewport.safeArea { return given }
        return viewport.width > viewport.height
            ? Insets(top: 0, left: safeAreaSide, bottom: safeAreaBottomOnItsSide, right: safeAreaSide)
            : Insets(top: safeAreaTop, left: 0, bottom: safeAreaBottom, right: 0)
    }

    /// The top safe area of a viewport: `safeAreaTop` upright; none on its
    /// side (wider than tall), where a phone hides its status bar.
    public static func safeTop(_ viewport: SemanticTree.Viewport) -> Int { safeArea(viewport).top }

    /// Where a screen's content lies across a viewport: inside its margins and its safe area's sides.
    public static func content(_ viewport: SemanticTree.Viewport) -> (x: Int, width: Int) {
        let safe = safeArea(viewport)
        return (margin + safe.left, max(0, viewport.width - 2 * margin - safe.left - safe.right))
    }

    /// How many lines of text the error banner shows: closed, in about a
    /// third of the screen; open, in what the safe area and the chat's
    /// other regions leave (`chrome`: its header, activity line and composer
    /// as laid out, `chatChrome`); at least one. Its padding and
    /// row of buttons are counted.
    static func bannerLines(_ viewport: SemanticTree.Viewport, chrome chat: Int) -> (closed: Int, open: Int) {
        // The banner's padding and row of buttons.
        let own = 3 * padding + buttonHeight + gap
        let safe = safeArea(viewport)
        let room = viewport.height - safe.top - safe.bottom - chat
        let closed = max(1, (min(viewport.height / 3, room) - own) / lineHeight)
        let open = max(closed, (room - own) / lineHeight)
        return (closed, open)
    }

    /// What the chat needs besides a banner, `width` wide: its header and
    /// composer as they are laid out for `state`, and a line of activity
    /// (an opened banner may cover its messages: the person asked to read it).
    static func chatChrome(_ state: AppState, width: Int) -> Int {
        let activity = SemanticNode.text("chat.activity", "…", role: .status)
        return measure(ChatScreen.header(state), width: width) + measure(activity, width: width)
            + measure(ChatScreen.composer(state), width: width)
    }

    /// The room `node` takes in a stack `width` wide: its height and the gap after it.
    static func measure(_ node: SemanticNode, width: Int) -> Int {
        var copy = node
        var y = 0
        place(&copy, x: 0, y: &y, width: width)
        return y
    }

    /// A text's grid: points per character and per line, the font size
    /// drawn in it and the baseline's offset from a line's top. A heading of
    /// level 1 or 2 is drawn larger on a coarser grid (the layout wraps and
    /// measures it on that grid, so it stays inside its box); every other
    /// text is on the 8 × 20 grid at 13 points.
    public struct TextGrid: Equatable, Sendable {
        public var charWidth: Int
        public var lineHeight: Int
        public var fontSize: Int
        public var baseline: Int
    }

    public static let bodyGrid = TextGrid(charWidth: charWidth, lineHeight: lineHeight, fontSize: 13, baseline: 15)

    /// The grid of a node's value: a heading's by its level, else the body's.
    public static func grid(_ node: SemanticNode) -> TextGrid {
        guard node.role == .heading else { return bodyGrid }
        switch node.level ?? 1 {
        case ...1: return TextGrid(charWidth: 12, lineHeight: 28, fontSize: 19, baseline: 21)
        case 2: return TextGrid(charWidth: 10, lineHeight: 24, fontSize: 16, baseline: 18)
        default: return bodyGrid
        }
    }

    /// The column left of a node's text, in points: a list item's marker
    /// (its label, and a check box for a task item), a diff line's "+", "-"
    /// or " "; its text wraps in the rest of its box.
    public static func gutter(_ node: SemanticNode) -> Int {
        switch node.role {
        case .listItem: return (node.label.unicodeScalars.count + 1 + (node.checked != nil ? 2 : 0)) * charWidth
        case .diffLine: return 2 * charWidth
        default: return 0
        }
    }

    /// A code block's header, above its code: its language at the left,
    /// its buttons (Copy) at the right, as tall as a button. It is there
    /// from the first (a language or a new line of code moves no button).
    static func headerHeight(_ node: SemanticNode) -> Int {
        node.role == .codeBlock ? buttonHeight : 0
    }

    /// A button as wide as it needs: an icon a square, words their width and padding.
    static func wordsWidth(_ button: SemanticNode) -> Int {
        button.icon != nil ? buttonHeight : button.label.unicodeScalars.count * charWidth + 2 * padding
    }

    /// A header button's width: its label and padding, at least a button's height (a square touch target).
    static func headerButtonWidth(_ button: SemanticNode) -> Int { max(buttonHeight, wordsWidth(button)) }

    /// A code block's buttons (childless) side by side at the right of its
    /// header, the first rightmost; a hidden one takes no room.
    private static func placeHeaderButtons(_ buttons: inout [SemanticNode], right: Int, y: Int) {
        var right = right
        for i in buttons.indices {
            let width = buttons[i].visible ? headerButtonWidth(buttons[i]) : 0
            right -= width
            buttons[i].bounds = SemanticNode.Bounds(x: right, y: y, width: width, height: buttons[i].visible ? buttonHeight : 0)
            if buttons[i].visible { right -= gap }
        }
    }

    static func apply(
        to root: inout SemanticNode, viewport: SemanticTree.Viewport, messagesScroll: Int?, screenScroll: Int = 0, rows: MessageRows? = nil,
        cache: RowCache? = nil
    ) {
        guard let (list, frame) = applyChrome(to: &root, viewport: viewport, screenScroll: screenScroll) else { return }
        if let rows {
            placeMessages(&root.children[list], frame: frame, offset: messagesScroll, rows: rows, cache: cache)
        } else {
            placeScrolling(&root.children[list], frame: frame, offset: messagesScroll)
        }
    }

    /// Lays out everything but the message list's rows; returns where the
    /// list is among the root's children and the frame it fills (nil when
    /// the screen has none).
    /// A screen without a message list, taller than the viewport, scrolls:
    /// `screenScroll` points of it lie above the viewport's top.
    static func applyChrome(
        to root: inout SemanticNode, viewport: SemanticTree.Viewport, screenScroll: Int = 0
    ) -> (list: Int, frame: SemanticNode.Bounds)? {
        root.bounds = SemanticNode.Bounds(x: 0, y: 0, width: viewport.width, height: viewport.height)
        let safe = safeArea(viewport)
        let (x, width) = content(viewport)
        guard let list = root.children.firstIndex(where: { $0.id == messagesID }) else {
            var y = safe.top
            for i in root.children.indices { place(&root.children[i], x: x, y: &y, width: width) }
            // Taller than the viewport (its end above the home indicator): it
            // scrolls, its nodes in its content's coordinates, from its top.
            let contentHeight = y + safe.bottom
            if contentHeight > viewport.height {
                let maxOffset = contentHeight - viewport.height
                root.scroll = SemanticNode.Scroll(offset: min(max(0, screenScroll), maxOffset), contentHeight: contentHeight, maxOffset: maxOffset)
            }
            return nil
        }
        var top = safe.top
        for i in 0..<list { place(&root.children[i], x: x, y: &top, width: width) }
        // The bottom region is measured from 0, then moved to the bottom edge, above the home indicator.
        var bottomHeight = 0
        for i in (list + 1)..<root.children.count { place(&root.children[i], x: x, y: &bottomHeight, width: width) }
        let bottom = max(top, viewport.height - safe.bottom - bottomHeight)
        for i in (list + 1)..<root.children.count { shift(&root.children[i], by: bottom) }
        return (list, SemanticNode.Bounds(x: x, y: top, width: width, height: bottom - top))
    }

    /// A scrolling list whose children are all in the tree: laid out from
    /// the top of their content, then moved up by the scroll offset (the
    /// end of the content when the list follows the newest message).
    private static func placeScrolling(_ node: inout SemanticNode, frame: SemanticNode.Bounds, offset requested: Int?) {
        node.bounds = frame
        guard node.visible else {
            zero(&node.children, x: frame.x, y: frame.y)
            node.scroll = SemanticNode.Scroll(offset: 0, contentHeight: 0, maxOffset: 0)
            return
        }
        var contentHeight = 0
        for i in node.children.indices { place(&node.children[i], x: frame.x, y: &contentHeight, width: frame.width) }
        let maxOffset = max(0, contentHeight - frame.height)
        let offset = min(max(0, requested ?? maxOffset), maxOffset)
        // The children stay in the list's content coordinates.
        node.scroll = SemanticNode.Scroll(offset: offset, contentHeight: contentHeight, maxOffset: maxOffset)
    }

    static func place(_ node: inout SemanticNode, x: Int, y: inout Int, width: Int, memo: LineMemo? = nil) {
        guard node.visible else {
            node.bounds = SemanticNode.Bounds(x: x, y: y, width: 0, height: 0)
            zero(&node.children, x: x, y: y)
            return
        }
        let top = y
        y += ownHeight(node, width: width, memo: memo)
        let inset = holdsItsChildren(node.role) ? indent : 0
        var i = node.children.startIndex
        if node.role == .tableRow {
            placeCells(&node.children, x: x + inset, y: &y, width: max(0, width - 2 * inset), memo: memo)
            i = node.children.endIndex
        } else if let actions = iconActions(node) {
            placeBannerBand(&node, actions: actions, x: x, top: top, width: width)
            y = top + node.bounds.height + gapAfter(node.role)
            return
        } else if node.role == .header && isBand(node, width: width) {
            placeHeaderBand(&node, x: x, top: top, width: width)
            y = top + node.bounds.height + gapAfter(node.role)
            return
        } else if node.role == .codeBlock {
            // Its buttons are in its header, which its own height counts.
            placeHeaderButtons(&node.children, right: x + width - gap, y: top + padding)
            node.bounds = SemanticNode.Bounds(x: x, y: top, width: max(0, width), height: y - top)
            y += gapAfter(node.role)
            return
        }
        while i < node.children.endIndex {
            if let run = fieldRun(node, from: i, width: max(0, width - 2 * inset)) {
                placeRow(&node.children[i..<(i + run)], x: x + inset, y: &y, width: max(0, width - 2 * inset))
                i += run
                continue
            }
            var run = rowLength(node, from: i)
            if run == 0 && node.children[i].role == .button && node.children[i].icon != nil && node.children[i].children.isEmpty { run = 1 }
            // Buttons whose words would be cut in a row's equal shares are each
            // as wide as its words (and a share of the rest) where that fits,
            // else all of them stacked, one under the other.
            var byLabel = node.role == .header
            if run >= 2 && node.role == .group && !labelsFit(node.children[i..<(i + run)], width: max(0, width - 2 * inset)) {
                if wordsFit(node.children[i..<(i + run)], width: max(0, width - 2 * inset)) {
                    byLabel = true
                } else {
                    for k in i..<(i + run) { place(&node.children[k], x: x + inset, y: &y, width: max(0, width - 2 * inset)) }
                    i += run
                    continue
                }
            }
            // A lone icon button is a square too, not a bar across its parent.
            if run >= 2 || (run == 1 && node.children[i].icon != nil) {
                placeRow(&node.children[i..<(i + run)], x: x + inset, y: &y, width: max(0, width - 2 * inset), byLabel: byLabel)
                i += run
            } else if let memo, node.role == .message, node.children[i].role.isMarkdownBlock {
                // A message's closed blocks are placed as they were (a reply streams into its last one).
                memo.placeBlock(&node.children[i], x: x + inset, y: &y, width: max(0, width - 2 * inset))
                i += 1
            } else {
                place(&node.children[i], x: x + inset, y: &y, width: max(0, width - 2 * inset), memo: memo)
                i += 1
            }
        }
        if inset > 0 && node.children.contains(where: \.visible) { y += padding }
        node.bounds = SemanticNode.Bounds(x: x, y: top, width: max(0, width), height: y - top)
        y += gapAfter(node.role)
    }

    /// A header is one band, as a navigation bar is, when its text keeps at
    /// least this much room beside its buttons (a back button's screens
    /// always; the chat's, with its model's name, on a phone on its side):
    /// its back button at its left, its title and server, its other
    /// buttons at its right. Else its title is over a row of its buttons.
    public static let headerBandText = 160

    /// The widths of a header's buttons in a band: an icon a square, words as wide as they need; a hidden one none.
    private static func bandWidths(_ node: SemanticNode) -> [Int] {
        node.children.map { $0.visible ? wordsWidth($0) : 0 }
    }

    /// Whether header `node`, `width` wide, is one band (`headerBandText`).
    static func isBand(_ node: SemanticNode, width: Int) -> Bool {
        let buttons = bandWidths(node).reduce(0) { $1 > 0 ? $0 + $1 + gap : $0 }
        return width - buttons >= headerBandText
    }

    /// A header's back button (`chevron.left`) leads; its other buttons trail.
    static func leads(_ button: SemanticNode) -> Bool { button.icon == "chevron.left" }

    /// A wide header as one band: its back button at its left, its other
    /// buttons (an icon a square, words as wide as they need) side by side
    /// at its right, all centred in its height; its text wraps in the room
    /// between them (`textFrame`).
    private static func placeHeaderBand(_ node: inout SemanticNode, x: Int, top: Int, width: Int) {
        let widths = bandWidths(node)
        func span(_ leading: Bool) -> Int {
            let shown = node.children.indices.filter { widths[$0] > 0 && leads(node.children[$0]) == leading }
            return shown.reduce(0) { $0 + widths[$1] + gap }
        }
        let leading = span(true), trailing = span(false)
        // Its text from the back button's edge to a gap before the others (as `textFrame` has it).
        let text = ownHeight(node, width: max(0, width - max(0, leading - gap) - trailing))
        let height = max(text, leading + trailing > 0 ? buttonHeight + 2 * padding : 0)
        var left = x, right = x + width - max(0, trailing - gap)
        for i in node.children.indices {
            guard widths[i] > 0 else {
                node.children[i].bounds = SemanticNode.Bounds(x: x, y: top, width: 0, height: 0)
                zero(&node.children[i].children, x: x, y: top)
                continue
            }
            var y = top + (height - buttonHeight) / 2
            if leads(node.children[i]) {
                place(&node.children[i], x: left, y: &y, width: widths[i])
                left += widths[i] + gap
            } else {
                place(&node.children[i], x: right, y: &y, width: widths[i])
                right += widths[i] + gap
            }
        }
        node.bounds = SemanticNode.Bounds(x: x, y: top, width: max(0, width), height: height)
    }

    /// The place among a banner's children of its actions when they are
    /// only icons (a lone close button, `xmark`): it is then one band, its
    /// words at the left and its icons at the right of their first line.
    static func iconActions(_ node: SemanticNode) -> Int? {
        guard node.role == .banner else { return nil }
        let shown = node.children.indices.filter { node.children[$0].visible }
        guard shown.count == 1, let i = shown.first, node.children[i].role == .group else { return nil }
        let buttons = node.children[i].children.filter(\.visible)
        guard !buttons.isEmpty, buttons.allSatisfy({ $0.role == .button && $0.icon != nil }) else { return nil }
        return i
    }

    /// A banner whose actions are only icons, as one band: the icons at its
    /// top right (inside its inset), its words wrapping in the room left of
    /// them (`textFrame`), at least a button's height and its padding tall.
    private static func placeBannerBand(_ node: inout SemanticNode, actions: Int, x: Int, top: Int, width: Int) {
        let shown = node.children[actions].children.filter(\.visible).count
        let icons = shown * buttonHeight + gap * max(0, shown - 1)
        let textWidth = max(0, width - indent - icons)
        let height = max(ownHeight(node, width: textWidth), buttonHeight + 2 * padding)
        for i in node.children.indices where i != actions {
            node.children[i].bounds = SemanticNode.Bounds(x: x, y: top, width: 0, height: 0)
            zero(&node.children[i].children, x: x, y: top)
        }
        var y = top + padding
        place(&node.children[actions], x: x + width - indent - icons, y: &y, width: icons)
        node.bounds = SemanticNode.Bounds(x: x, y: top, width: max(0, width), height: height)
    }

    /// Where a node's own text lies in its box (its padding inside): the
    /// whole box, but a header band's text between its back button and its
    /// other buttons, centred in the band's height (on the 4-point grid);
    /// a banner band's left of its icons.
    public static func textFrame(_ node: SemanticNode) -> (x: Int, y: Int, width: Int) {
        let b = node.bounds
        if let actions = iconActions(node) { return (b.x, b.y, max(0, node.children[actions].bounds.x - b.x)) }
        guard node.role == .header, isBand(node, width: b.width) else { return (b.x, b.y, b.width) }
        let shown = node.children.filter { $0.visible && $0.bounds.width > 0 }
        let left = shown.filter(leads).map { $0.bounds.x + $0.bounds.width }.max() ?? b.x
        let right = shown.filter { !leads($0) }.map { $0.bounds.x - gap }.min() ?? b.x + b.width
        let width = max(0, right - left)
        let room = b.height - ownHeight(node, width: width)
        return (left, b.y + max(0, room / 2 / 4 * 4), width)
    }

    /// The space after a node in a stack: boxes are set apart; a list or
    /// group is only what it holds; a diff's lines touch (one coloured band).
    static func gapAfter(_ role: SemanticNode.Role) -> Int {
        switch role {
        case .list, .group, .screen, .tableRow, .diffLine: return 0
        default: return gap
        }
    }

    /// Where the node after `node` starts in a stack (`node` placed): below
    /// it and the gap after it; a hidden node takes no room.
    static func end(of node: SemanticNode) -> Int {
        guard node.visible else { return node.bounds.y }
        return node.bounds.y + node.bounds.height + gapAfter(node.role)
    }

    /// The boxes drawn around their children, which sit indented inside.
    static func holdsItsChildren(_ role: SemanticNode.Role) -> Bool {
        switch role {
        case .message, .toolCall, .sheet, .banner, .notice, .status, .quote, .listItem, .codeBlock, .diff: return true
        default: return false
        }
    }

    /// The value a box shows under its label: none for a sheet (its
    /// children show the details), nor a value its label already says
    /// ("Risk: medium" / "medium").
    public static func shownValue(_ node: SemanticNode) -> String? {
        guard node.role != .sheet, let value = node.value, !value.isEmpty else { return nil }
        // A message written in markdown shows its text as its blocks.
        if node.role == .message && node.children.contains(where: \.role.isMarkdownBlock) { return nil }
        // A value much longer than the label cannot be in it (canonical
        // equivalence grows a text at most 3x in UTF-8, UAX #15): no search,
        // which would first prepare the whole value as its pattern (a
        // streamed reply's value, at every delta).
        let labelBytes = node.label.utf8.count
        // Nor when the value has more characters than the label (a list item's marker and its text).
        if labelBytes > 0 && labelBytes < 256 && value.utf8.count <= 3 &* labelBytes && value.count <= node.label.count
            && node.label.contains(value) { return nil }
        return value
    }

    /// How many children from `start` share a row: the buttons of a header,
    /// or a run of childless buttons in a group; hidden ones in the run take
    /// no room.
    private static func rowLength(_ parent: SemanticNode, from start: Int) -> Int {
        guard parent.role == .header || parent.role == .group else { return 0 }
        var end = start
        while end < parent.children.endIndex, parent.children[end].role == .button, parent.children[end].children.isEmpty {
            end += 1
        }
        return end - start
    }

    /// A row of buttons. An icon button is a square as tall as a button;
    /// the others share the rest equally, or, `byLabel` (the header's: a
    /// model's name is longer than "Settings"), each as wide as its label
    /// needs and the room left shared equally, or, when the labels do not
    /// all fit, the short ones as wide as they need and the longest one the
    /// rest. A row of icons only puts its secondary ones at the left and the
    /// others (Send, Stop) and a close button (`xmark`) at the right, under the thumb.
    private static func placeRow(_ row: inout ArraySlice<SemanticNode>, x: Int, y: inout Int, width: Int, byLabel: Bool = false) {
        let shown = row.filter(\.visible).count
        guard shown > 0 else {
            for i in row.indices { row[i].bounds = SemanticNode.Bounds(x: x, y: y, width: 0, height: 0) }
            return
        }
        let icons = row.filter { $0.visible && $0.icon != nil }.count
        let texts = shown - icons
        let room = max(0, width - gap * (shown - 1) - icons * buttonHeight)
        let each = texts > 0 ? room / texts : 0
        var widths = row.map { $0.visible ? ($0.icon != nil ? buttonHeight : each) : 0 }
        if byLabel && texts > 0 {
            let needs = row.map { $0.visible && $0.icon == nil ? wordsWidth($0) : 0 }
            let total = needs.reduce(0, +)
            if total <= room {
                // Shared among several, the rest on the 4-point grid (a lone one takes it all).
                let extra = texts > 1 ? (room - total) / texts / 4 * 4 : room - total
                for k in widths.indices where row[row.startIndex + k].visible && row[row.startIndex + k].icon == nil {
                    widths[k] = needs[k] + extra
                }
            } else if let longest = needs.indices.max(by: { needs[$0] < needs[$1] }) {
                let others = total - needs[longest]
                if others < room {
                    for k in widths.indices where row[row.startIndex + k].visible && row[row.startIndex + k].icon == nil {
                        widths[k] = needs[k]
                    }
                    widths[longest] = room - others
                }
            }
        }
        var left = x
        var right = x + width
        let iconsOnly = texts == 0
        // With icons only, the ones at the right (Send, Stop, a close button) are placed from the right edge, last first.
        let atRight = { (node: SemanticNode) in iconsOnly && node.visible && (node.variant != "secondary" || node.icon == "xmark") }
        for i in row.indices.reversed() where atRight(row[i]) {
            let w = widths[i - row.startIndex]
            right -= w
            row[i].bounds = SemanticNode.Bounds(x: right, y: y, width: w, height: buttonHeight)
            right -= gap
        }
        for i in row.indices {
            if atRight(row[i]) { continue }
            if row[i].visible {
                let w = widths[i - row.startIndex]
                row[i].bounds = SemanticNode.Bounds(x: left, y: y, width: w, height: buttonHeight)
                left += w + gap
            } else {
                row[i].bounds = SemanticNode.Bounds(x: left, y: y, width: 0, height: 0)
            }
        }
        y += buttonHeight + gap
    }

    /// The narrowest a field sharing a row with its buttons may be.
    static let fieldInRowWidth = 160

    /// A field without a label and the buttons after it in a group (the
    /// composer's) share one row when the field keeps `fieldInRowWidth`
    /// beside every one of them, hidden ones counted (so the row does not
    /// break when Stop appears): how many nodes from `start` that row holds.
    private static func fieldRun(_ parent: SemanticNode, from start: Int, width: Int) -> Int? {
        guard parent.role == .group, parent.children[start].role == .textField || parent.children[start].role == .secureField,
              parent.children[start].label.isEmpty, parent.children[start].children.isEmpty
        else { return nil }
        var end = start + 1
        while end < parent.children.endIndex, parent.children[end].role == .button, parent.children[end].children.isEmpty,
              parent.children[end].icon != nil {
            end += 1
        }
        let buttons = end - start - 1
        guard buttons > 0, width - buttons * (buttonHeight + gap) >= fieldInRowWidth else { return nil }
        return end - start
    }

    /// Whether a row's text buttons show their whole labels in equal shares
    /// of what its icon buttons leave.
    static func labelsFit(_ row: ArraySlice<SemanticNode>, width: Int) -> Bool {
        let shown = row.filter(\.visible)
        let icons = shown.filter { $0.icon != nil }.count
        let texts = shown.count - icons
        guard texts > 0 else { return true }
        let each = (width - gap * (shown.count - 1) - icons * buttonHeight) / texts
        return shown.allSatisfy { $0.icon != nil || $0.label.unicodeScalars.count <= charactersPerLine(each) }
    }

    /// Whether a row's buttons fit side by side each as wide as its words
    /// (an icon a square).
    static func wordsFit(_ row: ArraySlice<SemanticNode>, width: Int) -> Bool {
        let shown = row.filter(\.visible)
        let needs = shown.reduce(0) { $0 + wordsWidth($1) }
        return needs + gap * max(0, shown.count - 1) <= width
    }

    /// A table row's cells side by side, equal widths; the row is as tall as its tallest cell.
    private static func placeCells(_ cells: inout [SemanticNode], x: Int, y: inout Int, width: Int, memo: LineMemo?) {
        let shown = cells.reduce(0) { $0 + ($1.visible ? 1 : 0) }
        guard shown > 0 else { return }
        let each = max(0, (width - gap * (shown - 1)) / shown)
        var left = x
        var bottom = y
        for i in cells.indices {
            var cellY = y
            place(&cells[i], x: left, y: &cellY, width: cells[i].visible ? each : 0, memo: memo)
            bottom = max(bottom, cellY)
            if cells[i].visible { left += each + gap }
        }
        y = bottom
    }

    static func shift(_ node: inout SemanticNode, by dy: Int) {
        node.bounds.y += dy
        for i in node.children.indices { shift(&node.children[i], by: dy) }
    }

    private static func zero(_ nodes: inout [SemanticNode], x: Int, y: Int) {
        for i in nodes.indices {
            nodes[i].bounds = SemanticNode.Bounds(x: x, y: y, width: 0, height: 0)
            zero(&nodes[i].children, x: x, y: y)
        }
    }

    /// The height of the node itself, before its children.
    static func ownHeight(_ node: SemanticNode, width: Int, memo: LineMemo? = nil) -> Int {
        switch node.role {
        // An option with a value (a session's last message) shows it on a second line.
        case .button: return node.selected != nil && !(node.value ?? "").isEmpty ? 2 * lineHeight + 2 * padding : buttonHeight
        case .textField, .secureField: return (node.label.isEmpty ? 0 : lineHeight) + fieldBoxHeight
        case .list, .group, .screen, .quote, .table, .tableRow:
            return node.label.isEmpty ? 0 : lineHeight + padding
        case .divider: return gap
        default:
            let grid = grid(node)
            let value = shownValue(node) ?? ""
            let valuePerLine = valueCharactersPerLine(node, width: width)
            let valueLines: Int
            if let memo, value.utf8.count > LineMemo.threshold {
                valueLines = memo.lineCount(of: value, id: node.id, perLine: valuePerLine, keepsOwn: value.utf8.count >= StreamedRowPatch.longValue)
            } else {
                valueLines = lineCount(value, perLine: valuePerLine)
            }
            // A list item's label is its marker, in the gutter of its first line.
            let labelLines = node.role == .listItem ? 0 : lineCount(node.label, perLine: charactersPerLine(width))
            let lines = labelLines
            // A code block: its header, then its code, a line of it from the
            // first (one whose fence has just opened does not grow when its
            // first character arrives).
            if node.role == .codeBlock {
                return headerHeight(node) + lines * lineHeight + max(1, valueLines) * grid.lineHeight + 2 * padding
            }
            // A diff's line is a band of its text, no padding.
            if node.role == .diffLine { return max(1, lines + valueLines) * lineHeight }
            // A hunk without a header (an edit's first: its place in the file is unknown) is only its lines.
            if node.role == .diffHunk && lines + valueLines == 0 { return 0 }
            if lines + valueLines == 0 { return lineHeight + 2 * padding }
            // A row a tap opens and closes (the reasoning) is a touch target.
            if node.role == .reasoning { return max(buttonHeight, lines * lineHeight + valueLines * grid.lineHeight + 2 * padding) }
            return lines * lineHeight + valueLines * grid.lineHeight + 2 * padding
        }
    }

    /// How many characters fit on a line of a box `width` points wide.
    public static func charactersPerLine(_ width: Int) -> Int { max(1, (width - 2 * padding) / charWidth) }

    /// How many characters of a node's value fit on a line: on its grid
    /// (a heading's may be coarser), after its gutter (a list item's).
    public static func valueCharactersPerLine(_ node: SemanticNode, width: Int) -> Int {
        max(1, (width - 2 * padding - gutter(node)) / grid(node).charWidth)
    }

    // MARK: - Text wrapping (the layout counts lines, the screenshot draws them)

    /// The number of lines `text` takes (0 for empty text).
    static func lineCount(_ text: String, perLine: Int) -> Int {
        if text.isEmpty { return 0 }
        // Most labels are short and on one line.
        if text.utf8.count <= perLine && !hasNewline(text) { return 1 }
        var count = 0
        forEachLine(text, perLine: perLine) { _ in count += 1 }
        return count
    }

    /// Whether `text` holds a "\n", read as bytes (the generic search through
    /// the UTF-8 view costs several times as much a byte: a code block's
    /// lines are measured at every delta).
    static func hasNewline(_ text: String) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { bytes in
            for byte in bytes where byte == 10 { return true }
            return false
        } ?? text.utf8.contains(10)
    }

    /// The lines `text` wraps into.
    public static func lines(_ text: String, perLine: Int) -> [Substring] {
        var result: [Substring] = []
        forEachLine(text, perLine: perLine) { result.append(text[$0]) }
        return result
    }

    /// Calls `body` with the range of each line: a newline ends one; a line
    /// longer than `perLine` characters breaks after its last space, or
    /// after `perLine` characters when it has none. A space where a line
    /// breaks is not drawn. Characters here are Unicode scalars.
    static func forEachLine(_ text: String, from first: String.Index? = nil, perLine: Int, _ body: (Range<String.Index>) -> Void) {
        let limit = max(1, perLine)
        let utf8 = text.utf8
        // Read as UTF-8 bytes (a scalar counted at its first byte): a streamed
        // text's last line is measured again at each delta.
        func index(_ offset: Int) -> String.Index { utf8.index(utf8.startIndex, offsetBy: offset) }
        var copy = text
        copy.withUTF8 { b in
            var start = first.map { utf8.distance(from: utf8.startIndex, to: $0) } ?? 0
            var count = 0
            var lastSpace = -1
            var i = start
            while i < b.count {
                let c = b[i]
                // A newline ends a line; so does a space right after a full one.
                if c == 10 || (c == 32 && count == limit) {
                    body(index(start)..<index(i))
                    i &+= 1
                    start = i
                    count = 0
                    lastSpace = -1
                    continue
                }
                // A continuation byte: its scalar was counted at its first byte.
                if c & 0xC0 == 0x80 {
                    i &+= 1
                    continue
                }
                if count == limit {
                    if lastSpace > start {
                        body(index(start)..<index(lastSpace))
                        start = lastSpace &+ 1
                        count = 0
                        var k = start
                        while k < i {
                            if b[k] & 0xC0 != 0x80 { count &+= 1 }
                            k &+= 1
                        }
                    } else {
                        body(index(start)..<index(i))
                        start = i
                        count = 0
                    }
                    lastSpace = -1
                }
                if c == 32 { lastSpace = i }
                count &+= 1
                i &+= 1
            }
            body(index(start)..<index(b.count))
        }
    }
}

/// Line counts of long texts that grow at their end (a streamed reply, its
/// reasoning, a tool's streamed input), resumed from the start of their last
/// line: wrapping starts afresh at every line, so the lines before it stand
/// while the text before it is unchanged. A text that changed elsewhere is
/// counted again from its start. Kept by the `RowCache`, per node id, for
/// the rows of the last build.
public final class LineMemo {
    struct Entry {
        var text: String
        var perLine: Int
        /// Where its last lines start.
        var starts: LineStarts
        /// The build that last measured it.
        var generation: Int
    }

    /// Where a text's last lines start (UTF-8 offsets), at most four, the
    /// last line's last, and how many lines come before each.
    struct LineStarts {
        private(set) var count = 0
        private var offsets: (Int, Int, Int, Int) = (0, 0, 0, 0)
        private var befores: (Int, Int, Int, Int) = (0, 0, 0, 0)

        subscript(i: Int) -> (offset: Int, before: Int) {
            switch i {
            case 0: return (offsets.0, befores.0)
            case 1: return (offsets.1, befores.1)
            case 2: return (offsets.2, befores.2)
            default: return (offsets.3, befores.3)
            }
        }

        /// A line starting after the others (the first of the four goes when there are four).
        mutating func append(_ offset: Int, before: Int) {
            if count == 4 {
                offsets = (offsets.1, offsets.2, offsets.3, offset)
                befores = (befores.1, befores.2, befores.3, before)
                return
            }
            switch count {
            case 0: offsets.0 = offset; befores.0 = before
            case 1: offsets.1 = offset; befores.1 = before
            case 2: offsets.2 = offset; befores.2 = before
            default: offsets.3 = offset; befores.3 = before
            }
            count &+= 1
        }

        /// Only the first `n`.
        mutating func keep(_ n: Int) { count = min(count, n) }
    }

    /// Texts up to this many bytes are counted from the start (cheaper than the bookkeeping).
    static let threshold = 512
    @exclusivity(unchecked) private var entries: [String: Entry] = [:]
    @exclusivity(unchecked) private var generation = 0
    @exclusivity(unchecked) private var measured = 0

    /// A message's markdown block as last placed: reused, moved, when the
    /// same block comes at the same place and width (the blocks before a
    /// streamed reply's last one do not change).
    final class PlacedBlock {
        let node: SemanticNode
        var placed: SemanticNode
        let x: Int
        var y: Int
        let width: Int
        let height: Int
        var generation: Int

        init(node: SemanticNode, placed: SemanticNode, x: Int, y: Int, width: Int, height: Int, generation: Int) {
            self.node = node
            self.placed = placed
            self.x = x
            self.y = y
            self.width = width
            self.height = height
            self.generation = generation
        }
    }

    private var blocks: [String: PlacedBlock] = [:]
    private var blocksPlaced = 0

    func placeBlock(_ node: inout SemanticNode, x: Int, y: inout Int, width: Int) {
        blocksPlaced &+= 1
        if let kept = blocks[node.id], kept.x == x, kept.width == width, kept.node == node {
            if kept.y != y {
                Layout.shift(&kept.placed, by: y &- kept.y)
                kept.y = y
            }
            kept.generation = generation
            node = kept.placed
            y &+= kept.height
            return
        }
        let unplaced = node
        let top = y
        Layout.place(&node, x: x, y: &y, width: width, memo: self)
        blocks[node.id] = PlacedBlock(node: unplaced, placed: node, x: x, y: top, width: width, height: y &- top, generation: generation)
    }

    /// `keepsOwn`: a text that changed only in its last lines (it grew, or a
    /// closing mark took a character back) is kept in storage
    /// of the memo's own, changed in place (a streamed code block's or long
    /// paragraph's: holding the caller's, the node's value, would make the
    /// next append to that one copy it whole).
    func lineCount(of text: String, id: String, perLine: Int, keepsOwn: Bool = false) -> Int {
        // Resumed from the start of a line when the text before the start of
        // the line after it is where it was: that line's breaks may depend on
        // the first word of the next. When the whole text measured before is
        // there, from its last line's start; else, when a streamed paragraph's
        // closing "*" took a character back in one of its last lines, from the
        // line before that one.
        var starts = LineStarts()
        var from = 0
        var before = 0
        // How many of the text's first bytes are the memo's (0: none).
        var same = 0
        if let old = entries[id], old.perLine == perLine, old.starts.count > 0 {
            let oldCount = old.text.utf8.count
            var j = old.starts.count &- 1
            if Self.hasPrefix(text, old.text, count: oldCount) {
                same = oldCount
            } else {
                while j > 0 && !Self.hasPrefix(text, old.text, count: old.starts[j].offset) { j &-= 1 }
                if j > 0 {
                    same = old.starts[j].offset
                    j &-= 1
                }
            }
            if same > 0 {
                (from, before) = old.starts[j]
                starts = old.starts
                starts.keep(j)
            }
        }
        let utf8 = text.utf8
        var count = 0
        Layout.forEachLine(text, from: utf8.index(utf8.startIndex, offsetBy: from), perLine: perLine) { range in
            starts.append(utf8.distance(from: utf8.startIndex, to: range.lowerBound), before: before &+ count)
            count &+= 1
        }
        if keepsOwn, same > 0, let at = entries.index(forKey: id) {
            // Changed where it lies: its text, held here alone, is cut back to
            // what is the same and grows in place by the rest.
            // Counted, not held (a view of it held here would make the change copy it).
            if entries.values[at].text.utf8.count > same { Self.cut(&entries.values[at].text, to: same) }
            if utf8.count > same { entries.values[at].text.append(contentsOf: Substring(utf8[utf8.index(utf8.startIndex, offsetBy: same)...])) }
            entries.values[at].starts = starts
            entries.values[at].generation = generation
        } else {
            entries[id] = Entry(text: text, perLine: perLine, starts: starts, generation: generation)
        }
        measured &+= 1
        return before &+ count
    }

    /// Cuts `text` back to its first `count` bytes (a character boundary), in
    /// place when it is held by the caller alone.
    static func cut(_ text: inout String, to count: Int) {
        let end = text.utf8.index(text.utf8.startIndex, offsetBy: count)
        text.removeSubrange(end...)
    }

    /// The text last measured for `id` (for tests).
    func text(for id: String) -> String? { entries[id]?.text }

    /// Whether the first `count` bytes of `text` are those of `old`.
    static func hasPrefix(_ text: String, _ old: String, count: Int) -> Bool {
        RawMemory.hasPrefix(text, old, count: count)
    }

    /// After a build: forgets the texts it did not measure (once they are many).
    func sweep() {
        if entries.count > 2 &* measured &+ 8 { entries = entries.filter { $0.value.generation == generation } }
        if blocks.count > 2 &* blocksPlaced &+ 8 { blocks = blocks.filter { $0.value.generation == generation } }
        generation &+= 1
        measured = 0
        blocksPlaced = 0
    }
}
