import JcodeMobileJSON

private typealias B = SchemaBuilder

extension Snapshot {
    /// What the snapshot keeps of the chat: the outbox, as it is written (a
    /// message on its way is unconfirmed after a restart, whatever step it
    /// had reached; an ack changes nothing kept).
    public struct Chat: Equatable, Sendable {
        public var outbox: [OutboxMessage] = []
        public var nextOutboxID = 1

        /// The features whose slices the part is read from.
        static let features: UInt32 = FeatureID.chat.bit

        /// Reads the part again from `state`; true when it changed.
        @inline(__always) mutating func refresh(from state: AppState) -> Bool {
            func kept(_ message: OutboxMessage) -> OutboxMessage {
                var kept = OutboxMessage(id: message.id, text: message.text, attachments: message.attachments, sent: message.sent)
                kept.delivery = message.delivery == .waiting || message.delivery == .failed ? message.delivery : .unconfirmed
                return kept
            }
            // Compared message by message: no new array unless it changed.
            let source = state.chat.outbox
            var same = outbox.count == source.count && nextOutboxID == state.chat.nextOutboxID
            if same {
                for i in source.indices where outbox[i] != kept(source[i]) {
                    same = false
                    break
                }
            }
            guard !same else { return false }
            outbox = source.map(kept)
            nextOutboxID = state.chat.nextOutboxID
            return true
        }

        /// Puts the part back into a first-launch state.
        func restore(into state: inout AppState) {
            state.chat.outbox = outbox
            state.chat.nextOutboxID = nextOutboxID
        }
    }

    /// What the snapshot keeps of the chat: the outbox.
    static let chatMembers: [Member] = [
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
                messages.reserveCapacity(s.chat.outbox.count)
                for message in s.chat.outbox {
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
                box.append("next_id", .int(Int64(s.chat.nextOutboxID)))
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
                            guard s.chat.outbox.count < ChatState.outboxLimit else {
                                reader.messagesPastLimit += 1
                                continue
                            }
                            seen.insert(message.id)
                            s.chat.outbox.append(message)
                            if imagesLost { reader.imagesLeft(of: message.text) }
                        }
                    } else {
                        reader.unreadableMessages += 1
                    }
                }
                reader.nameOutboxProblems()
                s.chat.nextOutboxID = Reader.counter(box["next_id"], after: s.chat.outbox.map(\.id), prefix: "o")
            }),
    ]

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
}
