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
    public static let all: [StateSection] = numbered(
        [revision] + NavigationState.sections + ConnectionState.sections + PairingForm.sections
            + ServersState.sections + SessionState.sections + ChatState.sections + ApprovalsState.sections
            + NoticesState.sections + ComposerState.sections + LifecycleState.sections + [pendingEffects])

    // The store's two sections; each feature's are in its folder
    // (`Features/<Name>/<Name>Sections.swift`).
    private static let revision = StateSection(
        "revision", owner: .store,
        schema: { RuntimeSchema.Outputs.revision },
        json: { .int(Int64($0.pointee.revision)) },
        tracking: .implied)
    private static let pendingEffects = StateSection(
        "pending_effects", owner: .store,
        schema: {
            B.described(B.array(B.strictObject([
                ("effect_id", B.integer(.id)), ("type", B.enumeration(EffectKind.allCases.map(\.rawValue))),
            ])), "effects awaiting their answer, oldest first")
        },
        json: { $0.pointee.effects.json },
        // The pending effects only: issuing an effect the ledger does
        // not keep moves its id counter, which the JSON does not show.
        changed: { $0.pointee.$effects != $1.pointee.$effects && $0.pointee.effects.pending != $1.pointee.effects.pending })

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
