import JcodeMobileJSON

/// The message being composed: its text, its images and dictation.
public struct ComposerState: Equatable, Sendable {
    public var draft = ""
    public var attachments: [Attachment] = []
    public var voice = VoiceInput()
    /// The id the next attachment gets.
    public var nextAttachmentID = 1

    public init() {}

    /// The core adds text to the draft itself (a message it could not take)
    /// only while the draft stays under this many bytes; what the person
    /// types (`set_draft`) is bounded by the input limit alone.
    public static let keptTextLimit = 256 * 1024

    /// Whether another image may be attached (at most `Attachment.limitPerMessage`).
    public var hasRoomForAttachment: Bool { attachments.count < Attachment.limitPerMessage }
}

/// An image attached to the message being composed.
public struct Attachment: Equatable, Sendable {
    public var id: String
    public var mediaType: String
    public var dataBase64: String

    /// At most this many images go with one message.
    public static let limitPerMessage = 10

    public init(id: String, mediaType: String, dataBase64: String) {
        self.id = id
        self.mediaType = mediaType
        self.dataBase64 = dataBase64
    }

    /// Why a file cannot go with a message.
    public enum Unfit: Error, Equatable, Sendable {
        /// Only images are attached (`media_type` not `image/…`).
        case notAnImage
        /// No data.
        case empty
    }

    /// The attachment a picked (or restored) file makes, its media type
    /// lowercased, or why it cannot be one: the one rule the composer
    /// applies to a picked image and a restored snapshot to every stored one.
    public static func admit(id: String, mediaType: String, dataBase64: String) -> Result<Attachment, Unfit> {
        let type = mediaType.lowercased()
        guard type.hasPrefix("image/") else { return .failure(.notAnImage) }
        guard !dataBase64.isEmpty else { return .failure(.empty) }
        return .success(Attachment(id: id, mediaType: type, dataBase64: dataBase64))
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
