import JcodeMobileJSON

private typealias B = SchemaBuilder

extension ComposerState {
    /// The composer's sections of the state JSON (`StateSection`), in the
    /// order written; `StateSection.all` places them.
    static let sections: [StateSection] = [
        StateSection(
            "draft", owner: .composer,
            schema: { B.string },
            json: { .string($0.pointee.composer.draft) },
            changed: { $0.pointee.composer.draft != $1.pointee.composer.draft }),
        StateSection(
            "attachments", owner: .composer,
            schema: { B.array(B.ref("attachment")) },
            json: { .array($0.pointee.composer.attachments.map(\.json)) },
            changed: { $0.pointee.composer.attachments != $1.pointee.composer.attachments }),
        StateSection(
            "voice", owner: .composer,
            schema: { B.strictObject([("is_listening", B.boolean)]) },
            json: { $0.pointee.composer.voice.json },
            changed: { $0.pointee.composer.voice != $1.pointee.composer.voice }),
    ]
}

extension Attachment {
    /// The schema's `attachment` (the state's: without the data).
    static var schema: JSONValue {
        B.strictObject([("id", B.string), ("media_type", B.string), ("byte_count", B.integer(.count))],
                       description: "An image attached to the message being composed (its data is not in the state).")
    }
}
