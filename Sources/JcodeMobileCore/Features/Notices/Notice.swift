/// A dismissible line in the chat ("Interrupted", "Context compacted …").
public struct Notice: Equatable, Sendable {
    public enum Kind: String, Sendable {
        case info, notification, warning
    }

    public var id: String
    public var kind: Kind
    public var text: String

    public init(id: String, kind: Kind, text: String) {
        self.id = id
        self.kind = kind
        self.text = text
    }

    /// At most this many notices are kept; the oldest go first.
    public static let limit = 50

    var json: JSONValue { ["id": .string(id), "kind": .string(kind.rawValue), "text": .string(text)] }
}

/// The error banner: something failed and the person should know.
public struct ErrorBanner: Equatable, Sendable {
    public var message: String
    public var retryAfterSecs: Int?

    public init(message: String, retryAfterSecs: Int? = nil) {
        self.message = message
        self.retryAfterSecs = retryAfterSecs
    }

    /// The banner as shown: "overloaded (retry in 15 s)".
    public var text: String {
        guard let retryAfterSecs else { return message }
        return "\(message) (retry in \(retryAfterSecs) s)"
    }

    var json: JSONValue {
        ["message": .string(message), "retry_after_secs": .from(retryAfterSecs), "text": .string(text)]
    }
}
