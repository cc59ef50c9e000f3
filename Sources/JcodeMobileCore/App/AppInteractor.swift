/// The root interactor: every feature, in a fixed order.
///
/// The order is behaviour. On `done`, soft interrupts drain before the chat
/// sends the next outbox message, so the message lands after them; the
/// connection feature runs before the chat so a frame's events see the
/// socket state they arrived on.
///
/// The inputs that arrive hundreds of times a second while a reply streams
/// go straight to the one feature that owns them instead of through every
/// feature (`route`); a test runs them through every feature too and checks
/// the result is the same.
public struct AppInteractor: Interactor {
    let chat = ChatInteractor()
    let connection = ConnectionInteractor()
    let features = Interactors.Merge([
        WholeAppInteractor(),
        NavigationInteractor(),
        PairingInteractor(),
        ConnectionInteractor(),
        SessionInteractor(),
        InterruptsInteractor(),
        ChatInteractor(),
        ApprovalsInteractor(),
        ComposerInteractor(),
        NoticesInteractor(),
        LifecycleInteractor(),
    ])

    public init() {}

    public func interact(_ state: inout AppState, _ input: Input) -> Emission {
        switch Self.route(input) {
        case .chat: return chat.interact(&state, input)
        case .connection: return connection.interact(&state, input)
        case .everyFeature: return features.interact(&state, input)
        }
    }

    /// Which features an input needs.
    enum Route: Equatable {
        case chat, connection, everyFeature
    }

    static func route(_ input: Input) -> Route {
        switch input {
        case .server(.textDelta), .server(.textReplace), .server(.reasoningDelta), .server(.toolInput):
            return .chat
        case .platform(.webSocket(.event)):
            return .connection
        default:
            return .everyFeature
        }
    }

    /// Every feature, whatever the route (the routing test compares the two).
    func interactWithEveryFeature(_ state: inout AppState, _ input: Input) -> Emission {
        features.interact(&state, input)
    }
}

/// `load_scenario` and `reset`: replace the whole state, keeping the
/// revision and effect ids moving forward so a host never sees one reused.
struct WholeAppInteractor: Interactor {
    func interact(_ state: inout AppState, _ input: Input) -> Emission {
        let replacement: AppState
        switch input {
        case .action(.loadScenario(let name)):
            guard let scenario = Scenario(rawValue: name) else { return .note("unknown scenario \(name)") }
            replacement = scenario.state()
        case .action(.reset):
            replacement = AppState()
        default:
            return .none
        }
        var emission = Emission.none
        // Close what the old state had open, so the host does too.
        if state.connection.socketEffectID != nil || state.effects.pending.contains(where: { $0.effect.type == "websocket_connect" }) {
            emission.append(.effect(.webSocket(.close)))
        }
        if let timer = state.connection.reconnectTimerID { emission.append(.effect(.timer(.cancel(timerID: timer)))) }
        let revision = state.revision
        let nextEffectID = state.effects.nextID
        let nextSerial = state.transcript.nextSerial
        let deviceID = state.lifecycle.deviceID
        let transcriptChanged = replacement.transcript.entries != state.transcript.entries
        state = replacement
        state.revision = revision
        state.lifecycle.deviceID = deviceID
        state.effects.advance(atLeast: nextEffectID)
        state.transcript.advanceSerial(atLeast: nextSerial)
        if transcriptChanged { state.transcript.recordReset() }
        return emission
    }
}
