import JcodeMobileJSON

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
/// and by bytes (the newest is kept whatever its size); a host asking from
/// before the oldest one, or across a replacement too large to send as
/// operations, is told to resync. An answer never leaves a revision out: it
/// is every record after the asked revision, in order, or a resync.
public struct ChangeFeed: Sendable {
    public struct Record: Sendable {
        public var revision: Int
        enum Content: Sendable {
            /// The operations as a JSON array, encoded once when recorded (so
            /// answering a host is a copy, and forgetting a record one free).
            case encoded([UInt8])
            /// Streamed text appended to the transcript, encoded when a host
            /// asks (most revisions of a reply are never asked for).
            case appended([TranscriptChange])
            /// The same, one delta's text (no array kept).
            case appendedText(index: Int, field: TranscriptChange.Field, text: String)
            /// Too much to describe: resync.
            case resync
        }
        var content: Content

        init(revision: Int, ops: [UInt8]?) {
            self.revision = revision
            content = ops.map { .encoded($0) } ?? .resync
        }

        init(revision: Int, content: Content) {
            self.revision = revision
            self.content = content
        }

        /// The operations as a JSON array; nil: this revision replaced too
        /// much to describe (resync).
        public var ops: [UInt8]? {
            get {
                switch content {
                case .encoded(let bytes): return bytes
                case .resync: return nil
                case .appended(let changes): return Self.encode(changes)
                case .appendedText(let index, let field, let text): return Self.encode([.appendText(index: index, field: field, text: text)])
                }
            }
            set { content = newValue.map { .encoded($0) } ?? .resync }
        }

        private static func encode(_ changes: [TranscriptChange]) -> [UInt8] {
            var w = JSONWriter(capacity: 128)
            w.arrayStart()
            for change in changes { change.write(to: &w) }
            w.arrayEnd()
            return w.bytes
        }

        /// What the record holds, in bytes (for appended text, its size and a
        /// path's worth per operation: about what it encodes to).
        var weight: Int {
            switch content {
            case .encoded(let bytes): return 64 &+ bytes.count
            case .resync: return 64
            case .appended(let changes):
                var w = 64
                for case .appendText(_, _, let text) in changes { w &+= 64 &+ text.utf8.count }
                return w
            case .appendedText(_, _, let text): return 128 &+ text.utf8.count
            }
        }
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
    /// The JSON last reported for each section (indexed like `StateSection.all`;
    /// null for the sections that are not diffed).
    private var reported: [JSONValue]

    public static let defaultCapacity = 4096
    public static let defaultByteBudget = 8 * 1024 * 1024
    /// A replaced transcript up to this many entries is sent as one `replace`; beyond, a resync.
    static let inlineResetLimit = 256

    public init(state: AppState, capacity: Int = ChangeFeed.defaultCapacity, byteBudget: Int = ChangeFeed.defaultByteBudget) {
        self.capacity = max(1, capacity)
        self.byteBudget = byteBudget
        baseRevision = state.revision
        reported = withUnsafePointer(to: state) { state in
            StateSection.all.map {
                guard case .compared = $0.tracking else { return .null }
                return $0.json(state)
            }
        }
    }

    /// What one transition changed, encoded.
    enum Encoded {
        /// Nothing in the state JSON changed.
        case nothing
        /// The operations, as a JSON array.
        case ops([UInt8])
        /// Text appended to the transcript and nothing else (encoded when asked for).
        case appended([TranscriptChange])
        case appendedText(index: Int, field: TranscriptChange.Field, text: String)
        /// Too much to describe (a long transcript replaced): resync.
        case resync
    }

    /// Encodes the operations from `before` to `after`: the transcript's own
    /// changes, then a diff of every other section whose value changed.
    /// Remembers what it reported. `sections`: the sections whose values
    /// may differ (`AppState.changedSections`, which the store takes over
    /// the features the call reached: theirs, and the store's when it
    /// issued or settled effects).
    mutating func encode(
        before: UnsafePointer<AppState>, after: UnsafePointer<AppState>, transcript: (changes: [TranscriptChange], reset: Bool),
        sections: UInt32
    ) -> Encoded {
        guard sections != 0 || transcript.reset || !transcript.changes.isEmpty else { return .nothing }
        if sections == 0 && !transcript.reset && transcript.changes.allSatisfy(\.isAppendedText) {
            if transcript.changes.count == 1, case .appendText(let index, let field, let text) = transcript.changes[0] {
                return .appendedText(index: index, field: field, text: text)
            }
            return .appended(transcript.changes)
        }
        // Written on the stack (a larger record moves to the heap), then kept as an array.
        return withUnsafeTemporaryAllocation(byteCount: 512, alignment: 1) { scratch in
            var w = JSONWriter(startingIn: scratch)
            return encode(before: before, after: after, transcript: transcript, sections: sections, into: &w)
        }
    }

    private mutating func encode(
        before: UnsafePointer<AppState>, after: UnsafePointer<AppState>, transcript: (changes: [TranscriptChange], reset: Bool),
        sections: UInt32, into w: inout JSONWriter
    ) -> Encoded {
        w.arrayStart()
        if transcript.reset {
            guard after.pointee.chat.transcript.count <= ChangeFeed.inlineResetLimit else {
                diffSections(before: before, after: after, changed: sections, into: nil)
                return .resync
            }
            let section = StateSection.transcript
            JSONPatchOp.replace(path: JSONPath([.key(section.name)]), value: section.json(after)).write(to: &w)
        } else {
            for change in transcript.changes { change.write(to: &w) }
        }
        let wroteTranscript = transcript.reset || !transcript.changes.isEmpty
        let wroteSections = diffSections(before: before, after: after, changed: sections, into: &w)
        guard wroteTranscript || wroteSections else { return .nothing }
        w.arrayEnd()
        return .ops(w.bytes)
    }

    /// Diffs every section whose value changed against what was last
    /// reported, writing the operations (when given a writer); true when any
    /// were written.
    @discardableResult
    private mutating func diffSections(
        before: UnsafePointer<AppState>, after: UnsafePointer<AppState>, changed: UInt32, into w: UnsafeMutablePointer<JSONWriter>?
    ) -> Bool {
        var wrote = false
        var changed = changed
        // Read in place (`sections[i].json`): a section is not copied to be read.
        let sections = StateSection.all
        while changed != 0 {
            let i = changed.trailingZeroBitCount
            changed &= changed &- 1
            if case .fields(_, let fields) = sections[i].tracking {
                // Member by member, against the state before the call (what
                // was last reported: the feed encodes every transition).
                wrote = Self.diffFields(fields, of: sections[i].name, before: before, after: after, into: w) || wrote
                continue
            }
            let json = sections[i].json(after)
            if case .string(let old) = reported[i], case .string(let new) = json {
                // A string section (the draft): one operation, no list of them.
                guard let op = JSONDiff.op(from: old, to: new, at: StateSection.paths[i]) else { continue }
                if let w { op.write(to: &w.pointee) }
                wrote = true
                reported[i] = json
                continue
            }
            guard json != reported[i] else { continue }
            let ops = JSONDiff.ops(from: reported[i], to: json, at: StateSection.paths[i])
            if let w {
                for op in ops { op.write(to: &w.pointee) }
            }
            wrote = wrote || !ops.isEmpty
            reported[i] = json
        }
        return wrote
    }

    /// Diffs the members of an object section whose own checks say they
    /// changed; true when an operation was written (or would have been).
    private static func diffFields(
        _ fields: [StateSection.Field], of name: String, before: UnsafePointer<AppState>, after: UnsafePointer<AppState>,
        into w: UnsafeMutablePointer<JSONWriter>?
    ) -> Bool {
        var wrote = false
        var path = JSONPath([.key(name), .key("")])
        for field in fields where field.changed(after, before) {
            path.components[1] = .key(field.name)
            if let patch = field.patch {
                wrote = patch(after, before, &path, w) || wrote
                continue
            }
            let ops = JSONDiff.ops(from: field.json(before), to: field.json(after), at: path)
            if let w { for op in ops { op.write(to: &w.pointee) } }
            wrote = wrote || !ops.isEmpty
        }
        return wrote
    }

    private mutating func diffSections(
        before: UnsafePointer<AppState>, after: UnsafePointer<AppState>, changed: UInt32, into w: inout JSONWriter
    ) -> Bool {
        withUnsafeMutablePointer(to: &w) { diffSections(before: before, after: after, changed: changed, into: $0) }
    }

    /// Forgets every retained record with an operation that wrote something
    /// at or under `path`, or replaced an ancestor of it: a secret typed into
    /// the state (a pairing code) leaves the trace once it has been used.
    /// Hosts behind those revisions are told to resync. Rare, so it reads the
    /// encoded records back.
    mutating func scrub(_ path: JSONPath) {
        let target = path.description
        for i in 0..<count {
            let slot = (head &+ i) % ring.count
            guard let ops = ring[slot].ops, let parsed = try? ops.withUnsafeBufferPointer({ b throws(CoreError) in try JSONParser.parse(b) }),
                  let list = parsed.arrayValue, list.contains(where: { Self.touches($0, target) })
            else { continue }
            bytes &-= ring[slot].weight
            ring[slot].ops = nil
            bytes &+= ring[slot].weight
        }
    }

    /// Whether the encoded operation `op` wrote a non-empty value at or under
    /// `target`, or added or replaced one of its ancestors.
    static func touches(_ op: JSONValue, _ target: String) -> Bool {
        guard let kind = op["op"]?.stringValue, let path = op["path"]?.stringValue, kind != "remove" else { return false }
        if target.hasPrefix(path == "" ? "/" : path + "/") || path.isEmpty { return true }
        guard path == target || path.hasPrefix(target + "/") else { return false }
        switch op["value"] {
        case .string(let s)?: return !s.isEmpty
        case .null?, nil: return false
        default: return true
        }
    }

    /// Keeps what revision `revision` changed.
    mutating func record(revision: Int, _ encoded: Encoded) {
        switch encoded {
        case .nothing: return
        case .ops(let bytes): append(Record(revision: revision, ops: bytes))
        case .appended(let changes): append(Record(revision: revision, content: .appended(changes)))
        case .appendedText(let index, let field, let text):
            append(Record(revision: revision, content: .appendedText(index: index, field: field, text: text)))
        case .resync: append(Record(revision: revision, ops: nil))
        }
    }

    private mutating func append(_ record: Record) {
        if count == capacity { dropOldest() }
        if count == ring.count {
            // Every place is taken and the ring may still grow (toward
            // `capacity`). The records may wrap past the end (the byte budget
            // dropped the oldest while it grew): put them oldest first before
            // the storage grows, or the new places would sit between the
            // newest and the oldest, out of order.
            if head != 0 {
                ring = Array(ring[head...] + ring[..<head])
                head = 0
            }
            ring.append(record)
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
        ring[head].content = .resync  // release what it held
        head = (head &+ 1) % ring.count
        count &-= 1
    }

    /// The record at position `i` from the oldest.
    private func record(at i: Int) -> Record {
        ring[(head &+ i) % ring.count]
    }

    /// The newest record, when it is the one of `revision` (the event
    /// stream's `state_changed` of the call that just ran).
    public func newest(ofRevision revision: Int) -> Record? {
        guard count > 0 else { return nil }
        let r = record(at: count &- 1)
        return r.revision == revision ? r : nil
    }

    /// The records after `revision`, or `.resync` when the feed cannot
    /// describe the way from there. Walks back from the newest record, so
    /// a host that is a few revisions behind costs a few steps.
    public func changes(since revision: Int, current: Int) -> Answer {
        if revision == current { return .changes([]) }
        guard revision >= baseRevision && revision < current else { return .resync }
        var first = count
        while first > 0 && record(at: first &- 1).revision > revision { first &-= 1 }
        // Every revision after `revision` has its record, in order, up to
        // the current one: anything else is a way the feed cannot describe.
        guard count &- first == current &- revision else { return .resync }
        var result: [Record] = []
        result.reserveCapacity(count &- first)
        var expected = revision
        for i in first..<count {
            let r = record(at: i)
            expected &+= 1
            if case .resync = r.content { return .resync }
            guard r.revision == expected else { return .resync }
            result.append(r)
        }
        return .changes(result)
    }

}

extension AppState {
    /// The sections whose values differ from `before`, as a bit set indexed
    /// like `StateSection.all`: each diffed section's own compare (cheap:
    /// equal arrays, strings and boxed sections compare by identity first).
    /// Never `revision`
    /// or `transcript`, which are tracked otherwise.
    ///
    /// `reached`: the features (`FeatureID.bit`) whose slices the call could
    /// have changed; a section reading none of them is not compared.
    func changedSections(from before: AppState, reaching reached: UInt32 = FeatureID.all) -> UInt32 {
        // By address: a section's compare reads two fields, never copies the state.
        withUnsafePointer(to: self) { after in
            withUnsafePointer(to: before) { before in AppState.changedSections(after, from: before, reaching: reached) }
        }
    }

    /// The same, for states the caller holds by address (the store: no copy).
    static func changedSections(
        _ after: UnsafePointer<AppState>, from before: UnsafePointer<AppState>, reaching reached: UInt32
    ) -> UInt32 {
        guard reached != 0 else { return 0 }
        var set: UInt32 = 0
        // Feature by feature, the sections that read its slice (a section
        // that reads two reached features is checked once while unchanged).
        var features = reached
        while features != 0 {
            let feature = features & (~features &+ 1)
            features &= features &- 1
            for section in StateSection.compared(reading: feature) where set & section.bit == 0 && section.changed(after, before) {
                set |= section.bit
            }
        }
        return set
    }
}
