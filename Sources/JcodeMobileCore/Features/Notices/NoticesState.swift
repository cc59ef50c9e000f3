/// The error banner and the notices of the chat.
public struct NoticesState: Equatable, Sendable {
    public var notices: [Notice] = []
    public var errorBanner: ErrorBanner?
    /// The id the next notice gets.
    public var nextNoticeID = 1

    public init() {}

    /// Withdraws the notices about a condition that has passed.
    mutating func withdraw(_ passed: Notice.Passing) {
        notices.removeAll { $0.passes == passed }
    }

    mutating func add(_ kind: Notice.Kind, _ text: String, passes: Notice.Passing? = nil) {
        notices.append(Notice(id: "n" + String(nextNoticeID), kind: kind, text: text, passes: passes))
        nextNoticeID &+= 1
        if notices.count > Notice.limit { notices.removeFirst(notices.count - Notice.limit) }
    }
}
