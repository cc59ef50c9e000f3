import JcodeMobileJSON

private typealias B = SchemaBuilder

extension NoticesState {
    /// The notices's sections of the state JSON (`StateSection`), in the
    /// order written; `StateSection.all` places them.
    static let sections: [StateSection] = [
        StateSection(
            "notices", owner: .notices,
            schema: {
                B.array(B.strictObject([
                    ("id", B.string), ("kind", B.enumeration(Notice.Kind.allCases.map(\.rawValue))), ("text", B.string),
                ]))
            },
            json: { .array($0.pointee.notices.notices.map(\.json)) },
            changed: { $0.pointee.notices.notices != $1.pointee.notices.notices }),
        // The error banner is the notices' own; the status line is read
        // (`SemanticText.statusBanner`) from the connection, the servers, the
        // pairing form and chat's history_loaded, and compared on exactly
        // those (a token count, which moves the session's section, leaves it).
        StateSection(
            "banners", owner: .notices, reads: [.connection, .servers, .pairing, .chat],
            schema: {
                B.strictObject([
                    ("error", B.orNull(B.strictObject([
                        ("message", B.string), ("retry_after_secs", B.nullableInteger(.count)), ("text", B.string),
                    ]))),
                    ("status", B.nullableString),
                ])
            },
            json: { ["error": $0.pointee.notices.errorBanner.map(SemanticText.json(of:)) ?? .null, "status": .from(SemanticText.statusBanner($0))] },
            changed: { $0.pointee.notices.errorBanner != $1.pointee.notices.errorBanner || SemanticText.statusBannerInputsDiffer($0, $1) }),
    ]
}
