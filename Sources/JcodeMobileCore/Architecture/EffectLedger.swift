import JcodeMobileJSON

/// Effects the host has been asked for and has not answered yet, so a late
/// answer can be matched to its request and a stale or unknown one
/// recognised. Owned by the store: it issues the ids, and settles an entry
/// when a feature emits `.settle` for it.
public struct EffectLedger: Equatable, Sendable {
    /// An effect awaiting its answer: its kind and its fields as the log
    /// shows them (secrets replaced).
    public struct Entry: Equatable, Sendable {
        public var id: EffectID
        public var kind: EffectKind
        public var fields: JSONObject
    }

    /// The id the next effect gets.
    public private(set) var nextID = 1
    /// Unanswered effects, oldest first (ids increase, so the list is sorted).
    public private(set) var pending: [Entry] = []

    public init() {}

    /// Assigns the next id; remembers the effect if it expects an answer.
    mutating func issue(_ effect: Effect) -> EffectID {
        let id = EffectID(nextID)
        nextID &+= 1
        let kind = effect.kind
        if kind.isTracked { pending.append(Entry(id: id, kind: kind, fields: effect.fields(redacted: true))) }
        return id
    }

    /// Makes sure ids issued from now on are at least `next` (a replaced
    /// state must not reuse ids the host may still answer).
    mutating func advance(atLeast next: Int) {
        nextID = max(nextID, next)
    }

    /// The pending effect with `id`, if it is still awaited.
    public func pending(_ id: EffectID) -> Entry? {
        // Binary search: ids are issued in increasing order.
        var lo = 0
        var hi = pending.count
        while lo < hi {
            let mid = (lo &+ hi) / 2
            if pending[mid].id < id { lo = mid &+ 1 } else { hi = mid }
        }
        return lo < pending.count && pending[lo].id == id ? pending[lo] : nil
    }

    /// Whether an effect of `kind` is awaited.
    public func contains(_ kind: EffectKind) -> Bool { pending.contains { $0.kind == kind } }

    /// Stops awaiting `id`.
    mutating func settle(_ id: EffectID) {
        guard let index = pending.firstIndex(where: { $0.id == id }) else { return }
        pending.remove(at: index)
    }

    /// Stops awaiting every effect of `kind` (a socket that was replaced).
    mutating func settleAll(_ kind: EffectKind) {
        pending.removeAll { $0.kind == kind }
    }

    var json: JSONValue {
        .array(pending.map { ["effect_id": .int(Int64($0.id.rawValue)), "type": .string($0.kind.rawValue)] })
    }
}
