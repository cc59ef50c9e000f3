import JcodeMobileJSON
import JcodeMobileWire

/// One event from the jcode gateway. The core interprets every one of them;
/// hosts never have to.
public enum ServerEvent: Equatable, Sendable {
    case ack(id: Int?)
    case textDelta(String)
    case textReplace(String)
    case reasoningDelta(String)
    case reasoningDone(durationSecs: Double?)
    case toolStart(id: String, name: String)
    case toolInput(delta: String)
    case toolExec(id: String, name: String)
    case toolDone(id: String, name: String, output: String, error: String?)
    /// The visible message is complete; `stopReason` is the provider's
    /// (`max_tokens` means the reply was cut at the output limit).
    case messageEnd(stopReason: String?)
    /// The provider ended the turn without visible output (a refusal).
    case providerGuardrail(stopReason: String?, message: String)
    case done(id: Int?)
    case interrupted
    case error(id: Int?, message: String, retryAfterSecs: Int?)
    case tokens(TokenUsage)
    case statusDetail(String)
    case connectionPhase(String)
    case retryRollback(attempt: Int, max: Int)
    case softInterruptInjected(content: String, displayRole: String?, point: String?, toolsSkipped: Int?)
    case state(id: Int?, sessionID: String?, messageCount: Int?, isProcessing: Bool?)
    case session(sessionID: String)
    case sessionRenamed(sessionID: String, displayTitle: String)
    case history(History)
    case modelChanged(id: Int?, model: String, providerName: String?, error: String?)
    case reasoningEffortChanged(id: Int?, effort: String?, error: String?)
    case availableModelsUpdated(models: [String], providerModel: String?, providerName: String?)
    case compactResult(id: Int?, message: String, success: Bool)
    case compaction(trigger: String, tokensSaved: Int?)
    case notification(AgentNotification)
    /// The transport the provider stream uses (`websocket`, `https/sse`).
    case connectionType(String)
    /// Which provider a router sent the request to.
    case upstreamProvider(String)
    /// A step of a server update (`success` nil while it runs).
    case reloadProgress(step: String, message: String, success: Bool?)
    /// An event of today's protocol the app does not show (see docs/PROTOCOL.md):
    /// recognised and logged, nothing else.
    case loggedOnly(type: String)
    case reloading(newSocket: String?)
    case sessionCloseRequested(reason: String)
    case permissionRequest(PermissionRequest)
    case stdinRequest(StdinRequest)
    case pong(id: Int?)
    /// The answer to `get_compacted_history`: the whole transcript with more
    /// of the compacted messages shown.
    case compactedHistory(CompactedHistory)
    /// Images made during the live turn, anchored like `history.images`.
    case sidePaneImages(sessionID: String, images: [HistoryImage])
    /// A provider-native image generation call finished: the file is on the
    /// server (`path`); its pixels come with `side_pane_images`.
    case generatedImage(id: String, path: String, outputFormat: String, revisedPrompt: String?)

    /// `compacted_history`: more of a compacted session's older messages.
    public struct CompactedHistory: Equatable, Sendable {
        public var requestID: Int?
        public var sessionID: String
        public var messages: [History.Message]
        public var images: [HistoryImage]
        /// Compacted messages in all, shown in this answer, and still hidden.
        public var total: Int
        public var visible: Int
        public var remaining: Int
    }

    /// `history.reload_recovery`: the server asks the client to continue the
    /// turn a reload or a lost client interrupted.
    public struct ReloadRecovery: Equatable, Sendable {
        public var reconnectNotice: String?
        public var continuationMessage: String?
    }

    /// The server's authoritative view of a session.
    public struct History: Equatable, Sendable {
        /// The request it answers (`get_history`, `subscribe`, `resume_session`), when the server names one.
        public var requestID: Int? = nil
        public var sessionID: String
        public var messages: [Message]
        public var providerName: String?
        public var providerModel: String?
        public var availableModels: [String]?
        public var allSessions: [SessionSummary]?
        public var totalTokens: TokenUsage?
        public var serverVersion: String?
        public var displayTitle: String?
        public var reasoningEffort: String?
        public var isProcessing: Bool?
        /// The session stopped mid-turn (the server crashed or lost the client).
        public var wasInterrupted: Bool?
        /// Images of the transcript, anchored to a tool call or a user prompt.
        public var images: [HistoryImage]
        /// The server's directive to continue an interrupted turn.
        public var reloadRecovery: ReloadRecovery? = nil
        /// The tool a client of the session is running now (`activity.current_tool_name`).
        public var currentToolName: String? = nil

        public struct Message: Equatable, Sendable {
            public var role: String
            public var content: String
            public var toolCalls: [String]
            public var toolData: ToolData?
        }

        public struct ToolData: Equatable, Sendable {
            public var id: String
            public var name: String
            public var input: String
            public var output: String?
            public var error: String?
        }
    }

    /// Every gateway event the core understands: decoding and docs. Events of
    /// other types are logged and otherwise ignored.
    public static let wire = WireUnion<ServerEvent>("server event", specs)

    private static let id = FieldSpec.optional("id", .integer(.serverID), doc: "the request id this answers")

    static let toolDataFields: [FieldSpec] = [
        FieldSpec("id", .string), FieldSpec("name", .string), .optional("input", .any),
        .optional("output", .any), .optional("error", .string),
    ]
    static let historyMessageFields: [FieldSpec] = [
        FieldSpec("role", .string), .optional("content", .any), .optional("tool_calls", .array(.string)),
        .optional("tool_data", .record(toolDataFields)),
    ]

    static let specs: [MessageSpec<ServerEvent>] = [
        MessageSpec("ack", doc: "A request was accepted.", fields: [id]) { r throws(CoreError) in
            .ack(id: try r.optionalInt("id"))
        },
        // The three streamed text events: their type and member are the
        // hot path's (`StreamedText`, App/StreamedFrames.swift), declared once.
        MessageSpec(StreamedText.Kind.textDelta.name, doc: "More assistant text.", fields: [StreamedText.textField]) {
            r throws(CoreError) in .textDelta(try r.string(StreamedText.textMember))
        },
        MessageSpec(
            StreamedText.Kind.textReplace.name, doc: "Replaces the streamed text of the current entry.", fields: [StreamedText.textField]
        ) { r throws(CoreError) in .textReplace(try r.string(StreamedText.textMember)) },
        MessageSpec(StreamedText.Kind.reasoningDelta.name, doc: "More reasoning (kept apart from text).", fields: [StreamedText.textField]) {
            r throws(CoreError) in .reasoningDelta(try r.string(StreamedText.textMember))
        },
        MessageSpec("reasoning_done", doc: "Reasoning finished.", fields: [.optional("duration_secs", .number)]) {
            r throws(CoreError) in
            // A duration the app cannot show (negative, infinite) is treated as absent.
            let secs = try r.optionalDouble("duration_secs").flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
            return .reasoningDone(durationSecs: secs)
        },
        MessageSpec("tool_start", doc: "A tool call began.", fields: [FieldSpec("id", .string), FieldSpec("name", .string)]) {
            r throws(CoreError) in .toolStart(id: try r.string("id"), name: try r.string("name"))
        },
        MessageSpec(
            "tool_input", doc: "More input for the latest tool call.",
            fields: [FieldSpec("delta", .string), .optional("id", .string)]
        ) { r throws(CoreError) in
            _ = try r.optionalString("id")
            return .toolInput(delta: try r.string("delta"))
        },
        MessageSpec("tool_exec", doc: "A tool call is running.", fields: [FieldSpec("id", .string), FieldSpec("name", .string)]) {
            r throws(CoreError) in .toolExec(id: try r.string("id"), name: try r.string("name"))
        },
        MessageSpec(
            "tool_done", doc: "A tool call finished; error set means it failed.",
            fields: [
                FieldSpec("id", .string), FieldSpec("name", .string), .optional("output", .any),
                .optional("error", .string),
            ]
        ) { r throws(CoreError) in
            .toolDone(
                id: try r.string("id"), name: try r.string("name"), output: try r.optionalText("output") ?? "",
                error: try r.optionalString("error"))
        },
        MessageSpec(
            "message_end", doc: "The current assistant entry is complete; a stop_reason other than a normal end is shown on it.",
            fields: [.optional("stop_reason", .string)]
        ) { r throws(CoreError) in .messageEnd(stopReason: try r.optionalString("stop_reason")) },
        MessageSpec(
            "provider_guardrail", doc: "The provider ended the turn without visible output (e.g. a refusal); shown as a notice entry.",
            fields: [.optional("stop_reason", .string), FieldSpec("message", .string)]
        ) { r throws(CoreError) in
            .providerGuardrail(stopReason: try r.optionalString("stop_reason"), message: try r.string("message"))
        },
        MessageSpec("done", doc: "The turn finished.", fields: [id]) { r throws(CoreError) in
            .done(id: try r.optionalInt("id"))
        },
        MessageSpec("interrupted", doc: "The turn was interrupted.") { _ throws(CoreError) in .interrupted },
        MessageSpec(
            "error", doc: "A request or the turn failed.",
            fields: [id, FieldSpec("message", .string), .optional("retry_after_secs", .integer(IntegerRange.count.orAbsent), doc: "seconds to wait before retrying")]
        ) { r throws(CoreError) in
            .error(
                id: try r.optionalInt("id"), message: try r.string("message"),
                retryAfterSecs: try r.optionalInt("retry_after_secs"))
        },
        MessageSpec(
            "tokens", doc: "Token usage of the turn so far, with the prompt-cache figures when the provider reports them.",
            fields: [
                FieldSpec("input", .integer(.count)), FieldSpec("output", .integer(.count)), .optional("cache_read_input", .integer(.count)),
                .optional("cache_creation_input", .integer(.count)),
            ]
        ) { r throws(CoreError) in
            .tokens(
                TokenUsage(
                    input: try r.int("input"), output: try r.int("output"), cacheRead: try r.optionalInt("cache_read_input"),
                    cacheCreation: try r.optionalInt("cache_creation_input")))
        },
        MessageSpec("connection_type", doc: "The provider stream's transport (settings).", fields: [FieldSpec("connection", .string)]) {
            r throws(CoreError) in .connectionType(try r.string("connection"))
        },
        MessageSpec("upstream_provider", doc: "The provider a router chose (settings).", fields: [FieldSpec("provider", .string)]) {
            r throws(CoreError) in .upstreamProvider(try r.string("provider"))
        },
        MessageSpec(
            "reload_progress", doc: "A step of a server update; a failed step is a notice.",
            fields: [FieldSpec("step", .string), FieldSpec("message", .string), .optional("success", .boolean)]
        ) { r throws(CoreError) in
            .reloadProgress(step: try r.string("step"), message: try r.string("message"), success: try r.optionalBool("success"))
        },
        MessageSpec("status_detail", doc: "What the agent is doing, in words.", fields: [FieldSpec("detail", .string)]) {
            r throws(CoreError) in .statusDetail(try r.string("detail"))
        },
        MessageSpec("connection_phase", doc: "The server's phase of the turn.", fields: [FieldSpec("phase", .string)]) {
            r throws(CoreError) in .connectionPhase(try r.string("phase"))
        },
        MessageSpec(
            "retry_rollback", doc: "The provider call is retried: discard the partial entry.",
            fields: [FieldSpec("attempt", .integer(.count)), FieldSpec("max", .integer(.count))]
        ) { r throws(CoreError) in .retryRollback(attempt: try r.int("attempt"), max: try r.int("max")) },
        MessageSpec(
            "soft_interrupt_injected", doc: "A soft interrupt reached the agent.",
            fields: [
                FieldSpec("content", .string), .optional("display_role", .string), .optional("point", .string),
                .optional("tools_skipped", .integer(.count)),
            ]
        ) { r throws(CoreError) in
            .softInterruptInjected(
                content: try r.string("content"), displayRole: try r.optionalString("display_role"),
                point: try r.optionalString("point"), toolsSkipped: try r.optionalInt("tools_skipped"))
        },
        MessageSpec(
            "state", doc: "The session's state.",
            fields: [
                id, .optional("session_id", .string), .optional("message_count", .integer(.count)),
                .optional("is_processing", .boolean),
            ]
        ) { r throws(CoreError) in
            .state(
                id: try r.optionalInt("id"), sessionID: try r.optionalString("session_id"),
                messageCount: try r.optionalInt("message_count"), isProcessing: try r.optionalBool("is_processing"))
        },
        MessageSpec("session", doc: "The connection is attached to this session.", fields: [FieldSpec("session_id", .string)]) {
            r throws(CoreError) in .session(sessionID: try r.string("session_id"))
        },
        MessageSpec(
            "session_renamed", doc: "A session got a new title.",
            fields: [FieldSpec("session_id", .string), FieldSpec("display_title", .string), .optional("title", .string)]
        ) { r throws(CoreError) in
            _ = try r.optionalString("title")
            return .sessionRenamed(sessionID: try r.string("session_id"), displayTitle: try r.string("display_title"))
        },
        MessageSpec(
            "history", doc: "The server's authoritative transcript and session metadata; replaces the transcript.",
            fields: [
                id, FieldSpec("session_id", .string),
                FieldSpec("messages", .array(.record(historyMessageFields))),
                .optional("provider_name", .string), .optional("provider_model", .string),
                .optional("available_models", .array(.string)),
                .optional("all_sessions", .array(.any), doc: "session ids, or objects {session_id|id, display_title|title}"),
                .optional("total_tokens", .any, doc: "[input, output] or {input, output}, counts from 0; anything else is ignored"),
                .optional("server_version", .string), .optional("display_title", .string),
                .optional("reasoning_effort", .string),
                .optional("activity", .record([.optional("is_processing", .boolean), .optional("current_tool_name", .string)])),
                .optional("was_interrupted", .boolean),
                .optional("images", .array(.record(historyImageFields))),
                .optional("token_usage_totals", .record(tokenTotalsFields)),
                .optional("reload_recovery", .record([.optional("reconnect_notice", .string), .optional("continuation_message", .string)])),
            ]
        ) { r throws(CoreError) in
            let requestID = try r.optionalInt("id")
            var history = try decodeHistory(&r)
            history.requestID = requestID
            history.reloadRecovery = try r.optionalRecord("reload_recovery") { (d: inout FieldReader) throws(CoreError) -> ReloadRecovery in
                ReloadRecovery(
                    reconnectNotice: try d.optionalString("reconnect_notice"), continuationMessage: try d.optionalString("continuation_message"))
            }
            return .history(history)
        },
        MessageSpec(
            "compacted_history", doc: "Answer to get_compacted_history: the transcript with more of its compacted messages.",
            fields: [
                id, FieldSpec("session_id", .string), FieldSpec("messages", .array(.record(historyMessageFields))),
                .optional("images", .array(.record(historyImageFields))),
                FieldSpec("compacted_total", .integer(.count)), FieldSpec("compacted_visible", .integer(.count)),
                FieldSpec("compacted_remaining", .integer(.count)), .optional("compacted_hidden_prompts", .integer(.count)),
            ]
        ) { r throws(CoreError) in
            _ = try r.optionalInt("compacted_hidden_prompts")
            return .compactedHistory(
                CompactedHistory(
                    requestID: try r.optionalInt("id"), sessionID: try r.string("session_id"), messages: try decodeMessages(&r),
                    images: try decodeImages(&r), total: try r.int("compacted_total"), visible: try r.int("compacted_visible"),
                    remaining: try r.int("compacted_remaining")))
        },
        MessageSpec(
            "side_pane_images", doc: "Images made during the live turn (kept with the tool call or prompt they belong to).",
            fields: [FieldSpec("session_id", .string), FieldSpec("images", .array(.record(historyImageFields)))]
        ) { r throws(CoreError) in
            .sidePaneImages(sessionID: try r.string("session_id"), images: try decodeImages(&r, required: true))
        },
        MessageSpec(
            "generated_image", doc: "A provider-native image generation call finished (a tool card; the pixels come with side_pane_images).",
            fields: [
                FieldSpec("id", .string), FieldSpec("path", .string), .optional("metadata_path", .string),
                FieldSpec("output_format", .string), .optional("revised_prompt", .string),
            ]
        ) { r throws(CoreError) in
            _ = try r.optionalString("metadata_path")
            return .generatedImage(
                id: try r.string("id"), path: try r.string("path"), outputFormat: try r.string("output_format"),
                revisedPrompt: try r.optionalString("revised_prompt"))
        },
        MessageSpec(
            "model_changed", doc: "Answer to set_model; error keeps the old model.",
            fields: [id, FieldSpec("model", .string), .optional("error", .string), .optional("provider_name", .string)]
        ) { r throws(CoreError) in
            .modelChanged(
                id: try r.optionalInt("id"), model: try r.string("model"), providerName: try r.optionalString("provider_name"),
                error: try r.optionalString("error"))
        },
        MessageSpec(
            "reasoning_effort_changed", doc: "Answer to set_reasoning_effort; error keeps the old effort.",
            fields: [id, .optional("effort", .string), .optional("error", .string)]
        ) { r throws(CoreError) in
            .reasoningEffortChanged(
                id: try r.optionalInt("id"), effort: try r.optionalString("effort"), error: try r.optionalString("error"))
        },
        MessageSpec(
            "available_models_updated", doc: "The list of models changed (after a login on the server).",
            fields: [
                FieldSpec("available_models", .array(.string)), .optional("provider_model", .string),
                .optional("provider_name", .string),
            ]
        ) { r throws(CoreError) in
            .availableModelsUpdated(
                models: try r.strings("available_models"), providerModel: try r.optionalString("provider_model"),
                providerName: try r.optionalString("provider_name"))
        },
        MessageSpec(
            "compact_result", doc: "Answer to compact.",
            fields: [id, FieldSpec("message", .string), FieldSpec("success", .boolean)]
        ) { r throws(CoreError) in
            .compactResult(id: try r.optionalInt("id"), message: try r.string("message"), success: try r.bool("success"))
        },
        MessageSpec(
            "compaction", doc: "The context was compacted.",
            fields: [FieldSpec("trigger", .string), .optional("tokens_saved", .integer(.count))]
        ) { r throws(CoreError) in
            .compaction(trigger: try r.string("trigger"), tokensSaved: try r.optionalInt("tokens_saved"))
        },
        MessageSpec(
            "notification", doc: "A message from another session or agent; the notice names its source.",
            fields: [
                .optional("from_session", .string), .optional("from_name", .string),
                .optional("notification_type", .record([.optional("kind", .string)])), FieldSpec("message", .string),
            ]
        ) { r throws(CoreError) in
            let kind = try r.optionalRecord("notification_type") { (t: inout FieldReader) throws(CoreError) -> String? in
                try t.optionalString("kind")
            }
            return .notification(
                AgentNotification(
                    fromSession: try r.optionalString("from_session"), fromName: try r.optionalString("from_name"),
                    kind: kind ?? nil, message: try r.string("message")))
        },
        MessageSpec("reloading", doc: "The server is restarting; reconnect shortly.", fields: [.optional("new_socket", .string)]) {
            r throws(CoreError) in .reloading(newSocket: try r.optionalString("new_socket"))
        },
        MessageSpec(
            "session_close_requested", doc: "The server closed this session; do not reconnect.",
            fields: [FieldSpec("reason", .string)]
        ) { r throws(CoreError) in .sessionCloseRequested(reason: try r.string("reason")) },
        MessageSpec(
            "permission_request", doc: "A tool needs the person's approval.",
            fields: [
                FieldSpec("request_id", .stringOrInteger(.serverID)), .optional("session_id", .string), FieldSpec("action", .string),
                .optional("detail", .string), .optional("tier", .string),
            ]
        ) { r throws(CoreError) in
            .permissionRequest(
                PermissionRequest(
                    requestID: try r.stringOrInteger("request_id"), sessionID: try r.optionalString("session_id"),
                    action: try r.string("action"), detail: try r.string("detail", default: ""),
                    tier: try r.string("tier", default: "")))
        },
        MessageSpec(
            "stdin_request", doc: "A running tool asks for input.",
            fields: [
                FieldSpec("request_id", .stringOrInteger(.serverID)), FieldSpec("prompt", .string),
                .optional("is_password", .boolean), .optional("tool_call_id", .string),
            ]
        ) { r throws(CoreError) in
            .stdinRequest(
                StdinRequest(
                    requestID: try r.stringOrInteger("request_id"), prompt: try r.string("prompt"),
                    isPassword: try r.bool("is_password", default: false),
                    toolCallID: try r.optionalString("tool_call_id")))
        },
        MessageSpec("pong", doc: "Answer to the keep-alive ping.", fields: [id]) { r throws(CoreError) in .pong(id: try r.optionalInt("id")) },
    ] + loggedOnly.map { type, why in
        MessageSpec(type, doc: "Logged only: \(why).") { _ throws(CoreError) in .loggedOnly(type: type) }
    }

    /// The events of today's jcode the app recognises but does not show, and
    /// why (docs/PROTOCOL.md has every event and its decision).
    static let loggedOnly: [(type: String, why: String)] = [
        ("kv_cache_request", "prompt-cache diagnostics"),
        ("batch_progress", "desktop progress detail of a batch tool"),
        ("swarm_status", "multi-agent coordination"),
        ("swarm_plan", "multi-agent coordination"),
        ("swarm_plan_proposal", "multi-agent coordination"),
        ("memory_injected", "memory diagnostics"),
        ("memory_activity", "memory diagnostics"),
        ("context_message_added", "answers a context-only message, which the app never sends"),
        ("debug_response", "debug socket only"),
        ("mcp_status", "MCP server diagnostics"),
        ("client_debug_request", "debug socket only"),
        ("side_panel_state", "desktop side panel"),
        ("service_tier_changed", "answers set_service_tier, which the app never sends"),
        ("transport_changed", "answers set_transport, which the app never sends"),
        ("compaction_mode_changed", "answers set_compaction_mode, which the app never sends"),
        ("transcript", "dictation aimed at a desktop input box"),
        ("input_shell_result", "answers input_shell, which the app never sends"),
        ("comm_context", "agent-to-agent communication"),
        ("comm_members", "agent-to-agent communication"),
        ("comm_channels", "agent-to-agent communication"),
        ("comm_summary_response", "agent-to-agent communication"),
        ("comm_status_response", "agent-to-agent communication"),
        ("comm_report_response", "agent-to-agent communication"),
        ("comm_plan_status_response", "agent-to-agent communication"),
        ("comm_assign_task_response", "agent-to-agent communication"),
        ("comm_task_control_response", "agent-to-agent communication"),
        ("comm_context_history", "agent-to-agent communication"),
        ("comm_spawn_response", "agent-to-agent communication"),
        ("comm_list_models_response", "agent-to-agent communication"),
        ("comm_await_members_response", "agent-to-agent communication"),
        ("split_response", "answers split, which the app never sends"),
        ("resume_all_result", "answers resume_all_sessions, which the app never sends"),
    ]

    static let historyImageFields: [FieldSpec] = [
        FieldSpec("media_type", .string), FieldSpec("data", .string), .optional("label", .string),
        .optional("source", .any), .optional("anchor", .record([FieldSpec("kind", .string), .optional("id", .string), .optional("ordinal", .integer(.count))])),
    ]
    static let tokenTotalsFields: [FieldSpec] = [
        .optional("input_tokens", .integer(.count)), .optional("output_tokens", .integer(.count)),
        .optional("cache_read_input_tokens", .integer(.count)), .optional("cache_creation_input_tokens", .integer(.count)),
        .optional("messages_with_token_usage", .integer(.count)), .optional("cache_reported_input_tokens", .integer(.count)),
    ]

    /// `messages` of a `history` or `compacted_history` (required).
    private static func decodeMessages(_ r: inout FieldReader) throws(CoreError) -> [History.Message] {
        let messages =
            try r.optionalRecords("messages") { (m: inout FieldReader) throws(CoreError) -> History.Message in
                let toolData = try m.optionalRecord("tool_data") { (t: inout FieldReader) throws(CoreError) -> History.ToolData in
                    History.ToolData(
                        id: try t.string("id"), name: try t.string("name"), input: try t.optionalText("input") ?? "",
                        output: try t.optionalText("output"), error: try t.optionalString("error"))
                }
                return History.Message(
                    role: try m.string("role"), content: try m.optionalText("content") ?? "",
                    toolCalls: try m.optionalStrings("tool_calls") ?? [], toolData: toolData)
            }
        guard let messages else { throw CoreError.invalidField(r.fieldPath("messages"), "missing required field \"messages\"") }
        return messages
    }

    /// `images` of a `history`, `compacted_history` or `side_pane_images`:
    /// each with its anchor (an anchor of an unknown kind is none).
    private static func decodeImages(_ r: inout FieldReader, required: Bool = false) throws(CoreError) -> [HistoryImage] {
        let images = try r.optionalRecords("images") { (i: inout FieldReader) throws(CoreError) -> HistoryImage in
            let anchor = try i.optionalRecord("anchor") { (a: inout FieldReader) throws(CoreError) -> HistoryImage.Anchor? in
                switch try a.string("kind") {
                case "tool_call": return try a.optionalString("id").map(HistoryImage.Anchor.toolCall)
                case "user_prompt": return try a.optionalInt("ordinal").map(HistoryImage.Anchor.userPrompt)
                default: return nil
                }
            }
            return HistoryImage(
                mediaType: try i.string("media_type"), data: try i.string("data"), label: try i.optionalString("label"),
                anchor: anchor ?? nil)
        }
        if required && images == nil { throw CoreError.invalidField(r.fieldPath("images"), "missing required field \"images\"") }
        return images ?? []
    }

    private static func decodeHistory(_ r: inout FieldReader) throws(CoreError) -> History {
        let messages = try decodeMessages(&r)
        let activity = try r.optionalRecord("activity") { (a: inout FieldReader) throws(CoreError) -> (Bool?, String?) in
            (try a.optionalBool("is_processing"), try a.optionalString("current_tool_name"))
        }
        let images = try decodeImages(&r)
        var totals = try r.optionalValue("total_tokens").flatMap(TokenUsage.init(json:))
        if let detail = try r.optionalRecord("token_usage_totals", { (t: inout FieldReader) throws(CoreError) -> TokenUsage? in
            // Read to be checked against their ranges; the app does not show them.
            _ = try t.optionalInt("messages_with_token_usage")
            _ = try t.optionalInt("cache_reported_input_tokens")
            guard let input = try t.optionalInt("input_tokens"), let output = try t.optionalInt("output_tokens") else { return nil }
            return TokenUsage(
                input: input, output: output, cacheRead: try t.optionalInt("cache_read_input_tokens"),
                cacheCreation: try t.optionalInt("cache_creation_input_tokens"))
        }), let detail {
            totals = detail
        }
        var history = History(
            sessionID: try r.string("session_id"), messages: messages,
            providerName: try r.optionalString("provider_name"), providerModel: try r.optionalString("provider_model"),
            availableModels: try r.optionalStrings("available_models"),
            allSessions: try r.optionalArray("all_sessions").map(sessionSummaries),
            totalTokens: totals,
            serverVersion: try r.optionalString("server_version"), displayTitle: try r.optionalString("display_title"),
            reasoningEffort: try r.optionalString("reasoning_effort"), isProcessing: activity?.0 ?? nil,
            wasInterrupted: try r.optionalBool("was_interrupted"), images: images)
        history.currentToolName = activity?.1 ?? nil
        return history
    }

    /// `all_sessions` elements: a session id, or an object naming one.
    private static func sessionSummaries(_ values: [JSONValue]) -> [SessionSummary] {
        values.compactMap { value in
            switch value {
            case .string(let id):
                return SessionSummary(id: id, title: nil)
            case .object(let o):
                guard let id = (o["session_id"] ?? o["id"])?.stringValue else { return nil }
                return SessionSummary(id: id, title: (o["display_title"] ?? o["title"])?.stringValue)
            default:
                return nil
            }
        }
    }
}

/// A `notification` from another session or agent.
public struct AgentNotification: Equatable, Sendable {
    /// The session that sent it (`background_task` for a finished background task).
    public var fromSession: String?
    public var fromName: String?
    /// `notification_type.kind`: `message`, `file_conflict`, `shared_context`.
    public var kind: String?
    public var message: String
}

/// An image of the server's transcript (`history.images`), with where it belongs.
public struct HistoryImage: Equatable, Sendable {
    public enum Anchor: Equatable, Sendable {
        /// The result of this tool call.
        case toolCall(String)
        /// The nth (from 0) user prompt.
        case userPrompt(Int)
    }

    public var mediaType: String
    /// Base64.
    public var data: String
    public var label: String?
    public var anchor: Anchor?

    var json: JSONValue {
        let anchor: JSONValue
        switch self.anchor {
        case .toolCall(let id): anchor = ["kind": "tool_call", "id": .string(id)]
        case .userPrompt(let n): anchor = ["kind": "user_prompt", "ordinal": .int(Int64(n))]
        case nil: anchor = .null
        }
        return ["media_type": .string(mediaType), "label": .from(label), "anchor": anchor, "data": .string(data)]
    }
}
