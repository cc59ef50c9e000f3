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
/// of through every feature (the first switch in `interact`); a test runs them through every
/// feature too and checks the result is the same.
public struct AppInteractor: Sendable {
    /// A feature scoped to its slice of the app state.
    typealias Feature<Child: Interactor> = Interactors.Scope<AppState, Child>

    let features = Interactors.Merge {
        Feature(NavigationInteractor()) { state, run in run(&state.navigation) }
        Feature(PairingInteractor()) { state, run in run(&state.pairing) }
        Feature(ServersInteractor()) { state, run in run(&state.servers) }
        Feature(ConnectionInteractor()) { state, run in run(&state.connection) }
        Feature(SessionInteractor()) { state, run in run(&state.session) }
        Feature(ChatInteractor()) { state, run in run(&state.chat) }
        Feature(ApprovalsInteractor()) { state, run in run(&state.approvals) }
        Feature(ComposerInteractor()) { state, run in run(&state.composer) }
        Feature(NoticesInteractor()) { state, run in run(&state.notices) }
        Feature(LifecycleInteractor()) { state, run in run(&state.lifecycle) }
    }
    /// false runs every input through every feature (the routing test).
    let routesHotInputs: Bool
    /// The screen the layout fills: what `tap_xy` and `scroll_messages`
    /// resolve against.
    let viewport: SemanticTree.Viewport

    public init(routesHotInputs: Bool = true, viewport: SemanticTree.Viewport = SemanticTree.Viewport()) {
        self.routesHotInputs = routesHotInputs
        self.viewport = viewport
    }

    public func interact(_ state: inout AppState, _ input: Input) -> Emission {
        if routesHotInputs {
            switch input {
            case .server(.textDelta), .server(.textReplace), .server(.reasoningDelta), .server(.toolInput):
                guard case .server(let event) = input else { break }
                return ChatInteractor.stream(&state.chat, event)
            case .platform(.webSocket(.event(let id, let items))):
                return ConnectionInteractor.frame(state.connection, effectID: id, items: items)
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
        case .action(.tapXY(let x, let y)):
            return tap(x: x, y: y, in: state)
        case .action(.scrollMessages(let offset)):
            return scrollMessages(to: offset, in: state)
        case .action(.loadScenario(let name)):
            guard let scenario = Scenario(rawValue: name) else { return .note("unknown scenario \(name)") }
            return Self.replace(&state, with: scenario.state())
        case .action(.reset):
            return Self.replace(&state, with: AppState())
        default:
            return features.interact(&state, input, Facts(state))
        }
    }

    /// Inputs that cannot change what the snapshot holds, so the store does
    /// not compare it after them: the streamed deltas touch only the
    /// transcript and the turn, and a frame only unpacks into the events it
    /// carries (which run as inputs of their own). Keep in step with the
    /// hot routes above; a test checks every hot input against a full compare.
    static func leavesSnapshotAlone(_ input: Input) -> Bool {
        switch input {
        case .server(.textDelta), .server(.textReplace), .server(.reasoningDelta), .server(.toolInput),
            .platform(.webSocket(.event)):
            return true
        default:
            return false
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

    /// `tap_xy`: taps the deepest tappable node at the point, like `tap_node` would.
    func tap(x: Double, y: Double, in state: AppState) -> Emission {
        let root = SemanticTree.laidOut(state, viewport: viewport, includeTranscript: false)
        guard let hit = SemanticTree.hitTest(root, x: x, y: y) else {
            return .note("tap_xy: (\(x), \(y)) is outside the \(viewport.width)×\(viewport.height) viewport")
        }
        guard let target = hit.tappable else { return .note("tap_xy: nothing tappable at (\(x), \(y)): \(hit.node.id)") }
        return Self.tap(target.id, in: state)
    }

    /// `scroll_messages`: an offset within the list keeps its place; one at
    /// or past the end follows the newest message.
    func scrollMessages(to offset: Int, in state: AppState) -> Emission {
        guard let scroll = SemanticTree.messagesScroll(state, viewport: viewport) else {
            return .note("scroll_messages: the message list is not on this screen")
        }
        return .internal(.scrollMessages(offset: offset >= scroll.maxOffset ? nil : offset))
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
