/// Resolves `tap_node {node_id}` against the tree the person sees, so a tap
/// does exactly what the node's `supported_actions` promised.
extension SemanticTree {
    public enum TapTarget: Equatable, Sendable {
        /// No visible, tappable node with that id on this screen.
        case none
        case disabled
        /// A text field: it takes the keyboard focus.
        case focus
        case action(Action)
    }

    /// Builds the current screen's nodes with the message list's tappable
    /// rows (messages are not tappable) and without laying them out, so a
    /// tap costs the same at any conversation length.
    public static func tapTarget(of nodeID: String, in state: AppState) -> TapTarget {
        let root = nodes(state, tappableRows: true)
        guard let node = visibleNode(nodeID, in: root), let tap = node.tap else { return .none }
        guard node.enabled else { return .disabled }
        switch tap {
        case .focus: return .focus
        case .action(let action): return .action(action)
        }
    }

    /// A node that is visible along with all its ancestors.
    private static func visibleNode(_ id: String, in node: SemanticNode) -> SemanticNode? {
        guard node.visible else { return nil }
        if node.id == id { return node }
        for child in node.children {
            if let found = visibleNode(id, in: child) { return found }
        }
        return nil
    }
}
