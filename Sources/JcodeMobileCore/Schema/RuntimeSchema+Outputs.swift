import JcodeMobileJSON
import JcodeMobileWire

/// The schema of what the hand-written encoders write: the state
/// (declared with each section in `StateSections.swift`, and the features' `json`), the tree
/// (`SemanticNode.write`), log entries (`LogEntry.write`), patch operations
/// (`JSONPatchOp.write`, `TranscriptChange.write`), change records and the
/// answers (`JcodeMobileApp`), the snapshot (`Snapshot.json`) and the error
/// object (`CoreError.json`).
///
/// Declared by hand, next to nothing that could check it but the tests:
/// every object here is strict (`additionalProperties: false`, every member
/// that is always written is `required`), and SchemaTests validates real
/// outputs against it, so an encoder that adds, drops or retypes a member
/// fails them. A member an encoder writes as `null` when it has no value is
/// `"type":[t,"null"]`; a member it leaves out is not `required`.
extension RuntimeSchema {
    enum Outputs {
        typealias B = SchemaBuilder

        static var definitions: [(String, JSONValue)] {
            [
                ("state", state),
                ("transcript_entry", TranscriptEntry.schema),
                ("tool_call", ToolCall.schema),
                ("token_usage", TokenUsage.schema),
                ("attachment", Attachment.schema),
                ("saved_server", SavedServer.schema),
                ("tree_node", treeNode),
                ("patch_op", patchOp),
                ("tree_op", treeOp),
                ("tree_changes_answer", treeChangesAnswer),
                ("change_record", changeRecord),
                ("log_entry", logEntry),
                ("snapshot", snapshot),
                ("error", error),
                ("error_answer", errorAnswer),
                ("dispatch_answer", B.described(B.oneOf([
                    B.strictObject([("ok", B.const(true)), ("revision", revision), ("effects", B.array(B.ref("effect"))),
                                    ("refused", B.described(B.string, "present when the action cannot be carried out as it stands, saying why (\"pairing form is incomplete: host, pair_code\"); the state and the screen say it too"))],
                                   optional: ["refused"]),
                    B.ref("error_answer"),
                ]), "The dispatch report of jcode_mobile_dispatch and jcode_mobile_platform_event: the state's revision after the input and the effects to execute.")),
                ("state_answer", answer(okMembers: [("state", B.ref("state"))], "The answer of jcode_mobile_state.")),
                ("tree_answer", answer(okMembers: [("revision", revision), ("tree", B.ref("tree_node"))], "The answer of jcode_mobile_tree.")),
                ("logs_answer", answer(okMembers: [
                    ("capacity", B.integer(IntegerRange(1...Int64(AppOptions.maxLogCapacity)))),
                    ("next_seq", B.integer(.id)), ("entries", B.array(B.ref("log_entry"))),
                ], "The answer of jcode_mobile_logs: entries oldest first.")),
                ("changes_answer", changesAnswer),
                ("snapshot_answer", answer(okMembers: [("snapshot", B.ref("snapshot"))], "The answer of jcode_mobile_snapshot.")),
                ("last_error_answer", B.described(B.oneOf([B.strictObject([("ok", B.const(true))]), B.ref("error_answer")]),
                    "The answer of jcode_mobile_last_error: {\"ok\":true} when the last jcode_mobile_app_new on the thread succeeded (or there was none), else its error.")),
                ("next_event_answer", answer(okMembers: [("event", B.oneOf([B.ref("stream_event"), B.type("null")]))],
                    "The answer of jcode_mobile_next_event: the next stream event, or null when there is none yet.")),
                ("schema_answer", answer(okMembers: [("schema", B.type("object"))], "The answer of jcode_mobile_schema: this document.")),
                ("hit_test_answer", answer(okMembers: [
                    ("revision", revision),
                    ("node", B.described(B.orNull(B.strictObject([
                        ("id", B.string), ("role", B.enumeration(SemanticNode.Role.allCases.map(\.rawValue))), ("label", B.string),
                        ("value", B.nullableString), ("enabled", B.boolean), ("supported_actions", B.array(B.string)),
                        ("bounds", B.strictObject([("x", B.type("integer")), ("y", B.type("integer")), ("width", B.integer(.count)), ("height", B.integer(.count))])),
                    ])), "the deepest visible node at the point (its children left out); null outside the viewport")),
                    ("path", B.described(B.array(B.string), "the ids from the root down to the node")),
                    ("tap_target", B.described(B.nullableString, "the node tap_xy at this point would tap: the deepest tappable node on the path")),
                ], "The answer of jcode_mobile_hit_test.")),
                ("screenshot_answer", answer(okMembers: [
                    ("revision", revision), ("format", B.enumeration(["svg"])),
                    ("width", B.integer(AppOptions.viewportRange)), ("height", B.integer(AppOptions.viewportRange)),
                    ("svg", B.described(B.string, "an SVG 1.1 document of the screen, width × height points")),
                ], "The answer of jcode_mobile_screenshot_svg.")),
            ]
        }

        static let revision = B.integer(.count)

        /// `oneOf` [`{"ok":true, members…}`, `error_answer`].
        static func answer(okMembers: [(String, JSONValue)], _ description: String) -> JSONValue {
            B.described(B.oneOf([B.strictObject([("ok", B.const(true))] + okMembers), B.ref("error_answer")]), description)
        }

        // MARK: - Errors

        static var error: JSONValue {
            B.strictObject([
                ("code", B.described(B.oneOf(ErrorCode.allCases.map { ["const": .string($0.rawValue), "description": .string($0.meaning)] }),
                    "stable and machine-readable; later versions may add codes: treat an unknown one like internal")),
                ("message", B.described(B.string, "for people; may change")),
                ("offset", B.described(B.integer(.count), "byte offset into the input (invalid_utf8, invalid_json, too_deep)")),
                ("field", B.described(B.string, "the path of the field concerned (invalid_field, unknown_type, null_argument, too_large)")),
            ], optional: ["offset", "field"], description: "The error object (CoreError.json).")
        }

        static var errorAnswer: JSONValue {
            B.strictObject([("ok", B.const(false)), ("error", B.ref("error"))], description: "Every failed call: {\"ok\":false,\"error\":{…}}.")
        }

        // MARK: - The change feed

        static var patchOp: JSONValue {
            let path = B.described(B.string, "a JSON Pointer (RFC 6901) into the state object")
            return B.described(B.oneOf([
                B.strictObject([("op", B.const("add")), ("path", path), ("value", B.any)]),
                B.strictObject([("op", B.const("remove")), ("path", path)]),
                B.strictObject([("op", B.const("replace")), ("path", path), ("value", B.any)]),
                B.strictObject([("op", B.const("append")), ("path", path),
                                ("value", B.described(B.string, "text to append to the string at path"))]),
            ]), "One operation of the change feed: JSON Patch (RFC 6902) add, remove and replace, plus append, which appends value to the string at path.")
        }

        static var changeRecord: JSONValue {
            B.strictObject([("revision", revision), ("ops", B.array(B.ref("patch_op")))],
                           description: "What one revision changed: apply ops in order, then set the copy's revision to this one.")
        }

        static var changesAnswer: JSONValue {
            let since = B.described(["type": "integer", "minimum": 0],
                                    "since_revision exactly as passed: an unsigned 64-bit integer (up to 18446744073709551615)")
            return B.described(B.oneOf([
                B.strictObject([("ok", B.const(true)), ("revision", revision), ("since", since), ("changes", B.array(B.ref("change_record")))]),
                B.strictObject([("ok", B.const(true)), ("revision", revision), ("since", since), ("resync", B.const(true)), ("state", B.ref("state"))]),
                B.ref("error_answer"),
            ]), "The answer of jcode_mobile_changes: the records after since, or a resync with the whole state.")
        }

        // MARK: - Logs

        static var logEntry: JSONValue {
            B.strictObject([
                ("seq", B.integer(.id)),
                ("revision", revision),
                ("kind", B.enumeration(LogEntry.Kind.allCases.map(\.rawValue))),
                ("type", B.described(B.string, "the input's type (empty when it could not be read)")),
                ("payload", B.described(B.any, "the input with secrets replaced by \"[redacted]\", {\"type\",\"summary\"} for an input over 4 KiB, null when none")),
                ("effects", B.described(
                    B.array(B.oneOf([
                        B.ref("effect"),
                        B.described(B.strictObject([
                            ("effect_id", B.integer(.id)),
                            ("type", B.enumeration(EffectKind.allCases.map(\.rawValue))),
                            ("summary", B.string),
                        ]), "an effect whose JSON passed 4 KiB: its size, \"N bytes, not kept in the log\""),
                    ])),
                    "the effects requested, secrets replaced by \"[redacted]\"; an effect over 4 KiB is {\"effect_id\",\"type\",\"summary\"}")),
                ("notes", B.array(B.string)),
                ("follow_ups", B.described(B.array(B.string), "the internal inputs the store ran; only when there were some")),
                ("error", B.described(B.enumeration(ErrorCode.allCases.map(\.rawValue)), "the code an input was rejected with (kind rejected)")),
            ], optional: ["follow_ups", "error"], description: "One transition of jcode_mobile_logs (LogEntry.write).")
        }

        // MARK: - The tree

        static var treeNode: JSONValue {
            let int = B.type("integer")
            return B.strictObject([
                ("id", B.described(B.string, "stable across revisions")),
                ("role", B.enumeration(SemanticNode.Role.allCases.map(\.rawValue))),
                ("label", B.string),
                ("value", B.nullableString),
                ("placeholder", B.nullableString),
                ("visible", B.boolean),
                ("enabled", B.boolean),
                ("focused", B.boolean),
                ("accessibility_label", B.string),
                ("accessibility_value", B.nullableString),
                ("supported_actions", B.described(B.array(B.string), "\"tap\" (tap_node) and the actions that edit the node")),
                ("bounds", B.described(B.strictObject([("x", int), ("y", int), ("width", int), ("height", int)]), "points, origin top-left of the viewport; inside the message list, its content coordinates (on the screen at the list's y minus its scroll offset)")),
                ("scroll", B.described(scroll, "the message list only: its scroll position")),
                ("window", B.described(window, "the message list only: which of its rows are its children")),
            ] + detailFields.map { ($0.0, $0.1) } + [
                ("children", B.array(B.ref("tree_node"))),
            ], optional: Set(["scroll", "window"] + detailFields.map(\.0)),
            description: "One node of the semantic UI tree (SemanticNode.write).")
        }

        /// The fields only some roles carry (present only there).
        static var detailFields: [(String, JSONValue)] {
            [
                ("level", B.described(B.integer(IntegerRange(1 ... 6)), "a heading of a message: 1 (largest) to 6")),
                ("spans", B.described(B.array(span), "a text with styles or links: its runs, in order; their texts make up the value")),
                ("language", B.described(B.string, "a code block: the language named after its fence")),
                ("checked", B.described(B.boolean, "a task list item: its check box")),
                ("variant", B.described(B.string, "which kind of its role: a button primary, secondary or destructive; a list ordered or bullet; a list item loose (its list has a blank line between items or their blocks: spaced as paragraphs); a table row header; a table cell left, center or right; a diff line added, removed or context; a code block still streaming open")),
                ("expanded", B.described(B.boolean, "a collapsible node (tool card, reasoning, long output or diff): open or not; set_expanded (or a tap) toggles it")),
                ("counts", B.described(B.strictObject([("added", B.integer(.count)), ("removed", B.integer(.count))]), "a diff: its lines added and removed")),
                ("selected", B.described(B.boolean, "an option of a choice (a session, a model, a reasoning effort): true on the one in use (drawn with a check mark), false on the others")),
                ("icon", B.described(B.string, "a button an app draws as an icon: its SF Symbols name (arrow.up, paperclip, mic, stop.fill, xmark, chevron.left, gearshape, list.bullet, doc.on.doc …); its label stays its words")),
            ]
        }

        static var span: JSONValue {
            B.strictObject([
                ("text", B.string),
                ("styles", B.array(B.enumeration(TextSpan.Style.named.map { $0.1.description }))),
                ("url", B.described(B.string, "a link's target")),
                ("source", B.described(B.string, "an image's source (its run's text is the alt text)")),
            ], optional: ["url", "source"])
        }

        static var scroll: JSONValue {
            B.strictObject([
                ("offset", B.described(B.integer(.count), "points the content is scrolled by")),
                ("content_height", B.described(B.integer(.count), "the content's height: the window's rows measured, the others estimated")),
                ("max_offset", B.integer(.count)),
            ])
        }

        static var window: JSONValue {
            B.strictObject([
                ("start", B.described(B.integer(.count), "the index of the list's first child among all its rows")),
                ("end", B.described(B.integer(.count), "one past the index of its last child")),
                ("total", B.described(B.integer(.count), "how many rows the list has (messages, load earlier, images, unsent messages)")),
            ])
        }

        /// The own fields an `update` may set (a node's members but `id` and `children`).
        static var nodeFields: [(String, JSONValue)] {
            let int = B.type("integer")
            return [
                ("role", B.enumeration(SemanticNode.Role.allCases.map(\.rawValue))), ("label", B.string), ("value", B.nullableString),
                ("placeholder", B.nullableString), ("visible", B.boolean), ("enabled", B.boolean), ("focused", B.boolean),
                ("accessibility_label", B.string), ("accessibility_value", B.nullableString), ("supported_actions", B.array(B.string)),
                ("bounds", B.strictObject([("x", int), ("y", int), ("width", int), ("height", int)])),
                ("scroll", B.orNull(scroll)), ("window", B.orNull(window)),
            ] + detailFields.map { ($0.0, B.orNull($0.1)) }
        }

        static var treeOp: JSONValue {
            let id = B.described(B.string, "a node id (unique within the tree)")
            return B.described(B.oneOf([
                B.strictObject([
                    ("op", B.const("splice")), ("parent", id), ("index", B.integer(.count)),
                    ("remove", B.described(B.array(B.string), "the ids of the children removed from index on, in order")),
                    ("insert", B.described(B.array(B.ref("tree_node")), "the nodes inserted at index, whole")),
                ], description: "Replace the children index ..< index + remove.length of parent by insert."),
                B.strictObject([("op", B.const("move")), ("id", id), ("parent", id), ("index", B.integer(.count))],
                               description: "Move the child id of parent to index among the other children."),
                B.strictObject([
                    ("op", B.const("update")), ("id", id),
                    ("set", B.described(B.strictObject(nodeFields, optional: Set(nodeFields.map(\.0))), "the node's own fields that changed, with their new values (scroll or window null: no longer there)")),
                ], description: "Set fields of the node id."),
                B.strictObject([
                    ("op", B.const("append")), ("id", id),
                    ("field", B.enumeration(["label", "value", "accessibility_label", "accessibility_value"])),
                    ("text", B.described(B.string, "appended to the field's string (null counts as empty)")),
                ], description: "Append text to a string field of the node id (a streamed reply)."),
                B.strictObject([
                    ("op", B.const("spans")), ("id", id),
                    ("keep", B.described(B.integer(.count), "how many of the node's spans stay, from the first (at most as many as it has)")),
                    ("spans", B.described(B.array(span), "the spans that follow the kept ones")),
                ], description: "The node id keeps its first keep spans and goes on with spans; its value and accessibility_value become the spans' texts joined (a streamed paragraph, library 0.7.0)."),
            ]), "One operation of jcode_mobile_tree_changes, keyed by node ids; applied in order.")
        }

        static var treeChangesAnswer: JSONValue {
            let since = B.described(["type": "integer", "minimum": 0], "since_revision exactly as passed")
            return B.described(B.oneOf([
                B.strictObject([("ok", B.const(true)), ("revision", revision), ("since", since), ("ops", B.array(B.ref("tree_op")))]),
                B.strictObject([("ok", B.const(true)), ("revision", revision), ("since", since), ("resync", B.const(true)), ("tree", B.ref("tree_node"))]),
                B.ref("error_answer"),
            ]), "The answer of jcode_mobile_tree_changes: the operations from the tree of since to this revision's, or a resync with the whole tree.")
        }

        // MARK: - The state

        /// Each section's schema is declared with the section (`StateSection.all`).
        static var state: JSONValue {
            let members: [(String, JSONValue)] = StateSection.all.map { ($0.name, $0.schema()) }
            return B.strictObject(members, description: "The app's domain state (AppState.writeJSON): every section, in the order written.")
        }

        // MARK: - The snapshot

        /// Each member's schema is declared with the member (`Snapshot.members`).
        static var snapshot: JSONValue {
            B.strictObject(Snapshot.members.map { ($0.name, $0.schema()) },
                           description: "What survives a restart (Snapshot.json); pass it to jcode_mobile_app_new({\"snapshot\":…}). docs/LIFECYCLE.md has the versioning rule.")
        }
    }
}
