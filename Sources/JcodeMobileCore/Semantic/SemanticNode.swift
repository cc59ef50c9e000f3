/// One node of the semantic UI tree: what a renderer draws and what an
/// automation agent or a screen reader can find and act on.
public struct SemanticNode: Equatable, Sendable {
    public enum Role: String, Sendable, CaseIterable {
        case screen, header, text, heading, textField = "text_field", secureField = "secure_field", button, list
        case message, toolCall = "tool_call", banner, status, notice, sheet, image, group
        case errorText = "error_text"
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
    public var placeholder: String?
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
    public var scroll: Scroll?
    /// Only on the message list.
    public var window: Window?
    public var children: [SemanticNode] = []
    public var tap: Tap?

    public init(
        _ id: String, _ role: Role, label: String = "", value: String? = nil, placeholder: String? = nil,
        visible: Bool = true, enabled: Bool = true, accessibilityLabel: String? = nil, accessibilityValue: String? = nil,
        actions: [String] = [], tap: Tap? = nil, children: [SemanticNode] = []
    ) {
        self.id = id
        self.role = role
        self.label = label
        self.value = value
        self.placeholder = placeholder
        self.visible = visible
        self.enabled = enabled
        self.accessibilityLabel = accessibilityLabel ?? label
        self.accessibilityValue = accessibilityValue ?? value
        self.tap = tap
        self.supportedActions = (tap != nil ? ["tap"] : []) + actions
        self.children = children
    }

    /// A button that dispatches `action` when tapped.
    static func button(
        _ id: String, _ label: String, _ action: Action, enabled: Bool = true, visible: Bool = true,
        accessibilityLabel: String? = nil, value: String? = nil
    ) -> SemanticNode {
        SemanticNode(
            id, .button, label: label, value: value, visible: visible, enabled: enabled,
            accessibilityLabel: accessibilityLabel, tap: .action(action))
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

    /// Every own field the JSON carries.
    static let jsonFields: Fields = Fields(rawValue: (1 << 13) - 1)

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
    }
}
