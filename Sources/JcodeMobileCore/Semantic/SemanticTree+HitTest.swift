/// Finds what is at a point of the screen, as the layout placed it: what
/// `jcode_mobile_hit_test` answers and what `tap_xy` taps.
extension SemanticTree {
    /// The nodes at a point, from the root down to the deepest one there.
    public struct Hit: Sendable {
        /// Root first; never empty.
        public var path: [SemanticNode]
        public var node: SemanticNode { path[path.count - 1] }
        /// How far down the screen the deepest node's coordinates lie from
        /// its bounds (the scrolling list's top minus its offset, inside it).
        public var screenOffsetY = 0
        /// The deepest node's bounds on the screen.
        public var screenBounds: SemanticNode.Bounds {
            var b = node.bounds
            b.y += screenOffsetY
            return b
        }

        /// The deepest node on the path a tap acts on (nil when none is).
        public var tappable: SemanticNode? { path.last(where: { $0.tap != nil }) }
    }

    /// The node at (x, y), in points from the viewport's top-left corner:
    /// the deepest visible node whose bounds hold the point. A scrolling
    /// list's children count only inside the list's frame, so what scrolled
    /// out of view is never hit; their bounds are in the list's content
    /// coordinates, so the point is moved into them (by the list's top and
    /// its scroll offset) on the way down. Nil outside the viewport (or for a point
    /// that is not a finite number).
    public static func hitTest(_ root: SemanticNode, x: Double, y: Double) -> Hit? {
        guard x.isFinite, y.isFinite else { return nil }
        var path: [SemanticNode] = []
        var offset = 0
        guard hit(root, x: x, y: y, path: &path, offset: &offset) else { return nil }
        return Hit(path: path, screenOffsetY: offset)
    }

    private static func hit(_ node: SemanticNode, x: Double, y: Double, path: inout [SemanticNode], offset: inout Int) -> Bool {
        guard node.visible, contains(node.bounds, x: x, y: y) else { return false }
        path.append(node)
        // A scrolling list's children are in its content coordinates.
        var childY = y
        var childOffset = offset
        if let scroll = node.scroll {
            childY = y - Double(node.bounds.y) + Double(scroll.offset)
            childOffset = offset + node.bounds.y - scroll.offset
        }
        // Later siblings are drawn over earlier ones.
        for child in node.children.reversed() where hit(child, x: x, y: childY, path: &path, offset: &childOffset) {
            offset = childOffset
            return true
        }
        return true
    }

    static func contains(_ b: SemanticNode.Bounds, x: Double, y: Double) -> Bool {
        x >= Double(b.x) && x < Double(b.x) + Double(b.width) && y >= Double(b.y) && y < Double(b.y) + Double(b.height)
    }

    /// The message list's scroll position on the current screen (nil when
    /// the screen has none): the cost of the window, not of the conversation.
    public static func messagesScroll(_ state: AppState, viewport: Viewport) -> SemanticNode.Scroll? {
        guard state.navigation.screen == .chat else { return nil }
        return build(state, viewport: viewport).children.first(where: { $0.id == Layout.messagesID })?.scroll
    }
}
