/// The view-state reducer: derives the semantic UI tree from the domain
/// state. Stateless; every label, enabled flag and accessibility text is
/// decided here, so hosts only render.
public enum SemanticTree {
    /// The screen size the layout assumes (points).
    public struct Viewport: Equatable, Sendable {
        public var width: Int
        public var height: Int
        /// What the phone draws over the screen's edges, as the host knows
        /// it; nil: a 390 × 844 iPhone's, by the viewport's shape
        /// (`Layout.safeArea`).
        public var safeArea: Layout.Insets?
        public init(width: Int = 390, height: Int = 844, safeArea: Layout.Insets? = nil) {
            self.width = width
            self.height = height
            self.safeArea = safeArea
        }
    }

    /// The tree of the current screen, laid out for `viewport`: the message
    /// list holds the rows in and near the viewport (see `MessageRows`).
    /// `cache` reuses rows built before (`RowCache`); the tree is the same
    /// with or without one.
    public static func build(_ state: AppState, viewport: Viewport = Viewport(), cache: RowCache? = nil) -> SemanticNode {
        filled(chrome(state, viewport: viewport), state, viewport: viewport, cache: cache)
    }

    /// The screen laid out with its message list empty: what does not
    /// depend on the transcript or the scroll position (see `chromeKey`).
    struct Chrome {
        var root: SemanticNode
        /// The message list's place among the root's children, and its frame.
        var list: (index: Int, frame: SemanticNode.Bounds)?
    }

    static func chrome(_ state: AppState, viewport: Viewport) -> Chrome {
        var root = nodes(state, tappableRows: false, viewport: viewport)
        let list = Layout.applyChrome(to: &root, viewport: viewport, screenScroll: state.navigation.screenScroll)
        return Chrome(root: root, list: list.map { ($0.list, $0.frame) })
    }

    /// The state the chrome is a function of: everything but the
    /// transcript (only whether it is empty: an empty chat says what to
    /// do), the scroll position and the revision.
    static func chromeKey(_ state: AppState) -> AppState {
        var key = state
        key.revision = 0
        key.navigation.messagesScroll = nil
        key.chat.transcript = state.chat.transcript.count == 0 ? Transcript.placeholder : Transcript.nonEmptyPlaceholder
        return key
    }

    /// The chrome with the message list's window in it.
    static func filled(_ chrome: Chrome, _ state: AppState, viewport: Viewport, cache: RowCache?) -> SemanticNode {
        var root = chrome.root
        guard let (index, frame) = chrome.list else { return root }
        let rows = MessageRows(state, width: frame.width)
        root.children[index].accessibilityValue = ChatScreen.conversationValue(state)
        Layout.placeMessages(&root.children[index], frame: frame, offset: state.navigation.messagesScroll, rows: rows, cache: cache)
        return root
    }

    /// The tree without a layout (every bounds zero).
    ///
    /// - Parameter tappableRows: the message list holds its tappable rows
    ///   (what tap resolution needs) instead of none (the layout fills it).
    /// - Parameter viewport: the screen the tree is for (how much of a long error the banner shows).
    static func nodes(_ state: AppState, tappableRows: Bool, viewport: Viewport = Viewport()) -> SemanticNode {
        var children: [SemanticNode] = []
        children.append(contentsOf: banners(state, viewport: viewport))
        switch state.navigation.screen {
        case .onboarding: children.append(contentsOf: OnboardingScreen.nodes(state))
        case .chat: children.append(contentsOf: ChatScreen.nodes(state, tappableRows: tappableRows))
        case .sessions: children.append(contentsOf: SessionsScreen.nodes(state))
        case .modelPicker: children.append(contentsOf: ModelPickerScreen.nodes(state))
        case .settings: children.append(contentsOf: SettingsScreen.nodes(state))
        }
        return SemanticNode("root", .screen, label: title(of: state), value: state.navigation.screen.rawValue, children: children)
    }

    static func title(of state: AppState) -> String {
        switch state.navigation.screen {
        case .onboarding: return "Connect to jcode"
        case .chat: return SemanticText.sessionTitle(state.session.title, id: state.session.id)
        case .sessions: return "Sessions"
        case .modelPicker: return "Model"
        case .settings: return "Settings"
        }
    }

    /// The status and error banners, shown on every screen.
    static func banners(_ state: AppState, viewport: Viewport = Viewport()) -> [SemanticNode] {
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
        statusChildren.append(
            .button(
                "connection.repair", "Pair again", state.servers.selectedID.map { .pairAgain(id: $0) } ?? .navigate(.onboarding),
                visible: needsPairing))
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
        nodes.append(errorBanner(state, viewport: viewport))
        return nodes
    }

    /// The error banner: its words in plain language, folded to what fits
    /// in about a third of the screen until "Show all"; a server's own
    /// text, when the words are not it, behind "Details". Open, it is folded
    /// to what leaves the chat its header, its composer and some of its
    /// messages. Its buttons share one row at its bottom, so they are on the
    /// screen. The whole text is its accessibility label (and the state's
    /// `error_banner`).
    static func errorBanner(_ state: AppState, viewport: Viewport) -> SemanticNode {
        let id = "banner.error"
        var dismiss = SemanticNode.button("\(id).dismiss", "Dismiss", .dismissError, accessibilityLabel: "Dismiss error", icon: "xmark")
        guard let banner = state.notices.errorBanner else {
            // Hidden, with its dismiss button: its ids stay in the tree.
            dismiss.visible = false
            return SemanticNode(
                id, .banner, label: "", visible: false, children: [SemanticNode("\(id).actions", .group, visible: false, children: [dismiss])])
        }
        let plain = SemanticText.plain(of: banner)
        let open = state.navigation.isExpanded(id, default: false)
        let width = Layout.content(viewport).width
        let perLine = Layout.charactersPerLine(width)
        let budget = Layout.bannerLines(viewport, chrome: Layout.chatChrome(state, width: width))
        // Words without details that fit closed beside the close button share its row
        // (a band: Layout.iconActions); others are folded across the banner's width.
        let bandPerLine = Layout.charactersPerLine(width - Layout.indent - Layout.buttonHeight)
        let fitsBand = plain.details == nil && SemanticText.folded(plain.words, lines: budget.closed, perLine: bandPerLine) == nil
        let closedWords = fitsBand ? nil : SemanticText.folded(plain.words, lines: budget.closed, perLine: perLine)
        let words = open ? (SemanticText.folded(plain.words, lines: budget.open, perLine: perLine) ?? plain.words) : (closedWords ?? plain.words)
        var children: [SemanticNode] = []
        if open, let details = plain.details {
            // Its own padding and the gap after it take about a line.
            let room = max(1, budget.open - Layout.lineCount(words, perLine: perLine) - 1)
            let detailsPerLine = Layout.charactersPerLine(width - 2 * Layout.indent)
            children.append(
                SemanticNode(
                    "\(id).details", .text, label: SemanticText.folded(details, lines: room, perLine: detailsPerLine) ?? details,
                    accessibilityLabel: "Details: \(details)"))
        }
        var buttons: [SemanticNode] = []
        if plain.details != nil || closedWords != nil {
            let more = plain.details != nil ? (open ? "Hide details" : "Details") : (open ? "Show less" : "Show all")
            buttons.append(
                .button(
                    "\(id).more", more, .setExpanded(nodeID: id, expanded: !open),
                    accessibilityLabel: open ? "Show less of the error" : "Show all of the error"))
        }
        buttons.append(dismiss)
        children.append(SemanticNode("\(id).actions", .group, children: buttons))
        var node = SemanticNode(id, .banner, label: words, accessibilityLabel: "Error: \(plain.words)", children: children)
        if buttons.count > 1 { node.expanded = open }
        return node
    }
}
