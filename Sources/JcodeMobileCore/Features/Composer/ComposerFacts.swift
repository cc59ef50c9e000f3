/// What the composer lets the other features read (`Facts.composer`), taken
/// before each input from its slice: the only part of it they see.
public struct ComposerFacts: Sendable {
    /// The draft.
    public var draft: String = ""
    /// The draft's attachments.
    public var attachments: [Attachment] = []

    public init() {}

    /// Read in place from the state (no copy of the slice).
    init(_ state: UnsafePointer<AppState>) {
        draft = state.pointee.composer.draft
        attachments = state.pointee.composer.attachments
    }
}
