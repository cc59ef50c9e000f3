import JcodeMobileJSON

private typealias B = SchemaBuilder

extension Snapshot {
    /// What the snapshot keeps of the composer: the draft and its attachments.
    public struct Composer: Equatable, Sendable {
        public var draft: String = ""
        public var attachments: [Attachment] = []
        public var nextAttachmentID: Int = 1

        /// The features whose slices the part is read from.
        static let features: UInt32 = FeatureID.composer.bit

        /// Reads the part again from `state`; true when it changed.
        @inline(__always) mutating func refresh(from state: AppState) -> Bool {
            guard draft != state.composer.draft || attachments != state.composer.attachments
                || nextAttachmentID != state.composer.nextAttachmentID else { return false }
            draft = state.composer.draft
            attachments = state.composer.attachments
            nextAttachmentID = state.composer.nextAttachmentID
            return true
        }

        /// Puts the part back into a first-launch state.
        func restore(into state: inout AppState) {
            state.composer.draft = draft
            state.composer.attachments = attachments
            state.composer.nextAttachmentID = nextAttachmentID
        }
    }

    /// What the snapshot keeps of the composer: the draft and its attachments.
    static let composerMembers: [Member] = [
        Member(
            name: "composer",
            schema: {
                B.strictObject([
                    ("draft", B.string), ("attachments", B.array(StoredAttachment.schema)), ("next_attachment_id", B.integer(.id)),
                ])
            },
            write: { s in
                var composer = JSONObject(capacity: 3)
                composer.append("draft", .string(s.composer.draft))
                composer.append("attachments", .array(s.composer.attachments.map(StoredAttachment.json)))
                composer.append("next_attachment_id", .int(Int64(s.composer.nextAttachmentID)))
                return .object(composer)
            },
            features: FeatureID.composer.bit,
            text: { s, w in
                w.beginFragment()
                w.fragment(#"{"draft":"#)
                w.valueFollows()
                w.string(s.composer.draft)
                w.fragment(#","attachments":"#)
                w.valueFollows()
                w.arrayStart()
                for attachment in s.composer.attachments { w.value(StoredAttachment.json(attachment)) }
                w.arrayEnd()
                w.fragment(#","next_attachment_id":"#)
                w.valueFollows()
                w.int(s.composer.nextAttachmentID)
                w.fragment("}")
                w.endFragment()
            },
            read: { value, s, reader in
                guard let composer = reader.object(value, "composer") else { return }
                if let draft = composer["draft"] {
                    if let value = draft.stringValue { s.composer.draft = value } else { reader.problems.append("the draft") }
                }
                if let items = composer["attachments"] {
                    let (attachments, lost) = StoredAttachment.read(items)
                    s.composer.attachments = attachments
                    if lost > 0 { reader.problems.append("some attachments of the draft") }
                }
                s.composer.nextAttachmentID = Reader.counter(composer["next_attachment_id"], after: s.composer.attachments.map(\.id), prefix: "a")
            }),
    ]

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
