/// Owns the composer: the draft, image attachments and dictation. The chat
/// reads the draft and the attachments as facts and says when a message
/// took them (`composerSent`).
public struct ComposerInteractor: Interactor {
    public init() {}

    /// What the composer acts on.
    public enum Input: Equatable, Sendable {
        // Actions
        case setDraft(String)
        case attachImage
        case removeAttachment(id: String)
        case startVoiceInput
        // Platform events
        case imageAttachmentSelected(mediaType: String, dataBase64: String)
        case speechTranscript(text: String, isFinal: Bool)
        // The chat's outputs
        case composerSent(clearDraft: Bool, clearAttachments: Bool)
        case keepInDraft(text: String)
    }

    public func interact(_ state: inout ComposerState, _ input: Input, _ context: Void) -> Emission {
        switch input {
        case .setDraft(let value):
            state.draft = value
            return .none

        case .attachImage:
            guard state.hasRoomForAttachment else { return Self.tooManyImages }
            return .effect(.device(.requestImagePicker))

        case .imageAttachmentSelected(let mediaType, let data):
            switch Attachment.admit(id: "a" + String(state.nextAttachmentID), mediaType: mediaType, dataBase64: data) {
            case .failure(.notAnImage):
                return .internal(.showError(ErrorBanner(message: "Only images can be attached (this file is \(mediaType)).")))
            case .failure(.empty):
                return .internal(.showError(ErrorBanner(message: "The image could not be read. Try another one.")))
            case .success(let attachment):
                guard state.hasRoomForAttachment else { return Self.tooManyImages }
                state.attachments.append(attachment)
                state.nextAttachmentID &+= 1
                return .none
            }

        case .removeAttachment(let id):
            guard let i = state.attachments.firstIndex(where: { $0.id == id }) else {
                return .note("remove_attachment: no attachment \(id)")
            }
            state.attachments.remove(at: i)
            return .none

        case .startVoiceInput:
            guard !state.voice.isListening else { return .note("already listening") }
            state.voice.isListening = true
            return .effect(.device(.requestSpeechTranscript))

        case .speechTranscript(let text, let isFinal):
            state.draft = text
            if isFinal { state.voice.isListening = false }
            return .none

        case .composerSent(let clearDraft, let clearAttachments):
            if clearDraft { state.draft = "" }
            if clearAttachments { state.attachments = [] }
            return .none

        case .keepInDraft(let text):
            let kept = state.draft.isEmpty ? text : state.draft + "\n" + text
            guard kept.utf8.count <= ComposerState.keptTextLimit else {
                return .note("not kept in the draft (it would pass \(ComposerState.keptTextLimit) bytes): \(text.utf8.count) bytes", .dropped)
            }
            state.draft = kept
            return .none
        }
    }

    private static let tooManyImages = Emission.internal(
        .showError(ErrorBanner(message: "You can attach at most \(Attachment.limitPerMessage) images to one message.")))
}
