/// The reference part of docs/ABI.md, generated from the same wire
/// definitions the core decodes and encodes with, so the documentation
/// cannot drift from the code (a test compares the committed file).
public enum ABIReference {
    /// Markdown for every action, platform event, effect, gateway request and
    /// server event, each with its fields and an example.
    public static func markdown() -> String {
        var out: [String] = []
        out.append("## Actions (`jcode_mobile_dispatch`)\n")
        out.append("What the person wants. Unknown extra fields are ignored.\n")
        for spec in Action.wire.members { out.append(section(spec.type, spec.doc, spec.fields, example: example(type: spec.type, spec.fields))) }
        out.append("## Effects (in the dispatch report)\n")
        out.append("What the host must do. Every effect carries `effect_id` and `type`.\n")
        for spec in Effect.specs {
            var doc = spec.doc
            if !spec.answeredBy.isEmpty { doc += " Answered by " + spec.answeredBy.map { "`\($0)`" }.joined(separator: ", ") + "." }
            out.append(section(spec.type, doc, spec.fields, example: example(type: spec.type, spec.fields, typeAfterFirst: true)))
        }
        out.append("## Platform events (`jcode_mobile_platform_event`)\n")
        out.append("What the platform did or saw. Answers quote the `effect_id` of their effect.\n")
        for spec in PlatformEvent.wire.members {
            out.append(section(spec.type, spec.doc, spec.fields, example: example(type: spec.type, spec.fields)))
        }
        out.append("## Gateway requests (lines the core sends in `websocket_send`)\n")
        out.append("Request ids increase from 1 on every connection.\n")
        for spec in GatewayRequest.specs {
            let fields = spec.documentedFields
            out.append(section(spec.type, spec.doc, fields, example: example(type: spec.type, fields, typeAfterFirst: true)))
        }
        out.append("## Server events (inside `websocket_event`)\n")
        out.append("Events of other types are logged and ignored; a malformed event is logged and dropped.\n")
        for spec in ServerEvent.wire.members {
            out.append(section(spec.type, spec.doc, spec.fields, example: example(type: spec.type, spec.fields)))
        }
        out.append("## Options of `jcode_mobile_app_new`\n")
        out.append(fieldTable(AppOptions.fields))
        out.append("\n## Scenarios\n")
        out.append("| name | what it shows |\n|---|---|")
        for scenario in Scenario.allCases { out.append("| `\(scenario.rawValue)` | \(scenario.summary) |") }
        out.append("\n## Error codes\n")
        out.append("| code | meaning |\n|---|---|")
        for code in ErrorCode.allCases { out.append("| `\(code.rawValue)` | \(errorMeaning(code)) |") }
        return out.joined(separator: "\n") + "\n"
    }

    private static func section(_ type: String, _ doc: String, _ fields: [FieldSpec], example: String) -> String {
        var text = "### `\(type)`\n\n\(doc)\n"
        if !fields.isEmpty { text += "\n" + fieldTable(fields) + "\n" }
        text += "\n```json\n\(example)\n```\n"
        return text
    }

    private static func fieldTable(_ fields: [FieldSpec]) -> String {
        var rows = ["| field | type | required | notes |", "|---|---|---|---|"]
        addRows(fields, prefix: "", to: &rows)
        return rows.joined(separator: "\n")
    }

    /// One row per field, then rows for the members of its records
    /// (`viewport.width`, `images[].anchor.ordinal`), so every range shows.
    private static func addRows(_ fields: [FieldSpec], prefix: String, to rows: inout [String]) {
        for field in fields {
            var notes = field.doc
            if field.secret { notes = (notes.isEmpty ? "" : notes + "; ") + "secret: redacted in logs" }
            rows.append("| `\(prefix)\(field.name)` | \(typeName(field.type)) | \(field.required ? "yes" : "no") | \(notes) |")
            switch field.type {
            case .record(let members): addRows(members, prefix: prefix + field.name + ".", to: &rows)
            case .array(.record(let members)): addRows(members, prefix: prefix + field.name + "[].", to: &rows)
            default: break
            }
        }
    }

    private static func typeName(_ type: WireType) -> String {
        switch type {
        case .string: return "string"
        case .integer(let range): return "integer \(range)" + (range.outsideIsAbsent ? " (a number outside it reads as absent)" : "")
        case .number: return "number"
        case .boolean: return "boolean"
        case .object: return "object"
        case .any: return "any"
        case .stringOrInteger(let range): return "string, or integer \(range)"
        case .array(let element): return "array of \(typeName(element))"
        case .enumeration(let values): return values.map { "`\($0)`" }.joined(separator: " \\| ")
        case .record(let fields): return "{" + fields.map { $0.name + ($0.required ? "" : "?") }.joined(separator: ", ") + "}"
        }
    }

    /// An example object: realistic values chosen by field name, falling back to the type.
    static func example(type: String, _ fields: [FieldSpec], typeAfterFirst: Bool = false) -> String {
        var object = JSONObject()
        if typeAfterFirst {
            object.append(type == "subscribe" || GatewayRequest.specs.contains(where: { $0.type == type }) ? "id" : "effect_id", 3)
        }
        object.append("type", .string(type))
        for field in fields where !(typeAfterFirst && (field.name == "id" || field.name == "effect_id")) {
            if field.name == "line" && type == "websocket_event" { continue }  // the example shows "event"
            object.append(field.name, sample(field, in: type))
        }
        return JSONValue.object(object).jsonString
    }

    private static let samples: [String: JSONValue] = [
        "host": "devbox.local", "port": 7643, "use_tls": false, "code": "123456", "device_id": "ios-6F1C", "device_name": "Ana's iPhone",
        "apns_token": "a1b2c3", "effect_id": 3, "ok": true, "token": "<token>", "server_name": "devbox", "server_version": "0.9.2",
        "version": "0.9.2", "status": 200, "error": "unknown model", "key": "jcode.token.devbox.local:7643", "url": "ws://devbox.local:7643/ws",
        "auth_token": "<token>", "line": #"{"id":3,"type":"message","content":"Run the tests"}"#, "timer_id": "reconnect.1", "after_ms": 1000,
        "purpose": "reconnect", "payload": "jcode://pair?host=devbox.local&port=7643&code=123456", "text": "Run the tests",
        "is_final": true, "media_type": "image/png", "data_base64": "iVBORw0KGgo=", "reachable": true, "node_id": "pair.submit",
        "server_id": "devbox.local:7643", "session_id": "session-fox", "model": "claude-sonnet-4", "effort": "high", "title": "Fix the flaky test",
        "request_id": "perm-1", "approved": true, "remember": false, "input": "yes", "notice_id": "n1", "attachment_id": "a1",
        "scenario": "connected_chat", "urgent": false, "content": "Also check the docs", "detail": "cargo test", "phase": "streaming",
        "delta": "{\"command\":", "name": "bash", "output": "2 passed", "message": "overloaded", "retry_after_secs": 15, "attempt": 1, "max": 3,
        "duration_secs": 2.5, "display_title": "Fix the flaky test", "display_role": "user", "point": "C", "tools_skipped": 1,
        "trigger": "hard_compact", "tokens_saved": 12000, "from_name": "build-agent", "reason": "Session closed", "action": "bash",
        "tier": "medium", "prompt": "[sudo] password:", "is_password": true, "tool_call_id": "call_apt", "message_count": 12,
        "is_processing": false, "success": true, "target_session_id": "session-fox", "style": "success", "value": "devbox.local",
        "available_models": ["claude-sonnet-4", "gpt-5"], "provider_model": "claude-sonnet-4", "provider_name": "anthropic",
        "total_tokens": [48210, 3120], "all_sessions": [["session_id": "session-fox", "display_title": "Fix the flaky test"]],
        "reasoning_effort": "medium", "new_socket": "/tmp/jcode.sock", "stop_reason": "end_turn",
        "messages": [["role": "user", "content": "Why does the test fail?"], ["role": "assistant", "content": "It races the server."]],
        "event": ["type": "text_delta", "text": "Hello"], "images": [["image/png", "iVBORw0KGgo="]], "tool_calls": ["grep"],
        "activity": ["is_processing": false], "screen": "sessions", "width": 390, "height": 844, "input_tokens": 1200,
    ]

    private static func sample(_ field: FieldSpec, in type: String) -> JSONValue {
        switch (type, field.name) {
        case ("set_port", "value"): return "7643"
        case ("set_pair_code", "value"): return "123456"
        case ("set_device_name", "value"): return "Ana's iPhone"
        case ("set_draft", "value"): return "Run the tests"
        case ("tokens", "input"): return 1200
        case ("tokens", "output"): return 34
        case ("health_finished", "status"), ("pair_finished", "status"), ("websocket_failed", "status"): return .null
        case ("pair_finished", "error"), ("health_finished", "error"), ("model_changed", "error"), ("reasoning_effort_changed", "error"),
            ("tool_done", "error"):
            return .null
        case ("websocket_failed", "error"): return "connection refused"
        case ("storage_write", "value"): return [["id": "devbox.local:7643", "name": "devbox"]]
        case ("secure_store_write", "value"), ("secure_store_read_finished", "value"): return "<token>"
        case ("websocket_closed", "code"): return 1006
        case ("websocket_closed", "reason"): return "network lost"
        case ("stdin_response", "input"), ("respond_stdin", "input"): return "<typed answer>"
        case ("push_notification_opened", "payload"): return ["session_id": "session-fox", "request_id": "perm-1"]
        case ("tool_input", "id"): return "call_bash"
        case ("tool_start", "id"), ("tool_exec", "id"), ("tool_done", "id"): return "call_bash"
        case ("permission_request", "detail"): return "cargo test -p jcode-mobile-core"
        case ("session_renamed", "title"): return "Fix the flaky test"
        case ("history", "images"):
            return [["media_type": "image/png", "data": "iVBORw0KGgo=", "label": "screenshot", "anchor": ["kind": "tool_call", "id": "call_1"]]]
        case ("history", "messages"):
            return [
                ["role": "user", "content": "Why does the test fail?"],
                ["role": "assistant", "content": "Let me look.", "tool_calls": ["grep"]],
                ["role": "tool", "content": "tests/reconnect.rs:42: sleep(100ms)", "tool_data": ["id": "call_1", "name": "grep", "input": ["pattern": "sleep"]]],
                ["role": "background_task", "content": "cargo build finished"],
            ]
        case ("history", "token_usage_totals"):
            return ["input_tokens": 48210, "output_tokens": 3120, "cache_read_input_tokens": 40000, "cache_creation_input_tokens": 2000]
        case ("tokens", "cache_read_input"): return 900
        case ("tokens", "cache_creation_input"): return .null
        case ("message_end", "stop_reason"): return "max_tokens"
        case ("provider_guardrail", "stop_reason"): return "refusal"
        case ("provider_guardrail", "message"): return "The model declined to answer this request."
        case ("notification", "from_session"): return "session-owl"
        case ("notification", "notification_type"): return ["kind": "message"]
        case ("notification", "message"): return "Tests pass on my branch"
        case ("reload_progress", "step"): return "cargo_build"
        case ("reload_progress", "message"): return "Building the new server"
        case ("connection_type", "connection"): return "websocket"
        case ("upstream_provider", "provider"): return "fireworks"
        case ("subscribe", "working_dir"), ("set_working_dir", "value"): return "/home/ana/jcode"
        case ("subscribe", "client_instance_id"), ("resume_session", "client_instance_id"): return "ios-6F1C"
        case ("soft_interrupt", "images"), ("message", "images"): return [["image/png", "iVBORw0KGgo="]]
        default: break
        }
        if field.name == "id" { return 3 }
        if let value = samples[field.name] { return value }
        switch field.type {
        case .string: return "text"
        case .integer(let range): return .int(range.contains(1) ? 1 : range.lowerBound)
        case .number: return 1.5
        case .boolean: return true
        case .object, .record: return .object(JSONObject())
        case .any: return "value"
        case .stringOrInteger: return "1"
        case .array: return []
        case .enumeration(let values): return .string(values[0])
        }
    }

    private static func errorMeaning(_ code: ErrorCode) -> String {
        switch code {
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
