/// An image attached to the message being composed.
public struct Attachment: Equatable, Sendable {
    public var id: String
    public var mediaType: String
    public var dataBase64: String

    public init(id: String, mediaType: String, dataBase64: String) {
        self.id = id
        self.mediaType = mediaType
        self.dataBase64 = dataBase64
    }

    /// The decoded size in bytes (the base64 text itself is not part of the state JSON).
    public var byteCount: Int {
        let padding = dataBase64.utf8.reversed().prefix(while: { $0 == UInt8(ascii: "=") }).count
        return max(0, dataBase64.utf8.count / 4 * 3 - padding)
    }

    var json: JSONValue {
        ["id": .string(id), "media_type": .string(mediaType), "byte_count": .int(Int64(byteCount))]
    }
}

/// Dictation into the draft.
public struct VoiceInput: Equatable, Sendable {
    public var isListening = false

    public init() {}

    var json: JSONValue { ["is_listening": .bool(isListening)] }
}

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
