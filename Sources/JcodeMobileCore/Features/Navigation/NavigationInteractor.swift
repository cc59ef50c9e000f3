/// Owns which screen shows and which field has the keyboard. The one writer
/// of `screen`: other features say what happened (`socketOpened`,
/// `serverChanged`, `pairingLinkScanned`) or ask for the chat (`openChat`).
public struct NavigationInteractor: Interactor {
    public init() {}

    public func interact(_ state: inout NavigationState, _ input: Input, _ facts: Facts) -> Emission {
        switch input {
        case .action(.navigate(let screen)):
            if screen != .onboarding && facts.selectedServer == nil {
                return .note("navigate: \(screen.rawValue) needs a paired server")
            }
            state.screen = screen
            return .none
        case .internal(.focus(let nodeID)):
            state.focusedNodeID = nodeID
            return .none
        case .internal(.scrollMessages(let offset)):
            state.messagesScroll = offset
            return .none
        case .internal(.composerSent), .internal(.sessionSwitched):
            // What the person just sent, or another conversation, shows from its end.
            state.messagesScroll = nil
            return .none
        case .internal(.serverChanged(let server)):
            state.messagesScroll = nil
            if server == nil { state.screen = .onboarding }
            return .none
        case .internal(.openChat):
            state.screen = .chat
            return .none
        case .internal(.socketOpened):
            if state.screen == .onboarding { state.screen = .chat }
            return .none
        case .internal(.pairingLinkScanned):
            state.screen = .onboarding
            return .none
        default:
            return .none
        }
    }
}
