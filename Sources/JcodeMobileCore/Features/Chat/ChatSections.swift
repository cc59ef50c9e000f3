import JcodeMobileJSON
import JcodeMobileWire

private typealias B = SchemaBuilder

extension ChatState {
    /// The chat's sections of the state JSON (`StateSection`), in the
    /// order written; `StateSection.all` places them.
    static let sections: [StateSection] = [
        // Written straight from the entries (it can be large), and tracked
        // by the transcript's own change journal (a streamed delta is one
        // `append`), never diffed.
        StateSection(
            "transcript", owner: .chat,
            schema: { B.array(B.ref("transcript_entry")) },
            json: { .array($0.pointee.chat.transcript.entries.map(\.json)) },
            write: { state, w in
                w.arrayStart()
                for entry in state.pointee.chat.transcript.entries { entry.write(to: &w) }
                w.arrayEnd()
            },
            tracking: .journaled),
        StateSection(
            "images", owner: .chat,
            schema: {
                let anchor = B.oneOf([
                    B.type("null"),
                    B.strictObject([("kind", B.const("tool_call")), ("id", B.string)]),
                    B.strictObject([("kind", B.const("user_prompt")), ("ordinal", B.integer(.count))]),
                ])
                return B.array(B.strictObject([
                    ("media_type", B.string), ("label", B.nullableString), ("anchor", anchor), ("data", B.string),
                ], description: "An image of the server's transcript (history.images)."))
            },
            json: { .array($0.pointee.chat.images.map(\.json)) },
            changed: { $0.pointee.chat.images != $1.pointee.chat.images }),
        StateSection(
            "run_status", owner: .chat, reads: [.approvals, .connection],
            schema: {
                B.oneOf([
                    B.type("null"),
                    B.strictObject([
                        ("kind", B.enumeration(RunStatus.Kind.allCases.map(\.rawValue))),
                        ("tool", B.described(B.nullableString, "the running tool's name (running_tool)")),
                        ("summary", B.described(B.nullableString, "its one line: the command of a bash call, a path …")),
                        ("elapsed_secs", B.described(B.orNull(B.integer(.count)), "how long it has run, counted by the turn watch")),
                        ("text", B.described(B.string, "the line the app shows: \"Running cargo build · 10 min\"")),
                    ], description: "What the turn shown is doing; null when none runs (docs/PROTOCOL.md, \"A turn that never hangs\")."),
                ])
            },
            json: { RunStatus.of($0)?.json ?? .null },
            changed: { RunStatus.inputsDiffer($0, $1) }),
        StateSection(
            "interrupted_turn", owner: .chat,
            schema: {
                B.oneOf([
                    B.type("null"),
                    B.strictObject([
                        ("continuation", B.described(B.string, "what Continue sends")), ("reconnect_notice", B.nullableString),
                    ], description: "A turn the server stopped before it ended (history.was_interrupted or reload_recovery): the chat offers to continue it."),
                ])
            },
            json: { $0.pointee.chat.interruptedTurn?.json ?? .null },
            changed: { $0.pointee.chat.interruptedTurn != $1.pointee.chat.interruptedTurn }),
        StateSection(
            "older_history", owner: .chat,
            schema: {
                B.oneOf([
                    B.type("null"),
                    B.strictObject([
                        ("total", B.integer(.count)), ("visible", B.integer(.count)), ("remaining", B.integer(.count)),
                        ("requested", B.described(B.nullableInteger(.count), "visible_messages asked for, while the answer is awaited")),
                    ], description: "The history is compacted: compacted messages in all, shown, and still hidden."),
                ])
            },
            json: { $0.pointee.chat.olderHistory?.json ?? .null },
            changed: { $0.pointee.chat.olderHistory != $1.pointee.chat.olderHistory }),
        StateSection(
            "soft_interrupts", owner: .chat,
            schema: {
                B.array(B.strictObject([
                    ("entry_id", B.described(B.string, "the queued transcript entry")), ("content", B.string), ("urgent", B.boolean),
                ]))
            },
            json: { .array($0.pointee.chat.softInterrupts.map(\.json)) },
            changed: { $0.pointee.chat.softInterrupts != $1.pointee.chat.softInterrupts }),
        StateSection(
            "outbox", owner: .chat,
            schema: {
                B.array(B.strictObject([
                    ("id", B.string), ("text", B.string), ("attachments", B.array(B.ref("attachment"))),
                    ("delivery", B.enumeration(OutboxMessage.Delivery.allCases.map(\.rawValue))),
                    ("system_reminder", B.described(B.nullableString, "a continuation of a stopped turn: sent as system_reminder with an empty content")),
                ]))
            },
            json: { .array($0.pointee.chat.outbox.map(\.json)) },
            changed: { $0.pointee.chat.outbox != $1.pointee.chat.outbox }),
    ]
}

extension TranscriptEntry {
    /// The schema's `transcript_entry`.
    static var schema: JSONValue {
        B.strictObject([
            ("id", B.described(B.string, "\"m<serial>\", stable")),
            ("role", B.enumeration(TranscriptEntry.Role.allCases.map(\.rawValue))),
            ("text", B.string), ("reasoning", B.string),
            ("reasoning_secs", B.nullable("number")),
            ("tool_calls", B.array(B.ref("tool_call"))),
            ("is_streaming", B.boolean), ("is_queued", B.boolean),
            ("image_count", B.integer(IntegerRange(0...Int64(UInt16.max)))),
            ("stop_reason", B.described(B.nullableEnumeration(TranscriptEntry.StopReason.allCases.compactMap(\.wireName)),
                                        "why the provider stopped, when it was not a normal end")),
        ], description: "One bubble of the conversation (TranscriptEntry.write).")
    }
}

extension ToolCall {
    /// The schema's `tool_call`.
    static var schema: JSONValue {
        B.strictObject([
            ("id", B.string), ("name", B.string), ("input", B.string), ("output", B.string),
            ("status", B.enumeration(ToolCall.Status.allCases.map(\.rawValue))), ("error", B.nullableString),
        ], description: "A tool the agent called (ToolCall.write).")
    }
}
