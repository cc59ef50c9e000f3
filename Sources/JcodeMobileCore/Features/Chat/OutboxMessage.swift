import JcodeMobileJSON

/// A message the person sent whose turn has not been seen ending yet.
/// Nothing the person sends is lost: it waits here (and in the snapshot)
/// while offline or before history loaded, goes out in order, and leaves
/// only when the turn it started is seen ending (`done`, `interrupted`, or
/// an `error` about that turn) or a history shows it arrived. An `ack` only
/// says the server received it: it may still refuse it or restart.
public struct OutboxMessage: Equatable, Sendable {
    public var id: String
    public var text: String
    public var attachments: [Attachment]
    public var delivery: Delivery
    /// Where it went, once sent: what reconciling with the history needs.
    public var sent: SentMark?
    /// The transcript shows it as a user entry (from when it was sent until
    /// the next history replaces the transcript); the outbox list does not.
    public var isInTranscript = false
    /// It was lost once (refused, or not in the history after a reload or a
    /// drop) and went again: lost a second time, it fails and waits for Retry.
    public var resent = false
    /// A continuation of a turn the server stopped (`continue_interrupted_turn`):
    /// sent as the message's `system_reminder`, with an empty `content`, as
    /// jcode's TUI sends it. It is not the person's words, so the transcript
    /// does not show it as a user message.
    public var systemReminder: String?

    public enum Delivery: String, Sendable, CaseIterable {
        /// Not sent yet: shown as "waiting to send".
        case waiting
        /// Sent on the open socket; its `ack` has not come. Shown in the transcript.
        case awaitingAck = "awaiting_ack"
        /// The server received it (`ack`); its turn has not been seen ending.
        /// Shown in the transcript.
        case received
        /// Sent, but the socket went (or the server announced a reload)
        /// before its turn was seen ending: the next history says whether the
        /// server has it (then it leaves) or not (then it goes again, once).
        case unconfirmed
        /// Lost twice (refused, or missing from the history after a reload
        /// or a drop): shown as not sent, with Retry (`retry_message`) and
        /// Discard (`discard_message`: its text goes back to the draft). The
        /// messages behind it wait until the person chooses.
        case failed
    }

    /// The session a message was sent to and how many user rows the
    /// server's transcript of it held before: the message arrived if a
    /// later user row of that session has its text.
    public struct SentMark: Equatable, Sendable {
        public var sessionID: String?
        public var userRowsBefore: Int
    }

    public init(
        id: String, text: String, attachments: [Attachment], delivery: Delivery = .waiting, sent: SentMark? = nil,
        systemReminder: String? = nil
    ) {
        self.id = id
        self.text = text
        self.attachments = attachments
        self.delivery = delivery
        self.sent = sent
        self.systemReminder = systemReminder
    }

    /// The session the person wrote it in (nil: unknown, as after a
    /// restore). It goes to that session only: switched away before it went,
    /// it fails, and Retry sends it where the chat is then.
    public var writtenIn: String?

    /// A continuation, not words of the person's.
    public var isContinuation: Bool { systemReminder != nil }

    var json: JSONValue {
        [
            "id": .string(id), "text": .string(text), "attachments": .array(attachments.map(\.json)),
            "delivery": .string(delivery.rawValue), "system_reminder": .from(systemReminder),
        ]
    }
}
