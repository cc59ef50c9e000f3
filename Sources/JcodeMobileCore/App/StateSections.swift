import JcodeMobileJSON

/// One top-level member ("section") of the state JSON, declared once: its
/// name, the feature that owns it, its JSON Schema, how its value is
/// written and how the change feed tells that it changed.
///
/// `StateSection.all` is the only list of sections. Everything that walks
/// the state's members derives from it: the state JSON (`AppState.json(of:)`,
/// `writeJSON`, `json`), the change feed's diff (`changedSections`), the
/// runtime schema's `state` definition and the ownership table of
/// docs/ARCHITECTURE.md. A section added here is written, diffed, described
/// and owned; one left out is none of these.
///
/// The closures are non-capturing and the table is built once, so the
/// change feed's per-input check is a walk over a static array with one
/// indirect call per section: no allocation, no JSON for what did not change.
public struct StateSection: Sendable {
    /// The member's name in the state JSON.
    public let name: String
    /// The feature whose slice the section is (the store for what it keeps).
    public let owner: FeatureID
    /// Other features whose slices the section's value reads, besides its
    /// owner's: its change check reads them too (the status banner reads
    /// the connection), so a section is never stale for another's change.
    public var alsoReads: [FeatureID] { reads }
    /// The position in `all` (the member order, and the bit in `changedSections`).
    public private(set) var index = 0

    private let reads: [FeatureID]
    /// How the change feed learns that the section changed.
    let tracking: Tracking
    /// The section's JSON Schema (built when the schema document is).
    let schema: @Sendable () -> JSONValue
    /// The section's value, read in place (the state is never copied to be read).
    let json: @Sendable (UnsafePointer<AppState>) -> JSONValue
    /// Writes the value straight to a writer, for a section too large to
    /// build as a `JSONValue` first; nil: `json` is written.
    let write: (@Sendable (UnsafePointer<AppState>, inout JSONWriter) -> Void)?

    enum Tracking: Sendable {
        /// Not diffed: a change record implies it (`revision`).
        case implied
        /// Not diffed: the section reports its own mutations (`transcript`'s journal).
        case journaled
        /// Diffed when `changed(after, before)` says its value may differ;
        /// cheap, identity first (boxed slices compare their storage).
        case compared(@Sendable (_ after: UnsafePointer<AppState>, _ before: UnsafePointer<AppState>) -> Bool)
        /// An object of declared members: when `changed` says the section
        /// may differ, only the members whose own check says so are written
        /// and diffed (a token count moves one member, not the whole object).
        case fields(
            changed: @Sendable (_ after: UnsafePointer<AppState>, _ before: UnsafePointer<AppState>) -> Bool, [Field])
    }

    /// One member of an object section: its name, schema, value and change check.
    struct Field: Sendable {
        let name: String
        let schema: @Sendable () -> JSONValue
        let json: @Sendable (UnsafePointer<AppState>) -> JSONValue
        let changed: @Sendable (_ after: UnsafePointer<AppState>, _ before: UnsafePointer<AppState>) -> Bool
        /// Writes the operations from the value in `before` to the one in
        /// `after` at `path`, the ones `JSONDiff` would write, without
        /// building either value (nil: they are built and diffed); true when
        /// it wrote one (or would have, when there is no writer).
        let patch: (@Sendable (
            _ after: UnsafePointer<AppState>, _ before: UnsafePointer<AppState>, _ path: inout JSONPath,
            _ w: UnsafeMutablePointer<JSONWriter>?
        ) -> Bool)?

        /// A member whose value is `value` read from the state, written by `json`.
        init<Value: Equatable & Sendable>(
            _ name: String, _ schema: @escaping @Sendable () -> JSONValue,
            _ value: @escaping @Sendable (UnsafePointer<AppState>) -> Value,
            json: @escaping @Sendable (Value) -> JSONValue
        ) {
            self.name = name
            self.schema = schema
            self.json = { json(value($0)) }
            self.changed = { value($0) != value($1) }
            self.patch = nil
        }

        /// A member that is a token count or null, patched count by count.
        init(_ name: String, tokens value: @escaping @Sendable (UnsafePointer<AppState>) -> TokenUsage?) {
            self.name = name
            self.schema = { B.orNull(B.ref("token_usage")) }
            self.json = { value($0)?.json ?? .null }
            self.changed = { value($0) != value($1) }
            self.patch = { after, before, path, w in TokenUsage.patch(from: value(before), to: value(after), at: &path, into: w) }
        }

        /// A member that is a string or null.
        init(_ name: String, _ schema: @escaping @Sendable () -> JSONValue, _ value: @escaping @Sendable (UnsafePointer<AppState>) -> String?) {
            self.init(name, schema, value, json: { .from($0) })
        }

        /// A member that is a boolean.
        init(_ name: String, _ value: @escaping @Sendable (UnsafePointer<AppState>) -> Bool) {
            self.init(name, { SchemaBuilder.boolean }, value, json: { .bool($0) })
        }
    }

    init(
        _ name: String, owner: FeatureID, reads: [FeatureID] = [],
        schema: @escaping @Sendable () -> JSONValue, json: @escaping @Sendable (UnsafePointer<AppState>) -> JSONValue,
        write: (@Sendable (UnsafePointer<AppState>, inout JSONWriter) -> Void)? = nil, tracking: Tracking
    ) {
        self.name = name
        self.owner = owner
        self.reads = reads
        self.schema = schema
        self.json = json
        self.write = write
        self.tracking = tracking
    }

    init(
        _ name: String, owner: FeatureID, reads: [FeatureID] = [],
        schema: @escaping @Sendable () -> JSONValue, json: @escaping @Sendable (UnsafePointer<AppState>) -> JSONValue,
        changed: @escaping @Sendable (_ after: UnsafePointer<AppState>, _ before: UnsafePointer<AppState>) -> Bool
    ) {
        self.init(name, owner: owner, reads: reads, schema: schema, json: json, tracking: .compared(changed))
    }

    /// An object section declared member by member: its schema, value and
    /// change-feed diff all come from `fields`. `changed` is the cheap gate
    /// (identity of the slices it reads) before the members are checked.
    init(
        _ name: String, owner: FeatureID, reads: [FeatureID] = [],
        changed: @escaping @Sendable (_ after: UnsafePointer<AppState>, _ before: UnsafePointer<AppState>) -> Bool,
        fields: [Field]
    ) {
        self.init(
            name, owner: owner, reads: reads,
            schema: { SchemaBuilder.strictObject(fields.map { ($0.name, $0.schema()) }) },
            json: { state in
                var o = JSONObject(capacity: fields.count)
                for field in fields { o.append(field.name, field.json(state)) }
                return .object(o)
            },
            tracking: .fields(changed: changed, fields))
    }
}

private typealias B = SchemaBuilder

extension StateSection {
    /// Every section, in the order the state JSON writes them.
    public static let all: [StateSection] = numbered([
        StateSection(
            "revision", owner: .store,
            schema: { RuntimeSchema.Outputs.revision },
            json: { .int(Int64($0.pointee.revision)) },
            tracking: .implied),
        StateSection(
            "screen", owner: .navigation,
            schema: { B.enumeration(Screen.allCases.map(\.rawValue)) },
            json: { .string($0.pointee.navigation.screen.rawValue) },
            changed: { $0.pointee.navigation.screen != $1.pointee.navigation.screen }),
        StateSection(
            "focused_node_id", owner: .navigation,
            schema: { B.nullableString },
            json: { .from($0.pointee.navigation.focusedNodeID) },
            changed: { $0.pointee.navigation.focusedNodeID != $1.pointee.navigation.focusedNodeID }),
        StateSection(
            "messages_scroll", owner: .navigation,
            schema: {
                B.described(B.nullableInteger(.count), "points of the conversation scrolled above the message list's top; null follows the newest message")
            },
            json: { $0.pointee.navigation.messagesScroll.map { .int(Int64($0)) } ?? .null },
            changed: { $0.pointee.navigation.messagesScroll != $1.pointee.navigation.messagesScroll }),
        StateSection(
            "expanded_nodes", owner: .navigation,
            schema: {
                B.described(
                    B.array(B.strictObject([("node_id", B.string), ("expanded", B.boolean)])),
                    "collapsible nodes opened or closed with set_expanded, the latest last (at most 256); the others show as their role's default")
            },
            json: { state in
                .array(state.pointee.navigation.expansions.map { e in
                    var o = JSONObject(capacity: 2)
                    o.append("node_id", .string(e.nodeID))
                    o.append("expanded", .bool(e.expanded))
                    return .object(o)
                })
            },
            changed: { $0.pointee.navigation.expansions != $1.pointee.navigation.expansions }),
        StateSection(
            "connection", owner: .connection,
            schema: {
                B.strictObject([
                    ("phase", B.enumeration(ConnectionState.Phase.allCases.map(\.rawValue))),
                    ("attempt", B.integer(.count)),
                    ("reason", B.described(B.nullableString, "why the connection is not up")),
                    ("socket_open", B.boolean),
                    ("reconnect_delay_ms", B.nullableInteger(.count)),
                ])
            },
            json: { state in
                let c = state.pointee.connection
                var o = JSONObject(capacity: 5)
                o.append("phase", .string(c.phase.rawValue))
                o.append("attempt", .int(Int64(c.attempt)))
                o.append("reason", .from(c.issue.map(SemanticText.issue)))
                o.append("socket_open", .bool(c.isSocketOpen))
                o.append("reconnect_delay_ms", .from(c.reconnectDelayMS))
                return .object(o)
            },
            changed: { $0.pointee.$connection != $1.pointee.$connection }),
        StateSection(
            "pairing", owner: .pairing,
            schema: {
                let errors = B.strictObject(["host", "port", "pair_code", "device_name", "working_dir"].map { ($0, B.nullableString) })
                return B.strictObject([
                    ("host", B.string), ("port", B.string),
                    ("pair_code", B.described(B.string, "the code while it is typed; empty once used")),
                    ("has_held_code", B.boolean), ("device_name", B.string), ("working_dir", B.string),
                    ("is_submitting", B.boolean), ("awaiting_identity", B.boolean), ("can_submit", B.boolean),
                    ("errors", B.described(errors, "the validation message shown for each field, or null")),
                    ("health", B.orNull(B.strictObject([
                        ("status", B.enumeration(PairingForm.HealthCheck.Status.allCases.map(\.rawValue))), ("message", B.string),
                    ]))),
                ])
            },
            json: { $0.pointee.pairing.json },
            changed: { $0.pointee.$pairing != $1.pointee.$pairing }),
        StateSection(
            "servers", owner: .servers,
            schema: { B.array(B.ref("saved_server")) },
            json: { .array($0.pointee.servers.list.map(\.json)) },
            changed: { $0.pointee.servers.list != $1.pointee.servers.list }),
        StateSection(
            "selected_server_id", owner: .servers,
            schema: { B.nullableString },
            json: { .from($0.pointee.servers.selectedID) },
            changed: { $0.pointee.servers.selectedID != $1.pointee.servers.selectedID }),
        // The session's metadata and the running turn, as one member: the
        // turn's fields (tokens, is_processing, is_reasoning, server_phase,
        // status_detail, history_loaded) and was_interrupted are read from
        // chat's slice. Declared member by member, so a token count diffs one.
        StateSection(
            "session", owner: .session, reads: [.chat],
            changed: { $0.pointee.$session != $1.pointee.$session || $0.pointee.chat.turn != $1.pointee.chat.turn || $0.pointee.chat.wasInterrupted != $1.pointee.chat.wasInterrupted },
            fields: [
                .init("id", { B.nullableString }, { $0.pointee.session.id }),
                .init("title", { B.nullableString }, { $0.pointee.session.title }),
                .init(
                    "all_sessions", { B.array(B.strictObject([("id", B.string), ("title", B.nullableString)])) },
                    { $0.pointee.session.allSessions }, json: { .array($0.map(\.json)) }),
                .init("model", { B.nullableString }, { $0.pointee.session.model }),
                .init("pending_model", { B.nullableString }, { $0.pointee.session.pendingModel }),
                .init("provider", { B.nullableString }, { $0.pointee.session.provider }),
                .init(
                    "available_models", { B.array(B.string) }, { $0.pointee.session.availableModels },
                    json: { .array($0.map(JSONValue.string)) }),
                .init("reasoning_effort", { B.nullableString }, { $0.pointee.session.reasoningEffort }),
                .init("pending_reasoning_effort", { B.nullableString }, { $0.pointee.session.pendingReasoningEffort }),
                .init("server_version", { B.nullableString }, { $0.pointee.session.serverVersion }),
                .init("tokens", tokens: { $0.pointee.chat.turn.tokens }),
                .init("total_tokens", tokens: { $0.pointee.session.currentTotalTokens }),
                .init("connection_type", { B.nullableString }, { $0.pointee.session.connectionType }),
                .init("upstream_provider", { B.nullableString }, { $0.pointee.session.upstreamProvider }),
                // The turn's fields and was_interrupted are chat's.
                .init("was_interrupted") { $0.pointee.chat.wasInterrupted },
                .init("is_processing") { $0.pointee.chat.turn.isProcessing },
                .init("is_reasoning") { $0.pointee.chat.turn.isReasoning },
                .init("server_phase", { B.nullableString }, { $0.pointee.chat.turn.serverPhase }),
                .init("status_detail", { B.nullableString }, { $0.pointee.chat.turn.statusDetail }),
                .init("history_loaded") { $0.pointee.chat.turn.historyLoaded },
                .init("is_compacting") { $0.pointee.session.isCompacting },
                .init("rename_draft", { B.nullableString }, { $0.pointee.session.renameDraft }),
                .init("pending_rename", { B.nullableString }, { $0.pointee.session.pendingRename }),
                .init("is_clearing") { $0.pointee.session.isClearing },
            ]),
        // Written straight from the entries (it can be large), and tracked
        // by the transcript's own change journal (a streamed delta is one
        // `append`), never diffed.
        StateSection(
            "transcript", owner: .chat,
            schema: { B.array(B.ref("transcript_entry")) },
            json: { .array($0.pointee.chat.transcript.entries.map(\.json)) },
            write: { state, w in
                w.arrayStart()
                for entry in state.pointee.chat.transcript.entries { entry.write(to: &w) }
                w.arrayEnd()
            },
            tracking: .journaled),
        StateSection(
            "images", owner: .chat,
            schema: {
                let anchor = B.oneOf([
                    B.type("null"),
                    B.strictObject([("kind", B.const("tool_call")), ("id", B.string)]),
                    B.strictObject([("kind", B.const("user_prompt")), ("ordinal", B.integer(.count))]),
                ])
                return B.array(B.strictObject([
                    ("media_type", B.string), ("label", B.nullableString), ("anchor", anchor), ("data", B.string),
                ], description: "An image of the server's transcript (history.images)."))
            },
            json: { .array($0.pointee.chat.images.map(\.json)) },
            changed: { $0.pointee.chat.images != $1.pointee.chat.images }),
        StateSection(
            "run_status", owner: .chat, reads: [.approvals, .connection],
            schema: {
                B.oneOf([
                    B.type("null"),
                    B.strictObject([
                        ("kind", B.enumeration(RunStatus.Kind.allCases.map(\.rawValue))),
                        ("tool", B.described(B.nullableString, "the running tool's name (running_tool)")),
                        ("summary", B.described(B.nullableString, "its one line: the command of a bash call, a path …")),
                        ("elapsed_secs", B.described(B.orNull(B.integer(.count)), "how long it has run, counted by the turn watch")),
                        ("text", B.described(B.string, "the line the app shows: \"Running cargo build · 10 min\"")),
                    ], description: "What the turn shown is doing; null when none runs (docs/PROTOCOL.md, \"A turn that never hangs\")."),
                ])
            },
            json: { RunStatus.of($0)?.json ?? .null },
            changed: { RunStatus.inputsDiffer($0, $1) }),
        StateSection(
            "interrupted_turn", owner: .chat,
            schema: {
                B.oneOf([
                    B.type("null"),
                    B.strictObject([
                        ("continuation", B.described(B.string, "what Continue sends")), ("reconnect_notice", B.nullableString),
                    ], description: "A turn the server stopped before it ended (history.was_interrupted or reload_recovery): the chat offers to continue it."),
                ])
            },
            json: { $0.pointee.chat.interruptedTurn?.json ?? .null },
            changed: { $0.pointee.chat.interruptedTurn != $1.pointee.chat.interruptedTurn }),
        StateSection(
            "older_history", owner: .chat,
            schema: {
                B.oneOf([
                    B.type("null"),
                    B.strictObject([
                        ("total", B.integer(.count)), ("visible", B.integer(.count)), ("remaining", B.integer(.count)),
                        ("requested", B.described(B.nullableInteger(.count), "visible_messages asked for, while the answer is awaited")),
                    ], description: "The history is compacted: compacted messages in all, shown, and still hidden."),
                ])
            },
            json: { $0.pointee.chat.olderHistory?.json ?? .null },
            changed: { $0.pointee.chat.olderHistory != $1.pointee.chat.olderHistory }),
        StateSection(
            "soft_interrupts", owner: .chat,
            schema: {
                B.array(B.strictObject([
                    ("entry_id", B.described(B.string, "the queued transcript entry")), ("content", B.string), ("urgent", B.boolean),
                ]))
            },
            json: { .array($0.pointee.chat.softInterrupts.map(\.json)) },
            changed: { $0.pointee.chat.softInterrupts != $1.pointee.chat.softInterrupts }),
        StateSection(
            "outbox", owner: .chat,
            schema: {
                B.array(B.strictObject([
                    ("id", B.string), ("text", B.string), ("attachments", B.array(B.ref("attachment"))),
                    ("delivery", B.enumeration(OutboxMessage.Delivery.allCases.map(\.rawValue))),
                    ("system_reminder", B.described(B.nullableString, "a continuation of a stopped turn: sent as system_reminder with an empty content")),
                ]))
            },
            json: { .array($0.pointee.chat.outbox.map(\.json)) },
            changed: { $0.pointee.chat.outbox != $1.pointee.chat.outbox }),
        StateSection(
            "permission_requests", owner: .approvals,
            schema: {
                B.array(B.strictObject([
                    ("request_id", B.string), ("session_id", B.nullableString), ("action", B.string), ("detail", B.string), ("tier", B.string),
                ]))
            },
            json: { .array($0.pointee.approvals.permissionRequests.map(\.json)) },
            changed: { $0.pointee.approvals.permissionRequests != $1.pointee.approvals.permissionRequests }),
        StateSection(
            "stdin_requests", owner: .approvals,
            schema: {
                B.array(B.strictObject([
                    ("request_id", B.string), ("prompt", B.string), ("is_password", B.boolean), ("tool_call_id", B.nullableString),
                ]))
            },
            json: { .array($0.pointee.approvals.stdinRequests.map(\.json)) },
            changed: { $0.pointee.approvals.stdinRequests != $1.pointee.approvals.stdinRequests }),
        StateSection(
            "notices", owner: .notices,
            schema: {
                B.array(B.strictObject([
                    ("id", B.string), ("kind", B.enumeration(Notice.Kind.allCases.map(\.rawValue))), ("text", B.string),
                ]))
            },
            json: { .array($0.pointee.notices.notices.map(\.json)) },
            changed: { $0.pointee.notices.notices != $1.pointee.notices.notices }),
        // The error banner is the notices' own; the status line is read
        // (`SemanticText.statusBanner`) from the connection, the servers, the
        // pairing form and chat's history_loaded, and compared on exactly
        // those (a token count, which moves the session's section, leaves it).
        StateSection(
            "banners", owner: .notices, reads: [.connection, .servers, .pairing, .chat],
            schema: {
                B.strictObject([
                    ("error", B.orNull(B.strictObject([
                        ("message", B.string), ("retry_after_secs", B.nullableInteger(.count)), ("text", B.string),
                    ]))),
                    ("status", B.nullableString),
                ])
            },
            json: { ["error": $0.pointee.notices.errorBanner.map(SemanticText.json(of:)) ?? .null, "status": .from(SemanticText.statusBanner($0))] },
            changed: { $0.pointee.notices.errorBanner != $1.pointee.notices.errorBanner || SemanticText.statusBannerInputsDiffer($0, $1) }),
        StateSection(
            "draft", owner: .composer,
            schema: { B.string },
            json: { .string($0.pointee.composer.draft) },
            changed: { $0.pointee.composer.draft != $1.pointee.composer.draft }),
        StateSection(
            "attachments", owner: .composer,
            schema: { B.array(B.ref("attachment")) },
            json: { .array($0.pointee.composer.attachments.map(\.json)) },
            changed: { $0.pointee.composer.attachments != $1.pointee.composer.attachments }),
        StateSection(
            "voice", owner: .composer,
            schema: { B.strictObject([("is_listening", B.boolean)]) },
            json: { $0.pointee.composer.voice.json },
            changed: { $0.pointee.composer.voice != $1.pointee.composer.voice }),
        StateSection(
            "lifecycle", owner: .lifecycle,
            schema: {
                B.strictObject([
                    ("is_foreground", B.boolean), ("network_reachable", B.boolean), ("push_registered", B.boolean),
                    ("device_id", B.nullableString),
                ])
            },
            json: { $0.pointee.lifecycle.json },
            changed: { $0.pointee.$lifecycle != $1.pointee.$lifecycle }),
        StateSection(
            "pending_effects", owner: .store,
            schema: {
                B.described(B.array(B.strictObject([
                    ("effect_id", B.integer(.id)), ("type", B.enumeration(EffectKind.allCases.map(\.rawValue))),
                ])), "effects awaiting their answer, oldest first")
            },
            json: { $0.pointee.effects.json },
            // The pending effects only: issuing an effect the ledger does
            // not keep moves its id counter, which the JSON does not show.
            changed: { $0.pointee.$effects != $1.pointee.$effects && $0.pointee.effects.pending != $1.pointee.effects.pending }),
    ])

    /// The table with each section's position filled in. A section's
    /// changes are a bit of a `UInt32`, hence at most 32.
    private static func numbered(_ sections: [StateSection]) -> [StateSection] {
        precondition(sections.count <= 32, "changedSections is a UInt32 bit set")
        var table = sections
        for i in table.indices { table[i].index = i }
        return table
    }

    /// The section named `name` (a declared name: a typo is a programming error).
    static func named(_ name: String) -> StateSection {
        guard let section = all.first(where: { $0.name == name }) else { preconditionFailure("no state section \(name)") }
        return section
    }

    /// The features (`FeatureID.bit`s) whose slices the sections of
    /// `sections` (bits indexed like `all`) read: owners and `reads`.
    static func features(of sections: UInt32) -> UInt32 {
        var features: UInt32 = 0
        var rest = sections
        while rest != 0 {
            features |= featureMasks[rest.trailingZeroBitCount]
            rest &= rest &- 1
        }
        return features
    }

    private static let featureMasks: [UInt32] = all.map { section in
        section.alsoReads.reduce(section.owner.bit) { $0 | $1.bit }
    }

    /// Each section's JSON Pointer (`/draft`), indexed like `all`.
    static let paths: [JSONPath] = all.map { JSONPath([.key($0.name)]) }

    /// The section whose changes the transcript journal reports.
    static let transcript = named("transcript")

    /// What `changedSections` walks, flattened once: the bit and compare of
    /// every diffed section.
    /// (A struct, not a tuple: a closure inside a generic array's tuple
    /// element is stored at the most general abstraction and every call goes
    /// through a thunk; a struct field keeps the closure's own.)
    struct Compared: Sendable {
        let bit: UInt32
        /// The features whose slices the value reads (its owner's and `reads`).
        let features: UInt32
        let changed: @Sendable (_ after: UnsafePointer<AppState>, _ before: UnsafePointer<AppState>) -> Bool
    }
    static let compared: [Compared] = all.compactMap {
        let changed: @Sendable (UnsafePointer<AppState>, UnsafePointer<AppState>) -> Bool
        switch $0.tracking {
        case .compared(let check), .fields(let check, _): changed = check
        case .implied, .journaled: return nil
        }
        return Compared(bit: 1 << UInt32($0.index), features: $0.reads.reduce($0.owner.bit) { $0 | $1.bit }, changed: changed)
    }
    /// `compared`, for each feature: the sections that read its slice,
    /// indexed by the position of the feature's bit.
    private static let comparedByFeature: [[Compared]] = (0..<32).map { i in compared.filter { $0.features & (1 << UInt32(i)) != 0 } }

    /// The compared sections that read the slice of `feature` (one bit).
    static func compared(reading feature: UInt32) -> [Compared] {
        feature == 0 ? [] : comparedByFeature[feature.trailingZeroBitCount]
    }
}
