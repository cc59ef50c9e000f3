import JcodeMobileJSON

/// What survives a restart: everything a person expects to find again
/// after the app was quit or killed, and nothing secret.
///
/// - the device: its identity (`device_id`) and the name it pairs with;
/// - the saved servers (address, name, working directory, last session) and
///   the one in use;
/// - the composer: the draft and its attachments;
/// - the outbox: messages whose turn was not seen ending, in order.
///
/// Tokens are never here: they live in the host's secure store, one key per
/// server (`SavedServer.tokenKey`), and are read back with
/// `secure_store_read` when the restored app connects. Everything else (the
/// transcript, the session's metadata) comes back from the server.
///
/// The store writes the snapshot with `storage_write {key: "snapshot"}`
/// after any call that changed it (once per call at most);
/// `jcode_mobile_snapshot` returns it; `app_new({"snapshot": …})` restores
/// it. Versioning (docs/LIFECYCLE.md): `version` changes only when an older
/// library would misread a snapshot; members may be added within a version,
/// and a reader ignores members it does not know.
///
/// Persistence reads every slice to build the snapshot and writes them only
/// when restoring, before the first input: features never see it.
public struct Snapshot: Equatable, Sendable {
    /// The version this library writes and reads.
    public static let version = 1
    /// The `storage_write` key.
    public static let storageKey = "snapshot"

    // Each feature's part is declared in its folder (`Features/<Name>/<Name>Snapshot.swift`).
    public var device = Device()
    public var servers = Servers()
    public var composer = Composer()
    public var chat = Chat()

    /// The snapshot of `state`: cheap (it shares the state's storage), so the
    /// store can take one after every call and compare.
    public init(of state: AppState) {
        self.init()
        refresh(from: state, features: FeatureID.all)
    }

    /// An empty snapshot (what a first launch has).
    private init() {}

    /// The features whose slices the snapshot reads.
    static let features: UInt32 = Device.features | Servers.features | Composer.features | Chat.features

    /// Reads again what the snapshot keeps of the slices of `features`
    /// (`FeatureID.bit`s): after a call, those it reached, so a keystroke
    /// reads the composer and nothing else. Returns the features whose
    /// parts changed (each part is named by the features it is read from,
    /// as `Member.features` names them).
    @discardableResult
    mutating func refresh(from state: AppState, features: UInt32) -> UInt32 {
        var changed: UInt32 = 0
        if features & Device.features != 0, device.refresh(from: state) { changed |= Device.features }
        if features & Servers.features != 0, servers.refresh(from: state) { changed |= Servers.features }
        if features & Composer.features != 0, composer.refresh(from: state) { changed |= Composer.features }
        if features & Chat.features != 0, chat.refresh(from: state) { changed |= Chat.features }
        return changed
    }

    // MARK: - Writing

    /// The persisted form (docs/LIFECYCLE.md has the schema): every member
    /// of `members`, in order.
    public var json: JSONValue {
        var root = JSONObject(capacity: Self.members.count)
        for member in Self.members { root.append(member.name, member.write(self)) }
        return .object(root)
    }

    /// The snapshot as the store last wrote it, with each member's JSON
    /// kept (its value, and its bytes as written): after a call, only the
    /// members whose parts the call's features own are compared, and only
    /// those that changed are encoded again, so a keystroke re-encodes the
    /// composer and copies the rest.
    struct Written: Sendable {
        private(set) var snapshot: Snapshot
        /// The snapshot's JSON value, a member changed in place: the
        /// effect of the previous write has been let go by then, so a write
        /// allocates only the members it encodes again.
        private var root: JSONObject
        /// Each member as written in the snapshot object, `"name":value`,
        /// indexed like `members`.
        private var texts: [[UInt8]]

        init(_ snapshot: Snapshot) {
            self.snapshot = snapshot
            var root = JSONObject(capacity: Snapshot.members.count)
            for member in Snapshot.members { root.append(member.name, member.write(snapshot)) }
            self.root = root
            texts = root.entries.indices.map { Written.text(of: $0, snapshot, root.entries[$0].value) }
        }

        /// `"name":value` of member `i`, from `snapshot` (straight, for a
        /// member that says how) or its `value`.
        private static func text(of i: Int, _ snapshot: Snapshot, _ value: JSONValue) -> [UInt8] {
            withUnsafeTemporaryAllocation(byteCount: 1024, alignment: 1) { scratch in
                var w = JSONWriter(startingIn: scratch)
                w.beginFragment()
                w.fragment(bytes: Snapshot.memberKeys[i])
                w.valueFollows()
                if let text = Snapshot.members[i].text { text(snapshot, &w) } else { w.value(value) }
                return w.bytes
            }
        }

        /// Reads the parts of `features` from `state` again; true (with the
        /// changed members encoded again) when the snapshot changed.
        mutating func update(from state: AppState, features: UInt32) -> Bool {
            guard features & Snapshot.features != 0 else { return false }
            let changed = snapshot.refresh(from: state, features: features)
            guard changed != 0 else { return false }
            for i in Snapshot.memberFeatures.indices where Snapshot.memberFeatures[i] & changed != 0 {
                root.entries[i].value = Snapshot.members[i].write(snapshot)
                texts[i] = Written.text(of: i, snapshot, root.entries[i].value)
            }
            return true
        }

        /// The snapshot's JSON value (`Snapshot.json`).
        var json: JSONValue { .object(root) }

        /// Writes the snapshot's JSON (the bytes `json` encodes to) from the kept texts.
        func write(to w: inout JSONWriter) {
            w.beginFragment()
            w.fragment("{")
            for i in texts.indices {
                if i > 0 { w.fragment(",") }
                w.fragment(bytes: texts[i])
            }
            w.fragment("}")
            w.endFragment()
        }
    }

    // MARK: - Restoring

    /// A snapshot read back, with what could not be (each a phrase for the
    /// notice the restored app shows).
    public struct Restored: Equatable, Sendable {
        public var snapshot: Snapshot
        public var problems: [String]
    }

    /// Reads a persisted snapshot. Refuses what cannot be a snapshot of
    /// this library (`invalid_snapshot`: not an object, no integer
    /// `version`) or is of another version (`unsupported_snapshot`: the host
    /// keeps it, and a newer library can read it); restores everything else
    /// it can, member by member, and names what it had to leave out.
    ///
    /// `versionLiteral` is the version's number as written, when the
    /// caller has it (app_new reads from the tape): a version is judged by
    /// its digits, like every integer, so 1.0 is 1 and a number beyond 64
    /// bits is named as written.
    public static func read(_ value: JSONValue, versionLiteral: String? = nil) throws(CoreError) -> Restored {
        guard case .object(let root) = value else {
            throw CoreError(.invalidSnapshot, "a snapshot is a JSON object, got \(value.typeName)", field: "snapshot")
        }
        guard let versionValue = root["version"] else {
            throw CoreError(.invalidSnapshot, "the snapshot has no \"version\"", field: "snapshot.version")
        }
        let number: JSONTape.WholeNumber?
        if let versionLiteral {
            number = JSONTape.wholeNumber(versionLiteral)
        } else if let exact = versionValue.int64Value {
            number = .exact(exact)
        } else if case .double(let d) = versionValue {
            number = d.isFinite && d == d.rounded(.towardZero) ? .beyond(negative: d < 0) : .fraction
        } else {
            number = nil
        }
        let shown = versionLiteral ?? versionValue.jsonString
        let newer = "newer than this library, which reads"
        let other = "not one this library reads; it reads"
        switch number {
        case .exact(let version) where version == Int64(Self.version):
            break
        case .exact(let version):
            throw CoreError(
                .unsupportedSnapshot, "snapshot version \(version) is \(version > Int64(Self.version) ? newer : other) version \(Self.version)",
                field: "snapshot.version")
        case .beyond(let negative):
            throw CoreError(
                .unsupportedSnapshot, "snapshot version \(shown) is \(negative ? other : newer) version \(Self.version)", field: "snapshot.version")
        case .fraction:
            throw CoreError(.invalidSnapshot, "snapshot.version must be an integer, got \(shown)", field: "snapshot.version")
        case nil:
            throw CoreError(.invalidSnapshot, "snapshot.version must be an integer, got \(versionValue.typeName)", field: "snapshot.version")
        }
        var reader = Reader()
        let snapshot = reader.snapshot(root)
        return Restored(snapshot: snapshot, problems: reader.problems)
    }

    /// Puts the snapshot into a first-launch state. The link is to come up
    /// when the app is in front (`app_foreground`): the token is read from
    /// the secure store then.
    public func restore(into state: inout AppState) {
        device.restore(into: &state)
        servers.restore(into: &state)
        composer.restore(into: &state)
        chat.restore(into: &state)
        if servers.selectedServerID != nil {
            state.navigation.screen = .chat
            state.connection.phase = .connecting
            state.connection.resumesInForeground = true
        }
    }

    /// Reads the members of a version-1 snapshot leniently: a damaged
    /// member is left out (or defaulted) and named, never fatal.
    ///
    /// What it restores passes the checks the actions apply to the same
    /// things (a host as pairing saves it, an absolute working directory,
    /// images only and at most `Attachment.limitPerMessage` on a message,
    /// at most `ChatState.outboxLimit` messages waiting, at most
    /// `ServersState.limit` servers): a snapshot written by hand or by
    /// another program gets no further than a person could. What was left
    /// out or changed is named in `problems`, counted (one phrase per kind
    /// of thing, however many), in time linear in the snapshot's size.
    struct Reader {
        var problems: [String] = []

        // Counted while members are read, named once each member is read.
        var unreadableServers = 0
        var workingDirsUnset = 0
        var lastSessionsLost = 0
        var unreadableMessages = 0
        var messagesPastLimit = 0
        var messagesWithImagesLeft = 0
        var firstWithImagesLeft = ""

        /// Each member present and not null, read in the order declared
        /// (`selected_server_id` needs the servers read before it), then
        /// the saved servers cut to `ServersState.limit`.
        mutating func snapshot(_ root: JSONObject) -> Snapshot {
            var s = Snapshot(of: AppState())
            for member in Snapshot.members {
                guard let read = member.read, let value = root[member.name], !value.isNull else { continue }
                read(value, &s, &self)
            }
            keepNewestServers(&s)
            return s
        }

        /// Past `ServersState.limit`, the oldest saved servers go (the list
        /// is in pairing order), the one in use excepted, as pairing one
        /// more would have forgotten them.
        mutating func keepNewestServers(_ s: inout Snapshot) {
            var excess = s.servers.list.count - ServersState.limit
            guard excess > 0 else { return }
            problems.append("the \(excess) oldest saved servers (this device keeps \(ServersState.limit))")
            let selected = s.servers.selectedServerID
            s.servers.list.removeAll { server in
                guard excess > 0, server.id != selected else { return false }
                excess -= 1
                return true
            }
        }

        mutating func nameServerProblems() {
            if unreadableServers > 0 { problems.append(unreadableServers == 1 ? "1 saved server" : "\(unreadableServers) saved servers") }
            if workingDirsUnset > 0 {
                problems.append("the working directory of \(workingDirsUnset == 1 ? "1 saved server" : "\(workingDirsUnset) saved servers") (not an absolute path)")
            }
            if lastSessionsLost > 0 {
                problems.append("the last session of \(lastSessionsLost == 1 ? "1 saved server" : "\(lastSessionsLost) saved servers")")
            }
        }

        mutating func imagesLeft(of text: String) {
            if messagesWithImagesLeft == 0 { firstWithImagesLeft = text }
            messagesWithImagesLeft += 1
        }

        mutating func nameOutboxProblems() {
            if messagesWithImagesLeft == 1 {
                problems.append("some images of the unsent message \"\(String(firstWithImagesLeft.prefix(40)))\"")
            } else if messagesWithImagesLeft > 1 {
                problems.append("some images of \(messagesWithImagesLeft) unsent messages")
            }
            if unreadableMessages > 0 {
                problems.append(unreadableMessages == 1 ? "1 unsent message" : "\(unreadableMessages) unsent messages")
            }
            if messagesPastLimit > 0 {
                problems.append(
                    "the \(messagesPastLimit) newest unsent \(messagesPastLimit == 1 ? "message" : "messages") (at most \(ChatState.outboxLimit) wait to be sent)")
            }
        }

        /// The member `name`'s value as an object, or nil and named.
        mutating func object(_ value: JSONValue, _ name: String) -> JSONObject? {
            guard let object = value.objectValue else {
                problems.append("the \(name)")
                return nil
            }
            return object
        }

        /// The member `name`'s value as an array, or nil and named.
        mutating func array(_ value: JSONValue, _ name: String) -> [JSONValue]? {
            guard let array = value.arrayValue else {
                problems.append("the \(name)")
                return nil
            }
            return array
        }

        /// A counter restored so that it never issues an id already in use
        /// (`o3` → at least 4), whatever the stored value says.
        static func counter(_ value: JSONValue?, after ids: [String], prefix: Character) -> Int {
            var next = 1
            if let stored = value?.int64Value, stored >= 1 && stored <= Int64(Int32.max) { next = Int(stored) }
            for id in ids where id.first == prefix {
                if let n = Int(id.dropFirst()), n >= next && n < Int(Int32.max) { next = n + 1 }
            }
            return next
        }
    }
}
