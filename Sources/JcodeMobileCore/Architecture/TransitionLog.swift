import JcodeMobileJSON

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
    /// when logged (the log never holds a secret, not even in memory). An
    /// effect whose JSON passes `TransitionLog.keptLimit` bytes is kept as
    /// `{"effect_id","type","summary"}`.
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

    /// What the entry counts against the log's byte budget: the bytes it
    /// holds (its payload, effects, notes and follow-ups) and 64 for each
    /// of its strings' headers, plus 256 for the entry itself.
    var cost: Int {
        var n = 256 &+ effectsJSON.count &+ type.utf8.count
        switch payload {
        case .none: break
        // A JSON payload is a redacted input or a summary: the input it
        // stands for is at most `keptLimit` bytes.
        case .json?: n &+= TransitionLog.keptLimit
        case .raw(let bytes)?: n &+= bytes.count
        }
        for note in notes { n &+= 64 &+ note.utf8.count }
        for name in followUps { n &+= 64 &+ name.utf8.count }
        return n
    }

    /// The place of an entry the byte budget pushed out.
    static let evicted = LogEntry(
        seq: 0, revision: 0, kind: .rejected, type: "", payload: nil, effectsJSON: noEffects, notes: [], followUps: [],
        errorCode: nil)

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

/// The most recent transitions, in a ring of fixed capacity and a budget of
/// bytes: memory stays bounded however long the app runs and however large
/// its inputs, and no entry holds a whole state.
///
/// An input over `keptLimit` bytes is kept as a summary (`summary(type:bytes:)`),
/// and so is an effect whose JSON passes it (a `storage_write` of a snapshot
/// with a long draft): each entry is then a few KiB at most, plus its notes.
/// Past `byteBudget` the oldest entries go, whatever `capacity` says; the
/// newest entry is always kept.
public struct TransitionLog: Sendable {
    public let capacity: Int
    /// Bytes the entries may hold together (`LogEntry.cost`).
    public let byteBudget: Int
    /// The entries, oldest at `start`; `storage.count` only grows, up to `capacity`.
    private var storage: [LogEntry] = []
    private var start = 0
    public private(set) var count = 0
    /// What the entries held count (`LogEntry.cost`), together.
    public private(set) var bytes = 0
    /// Sequence number of the next entry (1-based; counts every entry ever logged).
    public private(set) var nextSeq = 1

    public static let defaultCapacity = 256
    /// 8 MiB: 256 entries of 32 KiB. An entry without large notes is a few KiB.
    public static let defaultByteBudget = 8 << 20
    /// An input or an effect larger than this is logged as a summary.
    public static let keptLimit = 4096

    /// What the log keeps of an input or effect over `keptLimit` bytes.
    public static func summary(bytes: Int) -> String { "\(bytes) bytes, not kept in the log" }

    public init(capacity: Int = TransitionLog.defaultCapacity, byteBudget: Int = TransitionLog.defaultByteBudget) {
        self.capacity = max(1, capacity)
        self.byteBudget = max(0, byteBudget)
        storage.reserveCapacity(min(self.capacity, 1024))
    }

    /// Appends the entry `make` gives for the next sequence number and the
    /// payload of `input`.
    mutating func append(_ input: LoggedInput, _ make: (Int, LogPayload?) -> LogEntry) {
        switch input {
        case .payload(let payload):
            append { make($0, payload) }
        case .bytes(let bytes):
            // The entry about to be replaced gives up its raw payload's storage.
            var buffer = count == capacity ? storage[start].takeRawPayload() : []
            // Its bytes replaced by these in one step (its capacity kept).
            buffer.replaceSubrange(buffer.startIndex..<buffer.endIndex, with: bytes)
            append { make($0, .raw(buffer)) }
        }
    }

    public mutating func append(_ make: (Int) -> LogEntry) {
        let entry = make(nextSeq)
        nextSeq &+= 1
        let cost = entry.cost
        if count == capacity {
            // Full: the oldest entry's place takes the new one.
            bytes &-= storage[start].cost
            storage[start] = entry
            start = start &+ 1 == storage.count ? 0 : start &+ 1
        } else {
            if count == storage.count {
                // Every place is taken and the ring may grow: oldest first, then append.
                if start != 0 {
                    storage = Array(storage[start...] + storage[..<start])
                    start = 0
                }
                storage.append(entry)
            } else {
                storage[(start &+ count) % storage.count] = entry
            }
            count &+= 1
        }
        bytes &+= cost
        // Past the budget the oldest entries go; the newest always stays.
        while bytes > byteBudget && count > 1 {
            bytes &-= storage[start].cost
            storage[start] = LogEntry.evicted
            start = start &+ 1 == storage.count ? 0 : start &+ 1
            count &-= 1
        }
    }

    /// The last `limit` entries, oldest first.
    public func recent(_ limit: Int) -> [LogEntry] {
        let n = min(max(limit, 0), count)
        var result: [LogEntry] = []
        result.reserveCapacity(n)
        let first = start &+ count &- n
        for i in 0..<n { result.append(storage[(first &+ i) % storage.count]) }
        return result
    }
}
