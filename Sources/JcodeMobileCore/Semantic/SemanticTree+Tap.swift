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
        guard let node = visibleNode(nodeID, in: root) ?? rowNode(nodeID, in: state), let tap = node.tap else { return .none }
        guard node.enabled else { return .disabled }
        switch tap {
        case .focus: return .focus
        case .action(let action): return .action(action)
        }
    }

    /// What `copy` puts on the clipboard: the value of a node that offers
    /// `copy` (a code block's code, a message's text as written).
    public static func copyText(of nodeID: String, in state: AppState) -> String? {
        guard let node = rowNode(nodeID, in: state), node.supportedActions.contains("copy") else { return nil }
        return node.value ?? node.label
    }

    /// A node of a transcript entry's row (`message.m12…`, `tool.m12.…`),
    /// built alone: the cost of one row, at any conversation length.
    static func rowNode(_ nodeID: String, in state: AppState) -> SemanticNode? {
        guard state.navigation.screen == .chat, let serial = entrySerial(in: nodeID),
              let index = state.chat.transcript.index(ofSerial: serial)
        else { return nil }
        let images = ChatScreen.ImagePlaces(state.chat.images)
        let row = ChatScreen.message(
            state.chat.transcript.entries[index], images: images, prompt: nil, all: state.chat.images,
            navigation: state.navigation)
        return visibleNode(nodeID, in: row)
    }

    /// 12 of `message.m12`, `message.m12.md.3`, `tool.m12.call`.
    static func entrySerial(in nodeID: String) -> Int? {
        var rest = Substring(nodeID)
        if rest.hasPrefix("message.m") {
            rest = rest.dropFirst(9)
        } else if rest.hasPrefix("tool.m") {
            rest = rest.dropFirst(6)
        } else {
            return nil
        }
        let digits = rest.prefix { $0 >= "0" && $0 <= "9" }
        guard !digits.isEmpty, digits.count <= 18 else { return nil }
        return Int(digits)
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
