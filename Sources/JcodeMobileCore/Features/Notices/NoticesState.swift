/// The error banner and the notices of the chat.
public struct NoticesState: Equatable, Sendable {
    public var notices: [Notice] = []
    public var errorBanner: ErrorBanner?
    /// The id the next notice gets.
    public var nextNoticeID = 1

    public init() {}

    mutating func add(_ kind: Notice.Kind, _ text: String) {
        notices.append(Notice(id: "n" + String(nextNoticeID), kind: kind, text: text))
        nextNoticeID &+= 1
        if notices.count > Notice.limit { notices.removeFirst(notices.count - Notice.limit) }
    }
}
