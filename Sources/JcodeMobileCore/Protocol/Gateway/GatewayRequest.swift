/// One request to the jcode gateway, written as one NDJSON line. Request ids
/// increase from 1 on every connection (the connection feature owns the counter).
public enum GatewayRequest: Equatable, Sendable {
    case subscribe(targetSessionID: String?)
    case getHistory
    case message(content: String, images: [ImagePayload])
    case cancel
    case softInterrupt(content: String, urgent: Bool)
    case cancelSoftInterrupts
    case ping
    case resumeSession(sessionID: String)
    case setModel(String)
    case setReasoningEffort(String)
    case compact
    case renameSession(title: String?)
    case clear
    case permissionResponse(requestID: String, approved: Bool, remember: Bool)
    case stdinResponse(requestID: String, input: String)

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

    public var type: String {
        switch self {
        case .subscribe: return "subscribe"
        case .getHistory: return "get_history"
        case .message: return "message"
        case .cancel: return "cancel"
        case .softInterrupt: return "soft_interrupt"
        case .cancelSoftInterrupts: return "cancel_soft_interrupts"
        case .ping: return "ping"
        case .resumeSession: return "resume_session"
        case .setModel: return "set_model"
        case .setReasoningEffort: return "set_reasoning_effort"
        case .compact: return "compact"
        case .renameSession: return "rename_session"
        case .clear: return "clear"
        case .permissionResponse: return "permission_response"
        case .stdinResponse: return "stdin_response"
        }
    }

    /// Whether the line carries something that must not reach the logs (an
    /// answer typed into a tool's prompt may be a password).
    public var containsSecret: Bool {
        if case .stdinResponse = self { return true }
        return false
    }

    /// `{"id":…,"type":…, fields…}` — the line sent on the socket.
    public func line(id: Int) -> String {
        var object = JSONObject(capacity: 6)
        object.append("id", .int(Int64(id)))
        object.append("type", .string(type))
        switch self {
        case .subscribe(let target):
            if let target { object.append("target_session_id", .string(target)) }
        case .message(let content, let images):
            object.append("content", .string(content))
            if !images.isEmpty {
                object.append(
                    "images", .array(images.map { .array([.string($0.mediaType), .string($0.dataBase64)]) }))
            }
        case .softInterrupt(let content, let urgent):
            object.append("content", .string(content))
            object.append("urgent", .bool(urgent))
        case .resumeSession(let sessionID):
            object.append("session_id", .string(sessionID))
        case .setModel(let model):
            object.append("model", .string(model))
        case .setReasoningEffort(let effort):
            object.append("effort", .string(effort))
        case .renameSession(let title):
            if let title { object.append("title", .string(title)) }
        case .permissionResponse(let requestID, let approved, let remember):
            object.append("request_id", .string(requestID))
            object.append("approved", .bool(approved))
            object.append("remember", .bool(remember))
        case .stdinResponse(let requestID, let input):
            object.append("request_id", .string(requestID))
            object.append("input", .string(input))
        case .getHistory, .cancel, .cancelSoftInterrupts, .ping, .compact, .clear:
            break
        }
        return JSONValue.object(object).jsonString
    }

    /// Documentation of every request, for docs/ABI.md and the schema.
    public static let specs: [EffectSpec] = [
        EffectSpec("subscribe", doc: "First line on a connection; resumes target_session_id when given.",
                   fields: [FieldSpec("id", .integer), .optional("target_session_id", .string)]),
        EffectSpec("get_history", doc: "Ask for the session's transcript (answered by history).", fields: [FieldSpec("id", .integer)]),
        EffectSpec("message", doc: "Send a user message; images are [media_type, data_base64] pairs.",
                   fields: [FieldSpec("id", .integer), FieldSpec("content", .string), .optional("images", .array(.array(.string)))]),
        EffectSpec("cancel", doc: "Cancel the running turn.", fields: [FieldSpec("id", .integer)]),
        EffectSpec("soft_interrupt", doc: "Inject a message into the running turn.",
                   fields: [FieldSpec("id", .integer), FieldSpec("content", .string), FieldSpec("urgent", .boolean)]),
        EffectSpec("cancel_soft_interrupts", doc: "Withdraw queued soft interrupts.", fields: [FieldSpec("id", .integer)]),
        EffectSpec("ping", doc: "Keep-alive (answered by pong).", fields: [FieldSpec("id", .integer)]),
        EffectSpec("resume_session", doc: "Switch to another session.", fields: [FieldSpec("id", .integer), FieldSpec("session_id", .string)]),
        EffectSpec("set_model", doc: "Switch model (answered by model_changed).", fields: [FieldSpec("id", .integer), FieldSpec("model", .string)]),
        EffectSpec("set_reasoning_effort", doc: "Change reasoning effort (answered by reasoning_effort_changed).",
                   fields: [FieldSpec("id", .integer), FieldSpec("effort", .string)]),
        EffectSpec("compact", doc: "Compact the context (answered by compact_result).", fields: [FieldSpec("id", .integer)]),
        EffectSpec("rename_session", doc: "Rename the session (answered by session_renamed).",
                   fields: [FieldSpec("id", .integer), .optional("title", .string)]),
        EffectSpec("clear", doc: "Clear the conversation.", fields: [FieldSpec("id", .integer)]),
        EffectSpec("permission_response", doc: "Answer a permission_request.",
                   fields: [FieldSpec("id", .integer), FieldSpec("request_id", .string), FieldSpec("approved", .boolean), FieldSpec("remember", .boolean)]),
        EffectSpec("stdin_response", doc: "Answer a stdin_request.",
                   fields: [FieldSpec("id", .integer), FieldSpec("request_id", .string), FieldSpec("input", .string, secret: true)]),
    ]
}
