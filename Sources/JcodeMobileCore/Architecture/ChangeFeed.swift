/// What changed in the state at each revision, as JSON Patch operations, so
/// a host can keep a mirror of the state in bytes proportional to the change
/// (`jcode_mobile_changes`).
///
/// Each revision's record holds the operations that turn the state JSON of
/// the previous revision into this one (`/revision` itself is implied: a
/// mirror sets it to the record's revision). The transcript reports its own
/// mutations (a streamed delta is one `append` of a few bytes); the other,
/// small sections are compared with what was last reported and diffed only
/// when their values changed. Records are kept in a ring bounded by count
/// and by bytes; a host asking from before the oldest one, or across a
/// replacement too large to send as operations, is told to resync.
public struct ChangeFeed: Sendable {
    public struct Record: Sendable {
        public var revision: Int
        /// nil: this revision replaced too much to describe; resync.
        public var ops: [JSONPatchOp]?
        var weight: Int
    }

    public enum Answer: Sendable {
        /// The records after the asked revision, oldest first.
        case changes([Record])
        /// The asked revision is too old (or unknown): take the whole state.
        case resync
    }

    public let capacity: Int
    public let byteBudget: Int
    /// A ring: `count` records starting at `head`, oldest first.
    private var ring: [Record] = []
    private var head = 0
    private var count = 0
    private var bytes = 0
    /// Changes since this revision (or later) can be answered.
    public private(set) var baseRevision: Int
    /// The JSON last reported for each section (indexed like `AppState.Section.allCases`).
    private var reported: [JSONValue]

    public static let defaultCapacity = 4096
    public static let defaultByteBudget = 8 * 1024 * 1024
    /// A replaced transcript up to this many entries is sent as one `replace`; beyond, a resync.
    static let inlineResetLimit = 256

    public init(state: AppState, capacity: Int = ChangeFeed.defaultCapacity, byteBudget: Int = ChangeFeed.defaultByteBudget) {
        self.capacity = max(1, capacity)
        self.byteBudget = byteBudget
        baseRevision = state.revision
        reported = AppState.Section.allCases.map { $0 == .transcript || $0 == .revision ? .null : state.json(of: $0) }
    }

    /// The operations from `before` to `after`: the transcript's own changes,
    /// then a diff of every other section whose value changed. nil means
    /// "too much to describe" (resync). Remembers what it reported.
    mutating func ops(
        before: AppState, after: AppState, transcript: (changes: [TranscriptChange], reset: Bool)
    ) -> [JSONPatchOp]? {
        var ops: [JSONPatchOp]? = []
        if transcript.reset {
            if after.transcript.count <= ChangeFeed.inlineResetLimit {
                ops?.append(.replace(path: JSONPath([.key("transcript")]), value: after.json(of: .transcript)))
            } else {
                ops = nil
            }
        } else {
            for change in transcript.changes { ops?.append(Self.op(for: change)) }
        }
        for (i, section) in AppState.Section.allCases.enumerated()
        where section != .transcript && section != .revision && after.sectionChanged(section, from: before) {
            let json = after.json(of: section)
            if json != reported[i] {
                ops?.append(contentsOf: JSONDiff.ops(from: reported[i], to: json, at: JSONPath([.key(section.rawValue)])))
                reported[i] = json
            }
        }
        return ops
    }

    /// Forgets every retained operation that wrote a non-empty string at or
    /// under `path`, or replaced an ancestor of it: a secret typed into the
    /// state (a pairing code) leaves the trace once it has been used. Hosts
    /// behind those revisions are told to resync.
    mutating func scrub(_ path: JSONPath) {
        for i in 0..<count {
            let slot = (head &+ i) % ring.count
            guard let ops = ring[slot].ops, ops.contains(where: { $0.touches(path) }) else { continue }
            bytes &-= ring[slot].weight
            ring[slot].ops = nil
            ring[slot].weight = 64
            bytes &+= 64
        }
    }

    /// Keeps the operations of `revision`.
    mutating func record(revision: Int, ops: [JSONPatchOp]?) {
        append(Record(revision: revision, ops: ops, weight: 64 + (ops?.reduce(0) { $0 + $1.weight } ?? 0)))
    }

    private mutating func append(_ record: Record) {
        if count == capacity { dropOldest() }
        if ring.count < capacity && count == ring.count {
            ring.append(record)  // still growing to capacity
        } else {
            ring[(head &+ count) % ring.count] = record
        }
        count &+= 1
        bytes &+= record.weight
        while bytes > byteBudget && count > 1 { dropOldest() }
    }

    private mutating func dropOldest() {
        let oldest = ring[head]
        baseRevision = oldest.revision
        bytes &-= oldest.weight
        ring[head] = Record(revision: 0, ops: [], weight: 0)  // release what it held
        head = (head &+ 1) % ring.count
        count &-= 1
    }

    /// The record at position `i` from the oldest.
    private func record(at i: Int) -> Record {
        ring[(head &+ i) % ring.count]
    }

    /// The records after `revision`, or `.resync` when the feed cannot
    /// describe the way from there. Walks back from the newest record, so
    /// a host that is a few revisions behind costs a few steps.
    public func changes(since revision: Int, current: Int) -> Answer {
        if revision == current { return .changes([]) }
        guard revision >= baseRevision && revision < current else { return .resync }
        var first = count
        while first > 0 && record(at: first &- 1).revision > revision { first &-= 1 }
        var result: [Record] = []
        result.reserveCapacity(count &- first)
        for i in first..<count {
            let r = record(at: i)
            guard r.ops != nil else { return .resync }
            result.append(r)
        }
        return .changes(result)
    }

    /// The transcript mutation as a patch operation on `/transcript`.
    static func op(for change: TranscriptChange) -> JSONPatchOp {
        func path(_ index: Int, _ rest: JSONPath.Component...) -> JSONPath {
            JSONPath([.key("transcript"), .index(index)] + rest)
        }
        switch change {
        case .insert(let index, let entry): return .add(path: path(index), value: entry.json)
        case .remove(let index): return .remove(path: path(index))
        case .set(let index, let field, let value): return .replace(path: path(index, .key(field.rawValue)), value: value)
        case .appendText(let index, let field, let text): return .append(path: path(index, .key(field.rawValue)), text: text)
        case .insertToolCall(let index, let call, let value):
            return .add(path: path(index, .key("tool_calls"), .index(call)), value: value.json)
        case .setToolCall(let index, let call, let value):
            return .replace(path: path(index, .key("tool_calls"), .index(call)), value: value.json)
        case .appendToolInput(let index, let call, let text):
            return .append(path: path(index, .key("tool_calls"), .index(call), .key("input")), text: text)
        }
    }
}

extension AppState {
    /// Whether the values a section is written from differ from `before`
    /// (cheap: equal arrays and strings compare by identity first).
    func sectionChanged(_ section: Section, from before: AppState) -> Bool {
        switch section {
        case .revision, .transcript: return false
        case .screen: return screen != before.screen
        case .focusedNodeID: return focusedNodeID != before.focusedNodeID
        case .connection: return $connection != before.$connection
        case .pairing: return $pairing != before.$pairing
        case .servers: return servers != before.servers
        case .selectedServerID: return selectedServerID != before.selectedServerID
        case .session: return $session != before.$session
        case .softInterrupts: return softInterrupts != before.softInterrupts
        case .outbox: return outbox != before.outbox
        case .permissionRequests: return permissionRequests != before.permissionRequests
        case .stdinRequests: return stdinRequests != before.stdinRequests
        case .notices: return notices != before.notices
        case .banners:
            // The status banner is derived from these.
            return errorBanner != before.errorBanner || $connection != before.$connection || servers != before.servers
                || selectedServerID != before.selectedServerID || $pairing != before.$pairing
                || session.historyLoaded != before.session.historyLoaded
        case .draft: return draft != before.draft
        case .attachments: return attachments != before.attachments
        case .voice: return voice != before.voice
        case .lifecycle: return $lifecycle != before.$lifecycle
        case .pendingEffects: return $effects != before.$effects
        }
    }
}
