/// One transition: the input that caused it (redacted), the revision it
/// produced and the effects it requested (redacted).
public struct LogEntry: Equatable, Sendable {
    public enum Kind: String, Sendable, CaseIterable {
        /// From `dispatch`.
        case action
        /// From `platform_event`.
        case event
        /// An input rejected at the ABI (invalid JSON, unknown type …).
        case rejected
        /// `app_new` restored a snapshot and left something out or changed
        /// it (the first entry then; its notes name what, as the notice does).
        case restore
    }

    public var seq: Int
    public var revision: Int
    public var kind: Kind
    public var type: String
    /// The input with secrets replaced; large inputs are summarised.
    public var payload: LogPayload?
    /// The effects with every secret replaced, as a JSON array: encoded once
    /// when logged (the log never holds a secret, not even in memory).
    public var effectsJSON: [UInt8]
    public var notes: [String]
    /// The names of the inputs the features emitted and the store ran
    /// (internal inputs, follow-up actions), in order.
    public var followUps: [String]
    public var errorCode: String?

    /// The raw payload's bytes, taken out of the entry (empty when it has none).
    mutating func takeRawPayload() -> [UInt8] {
        guard case .raw(let bytes)? = payload else { return [] }
        payload = nil
        return bytes
    }

    /// `effectsJSON` of an entry without effects.
    static let noEffects: [UInt8] = Array("[]".utf8)

    /// The effects as the log keeps them: each one's JSON with every secret replaced.
    public var effects: [JSONValue] {
        let parsed = try? effectsJSON.withUnsafeBufferPointer { b throws(CoreError) in try JSONParser.parse(b) }
        return parsed?.arrayValue ?? []
    }

    func write(to w: inout JSONWriter) {
        w.objectStart()
        w.key("seq"); w.int(seq)
        w.key("revision"); w.int(revision)
        w.key("kind"); w.string(kind.rawValue)
        w.key("type"); w.string(type)
        w.key("payload")
        switch payload {
        case .none: w.null()
        case .json(let value)?: w.value(value)
        case .raw(let bytes)?: w.raw(bytes)
        }
        w.key("effects")
        w.raw(effectsJSON)
        w.key("notes")
        w.arrayStart()
        for note in notes { w.string(note) }
        w.arrayEnd()
        if !followUps.isEmpty {
            w.key("follow_ups")
            w.arrayStart()
            for name in followUps { w.string(name) }
            w.arrayEnd()
        }
        if let errorCode {
            w.key("error"); w.string(errorCode)
        }
        w.objectEnd()
    }
}

/// An input as the log keeps it.
public enum LogPayload: Equatable, Sendable {
    /// Redacted (or summarised) JSON.
    case json(JSONValue)
    /// The input exactly as received: valid JSON with nothing secret in it.
    case raw([UInt8])
}

/// An input as the store is given it for the log.
enum LoggedInput {
    /// Already as the log keeps it (or nil: no payload).
    case payload(LogPayload?)
    /// The input exactly as received (valid JSON with nothing secret in it),
    /// valid for the call: the log copies it into the buffer of the entry
    /// it replaces, so a full log logs an input without allocating.
    case bytes(UnsafeBufferPointer<UInt8>)
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

    /// Appends the entry `make` gives for the next sequence number and the
    /// payload of `input`.
    mutating func append(_ input: LoggedInput, _ make: (Int, LogPayload?) -> LogEntry) {
        switch input {
        case .payload(let payload):
            append { make($0, payload) }
        case .bytes(let bytes):
            // The entry about to be replaced gives up its raw payload's storage.
            var buffer = ring.count == capacity ? ring[head].takeRawPayload() : []
            buffer.removeAll(keepingCapacity: true)
            buffer.append(contentsOf: bytes)
            append { make($0, .raw(buffer)) }
        }
    }

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
