/// Owns which screen shows and what a tap on a node of the semantic tree means.
public struct NavigationInteractor: Interactor {
    public init() {}

    public func interact(_ state: inout AppState, _ input: Input) -> Emission {
        switch input {
        case .action(.navigate(let screen)):
            if screen != .onboarding && state.selectedServer == nil {
                return .note("navigate: \(screen.rawValue) needs a paired server")
            }
            state.screen = screen
            return .none
        case .action(.tapNode(let id)):
            switch TapTargets.target(of: id, in: state) {
            case .none:
                return .note("tap_node: no tappable node \"\(id)\" on this screen")
            case .disabled:
                return .note("tap_node: \"\(id)\" is disabled")
            case .focus:
                state.focusedNodeID = id
                return .none
            case .action(let action):
                return .action(action)
            }
        case .action(.loadScenario), .action(.reset):
            // Handled by the app (they replace the whole state).
            return .none
        default:
            return .none
        }
    }
}
