/// The view-state reducer: derives the semantic UI tree from the domain
/// state. Stateless; every label, enabled flag and accessibility text is
/// decided here, so hosts only render.
public enum SemanticTree {
    /// The screen size the layout assumes (points).
    public struct Viewport: Equatable, Sendable {
        public var width: Int
        public var height: Int
        public init(width: Int = 390, height: Int = 844) {
            self.width = width
            self.height = height
        }
    }

    /// The tree of the current screen, laid out for `viewport`.
    public static func build(_ state: AppState, viewport: Viewport = Viewport()) -> SemanticNode {
        var root = nodes(state, includeTranscript: true)
        Layout.apply(to: &root, viewport: viewport)
        return root
    }

    /// The tree without a layout (every bounds zero).
    ///
    /// - Parameter includeTranscript: false builds everything but the message
    ///   nodes (what tap resolution needs), which keeps it cheap at any
    ///   transcript size.
    static func nodes(_ state: AppState, includeTranscript: Bool) -> SemanticNode {
        var children: [SemanticNode] = []
        children.append(contentsOf: banners(state))
        switch state.navigation.screen {
        case .onboarding: children.append(contentsOf: OnboardingScreen.nodes(state))
        case .chat: children.append(contentsOf: ChatScreen.nodes(state, includeTranscript: includeTranscript))
        case .sessions: children.append(contentsOf: SessionsScreen.nodes(state))
        case .modelPicker: children.append(contentsOf: ModelPickerScreen.nodes(state))
        case .settings: children.append(contentsOf: SettingsScreen.nodes(state))
        }
        return SemanticNode("root", .screen, label: title(of: state), value: state.navigation.screen.rawValue, children: children)
    }

    static func title(of state: AppState) -> String {
        switch state.navigation.screen {
        case .onboarding: return "Connect to jcode"
        case .chat: return state.session.title ?? "New session"
        case .sessions: return "Sessions"
        case .modelPicker: return "Model"
        case .settings: return "Settings"
        }
    }

    /// The status and error banners, shown on every screen.
    static func banners(_ state: AppState) -> [SemanticNode] {
        var nodes: [SemanticNode] = []
        let status = SemanticText.statusBanner(state)
        var statusChildren: [SemanticNode] = []
        let phase = state.connection.phase
        // Without a usable token only pairing again helps (the server refused
        // it, or the secure store has none): retrying would ask again and again.
        let needsPairing: Bool
        switch state.connection.issue {
        case .tokenRejected, .noCredentials: needsPairing = phase == .failed
        default: needsPairing = false
        }
        statusChildren.append(
            .button(
                "connection.retry", "Retry now", .retryConnection,
                visible: state.servers.selected != nil && (phase == .reconnecting || phase == .offline || (phase == .failed && !needsPairing) || phase == .disconnected)))
        statusChildren.append(.button("connection.repair", "Pair again", .navigate(.onboarding), visible: needsPairing))
        let needsWorkingDir: Bool
        switch state.connection.issue {
        case .workingDirRefused, .noWorkingDir: needsWorkingDir = phase == .failed
        default: needsWorkingDir = false
        }
        statusChildren.append(
            .button("connection.working_dir", "Set working directory", .navigate(.settings), visible: needsWorkingDir))
        nodes.append(
            SemanticNode(
                "banner.status", .status, label: status ?? "", visible: status != nil,
                accessibilityLabel: status.map { "Connection: \($0)" } ?? "", children: statusChildren))
        let error = state.notices.errorBanner.map(SemanticText.text(of:))
        nodes.append(
            SemanticNode(
                "banner.error", .banner, label: error ?? "", visible: error != nil,
                accessibilityLabel: error.map { "Error: \($0)" } ?? "",
                children: [.button("banner.error.dismiss", "Dismiss", .dismissError, visible: error != nil, accessibilityLabel: "Dismiss error")]))
        return nodes
    }
}

/// A deterministic top-to-bottom layout: enough for hit-testing and
/// screenshots to be stable until a real layout model arrives.
enum Layout {
    static let margin = 16
    static let charWidth = 8
    static let lineHeight = 20

    static func apply(to root: inout SemanticNode, viewport: SemanticTree.Viewport) {
        var y = 0
        root.bounds = SemanticNode.Bounds(x: 0, y: 0, width: viewport.width, height: viewport.height)
        for i in root.children.indices {
            place(&root.children[i], x: margin, y: &y, width: viewport.width - 2 * margin)
        }
    }

    private static func place(_ node: inout SemanticNode, x: Int, y: inout Int, width: Int) {
        guard node.visible else {
            node.bounds = SemanticNode.Bounds(x: x, y: y, width: 0, height: 0)
            zero(&node.children, x: x, y: y)
            return
        }
        let top = y
        let own = ownHeight(node, width: width)
        y += own
        for i in node.children.indices {
            place(&node.children[i], x: x + (node.role == .message || node.role == .toolCall ? 8 : 0), y: &y, width: max(0, width - 8))
        }
        node.bounds = SemanticNode.Bounds(x: x, y: top, width: max(0, width), height: y - top)
        y += node.children.isEmpty ? 8 : 0
    }

    private static func zero(_ nodes: inout [SemanticNode], x: Int, y: Int) {
        for i in nodes.indices {
            nodes[i].bounds = SemanticNode.Bounds(x: x, y: y, width: 0, height: 0)
            zero(&nodes[i].children, x: x, y: y)
        }
    }

    private static func ownHeight(_ node: SemanticNode, width: Int) -> Int {
        switch node.role {
        case .button, .textField, .secureField: return 44
        case .list, .group, .screen, .sheet: return node.label.isEmpty ? 0 : lineHeight + 8
        default:
            let chars = node.label.utf8.count + (node.value?.utf8.count ?? 0)
            let perLine = max(1, width / charWidth)
            let lines = max(1, (chars + perLine - 1) / perLine)
            return lines * lineHeight + 8
        }
    }
}
