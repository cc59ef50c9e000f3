/// What an interactor wants to happen next, as a value: nothing, a platform
/// effect, a follow-up input, a note for the transition log, or several of
/// these in order.
///
///     return .effect(.device(.requestCameraQRScan))
///     return .action(.submitPairing)           // a follow-up
///     return .merge([.effect(a), .effect(b)])
public struct Emission: Equatable, Sendable {
    /// Indirect: an emission is one word however large the effect or input it
    /// carries, so the common `.none` costs nothing to return or drop.
    public indirect enum Kind: Equatable, Sendable {
        case none
        case effect(Effect)
        case input(Input)
        case note(String)
        /// A secret that was in the state has been used: drop it from every
        /// retained trace (the change feed).
        case scrub(JSONPath)
        case merge([Emission])
    }

    public let kind: Kind

    public static let none = Emission(kind: .none)
    public static func effect(_ effect: Effect) -> Emission { Emission(kind: .effect(effect)) }
    public static func input(_ input: Input) -> Emission { Emission(kind: .input(input)) }
    public static func action(_ action: Action) -> Emission { Emission(kind: .input(.action(action))) }
    /// A line for the transition log (why an input changed nothing, say).
    public static func note(_ text: String) -> Emission { Emission(kind: .note(text)) }
    public static func scrub(_ path: JSONPath) -> Emission { Emission(kind: .scrub(path)) }

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

    /// The effects, in order, ignoring follow-ups and notes (for tests).
    public var effects: [Effect] {
        switch kind {
        case .effect(let e): return [e]
        case .merge(let list): return list.flatMap(\.effects)
        default: return []
        }
    }
}
