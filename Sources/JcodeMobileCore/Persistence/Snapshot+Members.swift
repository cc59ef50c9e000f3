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

    /// Every member, in the order written and read.
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
        Member(
            name: "device",
            schema: { B.strictObject([("device_id", B.nullableString), ("device_name", B.string)]) },
            write: { s in
                var device = JSONObject(capacity: 2)
                device.append("device_id", .from(s.deviceID))
                device.append("device_name", .string(s.deviceName))
                return .object(device)
            },
            features: FeatureID.lifecycle.bit | FeatureID.pairing.bit,
            read: { value, s, reader in
                guard let device = reader.object(value, "device") else { return }
                if let id = device["device_id"], !id.isNull {
                    if let value = id.stringValue, LifecycleState.isValidDeviceID(value) {
                        s.deviceID = value
                    } else {
                        reader.problems.append("the device id")
                    }
                }
                if let name = device["device_name"] {
                    if let value = name.stringValue { s.deviceName = value } else { reader.problems.append("the device name") }
                }
            }),
        // Each server as `SavedServer.stored` writes it (its members'
        // schema is shared with the state's `saved_server`), the one in use
        // carrying the session in use as its last.
        Member(
            name: "servers",
            schema: { B.array(B.strictObject(RuntimeSchema.Outputs.storedServerMembers)) },
            write: { s in
                .array(
                    s.servers.map { server in
                        var stored = server.stored
                        if server.id == s.selectedServerID, let sessionID = s.sessionID { stored["last_session_id"] = .string(sessionID) }
                        return .object(stored)
                    })
            },
            features: FeatureID.servers.bit | FeatureID.session.bit,
            read: { value, s, reader in
                guard let list = reader.array(value, "servers") else { return }
                // The first of each id, checked as pairing checks it (one
                // look-up per server: a long list restores in linear time).
                var seen = Set<String>()
                seen.reserveCapacity(min(list.count, 4 * ServersState.limit))
                for item in list {
                    guard let server = Snapshot.storedServer(item, &reader), seen.insert(server.id).inserted else {
                        reader.unreadableServers += 1
                        continue
                    }
                    s.servers.append(server)
                }
                reader.nameServerProblems()
            }),
        Member(
            name: "selected_server_id",
            schema: { B.nullableString },
            write: { .from($0.selectedServerID) },
            features: FeatureID.servers.bit,
            read: { selected, s, reader in
                if let id = selected.stringValue, let server = s.servers.first(where: { $0.id == id }) {
                    s.selectedServerID = id
                    s.sessionID = server.lastSessionID
                } else {
                    reader.problems.append("the server in use")
                }
            }),
        Member(
            name: "composer",
            schema: {
                B.strictObject([
                    ("draft", B.string), ("attachments", B.array(StoredAttachment.schema)), ("next_attachment_id", B.integer(.id)),
                ])
            },
            write: { s in
                var composer = JSONObject(capacity: 3)
                composer.append("draft", .string(s.draft))
                composer.append("attachments", .array(s.attachments.map(StoredAttachment.json)))
                composer.append("next_attachment_id", .int(Int64(s.nextAttachmentID)))
                return .object(composer)
            },
            features: FeatureID.composer.bit,
            text: { s, w in
                w.beginFragment()
                w.fragment(#"{"draft":"#)
                w.valueFollows()
                w.string(s.draft)
                w.fragment(#","attachments":"#)
                w.valueFollows()
                w.arrayStart()
                for attachment in s.attachments { w.value(StoredAttachment.json(attachment)) }
                w.arrayEnd()
                w.fragment(#","next_attachment_id":"#)
                w.valueFollows()
                w.int(s.nextAttachmentID)
                w.fragment("}")
                w.endFragment()
            },
            read: { value, s, reader in
                guard let composer = reader.object(value, "composer") else { return }
                if let draft = composer["draft"] {
                    if let value = draft.stringValue { s.draft = value } else { reader.problems.append("the draft") }
                }
                if let items = composer["attachments"] {
                    let (attachments, lost) = StoredAttachment.read(items)
                    s.attachments = attachments
                    if lost > 0 { reader.problems.append("some attachments of the draft") }
                }
                s.nextAttachmentID = Reader.counter(composer["next_attachment_id"], after: s.attachments.map(\.id), prefix: "a")
            }),
        Member(
            name: "outbox",
            schema: {
                B.strictObject([
                    ("messages", B.array(B.strictObject([
                        ("id", B.string), ("text", B.string), ("attachments", B.array(StoredAttachment.schema)),
                        ("delivery", B.enumeration(["waiting", "unconfirmed", "failed"])),
                        ("sent", B.strictObject([("session_id", B.nullableString), ("user_rows_before", B.integer(.count))])),
                        ("system_reminder", B.string),
                    ], optional: ["sent", "system_reminder"]))),
                    ("next_id", B.integer(.id)),
                ])
            },
            write: { s in
                var messages: [JSONValue] = []
                messages.reserveCapacity(s.outbox.count)
                for message in s.outbox {
                    var m = JSONObject(capacity: 5)
                    m.append("id", .string(message.id))
                    m.append("text", .string(message.text))
                    m.append("attachments", .array(message.attachments.map(StoredAttachment.json)))
                    // A message on its way when the app stopped is unconfirmed after a restart.
                    let delivery = message.delivery == .waiting || message.delivery == .failed ? message.delivery.rawValue : "unconfirmed"
                    m.append("delivery", .string(delivery))
                    if let sent = message.sent {
                        m.append("sent", ["session_id": .from(sent.sessionID), "user_rows_before": .int(Int64(sent.userRowsBefore))])
                    }
                    if let reminder = message.systemReminder { m.append("system_reminder", .string(reminder)) }
                    messages.append(.object(m))
                }
                var box = JSONObject(capacity: 2)
                box.append("messages", .array(messages))
                box.append("next_id", .int(Int64(s.nextOutboxID)))
                return .object(box)
            },
            features: FeatureID.chat.bit,
            read: { value, s, reader in
                guard let box = reader.object(value, "outbox") else { return }
                if let messages = box["messages"] {
                    if let list = messages.arrayValue {
                        // The first of each id, oldest first, as many as
                        // `send_message` lets wait (one look-up per message).
                        var seen = Set<String>()
                        for item in list {
                            guard let (message, imagesLost) = Snapshot.outboxMessage(item), !seen.contains(message.id) else {
                                reader.unreadableMessages += 1
                                continue
                            }
                            guard s.outbox.count < ChatState.outboxLimit else {
                                reader.messagesPastLimit += 1
                                continue
                            }
                            seen.insert(message.id)
                            s.outbox.append(message)
                            if imagesLost { reader.imagesLeft(of: message.text) }
                        }
                    } else {
                        reader.unreadableMessages += 1
                    }
                }
                reader.nameOutboxProblems()
                s.nextOutboxID = Reader.counter(box["next_id"], after: s.outbox.map(\.id), prefix: "o")
            }),
    ]

    /// A saved server read back (the `servers` member), checked as pairing
    /// checks what it saves; nil when it has no usable address or name.
    /// A working directory that is not absolute is left unset (the app asks
    /// for it again) and a last session that is not a string is left out:
    /// both are counted in `reader`, so the notice names them.
    private static func storedServer(_ value: JSONValue, _ reader: inout Reader) -> SavedServer? {
        guard let host = value["host"]?.stringValue, ServerAddress.isSavedHost(host),
              let port = value["port"]?.int64Value, IntegerRange.port.contains(port),
              let useTLS = value["use_tls"]?.boolValue,
              let name = value["name"]?.stringValue
        else { return nil }
        var workingDir = ""
        if let raw = value["working_dir"], !raw.isNull {
            if let text = raw.stringValue, case .success(let path) = WorkingDirectory.validate(text) {
                workingDir = path
            } else if raw.stringValue != "" {
                reader.workingDirsUnset += 1  // "" is a server whose directory was never set
            }
        }
        var lastSessionID: String?
        if let raw = value["last_session_id"], !raw.isNull {
            if let id = raw.stringValue { lastSessionID = id } else { reader.lastSessionsLost += 1 }
        }
        return SavedServer(
            address: ServerAddress(host: host, port: Int(port), useTLS: useTLS), name: name,
            serverVersion: value["server_version"]?.stringValue,
            workingDir: workingDir,
            lastSessionID: lastSessionID)
    }

    /// An outbox message read back (the `outbox` member); nil when it has
    /// no id or text (then it is counted as lost, and the notice says so).
    /// Its images are those `send_message` could have taken (images, at
    /// most `Attachment.limitPerMessage`); `imagesLost` when one was left out.
    private static func outboxMessage(_ value: JSONValue) -> (OutboxMessage, imagesLost: Bool)? {
        guard let id = value["id"]?.stringValue, !id.isEmpty, let text = value["text"]?.stringValue else { return nil }
        var attachments: [Attachment] = []
        var imagesLost = false
        if let items = value["attachments"] {
            let (kept, lost) = StoredAttachment.read(items)
            attachments = kept
            imagesLost = lost > 0
        }
        let reminder = value["system_reminder"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        guard !text.isEmpty || !attachments.isEmpty || reminder != nil else { return nil }
        var message = OutboxMessage(id: id, text: text, attachments: attachments, systemReminder: reminder)
        if value["delivery"]?.stringValue == "failed" { message.delivery = .failed }
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
        return (message, imagesLost)
    }

    /// An attachment as the composer and the outbox persist it (with its
    /// data, unlike the state's): schema, writer and reader together.
    enum StoredAttachment {
        static var schema: JSONValue { B.strictObject([("id", B.string), ("media_type", B.string), ("data_base64", B.string)]) }

        static func json(_ attachment: Attachment) -> JSONValue {
            ["id": .string(attachment.id), "media_type": .string(attachment.mediaType), "data_base64": .string(attachment.dataBase64)]
        }

        /// The attachments that could be read and could go with one message
        /// (the first of each id, images only, at most
        /// `Attachment.limitPerMessage`: `Attachment.admit` decides, as for
        /// a picked image), and how many could not.
        static func read(_ value: JSONValue) -> (kept: [Attachment], lost: Int) {
            guard let list = value.arrayValue else { return ([], 1) }
            var kept: [Attachment] = []
            var lost = 0
            for item in list {
                guard kept.count < Attachment.limitPerMessage,
                      let id = item["id"]?.stringValue, let mediaType = item["media_type"]?.stringValue,
                      let data = item["data_base64"]?.stringValue, !kept.contains(where: { $0.id == id }),
                      case .success(let attachment) = Attachment.admit(id: id, mediaType: mediaType, dataBase64: data)
                else {
                    lost += 1
                    continue
                }
                kept.append(attachment)
            }
            return (kept, lost)
        }
    }
}
