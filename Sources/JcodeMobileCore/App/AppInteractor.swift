/// The root interactor: every feature scoped to the slice it owns, in a
/// fixed order, each handed the same `Facts` (taken before the input).
///
/// Features never see each other's mutations during one input: what one
/// does that matters to another travels as an `InternalInput`, which the
/// store runs after every feature has handled the input (in emission
/// order). The order below decides only the order of the effects one input
/// produces.
///
/// The inputs that arrive hundreds of times a second (streamed deltas,
/// frames, keystrokes) go straight to the one feature that owns them instead
/// of through every feature (`route`); a test runs them through every
/// feature too and checks the result is the same.
public struct AppInteractor: Sendable {
    let features = Interactors.Merge<AppState, Facts>([
        Interactors.Scope(\AppState.navigation, NavigationInteractor()),
        Interactors.Scope(\AppState.pairing, PairingInteractor()),
        Interactors.Scope(\AppState.servers, ServersInteractor()),
        Interactors.Scope(\AppState.connection, ConnectionInteractor()),
        Interactors.Scope(\AppState.session, SessionInteractor()),
        Interactors.Scope(\AppState.chat, ChatInteractor()),
        Interactors.Scope(\AppState.approvals, ApprovalsInteractor()),
        Interactors.Scope(\AppState.composer, ComposerInteractor()),
        Interactors.Scope(\AppState.notices, NoticesInteractor()),
        Interactors.Scope(\AppState.lifecycle, LifecycleInteractor()),
    ])
    /// false runs every input through every feature (the routing test).
    let routesHotInputs: Bool

    public init(routesHotInputs: Bool = true) { self.routesHotInputs = routesHotInputs }

    public func interact(_ state: inout AppState, _ input: Input) -> Emission {
        if routesHotInputs {
            switch input {
            case .server(.textDelta), .server(.textReplace), .server(.reasoningDelta), .server(.toolInput):
                guard case .server(let event) = input else { break }
                return ChatInteractor.stream(&state.chat, event)
            case .platform(.webSocket(.event(let id, let items))):
                return ConnectionInteractor.frame(&state.connection, effectID: id, items: items)
            case .action(.setDraft(let value)):
                ComposerInteractor.setDraft(&state.composer, value)
                return .none
            default:
                break
            }
        }
        switch input {
        case .action(.tapNode(let id)):
            return Self.tap(id, in: state)
        case .action(.loadScenario(let name)):
            guard let scenario = Scenario(rawValue: name) else { return .note("unknown scenario \(name)") }
            return Self.replace(&state, with: scenario.state())
        case .action(.reset):
            return Self.replace(&state, with: AppState())
        default:
            return features.interact(&state, input, Facts(state))
        }
    }

    /// `tap_node`: does what the node's `supported_actions` promised, as
    /// the semantic layer resolves it.
    static func tap(_ nodeID: String, in state: AppState) -> Emission {
        switch SemanticTree.tapTarget(of: nodeID, in: state) {
        case .none: return .note("tap_node: no tappable node \"\(nodeID)\" on this screen")
        case .disabled: return .note("tap_node: \"\(nodeID)\" is disabled")
        case .focus: return .internal(.focus(nodeID: nodeID))
        case .action(let action): return .action(action)
        }
    }

    /// `load_scenario` and `reset`: replace the whole state, closing what the
    /// old one had open (so the host does too) and keeping the revision,
    /// effect ids, entry ids and the device identity moving forward so a
    /// host never sees one reused.
    static func replace(_ state: inout AppState, with replacement: AppState) -> Emission {
        let closing = ConnectionInteractor.closingEffects(state.connection, Facts(state))
        let revision = state.revision
        let nextEffectID = state.effects.nextID
        let nextSerial = state.chat.transcript.nextSerial
        let deviceID = state.lifecycle.deviceID
        let transcriptChanged = replacement.chat.transcript.entries != state.chat.transcript.entries
        state = replacement
        state.revision = revision
        state.lifecycle.deviceID = deviceID
        state.effects.advance(atLeast: nextEffectID)
        state.chat.transcript.advanceSerial(atLeast: nextSerial)
        if transcriptChanged { state.chat.transcript.recordReset() }
        return closing
    }
}
