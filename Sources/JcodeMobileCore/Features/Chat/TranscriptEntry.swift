import JcodeMobileJSON

/// One bubble of the conversation.
public struct TranscriptEntry: Equatable, Sendable {
    public enum Role: String, Sendable, CaseIterable {
        case user, assistant, system
        /// The result of a task the agent ran in the background.
        case backgroundTask = "background_task"
    }

    /// Why the provider stopped a reply, when it was not a normal end.
    public enum StopReason: UInt8, Sendable, CaseIterable {
        case normal
        /// Cut at the output token limit: the reply is incomplete.
        case maxTokens
        /// The model refused.
        case refusal
        /// The provider's content filter stopped it.
        case contentFilter
        /// The provider paused a long turn.
        case pause
        /// A reason the app does not know.
        case other

        /// The provider's `stop_reason` (Anthropic, OpenAI and Gemini words).
        public init(provider raw: String?) {
            switch raw?.lowercased() {
            case nil, "", "end_turn", "stop", "tool_use", "tool_calls", "stop_sequence", "end", "completed", "finish":
                self = .normal
            case "max_tokens", "length", "max_output_tokens", "model_context_window_exceeded": self = .maxTokens
            case "refusal": self = .refusal
            case "content_filter", "safety", "recitation": self = .contentFilter
            case "pause_turn": self = .pause
            default: self = .other
            }
        }

        /// How the state JSON names it (nil for a normal end).
        public var wireName: String? {
            switch self {
            case .normal: return nil
            case .maxTokens: return "max_tokens"
            case .refusal: return "refusal"
            case .contentFilter: return "content_filter"
            case .pause: return "pause_turn"
            case .other: return "other"
            }
        }
    }

    // Stored in this order so an entry packs into 64 bytes: a transcript of
    // 100 000 entries costs its texts plus little more.
    public var text: String
    /// The model's reasoning, kept apart from the text.
    public var reasoning: String
    public var toolCalls: [ToolCall]
    /// Serial number, unique within the app's lifetime; `id` on the wire is `"m<serial>"`.
    public var serial: Int
    public var reasoningSecs: Double?
    public var role: Role
    /// Still receiving streamed output.
    public var isStreaming: Bool
    /// A soft interrupt the agent has not received yet.
    public var isQueued: Bool
    private var storedImageCount: UInt16
    /// How the provider ended this reply (declared last: the entry still packs into 64 bytes).
    public var stopReason: StopReason = .normal
    /// Number of images sent with the message.
    public var imageCount: Int {
        get { Int(storedImageCount) }
        set { storedImageCount = UInt16(clamping: newValue) }
    }

    public init(
        serial: Int, role: Role, text: String = "", reasoning: String = "", reasoningSecs: Double? = nil,
        toolCalls: [ToolCall] = [], isStreaming: Bool = false, isQueued: Bool = false, imageCount: Int = 0
    ) {
        self.serial = serial
        self.role = role
        self.text = text
        self.reasoning = reasoning
        self.reasoningSecs = reasoningSecs
        self.toolCalls = toolCalls
        self.isStreaming = isStreaming
        self.isQueued = isQueued
        self.storedImageCount = UInt16(clamping: imageCount)
    }

    public var id: String { "m" + String(serial) }

    /// Nothing worth showing: a placeholder a finished turn leaves behind.
    public var isEmpty: Bool { text.isEmpty && reasoning.isEmpty && toolCalls.isEmpty && imageCount == 0 }

    public func write(to w: inout JSONWriter) {
        w.objectStart()
        w.key("id"); w.string(id)
        w.key("role"); w.string(role.rawValue)
        w.key("text"); w.string(text)
        w.key("reasoning"); w.string(reasoning)
        w.key("reasoning_secs"); if let reasoningSecs { w.double(reasoningSecs) } else { w.null() }
        w.key("tool_calls")
        w.arrayStart()
        for call in toolCalls { call.write(to: &w) }
        w.arrayEnd()
        w.key("is_streaming"); w.bool(isStreaming)
        w.key("is_queued"); w.bool(isQueued)
        w.key("image_count"); w.int(imageCount)
        w.key("stop_reason"); w.string(stopReason.wireName)
        w.objectEnd()
    }

    public var json: JSONValue {
        var o = JSONObject(capacity: 10)
        o.append("id", .string(id))
        o.append("role", .string(role.rawValue))
        o.append("text", .string(text))
        o.append("reasoning", .string(reasoning))
        o.append("reasoning_secs", .from(reasoningSecs))
        o.append("tool_calls", .array(toolCalls.map(\.json)))
        o.append("is_streaming", .bool(isStreaming))
        o.append("is_queued", .bool(isQueued))
        o.append("image_count", .int(Int64(imageCount)))
        o.append("stop_reason", .from(stopReason.wireName))
        return .object(o)
    }
}

/// A tool the agent called, with its streamed input and its result.
public struct ToolCall: Equatable, Sendable {
    public enum Status: String, Sendable, CaseIterable {
        /// Input is still streaming in.
        case pending
        case running
        case succeeded
        case failed
        /// The turn was interrupted before the tool reported a result.
        case interrupted
    }

    public var id: String
    public var name: String
    public var input: String
    public var output: String
    public var status: Status
    public var error: String?

    public init(id: String, name: String, input: String = "", output: String = "", status: Status, error: String? = nil) {
        self.id = id
        self.name = name
        self.input = input
        self.output = output
        self.status = status
        self.error = error
    }

    func write(to w: inout JSONWriter) {
        w.objectStart()
        w.key("id"); w.string(id)
        w.key("name"); w.string(name)
        w.key("input"); w.string(input)
        w.key("output"); w.string(output)
        w.key("status"); w.string(status.rawValue)
        w.key("error"); w.string(error)
        w.objectEnd()
    }

    public var json: JSONValue {
        var o = JSONObject(capacity: 6)
        o.append("id", .string(id))
        o.append("name", .string(name))
        o.append("input", .string(input))
        o.append("output", .string(output))
        o.append("status", .string(status.rawValue))
        o.append("error", .from(error))
        return .object(o)
    }
}
