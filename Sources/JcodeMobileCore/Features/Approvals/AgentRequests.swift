import JcodeMobileJSON

/// A tool asks for the person's approval (`permission_request`).
public struct PermissionRequest: Equatable, Sendable {
    public var requestID: String
    public var sessionID: String?
    /// What the tool wants to do ("bash", "write_file").
    public var action: String
    /// The specifics ("cargo test -p jcode-mobile-core").
    public var detail: String
    /// The risk tier the server assigned.
    public var tier: String

    public init(requestID: String, sessionID: String?, action: String, detail: String, tier: String) {
        self.requestID = requestID
        self.sessionID = sessionID
        self.action = action
        self.detail = detail
        self.tier = tier
    }

    var json: JSONValue {
        var o = JSONObject(capacity: 5)
        o.append("request_id", .string(requestID))
        o.append("session_id", .from(sessionID))
        o.append("action", .string(action))
        o.append("detail", .string(detail))
        o.append("tier", .string(tier))
        return .object(o)
    }
}

/// A running tool asks for typed input (`stdin_request`).
public struct StdinRequest: Equatable, Sendable {
    public var requestID: String
    public var prompt: String
    /// Mask what is typed.
    public var isPassword: Bool
    public var toolCallID: String?

    public init(requestID: String, prompt: String, isPassword: Bool, toolCallID: String?) {
        self.requestID = requestID
        self.prompt = prompt
        self.isPassword = isPassword
        self.toolCallID = toolCallID
    }

    var json: JSONValue {
        var o = JSONObject(capacity: 4)
        o.append("request_id", .string(requestID))
        o.append("prompt", .string(prompt))
        o.append("is_password", .bool(isPassword))
        o.append("tool_call_id", .from(toolCallID))
        return .object(o)
    }
}
