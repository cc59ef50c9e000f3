import JcodeMobileJSON
import JcodeMobileWire

/// The reference part of docs/ABI.md, generated from the runtime schema
/// (`RuntimeSchema.document`), itself generated from the same wire
/// definitions the core decodes and encodes with, so the documentation
/// cannot drift from the code (a test compares the committed file).
public enum ABIReference {
    /// Markdown for every action, effect, platform event, gateway request,
    /// server event and stream event, each with its fields and an example;
    /// the options, the scenarios, the error codes and the answers of the functions.
    public static func markdown(schema: JSONValue = RuntimeSchema.document) -> String {
        let defs = schema["$defs"]?.objectValue ?? JSONObject()
        var out: [String] = []
        func unionSections(_ union: String, _ title: String, _ intro: String) {
            out.append("## \(title)\n")
            out.append(intro + "\n")
            for ref in defs[union]?["oneOf"]?.arrayValue ?? [] {
                guard let name = ref["$ref"]?.stringValue.map({ String($0.dropFirst("#/$defs/".count)) }), let def = defs[name] else { continue }
                out.append(section(def))
            }
        }
        unionSections("action", "Actions (`jcode_mobile_dispatch`)", "What the person wants. Unknown extra fields are ignored; an optional field may also be `null` (read as absent).")
        unionSections("effect", "Effects (in the dispatch report)", "What the host must do. Every effect carries `effect_id` and `type`.")
        unionSections("platform_event", "Platform events (`jcode_mobile_platform_event`)", "What the platform did or saw. Answers quote the `effect_id` of their effect. Unknown extra fields are ignored; an optional field may also be `null` (read as absent).")
        unionSections("gateway_request", "Gateway requests (lines the core sends in `websocket_send`)", "Request ids increase from 1 on every connection.")
        unionSections("server_event", "Server events (inside `websocket_event`)", "Events of other types are logged and ignored; a malformed event is logged and dropped. Unknown extra fields are ignored; an optional field may also be `null`.")
        unionSections("stream_event", "Stream events (`jcode_mobile_subscribe`, `jcode_mobile_next_event`)", "What a subscriber receives. Every event the app produces carries `seq` and `revision`; `subscribed`, `events_lost` and `closed` are the stream's own.")
        out.append("## Options of `jcode_mobile_app_new`\n")
        out.append(fieldTable(defs["app_options"] ?? .null))
        out.append("\n## Options of `jcode_mobile_subscribe`\n")
        out.append(fieldTable(defs["subscribe_options"] ?? .null))
        out.append("\n## Scenarios\n")
        out.append("| name | what it shows |\n|---|---|")
        for scenario in Scenario.allCases { out.append("| `\(scenario.rawValue)` | \(scenario.summary) |") }
        out.append("\n## Error codes\n")
        out.append("| code | meaning |\n|---|---|")
        for code in defs["error"]?["properties"]?["code"]?["oneOf"]?.arrayValue ?? [] {
            out.append("| `\(code["const"]?.stringValue ?? "")` | \(code["description"]?.stringValue ?? "") |")
        }
        out.append("\n## Functions and their JSON (`x-functions` of the runtime schema)\n")
        out.append("| function | input | answer |\n|---|---|---|")
        for (name, entry) in schema["x-functions"]?.objectValue?.entries ?? [] {
            func defName(_ key: String) -> String? { entry[key]?.stringValue.map { "`" + $0.dropFirst("#/$defs/".count) + "`" } }
            var answer = defName("answer") ?? ""
            if let events = defName("events") { answer += (answer.isEmpty ? "" : "; ") + "events: " + events }
            if let note = entry["note"]?.stringValue { answer += (answer.isEmpty ? "" : "; ") + note }
            out.append("| `\(name)` | \(defName("input") ?? "") | \(answer) |")
        }
        return out.joined(separator: "\n") + "\n"
    }

    /// One member of a union: its type, description, fields and example.
    private static func section(_ def: JSONValue) -> String {
        let type = def["properties"]?["type"]?["const"]?.stringValue ?? ""
        var text = "### `\(type)`\n\n\(def["description"]?.stringValue ?? "")\n"
        let table = fieldTable(def, skipping: ["type"])
        if !table.isEmpty { text += "\n" + table + "\n" }
        if let example = def["examples"]?.arrayValue?.first { text += "\n```json\n\(example.jsonString)\n```\n" }
        return text
    }

    /// The field table of an object schema ("" when it has no fields).
    private static func fieldTable(_ object: JSONValue, skipping: Set<String> = []) -> String {
        var rows = ["| field | type | required | notes |", "|---|---|---|---|"]
        addRows(object, prefix: "", skipping: skipping, to: &rows)
        return rows.count == 2 ? "" : rows.joined(separator: "\n")
    }

    /// One row per property, then rows for the members of nested objects
    /// (`viewport.width`, `images[].anchor.ordinal`), so every range shows.
    private static func addRows(_ object: JSONValue, prefix: String, skipping: Set<String> = [], to rows: inout [String]) {
        let required = Set((object["required"]?.arrayValue ?? []).compactMap(\.stringValue))
        for (name, property) in object["properties"]?.objectValue?.entries ?? [] where !skipping.contains(name) {
            var notes = property["description"]?.stringValue ?? ""
            if property["x-secret"] == true { notes = (notes.isEmpty ? "" : notes + "; ") + "secret: redacted in logs" }
            // "or null" goes without saying for an optional member (the intro says so).
            let type = typeName(property, nullImplied: !required.contains(name))
            rows.append("| `\(prefix)\(name)` | \(type) | \(required.contains(name) ? "yes" : "no") | \(notes) |")
            if let nested = record(in: property) {
                addRows(nested, prefix: prefix + name + ".", to: &rows)
            } else if let items = property["items"], let nested = record(in: items) {
                addRows(nested, prefix: prefix + name + "[].", to: &rows)
            }
        }
    }

    /// The object schema with properties in `schema` (or in its non-null `anyOf` branch).
    private static func record(in schema: JSONValue) -> JSONValue? {
        if schema["properties"] != nil { return schema }
        for branch in schema["anyOf"]?.arrayValue ?? [] where branch["properties"] != nil { return branch }
        return nil
    }

    /// How the reference names a schema's type.
    /// `nullImplied`: leave out "or null" (an optional member).
    static func typeName(_ schema: JSONValue, nullImplied: Bool = false) -> String {
        if let ref = schema["$ref"]?.stringValue { return "`\(ref.dropFirst("#/$defs/".count))`" }
        if let value = schema["const"] { return "`\(value.jsonString)`" }
        var nullable = false
        var types: [String] = []
        switch schema["type"] {
        case .string(let t)?: types = [t]
        case .array(let list)?:
            for t in list.compactMap(\.stringValue) { if t == "null" { nullable = true } else { types.append(t) } }
        default: break
        }
        let suffix = nullable && !nullImplied ? " or null" : ""
        if let values = schema["enum"]?.arrayValue {
            return values.compactMap(\.stringValue).map { "`\($0)`" }.joined(separator: " \\| ") + suffix
        }
        if let branches = schema["anyOf"]?.arrayValue ?? schema["oneOf"]?.arrayValue {
            let shown = nullImplied ? branches.filter { $0 != ["type": "null"] } : branches
            return shown.map { typeName($0) }.joined(separator: ", or ")
        }
        guard let type = types.first else { return "any" }
        switch type {
        case "integer":
            if let lo = schema["minimum"]?.int64Value, let hi = schema["maximum"]?.int64Value { return "integer from \(lo) to \(hi)" + suffix }
            return "integer" + suffix
        case "number":
            if let range = schema["x-range"]?.arrayValue, range.count == 2 {
                return "integer from \(range[0].jsonString) to \(range[1].jsonString) (a number outside it reads as absent)" + suffix
            }
            return "number" + suffix
        case "array": return "array of " + typeName(schema["items"] ?? .object(JSONObject())) + suffix
        case "object":
            guard let properties = schema["properties"]?.objectValue else { return "object" + suffix }
            let required = Set((schema["required"]?.arrayValue ?? []).compactMap(\.stringValue))
            return "{" + properties.keys.map { $0 + (required.contains($0) ? "" : "?") }.joined(separator: ", ") + "}" + suffix
        default: return type + suffix
        }
    }

    /// An example object: realistic values chosen by field name, falling back to the type.
    static func example(type: String, _ fields: [FieldSpec], typeAfterFirst: Bool = false) -> String {
        exampleValue(type: type, fields, typeAfterFirst: typeAfterFirst).jsonString
    }

    /// The example as a value (the schema's `examples`).
    static func exampleValue(type: String, _ fields: [FieldSpec], typeAfterFirst: Bool = false) -> JSONValue {
        var object = JSONObject()
        if typeAfterFirst {
            object.append(type == "subscribe" || GatewayRequest.specs.contains(where: { $0.type == type }) ? "id" : "effect_id", 3)
        }
        object.append("type", .string(type))
        for field in fields where !(typeAfterFirst && (field.name == "id" || field.name == "effect_id")) {
            if field.name == "line" && type == "websocket_event" { continue }  // the example shows "event"
            if field.name == "resync" && (type == "state_changed" || type == "tree_changed") { continue }  // the example shows "ops"
            object.append(field.name, sample(field, in: type))
        }
        return .object(object)
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
        "seq": 7, "revision": 12,
    ]

    private static func sample(_ field: FieldSpec, in type: String) -> JSONValue {
        switch (type, field.name) {
        case ("set_port", "value"): return "7643"
        case ("set_pair_code", "value"): return "123456"
        case ("set_device_name", "value"): return "Ana's iPhone"
        case ("set_draft", "value"): return "Run the tests"
        case ("set_rename_draft", "value"): return "Deflake CI"
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
        case ("show_local_notification", "title"): return "Fix the flaky test"
        case ("show_local_notification", "body"): return "The agent asks permission to run a command"
        case ("tool_input", "id"): return "call_bash"
        case ("tool_start", "id"), ("tool_exec", "id"), ("tool_done", "id"): return "call_bash"
        case ("permission_request", "detail"): return "cargo test -p jcode-mobile-core"
        case ("session_renamed", "title"): return "Fix the flaky test"
        case ("history", "images"), ("compacted_history", "images"), ("side_pane_images", "images"):
            return [["media_type": "image/png", "data": "iVBORw0KGgo=", "label": "screenshot", "anchor": ["kind": "tool_call", "id": "call_1"]]]
        case ("generated_image", "id"): return "call_img"
        case ("generated_image", "path"): return "/home/ana/jcode/.jcode/images/cat.png"
        case ("generated_image", "output_format"): return "png"
        case ("history", "messages"), ("compacted_history", "messages"):
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
        case ("state_changed", "ops"): return [["op": "append", "path": "/transcript/4/text", "value": "lo"]]
        case ("tree_changed", "since"): return 11
        case ("tree_changed", "ops"): return [["op": "append", "id": "message.m7", "field": "value", "text": "lo"]]
        case ("effects_requested", "effects"):
            return [["effect_id": 9, "type": "websocket_send", "line": #"{"id":4,"type":"message","content":"Run the tests"}"#]]
        case ("pairing_failed", "message"): return "The pairing code was not accepted."
        case ("connection_phase_changed", "from"): return "connecting"
        case ("connection_phase_changed", "to"): return "connected"
        case ("history_synced", "entries"): return 12
        case ("history_synced", "shown"): return 10
        case ("events_lost", "count"): return 3
        case ("events_lost", "first_seq"): return 8
        case ("events_lost", "last_seq"): return 10
        case ("events_lost", "effects_lost"): return 1
        case ("closed", "reason"): return "unsubscribed"
        case ("subscribed", "next_seq"): return 8
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
        case .defined: return .null
        }
    }
}
