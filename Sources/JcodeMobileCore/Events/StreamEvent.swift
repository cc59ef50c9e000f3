import JcodeMobileJSON
import JcodeMobileWire

/// One event of the event stream (`jcode_mobile_subscribe`), encoded once
/// and shared by every subscriber's queue.
///
/// Every event a call produces carries `seq`: 1 for the app's first event,
/// one more for each event after it, so a subscriber of every kind sees
/// gaps only where the stream told it (`events_lost`); one that chose some
/// kinds sees the others' seqs skipped. Within one call the order is
/// `state_changed`, then the app events in the order the features announced
/// them, then `effects_requested`.
public struct StreamEvent: Sendable {
    /// What a subscriber can ask for (`{"kinds":[…]}`).
    public enum Kind: String, Sendable, CaseIterable {
        /// `state_changed`.
        case state
        /// `effects_requested`.
        case effects
        /// Server paired, pairing failed, history synced, connection phase changed, turn finished.
        case app
        /// `tree_changed` (asked for by name: not among the defaults).
        case tree

        /// What a subscription without `kinds` receives.
        public static let defaults: Set<Kind> = [.state, .effects, .app]
    }

    public let kind: Kind
    /// The event's `seq` (0 for the stream's own markers: `subscribed`, `events_lost`, `closed`).
    public let seq: Int
    /// The JSON object, as subscribers receive it.
    public let bytes: [UInt8]

    public init(kind: Kind, seq: Int, bytes: [UInt8]) {
        self.kind = kind
        self.seq = seq
        self.bytes = bytes
    }

    // MARK: - The stream's own markers (written by the FFI's hub)

    /// The first event of every subscription: the revision the subscriber
    /// starts from and the `seq` of the next event it will see.
    public static func subscribed(revision: Int, nextSeq: Int) -> [UInt8] {
        var o = JSONObject(capacity: 3)
        o.append("type", "subscribed")
        o.append("revision", .int(Int64(revision)))
        o.append("next_seq", .int(Int64(nextSeq)))
        return JSONValue.object(o).jsonBytes
    }

    /// In place of events a full queue could not hold: `count` events, with
    /// seqs `first_seq`…`last_seq`, were dropped. The subscriber catches up
    /// with `jcode_mobile_changes` from the last revision it saw.
    public static func eventsLost(count: Int, firstSeq: Int, lastSeq: Int, effects: Int) -> [UInt8] {
        var o = JSONObject(capacity: 5)
        o.append("type", "events_lost")
        o.append("count", .int(Int64(count)))
        o.append("first_seq", .int(Int64(firstSeq)))
        o.append("last_seq", .int(Int64(lastSeq)))
        o.append("effects_lost", .int(Int64(effects)))
        return JSONValue.object(o).jsonBytes
    }

    /// Why a subscription ended.
    public enum CloseReason: String, Sendable, CaseIterable {
        case unsubscribed
        case appFreed = "app_freed"
    }

    /// The last event of a subscription.
    public static func closed(_ reason: CloseReason) -> [UInt8] {
        var o = JSONObject(capacity: 2)
        o.append("type", "closed")
        o.append("reason", .string(reason.rawValue))
        return JSONValue.object(o).jsonBytes
    }

    // MARK: - Declarations (the schema and the reference are generated from them)

    /// One type of stream event: its fields besides `type`.
    public struct Spec: Sendable {
        public let type: String
        public let kind: Kind?
        public let doc: String
        public let fields: [FieldSpec]
    }

    static let seqField = FieldSpec("seq", .integer(.id), doc: "1 for the app's first event, then one more per event")
    static let revisionField = FieldSpec("revision", .integer(.count), doc: "the state's revision after the call that produced the event")

    /// Every event type a subscriber can receive.
    public static let specs: [Spec] = [
        Spec(type: "subscribed", kind: nil, doc: "The first event of every subscription.", fields: [
            FieldSpec("revision", .integer(.count), doc: "the state's revision when the subscription began: the events after it describe what follows"),
            FieldSpec("next_seq", .integer(.id), doc: "the `seq` of the next event"),
        ]),
        Spec(type: "state_changed", kind: .state, doc: "The state changed: `ops` turn the state JSON of the previous revision into this one (the records of `jcode_mobile_changes`). Without `ops` (`resync`), read `jcode_mobile_state` or `jcode_mobile_changes`.", fields: [
            seqField, revisionField,
            .optional("ops", .array(.defined("patch_op")), doc: "JSON Patch operations; absent when `resync` is true"),
            .optional("resync", .boolean, doc: "true when the change was too large to describe"),
        ]),
        Spec(type: "tree_changed", kind: .tree, doc: "The semantic tree changed: `ops` turn the tree of revision `since` into this revision's (the operations of `jcode_mobile_tree_changes`). Without `ops` (`resync`), read `jcode_mobile_tree`.", fields: [
            seqField, revisionField,
            .optional("since", .integer(.count), doc: "the revision whose tree the operations start from; absent when `resync` is true"),
            .optional("ops", .array(.defined("tree_op")), doc: "tree operations; absent when `resync` is true"),
            .optional("resync", .boolean, doc: "true when the change cannot be described from a tree the subscriber holds"),
        ]),
        Spec(type: "effects_requested", kind: .effects, doc: "The host must carry out these effects: the same objects the call's report holds, secrets included (an executor needs them).", fields: [
            seqField, revisionField, FieldSpec("effects", .array(.defined("effect"))),
        ]),
        Spec(type: "server_paired", kind: .app, doc: "A pairing succeeded; the server is saved and selected.", fields: [
            seqField, revisionField, FieldSpec("server_id", .string), FieldSpec("server_name", .string),
        ]),
        Spec(type: "pairing_failed", kind: .app, doc: "A pairing attempt ended without a server.", fields: [
            seqField, revisionField, FieldSpec("message", .string, doc: "what the person is shown"),
        ]),
        Spec(type: "history_synced", kind: .app, doc: "A `history` from the server replaced the transcript.", fields: [
            seqField, revisionField, FieldSpec("session_id", .string),
            FieldSpec("entries", .integer(.count), doc: "history rows received"),
            FieldSpec("shown", .integer(.count), doc: "transcript entries shown after it"),
        ]),
        Spec(type: "connection_phase_changed", kind: .app, doc: "The connection's phase at the end of a call differs from its phase at the start.", fields: [
            seqField, revisionField,
            FieldSpec("from", .enumeration(ConnectionState.Phase.allCases.map(\.rawValue))),
            FieldSpec("to", .enumeration(ConnectionState.Phase.allCases.map(\.rawValue))),
        ]),
        Spec(type: "turn_finished", kind: .app, doc: "The agent's turn ended.", fields: [
            seqField, revisionField, FieldSpec("outcome", .enumeration(AppEvent.TurnOutcome.allCases.map(\.rawValue))),
        ]),
        Spec(type: "events_lost", kind: nil, doc: "The subscriber's queue was full: the events `first_seq`…`last_seq` were dropped. Catch up with `jcode_mobile_changes` from the last revision seen; dropped effects are not replayed (execute effects from the reports, or give the executor's subscription room).", fields: [
            FieldSpec("count", .integer(.id)), FieldSpec("first_seq", .integer(.id)), FieldSpec("last_seq", .integer(.id)),
            FieldSpec("effects_lost", .integer(.count), doc: "how many of them were `effects_requested`"),
        ]),
        Spec(type: "closed", kind: nil, doc: "The subscription ended: the last event it delivers.", fields: [
            FieldSpec("reason", .enumeration(CloseReason.allCases.map(\.rawValue))),
        ]),
    ]
}

/// The options of `jcode_mobile_subscribe`.
public struct SubscribeOptions: Sendable, Equatable {
    /// Events kept for a subscriber that has not taken them yet.
    public var capacity = SubscribeOptions.defaultCapacity
    /// Bytes of events kept for a subscriber that has not taken them yet
    /// (an event larger than this still fits an empty queue).
    public var capacityBytes = SubscribeOptions.defaultCapacityBytes
    public var kinds: Set<StreamEvent.Kind> = StreamEvent.Kind.defaults

    public static let defaultCapacity = 1024
    public static let capacityRange = IntegerRange(1...65_536)
    /// 16 MiB: one input at its largest.
    public static let defaultCapacityBytes = 16 << 20
    public static let capacityBytesRange = IntegerRange(65_536...(1 << 30))

    public init() {}

    public static let fields: [FieldSpec] = [
        .optional("capacity", .integer(capacityRange), doc: "events kept until taken (default 1024); past it they are dropped and `events_lost` says so"),
        .optional("capacity_bytes", .integer(capacityBytesRange),
                  doc: "bytes of events kept until taken, 64 KiB to 1 GiB (default 16 MiB); past it events are dropped as past `capacity` (an event larger than this still fits an empty queue)"),
        .optional("kinds", .array(.enumeration(StreamEvent.Kind.allCases.map(\.rawValue))),
                  doc: "which events to receive: `state`, `effects`, `app`, `tree` (default `state`, `effects` and `app`)"),
    ]

    /// Reads the options: NULL, "" and "{}" are the defaults.
    ///
    /// - Throws: `invalid_utf8`, `invalid_json`, `too_deep`, `invalid_field`
    ///   (not an object, an unknown member, a capacity out of range, an unknown kind).
    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>?) throws(CoreError) -> SubscribeOptions {
        guard let bytes, !bytes.isEmpty else { return SubscribeOptions() }
        var workspace = JSONParser.Workspace()
        // Read from the tape, like app_new's options: a capacity of 1e20 is
        // named as written, never as the double it rounds to.
        return try JSONParser.withTape(bytes, workspace: &workspace) { (tape) throws(CoreError) -> SubscribeOptions in
            try parse(tape)
        }
    }

    private static func parse(_ tape: JSONTape) throws(CoreError) -> SubscribeOptions {
        var options = SubscribeOptions()
        guard tape.kind(at: 0) == .object else {
            throw CoreError.invalidField("$", "expected the options to be a JSON object, got \(tape.typeName(at: 0))")
        }
        for key in tape.keys(of: 0) where !fields.contains(where: { $0.name == key }) {
            throw CoreError.invalidField(key, "unknown option \"\(key)\" (known: capacity, capacity_bytes, kinds)")
        }
        var reader = FieldReader(tape: tape, object: 0, path: "", declared: fields)
        if let capacity = try reader.optionalInt("capacity") { options.capacity = capacity }
        if let bytes = try reader.optionalInt("capacity_bytes") { options.capacityBytes = bytes }
        if let kinds = tape.member("kinds", of: 0) {
            guard tape.kind(at: kinds) == .array else {
                throw CoreError.invalidField("kinds", "field \"kinds\" must be an array, got \(tape.typeName(at: kinds))")
            }
            var chosen = Set<StreamEvent.Kind>()
            for (i, item) in tape.elements(of: kinds).enumerated() {
                guard tape.kind(at: item) == .string, let kind = StreamEvent.Kind(rawValue: tape.string(at: item)) else {
                    throw CoreError.invalidField("kinds[\(i)]", "expected one of \"state\", \"effects\", \"app\", \"tree\"")
                }
                chosen.insert(kind)
            }
            options.kinds = chosen
        }
        return options
    }
}
