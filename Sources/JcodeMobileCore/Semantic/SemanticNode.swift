import JcodeMobileJSON
import JcodeMobileMarkdown

/// One node of the semantic UI tree: what a renderer draws and what an
/// automation agent or a screen reader can find and act on.
public struct SemanticNode: Equatable, Sendable {
    public enum Role: String, Sendable, CaseIterable {
        case screen, header, text, heading, textField = "text_field", secureField = "secure_field", button, list
        case message, toolCall = "tool_call", banner, status, notice, sheet, image, group
        case errorText = "error_text"
        // A message's markdown (docs/ABI.md, "The transcript's nodes"):
        case paragraph, listItem = "list_item", quote, codeBlock = "code_block", table, tableRow = "table_row"
        case tableCell = "table_cell", divider
        // A tool call's edit:
        case diff, diffHunk = "diff_hunk", diffLine = "diff_line"
        /// The model's reasoning before a reply (collapsible).
        case reasoning
    }

    public struct Bounds: Equatable, Sendable {
        public var x = 0
        public var y = 0
        public var width = 0
        public var height = 0
    }

    /// A scrolling list's position: how far its content is scrolled, how
    /// tall the content is, and the largest offset (content minus frame).
    public struct Scroll: Equatable, Sendable {
        public var offset: Int
        public var contentHeight: Int
        public var maxOffset: Int
    }

    /// The message list's window: the rows `start ..< end` of `total` are
    /// its children (the rest are not in the tree).
    public struct Window: Equatable, Sendable {
        public var start: Int
        public var end: Int
        public var total: Int
    }

    /// What tapping the node does (not part of the JSON; `supported_actions` says it).
    public enum Tap: Equatable, Sendable {
        case action(Action)
        case focus
    }

    /// Stable across revisions: `pair.host`, `message.m12`, `permission.r1.approve`.
    public var id: String
    public var role: Role
    public var label: String
    public var value: String?
    public var placeholder: String? {
        get { rareStorage?.rare.placeholder }
        set { setRare(newValue == nil) { $0.placeholder = newValue } }
    }
    public var visible = true
    public var enabled = true
    public var focused = false
    public var accessibilityLabel: String
    public var accessibilityValue: String?
    /// Action types the node accepts: "tap" and the dispatch actions that edit it.
    public var supportedActions: [String] = []
    /// Screen coordinates (points, origin top-left), scrolling applied.
    public var bounds = Bounds()
    /// Only on the scrolling message list.
    public var scroll: Scroll? {
        get { rareStorage?.rare.scroll }
        set { setRare(newValue == nil) { $0.scroll = newValue } }
    }
    /// Only on the message list.
    public var window: Window? {
        get { rareStorage?.rare.window }
        set { setRare(newValue == nil) { $0.window = newValue } }
    }
    public var children: [SemanticNode] = []
    public var tap: Tap? {
        get { rareStorage?.rare.tap }
        set { setRare(newValue == nil) { $0.tap = newValue } }
    }
    /// The fields few nodes have (a field's placeholder, the message
    /// list's scroll and window, what a tap does), out of line like `detail`.
    var rareStorage: RareStorage?

    private mutating func setRare(_ clearing: Bool, _ change: (inout Rare) -> Void) {
        // Clearing a field no node of this kind has: nothing to allocate.
        if clearing && rareStorage == nil { return }
        var rare = rareStorage?.rare ?? Rare()
        change(&rare)
        rareStorage = rare.isEmpty ? nil : RareStorage(rare)
    }
    /// The fields only some roles carry (a heading's level, a text's spans,
    /// a code block's language …), kept out of line: most nodes have none,
    /// and a node is copied often.
    public var detail: Detail {
        get { detailStorage?.detail ?? Detail() }
        set { detailStorage = newValue.isEmpty ? nil : DetailStorage(newValue) }
    }
    var detailStorage: DetailStorage?

    public init(
        _ id: String, _ role: Role, label: String = "", value: String? = nil, placeholder: String? = nil,
        visible: Bool = true, enabled: Bool = true, accessibilityLabel: String? = nil, accessibilityValue: String? = nil,
        actions: [String] = [], tap: Tap? = nil, children: [SemanticNode] = []
    ) {
        self.id = id
        self.role = role
        self.label = label
        self.value = value
        if placeholder != nil || tap != nil { rareStorage = RareStorage(Rare(placeholder: placeholder, tap: tap)) }
        self.visible = visible
        self.enabled = enabled
        self.accessibilityLabel = accessibilityLabel ?? label
        self.accessibilityValue = accessibilityValue ?? value
        self.supportedActions = (tap != nil ? ["tap"] : []) + actions
        self.children = children
    }

    /// A button that dispatches `action` when tapped; `icon`, an SF Symbols
    /// name, when an app draws it as an icon (its label stays its words).
    static func button(
        _ id: String, _ label: String, _ action: Action, enabled: Bool = true, visible: Bool = true,
        accessibilityLabel: String? = nil, value: String? = nil, icon: String? = nil
    ) -> SemanticNode {
        var node = SemanticNode(
            id, .button, label: label, value: value, visible: visible, enabled: enabled,
            accessibilityLabel: accessibilityLabel, tap: .action(action))
        node.variant = buttonVariant(action)
        node.icon = icon
        return node
    }

    /// A button's role, from what it does: `primary` for the step the
    /// screen is for (pair, send, approve once, retry), `destructive` for
    /// what refuses, stops or loses something (deny, stop, forget, discard,
    /// clear, disconnect), `secondary` for the rest — so Deny never looks
    /// like Approve.
    static func buttonVariant(_ action: Action) -> String {
        switch action {
        case .submitPairing, .sendMessage, .retryMessage, .retryConnection: return "primary"
        case .respondPermission(_, let approved, let remember): return approved ? (remember ? "secondary" : "primary") : "destructive"
        case .forgetServer, .discardMessage, .clearConversation, .interrupt, .disconnect, .cancelQueuedInterrupts: return "destructive"
        default: return "secondary"
        }
    }

    /// A text field edited with `editAction` (`set_host`, `set_draft`).
    static func field(
        _ id: String, _ label: String, value: String, placeholder: String, editAction: String, secure: Bool = false,
        focusedID: String?, error: String? = nil
    ) -> SemanticNode {
        var node = SemanticNode(
            id, secure ? .secureField : .textField, label: label, value: secure ? String(repeating: "•", count: value.count) : value,
            placeholder: placeholder,
            accessibilityValue: value.isEmpty ? placeholder : (secure ? "\(value.count) characters" : value),
            actions: [editAction], tap: .focus)
        node.focused = focusedID == id
        if let error {
            node.children = [SemanticNode("\(id).error", .errorText, label: error, accessibilityLabel: "Error: \(error)")]
        }
        return node
    }

    static func text(_ id: String, _ label: String, value: String? = nil, visible: Bool = true, role: Role = .text) -> SemanticNode {
        SemanticNode(id, role, label: label, value: value, visible: visible)
    }

    /// A heading's level (1 … 6).
    public var level: Int? {
        get { detailStorage?.detail.level }
        set { detail.level = newValue }
    }
    /// The inline runs of a text with styles or links (their texts make up `value`).
    public var spans: MarkdownSpans? {
        get { detailStorage?.detail.spans }
        set { detail.spans = newValue }
    }
    /// A code block's language (the word after its fence).
    public var language: String? {
        get { detailStorage?.detail.language }
        set { detail.language = newValue }
    }
    /// A task list item's check box.
    public var checked: Bool? {
        get { detailStorage?.detail.checked }
        set { detail.checked = newValue }
    }
    /// Which kind of its role the node is: a button's `primary`,
    /// `secondary` or `destructive`; a list's `ordered` or `bullet`; a loose
    /// list's items `loose`; a table
    /// cell's alignment; a diff line's `added`, `removed` or `context`; a
    /// code block still streaming `open`.
    public var variant: String? {
        get { detailStorage?.detail.variant }
        set { detail.variant = newValue }
    }
    /// A collapsible node's state (a tool card, reasoning, a long output).
    public var expanded: Bool? {
        get { detailStorage?.detail.expanded }
        set { detail.expanded = newValue }
    }
    /// A diff's added and removed line counts.
    public var counts: Counts? {
        get { detailStorage?.detail.counts }
        set { detail.counts = newValue }
    }
    /// One of a choice's options (a session, a model, an effort): `true`
    /// on the one in use, `false` on the others; absent on other nodes.
    public var selected: Bool? {
        get { detailStorage?.detail.selected }
        set { detail.selected = newValue }
    }
    /// A button an app draws as an icon: the SF Symbols name (`arrow.up`,
    /// `paperclip` …); its `label` stays its words (what a screen reader
    /// and a text render say).
    public var icon: String? {
        get { detailStorage?.detail.icon }
        set { detail.icon = newValue }
    }

    /// The node with `id` in this subtree (depth-first).
    public func find(_ id: String) -> SemanticNode? {
        if self.id == id { return self }
        for child in children {
            if let found = child.find(id) { return found }
        }
        return nil
    }

    /// Every node of the subtree, depth-first (for tests and automation).
    public func allNodes() -> [SemanticNode] {
        var result: [SemanticNode] = []
        var stack = [self]
        while let node = stack.popLast() {
            result.append(node)
            stack.append(contentsOf: node.children.reversed())
        }
        return result
    }

    public func write(to w: inout JSONWriter) {
        w.objectStart()
        w.key("id"); w.string(id)
        writeFields(Self.jsonFields, to: &w, omittingAbsent: true)
        w.key("children")
        w.arrayStart()
        for child in children { child.write(to: &w) }
        w.arrayEnd()
        w.objectEnd()
    }

    /// Every own field the JSON carries (all but `tap`).
    static let jsonFields: Fields = Fields(rawValue: (1 << 23) - 1).subtracting(.tap)

    /// Writes the members of `fields`, in the node's order. An absent
    /// `scroll` or `window` is null, or left out when `omittingAbsent`.
    func writeFields(_ fields: Fields, to w: inout JSONWriter, omittingAbsent: Bool = false) {
        if fields.contains(.role) { w.key("role"); w.string(role.rawValue) }
        if fields.contains(.label) { w.key("label"); w.string(label) }
        if fields.contains(.value) { w.key("value"); w.string(value) }
        if fields.contains(.placeholder) { w.key("placeholder"); w.string(placeholder) }
        if fields.contains(.visible) { w.key("visible"); w.bool(visible) }
        if fields.contains(.enabled) { w.key("enabled"); w.bool(enabled) }
        if fields.contains(.focused) { w.key("focused"); w.bool(focused) }
        if fields.contains(.accessibilityLabel) { w.key("accessibility_label"); w.string(accessibilityLabel) }
        if fields.contains(.accessibilityValue) { w.key("accessibility_value"); w.string(accessibilityValue) }
        if fields.contains(.supportedActions) {
            w.key("supported_actions")
            w.arrayStart()
            for action in supportedActions { w.string(action) }
            w.arrayEnd()
        }
        if fields.contains(.bounds) {
            w.key("bounds")
            w.objectStart()
            w.key("x"); w.int(bounds.x)
            w.key("y"); w.int(bounds.y)
            w.key("width"); w.int(bounds.width)
            w.key("height"); w.int(bounds.height)
            w.objectEnd()
        }
        if fields.contains(.scroll) {
            if let scroll {
                w.key("scroll")
                w.objectStart()
                w.key("offset"); w.int(scroll.offset)
                w.key("content_height"); w.int(scroll.contentHeight)
                w.key("max_offset"); w.int(scroll.maxOffset)
                w.objectEnd()
            } else if !omittingAbsent {
                w.key("scroll"); w.null()
            }
        }
        if fields.contains(.window) {
            if let window {
                w.key("window")
                w.objectStart()
                w.key("start"); w.int(window.start)
                w.key("end"); w.int(window.end)
                w.key("total"); w.int(window.total)
                w.objectEnd()
            } else if !omittingAbsent {
                w.key("window"); w.null()
            }
        }
        guard fields.rawValue >= Fields.level.rawValue else { return }
        let d = detail
        if fields.contains(.level) {
            if let level = d.level { w.key("level"); w.int(level) } else if !omittingAbsent { w.key("level"); w.null() }
        }
        if fields.contains(.spans) {
            if let spans = d.spans {
                w.key("spans")
                w.arrayStart()
                for span in spans { span.write(to: &w) }
                w.arrayEnd()
            } else if !omittingAbsent {
                w.key("spans"); w.null()
            }
        }
        if fields.contains(.language) {
            if let language = d.language { w.key("language"); w.string(language) } else if !omittingAbsent { w.key("language"); w.null() }
        }
        if fields.contains(.checked) {
            if let checked = d.checked { w.key("checked"); w.bool(checked) } else if !omittingAbsent { w.key("checked"); w.null() }
        }
        if fields.contains(.variant) {
            if let variant = d.variant { w.key("variant"); w.string(variant) } else if !omittingAbsent { w.key("variant"); w.null() }
        }
        if fields.contains(.expanded) {
            if let expanded = d.expanded { w.key("expanded"); w.bool(expanded) } else if !omittingAbsent { w.key("expanded"); w.null() }
        }
        if fields.contains(.counts) {
            if let counts = d.counts {
                w.key("counts")
                w.objectStart()
                w.key("added"); w.int(counts.added)
                w.key("removed"); w.int(counts.removed)
                w.objectEnd()
            } else if !omittingAbsent {
                w.key("counts"); w.null()
            }
        }
        if fields.contains(.selected) {
            if let selected = d.selected { w.key("selected"); w.bool(selected) } else if !omittingAbsent { w.key("selected"); w.null() }
        }
        if fields.contains(.icon) {
            if let icon = d.icon { w.key("icon"); w.string(icon) } else if !omittingAbsent { w.key("icon"); w.null() }
        }
    }
}

// MARK: - The fields only some roles carry

extension SemanticNode {
    /// A diff's line counts.
    public struct Counts: Equatable, Sendable {
        public var added: Int
        public var removed: Int
        public init(added: Int, removed: Int) {
            self.added = added
            self.removed = removed
        }
    }

    /// The optional fields of `detail`.
    public struct Detail: Equatable, Sendable {
        public var level: Int?
        public var spans: MarkdownSpans?
        public var language: String?
        public var checked: Bool?
        public var variant: String?
        public var expanded: Bool?
        public var counts: Counts?
        public var selected: Bool?
        public var icon: String?

        public init() {}

        var isEmpty: Bool {
            level == nil && spans == nil && language == nil && checked == nil && variant == nil && expanded == nil && counts == nil
                && selected == nil && icon == nil
        }
    }

    struct Rare: Equatable, Sendable {
        var placeholder: String?
        var scroll: Scroll?
        var window: Window?
        var tap: Tap?

        var isEmpty: Bool { placeholder == nil && scroll == nil && window == nil && tap == nil }
    }

    /// Immutable, as `DetailStorage` is.
    final class RareStorage: Sendable, Equatable {
        let rare: Rare
        init(_ rare: Rare) { self.rare = rare }
        static func == (a: RareStorage, b: RareStorage) -> Bool { a === b || a.rare == b.rare }
    }

    /// Immutable: a node's copies share it until one of them sets a field.
    final class DetailStorage: Sendable, Equatable {
        let detail: Detail
        init(_ detail: Detail) { self.detail = detail }
        static func == (a: DetailStorage, b: DetailStorage) -> Bool { a === b || a.detail == b.detail }
    }
}

/// A run of a text node's value with one set of styles: a message's
/// `**bold**` arrives as a run with the style `bold` and no asterisks. The
/// markdown parser's run itself, so that a block's runs become its node's
/// without a copy (`MarkdownSpans` shares their chunks).
public typealias TextSpan = MarkdownSpan

extension MarkdownSpan {
    public typealias Style = MarkdownStyle

    public init(_ text: String, _ styles: Style = [], url: String? = nil, source: String? = nil) {
        self.init(text: text, styles: styles, url: url, source: source)
    }

    /// `{"text":…,"styles":["bold",…],"url":…,"source":…}` (`url` only on a link, `source` only on an image).
    func write(to w: inout JSONWriter) {
        w.objectStart()
        w.key("text"); w.string(text)
        w.key("styles")
        w.arrayStart()
        for (style, name) in Style.named where styles.contains(style) { w.staticString(name) }
        w.arrayEnd()
        if let url { w.key("url"); w.string(url) }
        if let source { w.key("source"); w.string(source) }
        w.objectEnd()
    }
}

extension MarkdownStyle {
    /// Each style with its JSON name, in the order they are written.
    public static let named: [(MarkdownStyle, StaticString)] = [
        (.bold, "bold"), (.italic, "italic"), (.code, "code"), (.strikethrough, "strikethrough"), (.link, "link"),
        (.image, "image"), (.lineBreak, "break"),
    ]
}

extension SemanticNode.Role {
    /// Whether a node of this role is one of a message's markdown blocks:
    /// the message's text then shows as them, not as its value.
    public var isMarkdownBlock: Bool {
        switch self {
        case .paragraph, .heading, .list, .quote, .codeBlock, .table, .divider: return true
        default: return false
        }
    }
}
