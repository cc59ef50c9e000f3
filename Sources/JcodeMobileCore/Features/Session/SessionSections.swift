import JcodeMobileJSON

private typealias B = SchemaBuilder

extension SessionState {
    /// The session's sections of the state JSON (`StateSection`), in the
    /// order written; `StateSection.all` places them.
    static let sections: [StateSection] = [
        // The session's metadata and the running turn, as one member: the
        // turn's fields (tokens, is_processing, is_reasoning, server_phase,
        // status_detail, history_loaded) and was_interrupted are read from
        // chat's slice. Declared member by member, so a token count diffs one.
        StateSection(
            "session", owner: .session, reads: [.chat],
            changed: { $0.pointee.$session != $1.pointee.$session || $0.pointee.chat.turn != $1.pointee.chat.turn || $0.pointee.chat.wasInterrupted != $1.pointee.chat.wasInterrupted },
            fields: [
                .init("id", { B.nullableString }, { $0.pointee.session.id }),
                .init("title", { B.nullableString }, { $0.pointee.session.title }),
                .init(
                    "all_sessions", { B.array(B.strictObject([("id", B.string), ("title", B.nullableString)])) },
                    { $0.pointee.session.allSessions }, json: { .array($0.map(\.json)) }),
                .init("model", { B.nullableString }, { $0.pointee.session.model }),
                .init("pending_model", { B.nullableString }, { $0.pointee.session.pendingModel }),
                .init("provider", { B.nullableString }, { $0.pointee.session.provider }),
                .init(
                    "available_models", { B.array(B.string) }, { $0.pointee.session.availableModels },
                    json: { .array($0.map(JSONValue.string)) }),
                .init("reasoning_effort", { B.nullableString }, { $0.pointee.session.reasoningEffort }),
                .init("pending_reasoning_effort", { B.nullableString }, { $0.pointee.session.pendingReasoningEffort }),
                .init("server_version", { B.nullableString }, { $0.pointee.session.serverVersion }),
                .init("tokens", tokens: { $0.pointee.chat.turn.tokens }),
                .init("total_tokens", tokens: { $0.pointee.session.currentTotalTokens }),
                .init("connection_type", { B.nullableString }, { $0.pointee.session.connectionType }),
                .init("upstream_provider", { B.nullableString }, { $0.pointee.session.upstreamProvider }),
                // The turn's fields and was_interrupted are chat's.
                .init("was_interrupted") { $0.pointee.chat.wasInterrupted },
                .init("is_processing") { $0.pointee.chat.turn.isProcessing },
                .init("is_reasoning") { $0.pointee.chat.turn.isReasoning },
                .init("server_phase", { B.nullableString }, { $0.pointee.chat.turn.serverPhase }),
                .init("status_detail", { B.nullableString }, { $0.pointee.chat.turn.statusDetail }),
                .init("history_loaded") { $0.pointee.chat.turn.historyLoaded },
                .init("is_compacting") { $0.pointee.session.isCompacting },
                .init("rename_draft", { B.nullableString }, { $0.pointee.session.renameDraft }),
                .init("pending_rename", { B.nullableString }, { $0.pointee.session.pendingRename }),
                .init("is_clearing") { $0.pointee.session.isClearing },
            ]),
    ]
}

extension TokenUsage {
    /// The schema's `token_usage`.
    static var schema: JSONValue {
        B.strictObject([
            ("input", B.integer(.count)), ("output", B.integer(.count)),
            ("cache_read_input", B.nullableInteger(.count)), ("cache_creation_input", B.nullableInteger(.count)),
        ])
    }
}
