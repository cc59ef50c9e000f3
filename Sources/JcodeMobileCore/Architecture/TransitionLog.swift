/// One transition: the input that caused it (redacted), the revision it
/// produced and the effects it requested (redacted).
public struct LogEntry: Equatable, Sendable {
    public enum Kind: String, Sendable {
        /// From `dispatch`.
        case action
        /// From `platform_event`.
        case event
        /// An input rejected at the ABI (invalid JSON, unknown type …).
        case rejected
    }

    public var seq: Int
    public var revision: Int
    public var kind: Kind
    public var type: String
    /// The input with secrets replaced; large inputs are summarised.
    public var payload: JSONValue?
    public var effects: [EffectRecord]
    public var notes: [String]
    public var errorCode: String?

    public struct EffectRecord: Equatable, Sendable {
        public var id: EffectID
        /// Already redacted.
        public var effect: Effect
    }

    var json: JSONValue {
        var o = JSONObject(capacity: 8)
        o.append("seq", .int(Int64(seq)))
        o.append("revision", .int(Int64(revision)))
        o.append("kind", .string(kind.rawValue))
        o.append("type", .string(type))
        o.append("payload", payload ?? .null)
        o.append("effects", .array(effects.map { $0.effect.json(id: $0.id, redacted: true) }))
        o.append("notes", .array(notes.map(JSONValue.string)))
        if let errorCode { o.append("error", .string(errorCode)) }
        return .object(o)
    }
}

/// The most recent transitions, in a ring of fixed capacity: memory stays
/// bounded however long the app runs, and no entry holds a whole state.
public struct TransitionLog: Sendable {
    public let capacity: Int
    private var ring: [LogEntry] = []
    private var head = 0
    /// Sequence number of the next entry (1-based; counts every entry ever logged).
    public private(set) var nextSeq = 1

    public static let defaultCapacity = 256

    public init(capacity: Int = TransitionLog.defaultCapacity) {
        self.capacity = max(1, capacity)
        ring.reserveCapacity(min(self.capacity, 1024))
    }

    public var count: Int { ring.count }

    public mutating func append(_ make: (Int) -> LogEntry) {
        let entry = make(nextSeq)
        nextSeq &+= 1
        if ring.count < capacity {
            ring.append(entry)
        } else {
            ring[head] = entry
            head = (head &+ 1) % capacity
        }
    }

    /// The last `limit` entries, oldest first.
    public func recent(_ limit: Int) -> [LogEntry] {
        let n = min(max(limit, 0), ring.count)
        var result: [LogEntry] = []
        result.reserveCapacity(n)
        let start = ring.count < capacity ? ring.count - n : (head + capacity - n) % capacity
        for i in 0..<n { result.append(ring[(start + i) % ring.count]) }
        return result
    }
}
