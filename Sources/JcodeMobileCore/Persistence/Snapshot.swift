/// What survives a restart: everything a person expects to find again
/// after the app was quit or killed, and nothing secret.
///
/// - the device: its identity (`device_id`) and the name it pairs with;
/// - the saved servers (address, name, working directory, last session) and
///   the one in use;
/// - the composer: the draft and its attachments;
/// - the outbox: messages the server has not acknowledged, in order.
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

    public var deviceID: String?
    public var deviceName: String
    public var servers: [SavedServer]
    public var selectedServerID: String?
    /// The session in use on the selected server (newer than its `lastSessionID`).
    public var sessionID: String?
    public var draft: String
    public var attachments: [Attachment]
    public var nextAttachmentID: Int
    public var outbox: [OutboxMessage]
    public var nextOutboxID: Int

    /// The snapshot of `state`: cheap (it shares the state's storage), so the
    /// store can take one after every call and compare.
    public init(of state: AppState) {
        deviceID = state.lifecycle.deviceID
        deviceName = state.pairing.deviceName
        servers = state.servers.list
        selectedServerID = state.servers.selectedID
        sessionID = state.session.id
        draft = state.composer.draft
        attachments = state.composer.attachments
        nextAttachmentID = state.composer.nextAttachmentID
        outbox = state.chat.outbox
        nextOutboxID = state.chat.nextOutboxID
    }

    // MARK: - Writing

    /// The persisted form (docs/LIFECYCLE.md has the schema).
    public var json: JSONValue {
        var device = JSONObject(capacity: 2)
        device.append("device_id", .from(deviceID))
        device.append("device_name", .string(deviceName))

        var composer = JSONObject(capacity: 3)
        composer.append("draft", .string(draft))
        composer.append("attachments", .array(attachments.map(Self.json)))
        composer.append("next_attachment_id", .int(Int64(nextAttachmentID)))

        var messages: [JSONValue] = []
        messages.reserveCapacity(outbox.count)
        for message in outbox {
            var m = JSONObject(capacity: 5)
            m.append("id", .string(message.id))
            m.append("text", .string(message.text))
            m.append("attachments", .array(message.attachments.map(Self.json)))
            // A message on its way when the app stopped is unconfirmed after a restart.
            m.append("delivery", .string(message.delivery == .waiting ? "waiting" : "unconfirmed"))
            if let sent = message.sent {
                m.append("sent", ["session_id": .from(sent.sessionID), "user_rows_before": .int(Int64(sent.userRowsBefore))])
            }
            messages.append(.object(m))
        }
        var box = JSONObject(capacity: 2)
        box.append("messages", .array(messages))
        box.append("next_id", .int(Int64(nextOutboxID)))

        var root = JSONObject(capacity: 6)
        root.append("version", .int(Int64(Self.version)))
        root.append("device", .object(device))
        root.append(
            "servers",
            .array(
                servers.map { server in
                    var stored = server.stored
                    if server.id == selectedServerID, let sessionID { stored["last_session_id"] = .string(sessionID) }
                    return .object(stored)
                }))
        root.append("selected_server_id", .from(selectedServerID))
        root.append("composer", .object(composer))
        root.append("outbox", .object(box))
        return .object(root)
    }

    private static func json(_ attachment: Attachment) -> JSONValue {
        ["id": .string(attachment.id), "media_type": .string(attachment.mediaType), "data_base64": .string(attachment.dataBase64)]
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
        state.lifecycle.deviceID = deviceID
        state.pairing.deviceName = deviceName
        state.servers.list = servers
        state.servers.selectedID = selectedServerID
        state.session.id = sessionID
        state.composer.draft = draft
        state.composer.attachments = attachments
        state.composer.nextAttachmentID = nextAttachmentID
        state.chat.outbox = outbox
        state.chat.nextOutboxID = nextOutboxID
        if selectedServerID != nil {
            state.navigation.screen = .chat
            state.connection.phase = .connecting
            state.connection.resumesInForeground = true
        }
    }

    /// Reads the members of a version-1 snapshot leniently: a damaged
    /// member is left out (or defaulted) and named, never fatal.
    private struct Reader {
        var problems: [String] = []

        mutating func snapshot(_ root: JSONObject) -> Snapshot {
            var s = Snapshot(of: AppState())
            if let device = object(root, "device") {
                if let id = device["device_id"], !id.isNull {
                    if let value = id.stringValue, LifecycleState.isValidDeviceID(value) {
                        s.deviceID = value
                    } else {
                        problems.append("the device id")
                    }
                }
                if let name = device["device_name"] {
                    if let value = name.stringValue { s.deviceName = value } else { problems.append("the device name") }
                }
            }
            if let list = array(root, "servers") {
                var unreadable = 0
                for item in list {
                    guard let server = Self.server(item), !s.servers.contains(where: { $0.id == server.id }) else {
                        unreadable += 1
                        continue
                    }
                    s.servers.append(server)
                }
                if unreadable > 0 { problems.append(unreadable == 1 ? "1 saved server" : "\(unreadable) saved servers") }
            }
            if let selected = root["selected_server_id"], !selected.isNull {
                if let id = selected.stringValue, let server = s.servers.first(where: { $0.id == id }) {
                    s.selectedServerID = id
                    s.sessionID = server.lastSessionID
                } else {
                    problems.append("the server in use")
                }
            }
            if let composer = object(root, "composer") {
                if let draft = composer["draft"] {
                    if let value = draft.stringValue { s.draft = value } else { problems.append("the draft") }
                }
                if let items = composer["attachments"] {
                    let (attachments, lost) = Self.attachments(items)
                    s.attachments = Array(attachments.prefix(Attachment.limitPerMessage))
                    if lost > 0 || attachments.count > Attachment.limitPerMessage { problems.append("some attachments of the draft") }
                }
                s.nextAttachmentID = Self.counter(composer["next_attachment_id"], after: s.attachments.map(\.id), prefix: "a")
            }
            if let box = object(root, "outbox") {
                var unreadable = 0
                if let messages = box["messages"] {
                    if let list = messages.arrayValue {
                        for item in list {
                            guard let message = Self.message(item, problems: &problems),
                                  !s.outbox.contains(where: { $0.id == message.id })
                            else {
                                unreadable += 1
                                continue
                            }
                            s.outbox.append(message)
                        }
                    } else {
                        unreadable += 1
                    }
                }
                if unreadable > 0 {
                    problems.append(unreadable == 1 ? "1 unsent message" : "\(unreadable) unsent messages")
                }
                s.nextOutboxID = Self.counter(box["next_id"], after: s.outbox.map(\.id), prefix: "o")
            }
            return s
        }

        private mutating func object(_ root: JSONObject, _ name: String) -> JSONObject? {
            guard let value = root[name], !value.isNull else { return nil }
            guard let object = value.objectValue else {
                problems.append("the \(name)")
                return nil
            }
            return object
        }

        private mutating func array(_ root: JSONObject, _ name: String) -> [JSONValue]? {
            guard let value = root[name], !value.isNull else { return nil }
            guard let array = value.arrayValue else {
                problems.append("the \(name)")
                return nil
            }
            return array
        }

        private static func server(_ value: JSONValue) -> SavedServer? {
            guard let host = value["host"]?.stringValue, !host.isEmpty,
                  let port = value["port"]?.int64Value, port >= 1 && port <= 65_535,
                  let useTLS = value["use_tls"]?.boolValue,
                  let name = value["name"]?.stringValue
            else { return nil }
            // A working directory that is not absolute is left unset: the app asks for it again.
            var workingDir = ""
            if let raw = value["working_dir"]?.stringValue, case .success(let path) = WorkingDirectory.validate(raw) { workingDir = path }
            return SavedServer(
                address: ServerAddress(host: host, port: Int(port), useTLS: useTLS), name: name,
                serverVersion: value["server_version"]?.stringValue,
                workingDir: workingDir,
                lastSessionID: value["last_session_id"]?.stringValue)
        }

        private static func attachments(_ value: JSONValue) -> (kept: [Attachment], lost: Int) {
            guard let list = value.arrayValue else { return ([], 1) }
            var kept: [Attachment] = []
            var lost = 0
            for item in list {
                guard let id = item["id"]?.stringValue, let mediaType = item["media_type"]?.stringValue,
                      let data = item["data_base64"]?.stringValue, !kept.contains(where: { $0.id == id })
                else {
                    lost += 1
                    continue
                }
                kept.append(Attachment(id: id, mediaType: mediaType, dataBase64: data))
            }
            return (kept, lost)
        }

        /// An outbox message; nil when it has no id or text (then it is
        /// counted as lost, and the notice says so). Attachments that cannot
        /// be read are named, the message kept.
        private static func message(_ value: JSONValue, problems: inout [String]) -> OutboxMessage? {
            guard let id = value["id"]?.stringValue, !id.isEmpty, let text = value["text"]?.stringValue else { return nil }
            var attachments: [Attachment] = []
            if let items = value["attachments"] {
                let (kept, lost) = Self.attachments(items)
                attachments = kept
                if lost > 0 { problems.append("some images of the unsent message \"\(String(text.prefix(40)))\"") }
            }
            guard !text.isEmpty || !attachments.isEmpty else { return nil }
            var message = OutboxMessage(id: id, text: text, attachments: attachments)
            if value["delivery"]?.stringValue == "unconfirmed" || value["delivery"]?.stringValue == "awaiting_ack" {
                // It may have arrived: the next history decides.
                message.delivery = .unconfirmed
                if let rows = value["sent"]?["user_rows_before"]?.int64Value, rows >= 0 && rows <= Int64(Int32.max) {
                    message.sent = OutboxMessage.SentMark(sessionID: value["sent"]?["session_id"]?.stringValue, userRowsBefore: Int(rows))
                } else {
                    // Where it went is unknown: sending it again is safer than losing it.
                    message.delivery = .waiting
                }
            }
            return message
        }

        /// A counter restored so that it never issues an id already in use
        /// (`o3` → at least 4), whatever the stored value says.
        private static func counter(_ value: JSONValue?, after ids: [String], prefix: Character) -> Int {
            var next = 1
            if let stored = value?.int64Value, stored >= 1 && stored <= Int64(Int32.max) { next = Int(stored) }
            for id in ids where id.first == prefix {
                if let n = Int(id.dropFirst()), n >= next && n < Int(Int32.max) { next = n + 1 }
            }
            return next
        }
    }
}
