import JcodeMobileJSON
import JcodeMobileWire

/// One request to the jcode gateway, written as one NDJSON line. Request ids
/// increase from 1 on every connection (the connection feature owns the counter).
public enum GatewayRequest: Equatable, Sendable {
    case subscribe(workingDir: String, targetSessionID: String?, clientInstanceID: String?)
    case getHistory
    /// `systemReminder`: what the agent reads as this turn's system
    /// reminder; jcode marks a reload recovery delivered only when it equals
    /// the continuation (`reload_recovery.rs`), and the TUI sends it with an
    /// empty `content`.
    case message(content: String, images: [ImagePayload], systemReminder: String? = nil)
    case cancel
    case softInterrupt(content: String, images: [ImagePayload], urgent: Bool)
    case cancelSoftInterrupts
    case resumeSession(sessionID: String, clientInstanceID: String?)
    case setModel(String)
    case setReasoningEffort(String)
    case compact
    case renameSession(title: String?)
    case clear
    case permissionResponse(requestID: String, approved: Bool, remember: Bool)
    case stdinResponse(requestID: String, input: String)
    /// Keep-alive: the server answers `pong` with the same id.
    case ping
    /// Older messages of a compacted session: the server answers with the
    /// whole transcript showing `visibleMessages` of the compacted ones.
    case getCompactedHistory(visibleMessages: Int)

    /// An image sent with a message, as the gateway expects it: a
    /// `[media_type, data_base64]` pair.
    public struct ImagePayload: Equatable, Sendable {
        public var mediaType: String
        public var dataBase64: String
        public init(mediaType: String, dataBase64: String) {
            self.mediaType = mediaType
            self.dataBase64 = dataBase64
        }
    }

    /// Every request type, by its wire name.
    public enum Kind: String, CaseIterable, Sendable {
        case subscribe
        case getHistory = "get_history"
        case message, cancel
        case softInterrupt = "soft_interrupt"
        case cancelSoftInterrupts = "cancel_soft_interrupts"
        case resumeSession = "resume_session"
        case setModel = "set_model"
        case setReasoningEffort = "set_reasoning_effort"
        case compact
        case renameSession = "rename_session"
        case clear
        case permissionResponse = "permission_response"
        case stdinResponse = "stdin_response"
        case ping
        case getCompactedHistory = "get_compacted_history"

        /// The declaration of this kind (every kind has exactly one; a test checks).
        public var spec: RequestSpec { Kind.table[self]! }

        private static let table: [Kind: RequestSpec] = {
            var table: [Kind: RequestSpec] = [:]
            for spec in GatewayRequest.specs { table[spec.kind] = spec }
            return table
        }()
    }

    /// The request's kind and the values of its declared fields after `id`,
    /// in declared order: the one place a request meets its declaration.
    var encoded: EncodedMessage<Kind> {
        switch self {
        case .subscribe(let workingDir, let target, let instance):
            return EncodedMessage(.subscribe, [.string(workingDir), .optional(target), .optional(instance)])
        case .getHistory: return EncodedMessage(.getHistory)
        case .message(let content, let images, let reminder):
            return EncodedMessage(.message, [.string(content), Self.encoded(images), .optional(reminder)])
        case .cancel: return EncodedMessage(.cancel)
        case .softInterrupt(let content, let images, let urgent):
            return EncodedMessage(.softInterrupt, [.string(content), Self.encoded(images), .bool(urgent)])
        case .cancelSoftInterrupts: return EncodedMessage(.cancelSoftInterrupts)
        case .resumeSession(let id, let instance): return EncodedMessage(.resumeSession, [.string(id), .optional(instance)])
        case .setModel(let model): return EncodedMessage(.setModel, [.string(model)])
        case .setReasoningEffort(let effort): return EncodedMessage(.setReasoningEffort, [.string(effort)])
        case .compact: return EncodedMessage(.compact)
        case .renameSession(let title): return EncodedMessage(.renameSession, [.optional(title)])
        case .clear: return EncodedMessage(.clear)
        case .permissionResponse(let requestID, let approved, let remember):
            return EncodedMessage(.permissionResponse, [.string(requestID), .bool(approved), .bool(remember)])
        case .stdinResponse(let requestID, let input): return EncodedMessage(.stdinResponse, [.string(requestID), .string(input)])
        case .ping: return EncodedMessage(.ping)
        case .getCompactedHistory(let visible): return EncodedMessage(.getCompactedHistory, [.plain(.int(Int64(visible)))])
        }
    }

    /// Images as `[media_type, data_base64]` pairs; absent when there are none.
    private static func encoded(_ images: [ImagePayload]) -> EncodedMessage<Kind>.Value {
        images.isEmpty ? .absent : .plain(.array(images.map { .array([.string($0.mediaType), .string($0.dataBase64)]) }))
    }

    public var kind: Kind { encoded.kind }
    public var type: String { kind.rawValue }

    /// Whether the line carries something that must not reach the logs (an
    /// answer typed into a tool's prompt may be a password): a secret field
    /// of its declaration.
    public var containsSecret: Bool {
        let encoded = self.encoded
        return encoded.hasSecret(encoded.kind.spec.fields)
    }

    /// `{"id":…,"type":…, fields…}` — the line sent on the socket.
    public func line(id: Int) -> String {
        let encoded = self.encoded
        var object = JSONObject(capacity: 2 + encoded.values.count)
        object.append("id", .int(Int64(id)))
        object.append("type", .string(encoded.kind.rawValue))
        object.entries.append(contentsOf: encoded.fields(encoded.kind.spec.fields, redacted: false).entries)
        return JSONValue.object(object).jsonString
    }

    /// Every request: encoding, redaction and docs. Each line also carries
    /// `id` (first) and `type`.
    public static let specs: [RequestSpec] = [
        RequestSpec(.subscribe,
                    doc: "First line on a connection (today's jcode refuses any other first line, and a subscribe without an absolute working_dir); resumes target_session_id when given. client_instance_id is the device id, stable per install (absent until the install has one).",
                    fields: [FieldSpec("working_dir", .string), .optional("target_session_id", .string), .optional("client_instance_id", .string)]),
        RequestSpec(.getHistory, doc: "Ask for the session's transcript (answered by history)."),
        RequestSpec(.message, doc: "Send a user message; images are [media_type, data_base64] pairs. Continuing a turn the server stopped sends an empty content and the continuation as system_reminder, as jcode's TUI does.",
                    fields: [FieldSpec("content", .string), .optional("images", .array(.array(.string))), .optional("system_reminder", .string)]),
        RequestSpec(.cancel, doc: "Cancel the running turn."),
        RequestSpec(.softInterrupt, doc: "Inject a message into the running turn; images as for message.",
                    fields: [FieldSpec("content", .string), .optional("images", .array(.array(.string))), FieldSpec("urgent", .boolean)]),
        RequestSpec(.cancelSoftInterrupts, doc: "Withdraw queued soft interrupts."),
        RequestSpec(.resumeSession, doc: "Switch to another session (answered by history, then done).",
                    fields: [FieldSpec("session_id", .string), .optional("client_instance_id", .string)]),
        RequestSpec(.setModel, doc: "Switch model (answered by model_changed).", fields: [FieldSpec("model", .string)]),
        RequestSpec(.setReasoningEffort, doc: "Change reasoning effort (answered by reasoning_effort_changed).",
                    fields: [FieldSpec("effort", .string)]),
        RequestSpec(.compact, doc: "Compact the context (answered by compact_result)."),
        RequestSpec(.renameSession, doc: "Rename the session (answered by session_renamed).", fields: [.optional("title", .string)]),
        RequestSpec(.clear, doc: "Clear the conversation."),
        RequestSpec(.permissionResponse, doc: "Answer a permission_request. Not in today's jcode protocol: sent only on a connection on which a permission_request arrived.",
                    fields: [FieldSpec("request_id", .string), FieldSpec("approved", .boolean), FieldSpec("remember", .boolean)]),
        RequestSpec(.stdinResponse, doc: "Answer a stdin_request.",
                    fields: [FieldSpec("request_id", .string), FieldSpec("input", .string, secret: true)]),
        RequestSpec(.ping, doc: "Keep-alive, sent on a timer while connected in the foreground (answered by pong; docs/LIFECYCLE.md)."),
        RequestSpec(.getCompactedHistory, doc: "Ask for older messages of a compacted session: visible_messages of the compacted ones shown before the live tail (answered by compacted_history).",
                    fields: [FieldSpec("visible_messages", .integer(.count))]),
    ]
}

/// Declares one gateway request: its type and the fields after `id`.
public struct RequestSpec: Sendable {
    public let kind: GatewayRequest.Kind
    public var type: String { kind.rawValue }
    public let doc: String
    public let fields: [FieldSpec]
    /// Every line starts with the request id.
    public static let idField = FieldSpec("id", .integer(.id))

    public init(_ kind: GatewayRequest.Kind, doc: String, fields: [FieldSpec] = []) {
        self.kind = kind
        self.doc = doc
        self.fields = fields
    }

    /// The fields as documented: `id` first, then the declared ones.
    public var documentedFields: [FieldSpec] { [RequestSpec.idField] + fields }
}
