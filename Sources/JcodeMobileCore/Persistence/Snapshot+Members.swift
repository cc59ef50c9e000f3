import JcodeMobileJSON

private typealias B = SchemaBuilder

extension Snapshot {
    /// One member of the persisted form, declared once: its name, its JSON
    /// Schema, how it is written and how it is read back. `members` drives
    /// the writer (`json`), the reader (`Reader.snapshot`) and the runtime
    /// schema's `snapshot` definition.
    struct Member: Sendable {
        let name: String
        let schema: @Sendable () -> JSONValue
        let write: @Sendable (Snapshot) -> JSONValue
        /// The features whose slices the parts `write` reads are read
        /// from (`Snapshot.refresh` says which of them changed): a member is
        /// encoded again when one of them did.
        let features: UInt32
        /// Writes the value `write` gives as JSON text, straight from the
        /// snapshot, for the member a keystroke changes (the composer);
        /// nil: the value is encoded (`CheapInputTests` holds the two to
        /// the same bytes).
        var text: (@Sendable (Snapshot, inout JSONWriter) -> Void)? = nil
        /// Reads the member's value (present, not null) into the snapshot,
        /// leniently: what it cannot read it leaves out and names in the
        /// reader's problems. nil: not read as a member (`version`).
        let read: (@Sendable (JSONValue, inout Snapshot, inout Reader) -> Void)?
    }

    /// Each member's name, indexed like `members`.
    static let memberNames: [String] = members.map(\.name)
    /// Each member's `"name":`, indexed like `members`.
    static let memberKeys: [[UInt8]] = members.map { member in
        var w = JSONWriter(capacity: 32)
        w.key(string: member.name)
        return w.bytes
    }
    /// The features whose slices each member reads (`FeatureID.bit`s,
    /// indexed like `members`): after a call, only the members of the
    /// features it reached are compared.
    static let memberFeatures: [UInt32] = members.map(\.features)

    /// Every member, in the order written and read: the version, then
    /// each feature's own (`Features/<Name>/<Name>Snapshot.swift`).
    static let members: [Member] = [
        // Judged by `read(_:versionLiteral:)` before any member is read: a
        // version this library does not read refuses the whole snapshot,
        // which a member's lenient reader cannot.
        Member(
            name: "version",
            schema: { B.const(.int(Int64(Snapshot.version))) },
            write: { _ in .int(Int64(Snapshot.version)) },
            features: 0,
            read: nil),
    ] + lifecycleMembers + serversMembers + composerMembers + chatMembers
}
