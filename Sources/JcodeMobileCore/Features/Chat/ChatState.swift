import JcodeMobileJSON

/// The conversation: the transcript, the running turn, messages waiting to
/// be sent, and soft interrupts not yet received by the agent.
public struct ChatState: Equatable, Sendable {
    public var transcript = Transcript()
    public var turn = TurnState()
    /// Messages the server has not acknowledged, oldest first: the head may
    /// be on its way (`awaiting_ack`, or `unconfirmed` after a drop); the
    /// others wait their turn.
    public var outbox: [OutboxMessage] = []
    /// How many user rows the server's transcript of this session holds, as
    /// far as this device knows (the last history, plus messages it
    /// acknowledged since): where reconciling looks for a message that was
    /// on its way when the link dropped.
    public var serverUserRows = 0
    /// The id the next outbox message gets.
    public var nextOutboxID = 1

    /// Soft interrupts sent while a turn runs, not yet injected.
    public var softInterrupts: [SoftInterrupt] = []
    /// Soft interrupts still pending when their turn ended: shown as sent;
    /// the server injects them later, and that `soft_interrupt_injected`
    /// must not add them a second time.
    public var outlivedInterrupts: [SoftInterrupt] = []
    /// Images of the server's transcript (`history.images`).
    public var images: [HistoryImage] = []
    /// The server said the session stopped mid-turn (`history.was_interrupted`).
    public var wasInterrupted = false
    /// A turn the server stopped before it ended, which the person may
    /// continue (`chat.continue`) or dismiss; nil when there is none.
    public var interruptedTurn: InterruptedTurn?
    /// The history is compacted: older messages can be loaded
    /// (`chat.load_older`); nil when it is not.
    public var olderHistory: OlderHistory?
    /// An "Interrupted" notice was posted since the last turn started: the
    /// next turn withdraws it.
    public var interruptionNoticeShown = false
    /// The request id of this device's message whose turn still ran when
    /// the person switched sessions. jcode sends that turn's events to this
    /// connection when no other client of its session is attached
    /// (`state.rs`, `session_event_fanout_sender_with_fallback`), and they
    /// carry no session: they are not the shown session's, so they are
    /// dropped until the turn's `done` or `error` (or the socket goes).
    public var leftBehindTurn: Int?
    /// The session that turn runs in: switching back to it ends the wait.
    public var leftBehindSession: String?
    /// The session the transcript shows (its last history's).
    public var shownSessionID: String?
    /// The reply of a running turn as this device last saw it, by session,
    /// when the link dropped or the person switched away mid-turn: the next
    /// history of that session taken while the turn still runs is shown with
    /// it (`LiveTail`). At most `cutRepliesLimit`.
    public var cutReplies: [String: TranscriptEntry] = [:]
    public static let cutRepliesLimit = 8
    /// The sessions this device left, with what each last said then
    /// (`SessionPreview`), the latest left last; at most `previewsLimit`
    /// (the oldest goes first).
    public var previews: [SessionPreview.Left] = []
    public static let previewsLimit = 64

    public init() {}

    /// Messages the outbox holds at most. Beyond it a message is not taken:
    /// it stays in the composer (or goes into the draft) with an error
    /// banner, so nothing is lost, and every input stays bounded (the
    /// outbox is in every snapshot).
    public static let outboxLimit = 100
    /// Soft interrupts queued at most while one turn runs; beyond it, as above.
    public static let interruptLimit = 32
}

/// The turn the agent is running, as this device sees it.
public struct TurnState: Equatable, Sendable {
    public var isProcessing = false
    public var isReasoning = false
    /// The server's phase of the running turn (`connection_phase`); cleared when the turn ends.
    public var serverPhase: String?
    /// What the agent is doing, in words (`status_detail`, "Retrying (1/3)").
    public var statusDetail: String?
    /// Tokens of the current turn (`tokens` events).
    public var tokens: TokenUsage?
    /// The transcript has been loaded from the server on this connection.
    public var historyLoaded = false
    /// The reply's text is streaming (since its first delta; a tool call or
    /// reasoning stops it).
    public var isWriting = false
    /// The turn shown was not started by a message this device sent on this
    /// socket (another client's, or one it joined mid-way): its history is
    /// asked for when it ends, so the transcript holds it whole (the other
    /// client's words, what streamed before this device joined).
    public var isAdopted = false
    // The turn watch (`ChatInteractor+Watch.swift`).
    /// Keep-alive ticks since anything of the turn arrived.
    public var quietTicks = 0
    /// Checks that found the turn still running with nothing heard since
    /// (each doubles the next quiet spell).
    public var confirmedChecks = 0
    /// A check (`get_history`) is out.
    public var isChecking = false
    /// The check went unanswered a whole spell: jcode is not answering.
    public var checkUnanswered = false
    /// The tool call running now (`tool_exec` seen, `tool_done` not yet).
    public var runningTool: RunningTool?
    /// Keep-alive ticks while that tool ran (its elapsed time, in ticks).
    public var toolTicks = 0
    /// The tool the server says runs (`activity.current_tool_name`), when
    /// this device has no card of it (it joined mid-turn).
    public var serverToolName: String?

    public init() {}
}

/// The tool call a turn runs now, as the run status names it.
public struct RunningTool: Equatable, Sendable {
    public var id: String
    public var name: String
    /// Its one line (`ToolSummary`), made once when it started running.
    public var summary: String
}

/// A turn the server aborted (its last client went away mid-turn, or it
/// reloaded): the chat offers to continue it.
public struct InterruptedTurn: Equatable, Sendable {
    /// What Continue sends: the server's words (`reload_recovery`) or ours.
    public var continuation: String
    /// What the server said about its reload, if it said anything.
    public var reconnectNotice: String?

    var json: JSONValue { ["continuation": .string(continuation), "reconnect_notice": .from(reconnectNotice)] }
}

/// The compacted part of the history: how many of its messages the server
/// counts, shows, and still hides.
public struct OlderHistory: Equatable, Sendable {
    public var total: Int
    public var visible: Int
    public var remaining: Int
    /// The `visible_messages` asked for, while the answer is awaited.
    public var requested: Int?

    var json: JSONValue {
        ["total": .int(Int64(total)), "visible": .int(Int64(visible)), "remaining": .int(Int64(remaining)), "requested": .from(requested)]
    }
}
