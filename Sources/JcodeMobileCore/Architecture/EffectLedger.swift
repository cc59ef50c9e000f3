/// Effects the host has been asked for and has not answered yet, kept with
/// their secrets removed so a late answer can be matched to its request and
/// a stale or unknown one recognised. Maintained by the store.
public struct EffectLedger: Equatable, Sendable {
    /// The id the next effect gets.
    public private(set) var nextID = 1
    /// Unanswered effects, oldest first (ids increase, so the list is sorted).
    public private(set) var pending: [(id: EffectID, effect: Effect)] = []

    public init() {}

    /// Assigns the next id; remembers the effect if it expects an answer.
    mutating func issue(_ effect: Effect) -> EffectID {
        let id = EffectID(nextID)
        nextID &+= 1
        if effect.expectsAnswer { pending.append((id, effect.redacted)) }
        return id
    }

    /// Makes sure ids issued from now on are at least `next` (a replaced
    /// state must not reuse ids the host may still answer).
    mutating func advance(atLeast next: Int) {
        nextID = max(nextID, next)
    }

    /// The pending effect with `id`, if it is still awaited.
    public func pending(_ id: EffectID) -> Effect? {
        // Binary search: ids are issued in increasing order.
        var lo = 0
        var hi = pending.count
        while lo < hi {
            let mid = (lo &+ hi) / 2
            if pending[mid].id < id { lo = mid &+ 1 } else { hi = mid }
        }
        return lo < pending.count && pending[lo].id == id ? pending[lo].effect : nil
    }

    /// Stops awaiting `id`; returns the effect if it was pending.
    @discardableResult
    public mutating func resolve(_ id: EffectID) -> Effect? {
        guard let index = pending.firstIndex(where: { $0.id == id }) else { return nil }
        return pending.remove(at: index).effect
    }

    /// Stops awaiting every effect matching `predicate` (a socket that was replaced).
    public mutating func resolveAll(where predicate: (Effect) -> Bool) {
        pending.removeAll { predicate($0.effect) }
    }

    public static func == (lhs: EffectLedger, rhs: EffectLedger) -> Bool {
        lhs.nextID == rhs.nextID && lhs.pending.elementsEqual(rhs.pending, by: { $0.id == $1.id && $0.effect == $1.effect })
    }

    var json: JSONValue {
        .array(pending.map { ["effect_id": .int(Int64($0.id.rawValue)), "type": .string($0.effect.type)] })
    }
}
