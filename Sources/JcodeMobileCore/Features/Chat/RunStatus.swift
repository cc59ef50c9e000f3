import JcodeMobileJSON
import JcodeMobileToolCards

/// What the turn shown is doing, in one honest line (state `/run_status`,
/// the tree's `chat.activity`): a person can tell "running a ten-minute
/// build" from "stuck". Read from the whole app state: the turn, the running
/// tool's card, what the agent asked, the connection.
public struct RunStatus: Equatable, Sendable {
    public enum Kind: String, Sendable, CaseIterable {
        /// Reasoning is streaming.
        case thinking
        /// The reply's text is streaming.
        case writing
        /// A tool runs (its one-line summary and elapsed time).
        case runningTool = "running_tool"
        /// The agent asked the person (a prompt for input or a permission).
        case waitingForYou = "waiting_for_you"
        /// The link dropped while a message of this device was on its way.
        case reconnecting
        /// A quiet spell passed: the chat asked the server whether the turn runs.
        case checking
        /// That check went unanswered a whole spell (Retry: `check_turn`).
        case notAnswering = "not_answering"
        /// Anything else of a running turn (the server's phase or detail).
        case working
    }

    public var kind: Kind
    /// The running tool's name (`running_tool`).
    public var tool: String?
    /// Its one line (`ToolSummary`: "cargo build" for a bash command).
    public var summary: String?
    /// How long it has run, counted in keep-alive ticks (20 s each).
    public var elapsedSecs: Int?
    /// The line as the app shows it ("Running cargo build · 10 min").
    public var text: String

    /// The status of the turn shown; nil when none runs.
    public static func of(_ state: AppState) -> RunStatus? {
        withUnsafePointer(to: state) { of($0) }
    }

    /// `of(_:)`, read in place (the state JSON's section reads it so: the
    /// state is not copied).
    static func of(_ state: UnsafePointer<AppState>) -> RunStatus? {
        let turn = state.pointee.chat.turn
        if !turn.isProcessing {
            // A turn cut by a drop: its message waits for the reconnect's history.
            let cut = state.pointee.chat.outbox.first?.delivery == .unconfirmed
            guard cut, state.pointee.connection.phase == .reconnecting || state.pointee.connection.phase == .offline
                || state.pointee.connection.phase == .connecting
            else { return nil }
            return RunStatus(kind: .reconnecting, text: "Reconnecting…")
        }
        if !state.pointee.approvals.stdinRequests.isEmpty || !state.pointee.approvals.permissionRequests.isEmpty {
            return RunStatus(kind: .waitingForYou, text: "Waiting for you")
        }
        if turn.checkUnanswered { return RunStatus(kind: .notAnswering, text: "jcode is not answering") }
        if turn.isChecking { return RunStatus(kind: .checking, text: "Checking on jcode…") }
        let elapsed = turn.toolTicks &* ConnectionState.keepAliveIntervalMS / 1000
        if let tool = turn.runningTool {
            return RunStatus(
                kind: .runningTool, tool: tool.name, summary: tool.summary.isEmpty ? nil : tool.summary, elapsedSecs: elapsed,
                text: line(tool: tool.name, summary: tool.summary, elapsedSecs: elapsed))
        }
        if let name = turn.serverToolName {
            return RunStatus(kind: .runningTool, tool: name, elapsedSecs: elapsed, text: line(tool: name, summary: "", elapsedSecs: elapsed))
        }
        if turn.isReasoning { return RunStatus(kind: .thinking, text: "jcode is thinking…") }
        if let detail = turn.statusDetail { return RunStatus(kind: .working, text: detail) }
        if turn.isWriting { return RunStatus(kind: .writing, text: "jcode is writing…") }
        if let phase = turn.serverPhase { return RunStatus(kind: .working, text: phase) }
        return RunStatus(kind: .working, text: "jcode is working…")
    }

    /// "Running cargo build · 10 min", "Running read · src/app.rs · 45 s".
    static func line(tool: String, summary: String, elapsedSecs: Int) -> String {
        var text = "Running "
        if ToolName.canonical(tool) == "bash" && !summary.isEmpty {
            text += summary
        } else {
            text += tool
            if !summary.isEmpty { text += " · " + summary }
        }
        if elapsedSecs >= 60 {
            text += " · \(elapsedSecs / 60) min"
        } else if elapsedSecs > 0 {
            text += " · \(elapsedSecs) s"
        }
        return text
    }

    /// Whether what the status is read from differs. Only what `of` reads:
    /// a token count or a quiet tick moves the turn but not its status, so
    /// the section is not read again for them.
    static func inputsDiffer(_ a: UnsafePointer<AppState>, _ b: UnsafePointer<AppState>) -> Bool {
        // In place: a copy of the turn would retain each of its strings.
        return a.pointee.chat.turn.isProcessing != b.pointee.chat.turn.isProcessing
            || a.pointee.chat.turn.checkUnanswered != b.pointee.chat.turn.checkUnanswered
            || a.pointee.chat.turn.isChecking != b.pointee.chat.turn.isChecking
            || a.pointee.chat.turn.toolTicks != b.pointee.chat.turn.toolTicks
            || a.pointee.chat.turn.runningTool != b.pointee.chat.turn.runningTool
            || a.pointee.chat.turn.serverToolName != b.pointee.chat.turn.serverToolName
            || a.pointee.chat.turn.isReasoning != b.pointee.chat.turn.isReasoning
            || a.pointee.chat.turn.statusDetail != b.pointee.chat.turn.statusDetail
            || a.pointee.chat.turn.isWriting != b.pointee.chat.turn.isWriting
            || a.pointee.chat.turn.serverPhase != b.pointee.chat.turn.serverPhase
            || a.pointee.connection.phase != b.pointee.connection.phase
            || a.pointee.approvals.stdinRequests.isEmpty != b.pointee.approvals.stdinRequests.isEmpty
            || a.pointee.approvals.permissionRequests.isEmpty != b.pointee.approvals.permissionRequests.isEmpty
            || a.pointee.chat.outbox.first?.delivery != b.pointee.chat.outbox.first?.delivery
    }

    var json: JSONValue {
        [
            "kind": .string(kind.rawValue), "tool": .from(tool), "summary": .from(summary),
            "elapsed_secs": elapsedSecs.map { .int(Int64($0)) } ?? .null, "text": .string(text),
        ]
    }
}
