import JcodeMobileJSON

/// A dismissible line in the chat ("Interrupted", "Context compacted …").
public struct Notice: Equatable, Sendable {
    public enum Kind: String, Sendable, CaseIterable {
        case info, notification, warning
    }

    /// A condition whose end makes a notice moot.
    public enum Passing: String, Sendable, CaseIterable {
        /// "Interrupted": the next turn starts.
        case nextTurn = "next_turn"
        /// "Server is updating…": a connection opens again.
        case reconnect
        /// "Context compacted …": the chat shows another session (a switch,
        /// or a clear's fresh one), as jcode's TUI clears its notices there.
        case sessionChange = "session_change"
    }

    public var id: String
    public var kind: Kind
    public var text: String
    /// When it goes away by itself (nil: when dismissed).
    public var passes: Passing?

    public init(id: String, kind: Kind, text: String, passes: Passing? = nil) {
        self.id = id
        self.kind = kind
        self.text = text
        self.passes = passes
    }

    /// At most this many notices are kept; the oldest go first.
    public static let limit = 50

    var json: JSONValue { ["id": .string(id), "kind": .string(kind.rawValue), "text": .string(text)] }
}

/// The error banner: something failed and the person should know. Its
/// words are the semantic layer's (`SemanticText.banner`).
public struct ErrorBanner: Equatable, Sendable {
    public enum Problem: Equatable, Sendable {
        /// Words a feature or the server already chose.
        case text(String)
        /// Something about the link to the server.
        case connection(ConnectionIssue)
    }

    public var problem: Problem
    public var retryAfterSecs: Int?

    public init(_ problem: Problem, retryAfterSecs: Int? = nil) {
        self.problem = problem
        self.retryAfterSecs = retryAfterSecs
    }

    public init(message: String, retryAfterSecs: Int? = nil) {
        self.init(.text(message), retryAfterSecs: retryAfterSecs)
    }
}
