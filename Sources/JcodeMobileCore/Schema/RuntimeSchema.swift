import JcodeMobileJSON
import JcodeMobileWire

/// The version of this library, "MAJOR.MINOR.PATCH": the one constant the
/// schema's `$id` (and anything else in the core that names the version) reads.
/// `jcode_mobile_version()` (Sources/JcodeMobileFFI) must say the same.
public enum LibraryVersion {
    public static let string = "0.7.0"
}

/// The runtime schema (`jcode_mobile_schema`): a JSON Schema 2020-12
/// document describing every JSON value the library reads or writes.
///
/// It is generated from the same declarations the core decodes and encodes
/// with, so it cannot drift from them:
/// - actions, platform events, server events, the options of `app_new` and
///   `subscribe`: from their `WireUnion`s / `FieldSpec` lists (the decoders
///   read exactly these declarations);
/// - effects, gateway requests and stream events: from `Effect.specs`,
///   `GatewayRequest.specs` and `StreamEvent.specs`, which drive their
///   encoders (`EncodedMessage`);
/// - the state, the tree, log entries, change records, patch operations, the
///   snapshot, the error object and the answers of every function are
///   written by hand-written encoders (`StateSections.swift`, the features'
///   `json`, `SemanticNode.write`, `LogEntry.write`, `JSONPatchOp` and
///   `TranscriptChange.write`, `Snapshot.json`, `CoreError.json`,
///   `JcodeMobileApp`'s documents). Their schema is declared by hand next to
///   this file (`RuntimeSchema+Outputs.swift`), or next to the encoder where
///   one table drives both (the state's sections, `StateSection.all`; the
///   snapshot's members), from the same enums (`Screen`,
///   `ConnectionState.Phase`, …) where there are some.
///
/// What is *read* is described as the core reads it: unknown extra members
/// are allowed in actions, platform events and server events (the core
/// ignores them), and an optional member may be `null`. The options of
/// `app_new` and `subscribe` are strict: the core refuses a member it does
/// not know (and a null `snapshot` or `kinds`, so no member may be null). What is *written* is strict: every object has
/// `additionalProperties: false` and `required` lists every member that is
/// always written. An encoder that adds, drops or retypes a member therefore
/// produces output the schema rejects, and the tests (SchemaTests, and every
/// test that drives the app through `AppDriver`) validate real outputs
/// against it: that strictness plus those tests is what keeps the
/// hand-written encoders and this description together.
public enum RuntimeSchema {
    public static let schemaDialect = "https://json-schema.org/draft/2020-12/schema"

    /// The whole document, built once.
    public static let document: JSONValue = build()

    /// `{"ok":true,"schema":{…}}`, serialised once: what `jcode_mobile_schema` copies out.
    public static let answerBytes: [UInt8] = {
        var o = JSONObject(capacity: 2)
        o.append("ok", true)
        o.append("schema", document)
        return JSONValue.object(o).jsonBytes
    }()

    /// The `$defs` of the document, in order.
    public static var definitions: JSONObject { document["$defs"]?.objectValue ?? JSONObject() }

    /// The C functions and the definitions of their input and answer (`x-functions`).
    public struct Function: Sendable {
        public let name: String
        /// The `$defs` name of the JSON the function takes, if it takes JSON.
        public let input: String?
        /// The `$defs` name of the JSON object it returns, if it returns one.
        public let answer: String?
        /// What it returns when that is not a JSON answer, or what it delivers besides.
        public let note: String?
        /// The `$defs` name of the events a subscription delivers.
        public let events: String?

        init(_ name: String, input: String? = nil, answer: String? = nil, events: String? = nil, note: String? = nil) {
            self.name = name
            self.input = input
            self.answer = answer
            self.note = note
            self.events = events
        }
    }

    public static let functions: [Function] = [
        Function("jcode_mobile_app_new", input: "app_options",
                 note: "returns a handle, or NULL; why it failed: jcode_mobile_last_error (last_error_answer)"),
        Function("jcode_mobile_dispatch", input: "action", answer: "dispatch_answer"),
        Function("jcode_mobile_platform_event", input: "platform_event", answer: "dispatch_answer"),
        Function("jcode_mobile_state", answer: "state_answer"),
        Function("jcode_mobile_tree", answer: "tree_answer"),
        Function("jcode_mobile_logs", answer: "logs_answer"),
        Function("jcode_mobile_changes", answer: "changes_answer"),
        Function("jcode_mobile_tree_changes", answer: "tree_changes_answer"),
        Function("jcode_mobile_snapshot", answer: "snapshot_answer"),
        Function("jcode_mobile_last_error", answer: "last_error_answer"),
        Function("jcode_mobile_subscribe", input: "subscribe_options", events: "stream_event",
                 note: "starts a subscription to the event stream; its events are stream_event objects"),
        Function("jcode_mobile_subscribe_callback", events: "stream_event",
                 note: "delivers each stream_event of a subscription to a callback"),
        Function("jcode_mobile_next_event", answer: "next_event_answer"),
        Function("jcode_mobile_schema", answer: "schema_answer"),
        Function("jcode_mobile_hit_test", answer: "hit_test_answer"),
        Function("jcode_mobile_screenshot_svg", answer: "screenshot_answer"),
    ]

    // MARK: - Building

    private static func build() -> JSONValue {
        var defs = JSONObject(capacity: 256)
        typealias B = SchemaBuilder

        // Unions: one definition per member, then the union itself.
        func union(_ name: String, _ members: [(type: String, schema: JSONValue)], description: String) {
            for member in members { defs.append("\(name).\(member.type)", member.schema) }
            var o = JSONObject(capacity: 2)
            o.append("description", .string(description))
            o.append("oneOf", .array(members.map { B.ref("\(name).\($0.type)") }))
            defs.append(name, .object(o))
        }

        union("action", Action.wire.members.map { spec in
            (spec.type, B.member(type: spec.type, doc: spec.doc, fields: spec.fields, mode: .input,
                                 example: ABIReference.exampleValue(type: spec.type, spec.fields)))
        }, description: "What the person wants (jcode_mobile_dispatch). Unknown extra members are ignored.")

        union("platform_event", PlatformEvent.wire.members.map { spec in
            (spec.type, B.member(type: spec.type, doc: spec.doc, fields: spec.fields, mode: .input,
                                 example: ABIReference.exampleValue(type: spec.type, spec.fields)))
        }, description: "What the platform did or saw (jcode_mobile_platform_event). Unknown extra members are ignored.")

        let effectID = FieldSpec("effect_id", .integer(.id), doc: "quoted by the platform event that answers the effect")
        union("effect", Effect.specs.map { spec in
            var doc = spec.doc
            if !spec.answeredBy.isEmpty { doc += " Answered by " + spec.answeredBy.map { "`\($0)`" }.joined(separator: ", ") + "." }
            var member = B.member(type: spec.type, doc: doc, leading: [effectID], fields: spec.fields, mode: .output,
                                  example: ABIReference.exampleValue(type: spec.type, spec.fields, typeAfterFirst: true))
            if !spec.answeredBy.isEmpty, case .object(var o) = member {
                o["x-answered-by"] = .array(spec.answeredBy.map(JSONValue.string))
                member = .object(o)
            }
            if spec.kind == .websocketSend, case .object(var o) = member, case .object(var properties)? = o["properties"],
               case .object(var line)? = properties["line"] {
                // The line is one gateway request (an annotation: validators do not look inside strings).
                line["contentMediaType"] = "application/json"
                line["contentSchema"] = B.ref("gateway_request")
                properties["line"] = .object(line)
                o["properties"] = .object(properties)
                member = .object(o)
            }
            return (spec.type, member)
        }, description: "What the host must do, as the dispatch report and effects_requested carry it. Strict.")

        union("gateway_request", GatewayRequest.specs.map { spec in
            (spec.type, B.member(type: spec.type, doc: spec.doc, leading: [RequestSpec.idField], fields: spec.fields, mode: .output,
                                 example: ABIReference.exampleValue(type: spec.type, spec.documentedFields, typeAfterFirst: true)))
        }, description: "One line the core sends on the socket (the `line` of websocket_send). Strict.")

        union("server_event", ServerEvent.wire.members.map { spec in
            (spec.type, B.member(type: spec.type, doc: spec.doc, fields: spec.fields, mode: .input,
                                 example: ABIReference.exampleValue(type: spec.type, spec.fields)))
        }, description: "One event from the jcode server (inside websocket_event). Events of other types are logged and ignored; unknown extra members are ignored.")

        union("stream_event", StreamEvent.specs.map { spec in
            var doc = spec.doc
            if let kind = spec.kind { doc += " Kind: \(kind.rawValue)." }
            return (spec.type, B.member(type: spec.type, doc: doc, fields: spec.fields, mode: .output,
                                        example: ABIReference.exampleValue(type: spec.type, spec.fields)))
        }, description: "One event of the event stream (jcode_mobile_subscribe, jcode_mobile_next_event). Strict.")

        // Options.
        defs.append("app_options", B.described(strictInput(AppOptions.fields),
            "The argument of jcode_mobile_app_new (NULL, \"\" and {} are a first launch). An unknown member is refused (invalid_scenario)."))
        defs.append("subscribe_options", B.described(strictInput(SubscribeOptions.fields),
            "The options of jcode_mobile_subscribe (NULL, \"\" and {} are the defaults). An unknown member is refused (invalid_field)."))

        // What the hand-written encoders write.
        for (name, schema) in Outputs.definitions { defs.append(name, schema) }

        var functionsMap = JSONObject(capacity: functions.count)
        for f in functions {
            var o = JSONObject(capacity: 4)
            if let input = f.input { o.append("input", .string("#/$defs/" + input)) }
            if let answer = f.answer { o.append("answer", .string("#/$defs/" + answer)) }
            if let events = f.events { o.append("events", .string("#/$defs/" + events)) }
            if let note = f.note { o.append("note", .string(note)) }
            functionsMap.append(f.name, .object(o))
        }

        var root = JSONObject(capacity: 6)
        root.append("$schema", .string(schemaDialect))
        root.append("$id", .string("urn:jcode-mobile:schema:" + LibraryVersion.string))
        root.append("title", .string("jcode mobile core \(LibraryVersion.string): every JSON value of the C ABI"))
        root.append("description", "Every action, platform event, effect, gateway request, server event, stream event, state, tree, change record, log entry, snapshot, error and answer of the library. x-functions maps each C function to the definitions of its input and answer.")
        root.append("x-functions", .object(functionsMap))
        root.append("$defs", .object(defs))
        return .object(root)
    }

    /// Options objects: only the declared members (the core refuses any
    /// other), and no `null` for them (the core refuses a null `snapshot`
    /// or `kinds`; describing every member without null keeps it simple).
    private static func strictInput(_ fields: [FieldSpec]) -> JSONValue {
        SchemaBuilder.object(fields, mode: .output)
    }
}

extension ErrorCode {
    /// What the code means, as the schema and the reference say it.
    public var meaning: String {
        switch self {
        case .nullArgument: return "a required pointer argument was NULL (`field` names it)"
        case .invalidHandle: return "the handle is freed, never issued, or not a handle"
        case .invalidUTF8: return "the input is not valid UTF-8 (`offset`: first bad byte)"
        case .invalidJSON: return "the input is not valid JSON (`offset`: where parsing stopped)"
        case .tooLarge: return "the input is larger than 16 MiB"
        case .tooDeep: return "the input nests deeper than 128 levels"
        case .unknownType: return "the `type` is not an action (or platform event) the core knows"
        case .invalidField: return "a field is missing or has the wrong type or value (`field`: its path)"
        case .invalidScenario: return "`app_new`: unknown scenario or option, a non-object, or both a scenario and a snapshot; `load_scenario`: unknown name"
        case .invalidSnapshot: return "`app_new`: the snapshot is not an object or has no integer `version`"
        case .unsupportedSnapshot: return "`app_new`: the snapshot's `version` is not one this library reads (a newer library wrote it); keep it"
        case .outOfMemory: return "the answer (or the tokens of the input) could not be allocated; the app stays usable (a `dispatch` or `platform_event` whose report failed did apply its input: its effects are lost)"
        case .internal: return "a bug in the library, reported instead of crashing"
        }
    }
}
