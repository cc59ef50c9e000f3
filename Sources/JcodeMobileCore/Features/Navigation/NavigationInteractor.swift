/// Owns which screen shows and which field has the keyboard. The one writer
/// of `screen`: other features say what happened (`socketOpened`,
/// `serverChanged`, `pairingLinkScanned`) or ask for the chat (`openChat`).
public struct NavigationInteractor: Interactor {
    public init() {}

    /// What navigation acts on.
    public enum Input: Equatable, Sendable {
        // Actions
        case navigate(Screen)
        // The app root's outputs (resolved taps and scrolls)
        case focus(nodeID: String)
        case scrollMessages(offset: Int?)
        case scrollScreen(offset: Int)
        case setExpanded(nodeID: String, expanded: Bool)
        /// A node shows as its role's default again (the error banner, when another error comes).
        case forgetExpansion(nodeID: String)
        // Other features' outputs
        /// A message left the composer (chat) or another session opened
        /// (session): the list shows the newest message.
        case followNewest
        case serverChanged(SavedServer?)
        case openChat
        case socketOpened
        case pairingLinkScanned
    }

    public func interact(_ state: inout NavigationState, _ input: Input, _ facts: Facts) -> Emission {
        switch input {
        case .navigate(let screen):
            if screen != .onboarding && facts.servers.selected == nil {
                return .note("navigate: \(screen.rawValue) needs a paired server")
            }
            // Another screen shows from its top.
            if screen != state.screen { state.screenScroll = 0 }
            state.screen = screen
            return .none
        case .focus(let nodeID):
            state.focusedNodeID = nodeID
            return .none
        case .scrollMessages(let offset):
            state.messagesScroll = offset
            return .none
        case .scrollScreen(let offset):
            state.screenScroll = offset
            return .none
        case .setExpanded(let id, let expanded):
            guard id.utf8.count <= 512 else { return .note("set_expanded: a node id of \(id.utf8.count) bytes is no node's") }
            state.expansions.removeAll { $0.nodeID == id }
            state.expansions.append(.init(nodeID: id, expanded: expanded))
            if state.expansions.count > NavigationState.expansionLimit { state.expansions.removeFirst() }
            return .none
        case .forgetExpansion(let id):
            state.expansions.removeAll { $0.nodeID == id }
            return .none
        case .followNewest:
            // What the person just sent, or another conversation, shows from its end.
            state.messagesScroll = nil
            return .none
        case .serverChanged(let server):
            state.messagesScroll = nil
            if server == nil { state.screen = .onboarding }
            return .none
        case .openChat:
            state.screen = .chat
            return .none
        case .socketOpened:
            if state.screen == .onboarding { state.screen = .chat }
            return .none
        case .pairingLinkScanned:
            state.screen = .onboarding
            return .none
        }
    }
}
