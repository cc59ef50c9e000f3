/// A message written while offline, waiting for the connection. Nothing the
/// person sends is lost: it goes out, in order, once connected.
public struct OutboxMessage: Equatable, Sendable {
    public var id: String
    public var text: String
    public var attachments: [Attachment]

    public init(id: String, text: String, attachments: [Attachment]) {
        self.id = id
        self.text = text
        self.attachments = attachments
    }

    var json: JSONValue {
        ["id": .string(id), "text": .string(text), "attachments": .array(attachments.map(\.json))]
    }
}
