import JcodeMobileToolCards

/// A turn that never hangs (docs/PROTOCOL.md, "A turn that never hangs").
///
/// While a turn is shown, every keep-alive tick of the connection (every
/// `ConnectionState.keepAliveIntervalMS`, while connected in the
/// foreground) counts as quiet unless something of the turn arrived since.
/// After a quiet spell (`quietSpellMS`, doubling after each check that found
/// the turn still running with nothing heard since, at most
/// `longestSpellMS`) the chat checks with the server, once per spell:
/// `get_history`, whose `activity {is_processing, current_tool_name}`
/// (`client_state.rs`, `session_activity_snapshot`) says whether the session
/// still runs and what it runs. The answer ends the turn (the history holds
/// its end) or keeps it with an honest status; a check still unanswered a
/// spell later shows "not answering", with Retry (`check_turn`). The core
/// reads no clock: the ticks are its time, so a running tool's elapsed time
/// is counted in ticks. No timer of its own: the keep-alive's ticks suffice.
extension ChatInteractor {
    /// Quiet this long (nothing of the turn arrived), the chat checks with
    /// the server: two keep-alive ticks.
    public static let quietSpellMS = 2 * ConnectionState.keepAliveIntervalMS
    /// The longest quiet spell, however often a check found the turn running.
    public static let longestSpellMS = 320_000

    /// The quiet spell after `confirmed` checks that found the turn running.
    static func spellMS(confirmed: Int) -> Int {
        min(quietSpellMS << min(confirmed, 4), longestSpellMS)
    }

    /// Something of the turn arrived: the quiet spell starts over.
    static func heard(_ state: inout ChatState) {
        guard state.turn.quietTicks != 0 || state.turn.confirmedChecks != 0 || state.turn.checkUnanswered else { return }
        state.turn.quietTicks = 0
        state.turn.confirmedChecks = 0
        state.turn.checkUnanswered = false
    }

    /// The turn is over: the watch forgets it.
    static func forgetWatch(_ state: inout ChatState) {
        state.turn.quietTicks = 0
        state.turn.confirmedChecks = 0
        state.turn.isChecking = false
        state.turn.checkUnanswered = false
        state.turn.runningTool = nil
        state.turn.toolTicks = 0
        state.turn.serverToolName = nil
        state.turn.isWriting = false
        state.turn.isAdopted = false
    }

    /// A timer fired: the connection's keep-alive tick is the watch's.
    func timerFired(_ state: inout ChatState, timerID: String, _ facts: Facts) -> Emission {
        guard timerID == facts.connection.keepAliveTimerID, state.turn.isProcessing else { return .none }
        state.turn.quietTicks &+= 1
        if state.turn.runningTool != nil || state.turn.serverToolName != nil { state.turn.toolTicks &+= 1 }
        let quietMS = state.turn.quietTicks &* ConnectionState.keepAliveIntervalMS
        guard quietMS >= Self.spellMS(confirmed: state.turn.confirmedChecks) else { return .none }
        if state.turn.isChecking {
            guard !state.turn.checkUnanswered else { return .none }
            state.turn.checkUnanswered = true
            return .note("the turn check went unanswered for \(quietMS / 1000) s: jcode is not answering")
        }
        return check(&state, facts, why: "nothing of the turn for \(quietMS / 1000) s")
    }

    /// Asks the server whether the turn still runs (one `get_history`).
    func check(_ state: inout ChatState, _ facts: Facts, why: String) -> Emission {
        guard facts.connection.canSend else { return .note("\(why); not connected: the reconnect's history will say") }
        state.turn.isChecking = true
        state.turn.checkUnanswered = false
        state.turn.quietTicks = 0
        return .note("\(why): checking with the server") + .send(.getHistory)
    }

    /// `check_turn` (Retry when jcode is not answering): check again now.
    func checkTurn(_ state: inout ChatState, _ facts: Facts) -> Emission {
        guard state.turn.isProcessing else { return .note("check_turn: no turn is running") }
        if let refused = facts.requireConnection(to: "check on the turn") { return refused }
        return check(&state, facts, why: "check_turn")
    }

    /// A tool call started running: the status names it from now on.
    static func toolStartedRunning(_ state: inout ChatState, id: String, name: String) {
        var summary = ""
        if let (e, c) = state.transcript.locateToolCall(id) {
            let call = state.transcript.entries[e].toolCalls[c]
            summary = ToolSummary.summary(name: call.name, input: call.input)
        }
        state.turn.runningTool = RunningTool(id: id, name: name, summary: summary)
        state.turn.toolTicks = 0
        state.turn.serverToolName = nil
        state.turn.isWriting = false
    }

    /// A history arrived while a turn was shown: it answers the check (or
    /// comes for another reason); either way it says whether the turn runs.
    /// Returns what ending the turn tells the others, if it ended.
    static func historySaysOfTheTurn(_ state: inout ChatState, _ history: ServerEvent.History, wasProcessing: Bool) -> Emission {
        let checked = state.turn.isChecking
        state.turn.isChecking = false
        state.turn.checkUnanswered = false
        state.turn.quietTicks = 0
        if state.turn.isProcessing {
            state.turn.serverToolName = history.currentToolName.flatMap { $0.isEmpty ? nil : $0 }
            // The card of the running call, kept from before (`LiveTail`), names it best.
            if let name = state.turn.serverToolName, let last = state.transcript.entries.last,
               let call = last.toolCalls.last(where: { $0.status == .running && $0.name == name })
            {
                if state.turn.runningTool?.id != call.id { toolStartedRunning(&state, id: call.id, name: call.name) }
            }
            if checked { state.turn.confirmedChecks &+= 1 }
            return .none
        }
        forgetWatch(&state)
        state.turn.serverPhase = nil
        state.turn.statusDetail = nil
        guard wasProcessing else { return .none }
        let note: Emission =
            checked
            ? .note("the check found the turn over: it ended without its done reaching this device")
            : .note("the history says no turn runs: the turn shown is over")
        return note + .tell(.turnEnded(outcome: .done)) + .announce(.turnFinished(outcome: .done))
    }
}
