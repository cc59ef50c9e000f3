import JcodeMobileJSON

/// The jcode session this device is attached to, and the server's metadata.
public struct SessionState: Equatable, Sendable {
    public var id: String?
    public var title: String?
    /// Every session of the server, with the titles known for them.
    public var allSessions: [SessionSummary] = []
    public var model: String?
    /// A `set_model` awaiting `model_changed`.
    public var pendingModel: String?
    public var provider: String?
    public var availableModels: [String] = []
    public var reasoningEffort: String?
    /// A `set_reasoning_effort` awaiting `reasoning_effort_changed`.
    public var pendingReasoningEffort: String?
    public var serverVersion: String?
    /// Tokens of the whole session: the `history` total plus every API call
    /// reported since (`tokens`, one per call; a turn's join when it ends).
    public var totalTokens: TokenUsage?
    /// The running turn's `tokens`, summed: the server reports each API
    /// call of the turn once (not yet in the total).
    public var turnTokens: TokenUsage?
    /// The provider stream's transport (`connection_type`).
    public var connectionType: String?
    /// The provider a router chose (`upstream_provider`).
    public var upstreamProvider: String?

    /// The total as shown: finished turns plus the running one.
    public var currentTotalTokens: TokenUsage? {
        guard let turn = turnTokens else { return totalTokens }
        return totalTokens.map { $0 + turn } ?? turn
    }
    /// A `compact` awaiting `compact_result`.
    public var isCompacting = false
    /// The rename field's text as the person typed it; nil until edited
    /// (the field then shows the current title). Kept after a refusal.
    public var renameDraft: String?
    /// The title of a `rename_session` awaiting its answer: the title
    /// changes only with the server's `session_renamed`.
    public var pendingRename: String?
    /// A `clear` awaiting its answer: the chat empties only on its `done`.
    public var isClearing = false

    public init() {}

    /// The session list was cut at `listLimit` and the person was told (a notice).
    public var listOverflowNoticed = false

    /// Sessions listed at most. The list comes from the server (`history`,
    /// `session_renamed`); beyond this many, later ones are left out of the
    /// list with one notice and a log note each (switching to them by id
    /// still works), so every lookup in it stays bounded.
    public static let listLimit = 512

    /// Records a title for a session, adding the session to the list if new
    /// and the list has room; false when it had none.
    @discardableResult
    mutating func setTitle(_ title: String, for sessionID: String) -> Bool {
        if id == sessionID || id == nil { self.title = title }
        if let i = allSessions.firstIndex(where: { $0.id == sessionID }) {
            allSessions[i].title = title
            return true
        }
        guard allSessions.count < Self.listLimit else { return false }
        allSessions.append(SessionSummary(id: sessionID, title: title))
        return true
    }

    func title(of sessionID: String) -> String? {
        allSessions.first(where: { $0.id == sessionID })?.title
    }

    /// Lists a session the server named (`session`, the answer to `clear`)
    /// if it is not listed yet and the list has room; false when it had none.
    @discardableResult
    mutating func list(_ sessionID: String) -> Bool {
        if allSessions.contains(where: { $0.id == sessionID }) { return true }
        guard allSessions.count < Self.listLimit else { return false }
        allSessions.append(SessionSummary(id: sessionID, title: nil))
        return true
    }

    /// The reasoning efforts the provider accepts, as jcode's protocol lists
    /// them per provider (`crates/jcode-protocol/src/wire.rs`,
    /// `set_reasoning_effort`), with the current one added when the server
    /// reported one outside that list.
    public var reasoningEfforts: [String] {
        var efforts: [String]
        switch provider?.lowercased() {
        case "openai"?: efforts = ["none", "minimal", "low", "medium", "high", "xhigh", "max"]
        case "anthropic"?, "claude"?: efforts = ["none", "low", "medium", "high", "xhigh", "max"]
        case "deepseek"?: efforts = ["none", "low", "medium", "high", "max"]
        default: efforts = ["none", "low", "medium", "high", "xhigh"]
        }
        if let current = reasoningEffort, !current.isEmpty, !efforts.contains(current) { efforts.append(current) }
        return efforts
    }
}

/// A session of the server, as listed in `history.all_sessions`.
public struct SessionSummary: Equatable, Sendable {
    public var id: String
    public var title: String?

    public init(id: String, title: String?) {
        self.id = id
        self.title = title
    }

    var json: JSONValue { ["id": .string(id), "title": .from(title)] }
}

/// Token counts.
public struct TokenUsage: Equatable, Sendable {
    public var input: Int
    public var output: Int
    /// Input tokens read from the provider's prompt cache, when reported.
    public var cacheRead: Int?
    /// Input tokens written to the prompt cache, when reported.
    public var cacheCreation: Int?

    public init(input: Int, output: Int, cacheRead: Int? = nil, cacheCreation: Int? = nil) {
        self.input = input
        self.output = output
        self.cacheRead = cacheRead
        self.cacheCreation = cacheCreation
    }

    /// Both counts added (cache figures add when either side has them).
    static func + (a: TokenUsage, b: TokenUsage) -> TokenUsage {
        func sum(_ x: Int?, _ y: Int?) -> Int? { x == nil && y == nil ? nil : (x ?? 0) &+ (y ?? 0) }
        return TokenUsage(
            input: a.input &+ b.input, output: a.output &+ b.output, cacheRead: sum(a.cacheRead, b.cacheRead),
            cacheCreation: sum(a.cacheCreation, b.cacheCreation))
    }

    /// `[input, output]` (what jcode sends) or `{input, output}`; nil for
    /// anything else, counts below 0 or beyond 64 bits included.
    init?(json: JSONValue) {
        func count(_ value: JSONValue?) -> Int? { value?.int64Value.flatMap { $0 >= 0 ? Int(exactly: $0) : nil } }
        switch json {
        case .array(let a) where a.count == 2:
            guard let i = count(a[0]), let o = count(a[1]) else { return nil }
            self.init(input: i, output: o)
        case .object(let o):
            guard let i = count(o["input"]), let out = count(o["output"]) else { return nil }
            self.init(input: i, output: out)
        default:
            return nil
        }
    }

    var json: JSONValue {
        [
            "input": .int(Int64(input)), "output": .int(Int64(output)), "cache_read_input": .from(cacheRead),
            "cache_creation_input": .from(cacheCreation),
        ]
    }

    /// The change feed's operations from `old` to `new` at `path`, written
    /// to `w` (nil: only whether there are any): what `JSONDiff` makes of
    /// their `json` (a `replace` of each count that moved; of the whole
    /// when one side is null), with neither value built.
    static func patch(from old: TokenUsage?, to new: TokenUsage?, at path: inout JSONPath, into w: UnsafeMutablePointer<JSONWriter>?) -> Bool {
        guard let old, let new else {
            guard old != new else { return false }
            w.map { JSONPatchOp.replace(path: path, value: new?.json ?? .null).write(to: &$0.pointee) }
            return true
        }
        let moved = (old.input != new.input, old.output != new.output, old.cacheRead != new.cacheRead, old.cacheCreation != new.cacheCreation)
        guard moved.0 || moved.1 || moved.2 || moved.3 else { return false }
        guard let w else { return true }
        // The member's pointer, encoded once for its operations (its opening quote, not its closing one).
        var pointer = JSONWriter(capacity: 64)
        pointer.pointer(path.components)
        var prefix = pointer.bytes
        prefix.removeLast()
        func replace(_ member: StaticString, _ value: Int?) {
            w.pointee.beginFragment()
            w.pointee.fragment(#"{"op":"replace","path":"#)
            w.pointee.fragment(bytes: prefix)
            w.pointee.fragment(member)
            w.pointee.fragment(#","value":"#)
            if let value { w.pointee.fragment(integer: value) } else { w.pointee.fragment("null") }
            w.pointee.fragment("}")
            w.pointee.endFragment()
        }
        if moved.0 { replace(#"/input""#, new.input) }
        if moved.1 { replace(#"/output""#, new.output) }
        if moved.2 { replace(#"/cache_read_input""#, new.cacheRead) }
        if moved.3 { replace(#"/cache_creation_input""#, new.cacheCreation) }
        return true
    }
}
