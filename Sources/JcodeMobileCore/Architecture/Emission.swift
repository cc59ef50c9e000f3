import JcodeMobileJSON

/// What an interactor wants to happen next, as a value: nothing, a platform
/// effect, a follow-up input, a note for the transition log, a change to the
/// store's ledger, or several of these in order.
///
///     return .effect(.device(.requestCameraQRScan))
///     return .tell(.turnEnded)                   // the chat's output: the root delivers it
///     return .effect(a) + .effect(b)
public struct Emission: Equatable, Sendable {
    /// Indirect: an emission is one word however large the effect or input it
    /// carries, so the common `.none` costs nothing to return or drop.
    public indirect enum Kind: Equatable, Sendable {
        case none
        case effect(Effect)
        case input(Input)
        case note(Note)
        /// A secret that was in the state has been used: drop it from every
        /// retained trace (the change feed).
        case scrub(JSONPath)
        /// The answer to this effect arrived: stop awaiting it.
        case settle(EffectID)
        /// Stop awaiting every effect of this kind (a replaced socket).
        case settleAll(EffectKind)
        /// Something a UI reacts to happened (event-stream subscribers hear of it).
        case announce(AppEvent)
        case merge([Emission])
    }

    public let kind: Kind

    public static let none = Emission(kind: .none)
    public static func effect(_ effect: Effect) -> Emission { Emission(kind: .effect(effect)) }
    public static func input(_ input: Input) -> Emission { Emission(kind: .input(input)) }
    /// The root's own, for a tap: the action the tapped node promised
    /// (`tap_node`, `tap_xy`). Features never emit a host action: what one
    /// of them does that matters to another is an addressed output (`tell`).
    static func tapped(_ action: Action) -> Emission { Emission(kind: .input(.action(action))) }
    /// A follow-up for other features: one of the four shared requests
    /// (`send`, `showError`, `notice`, `openChat`) or, through `tell`, a
    /// feature's output.
    public static func `internal`(_ input: InternalInput) -> Emission { Emission(kind: .input(.internal(input))) }
    /// What a feature tells others (its own output type says who is
    /// speaking; `AppRouter` says who acts on it).
    public static func tell(_ output: PairingOutput) -> Emission { .internal(.pairing(output)) }
    public static func tell(_ output: LifecycleOutput) -> Emission { .internal(.lifecycle(output)) }
    public static func tell(_ output: ServersOutput) -> Emission { .internal(.servers(output)) }
    public static func tell(_ output: ConnectionOutput) -> Emission { .internal(.connection(output)) }
    public static func tell(_ output: SessionOutput) -> Emission { .internal(.session(output)) }
    public static func tell(_ output: ChatOutput) -> Emission { .internal(.chat(output)) }
    public static func tell(_ output: ApprovalsOutput) -> Emission { .internal(.approvals(output)) }
    public static func tell(_ output: AppOutput) -> Emission { .internal(.app(output)) }
    /// A gateway request, sent by the connection (which owns the request ids).
    public static func send(_ request: GatewayRequest) -> Emission { .internal(.send(request)) }
    /// A line for the transition log (why an input changed nothing, say).
    public static func note(_ text: String, _ kind: Note.Kind = .info) -> Emission { Emission(kind: .note(Note(kind: kind, text: text))) }
    public static func scrub(_ path: JSONPath) -> Emission { Emission(kind: .scrub(path)) }
    public static func settle(_ id: EffectID) -> Emission { Emission(kind: .settle(id)) }
    public static func settleAll(_ kind: EffectKind) -> Emission { Emission(kind: .settleAll(kind)) }
    /// An app event for the event stream (`server_paired`, `turn_finished` …).
    public static func announce(_ event: AppEvent) -> Emission { Emission(kind: .announce(event)) }

    /// Several emissions, in order; nested merges flatten and `.none` drops out.
    public static func merge(_ emissions: [Emission]) -> Emission {
        var flat: [Emission] = []
        for e in emissions { e.flatten(into: &flat) }
        switch flat.count {
        case 0: return .none
        case 1: return flat[0]
        default: return Emission(kind: .merge(flat))
        }
    }

    private func flatten(into list: inout [Emission]) {
        switch kind {
        case .none: break
        case .merge(let children): for c in children { c.flatten(into: &list) }
        default: list.append(self)
        }
    }

    public var isNone: Bool {
        if case .none = kind { return true }
        return false
    }

    /// Appends `other`, allocating only when both hold something.
    public mutating func append(_ other: Emission) {
        if other.isNone { return }
        if isNone {
            self = other
            return
        }
        self = .merge([self, other])
    }

    public static func + (lhs: Emission, rhs: Emission) -> Emission {
        var result = lhs
        result.append(rhs)
        return result
    }
}

/// A line of the transition log: what happened to an input that a person
/// reading the log should know, typed so code can branch on its kind and
/// never on its words.
public struct Note: Equatable, Sendable {
    public enum Kind: Sendable {
        /// Why an input changed nothing (nothing to send, already connected).
        case info
        /// An answer or event that no longer applies (stale, unknown, for another socket).
        case ignored
        /// Input that could not be read (a malformed server line, an unknown event type).
        case dropped
        /// An action the app cannot carry out as it stands (an incomplete
        /// pairing form): the dispatch report carries the text as `refused`,
        /// so a script reads why nothing happened.
        case refused
    }

    public var kind: Kind
    public var text: String
}
