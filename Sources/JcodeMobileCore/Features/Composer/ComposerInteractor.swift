/// Owns the composer: the draft, image attachments and dictation.
public struct ComposerInteractor: Interactor {
    public init() {}

    /// At most this many images go with one message.
    public static let attachmentLimit = 10

    public func interact(_ state: inout AppState, _ input: Input) -> Emission {
        switch input {
        case .action(.setDraft(let value)):
            state.draft = value
            return .none

        case .action(.attachImage):
            guard state.attachments.count < Self.attachmentLimit else {
                state.showError("You can attach at most \(Self.attachmentLimit) images to one message.")
                return .none
            }
            return .effect(.device(.requestImagePicker))

        case .platform(.device(.imageAttachmentSelected(let mediaType, let data))):
            guard mediaType.lowercased().hasPrefix("image/") else {
                state.showError("Only images can be attached (this file is \(mediaType)).")
                return .none
            }
            guard !data.isEmpty else {
                state.showError("The image could not be read. Try another one.")
                return .none
            }
            guard state.attachments.count < Self.attachmentLimit else {
                state.showError("You can attach at most \(Self.attachmentLimit) images to one message.")
                return .none
            }
            state.attachments.append(Attachment(id: "a" + String(state.nextAttachmentID), mediaType: mediaType.lowercased(), dataBase64: data))
            state.nextAttachmentID &+= 1
            return .none

        case .action(.removeAttachment(let id)):
            guard let i = state.attachments.firstIndex(where: { $0.id == id }) else {
                return .note("remove_attachment: no attachment \(id)")
            }
            state.attachments.remove(at: i)
            return .none

        case .action(.startVoiceInput):
            guard !state.voice.isListening else { return .note("already listening") }
            state.voice.isListening = true
            return .effect(.device(.requestSpeechTranscript))

        case .platform(.device(.speechTranscript(let text, let isFinal))):
            state.draft = text
            if isFinal { state.voice.isListening = false }
            return .none

        default:
            return .none
        }
    }
}
