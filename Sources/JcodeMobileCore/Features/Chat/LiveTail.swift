/// The live tail of a running turn: what this device saw of the turn that
/// the server's history does not hold yet (docs/PROTOCOL.md, "Resume").
///
/// jcode persists an assistant message when an API call's stream ends (its
/// text and the tool calls it asked for), a tool row when the tool returns;
/// a history taken mid-turn lacks the text streaming now, the reasoning of
/// the call, and the running tool's input and state (a row names its tool
/// calls without ids: `render.rs`). After a reconnect, a reload, a check or a
/// switch away and back, the transcript is the history plus that tail, so
/// nothing is shown twice and nothing the person saw vanishes.
enum LiveTail {
    /// The reply of the running turn, if the transcript ends with one that
    /// is still open: streaming, or with a tool call not finished (a
    /// `message_end` closes the entry before its tools run). A finished
    /// reply may be an earlier turn's: it is not taken.
    static func reply(in transcript: Transcript) -> TranscriptEntry? {
        if let index = transcript.streamingIndex { return transcript.entries[index] }
        guard let last = transcript.entries.lastIndex(where: { !$0.isQueued }),
              transcript.entries[last].role == .assistant,
              transcript.entries[last].toolCalls.contains(where: { $0.status == .pending || $0.status == .running })
        else { return nil }
        return transcript.entries[last]
    }

    /// Merges `reply` into `entries` (a history taken while its turn runs):
    /// the history's placeholders for tool calls of the turn take the calls
    /// as this device saw them (id, input, running), and what the history
    /// lacks follows as the streaming entry. Returns the entries to show.
    static func merge(_ reply: TranscriptEntry, into entries: [TranscriptEntry]) -> [TranscriptEntry] {
        var entries = entries
        let turnStart = (entries.lastIndex(where: { $0.role == .user }).map { $0 + 1 }) ?? 0
        var shownText = ""
        var shownReasoning = false
        var leftover: [ToolCall] = []
        for e in turnStart..<entries.count where entries[e].role == .assistant {
            shownText += entries[e].text
            if !entries[e].reasoning.isEmpty { shownReasoning = true }
        }
        for call in reply.toolCalls {
            if locate(call.id, in: entries, from: turnStart) != nil { continue }
            // The history names the call without an id: the first placeholder of that name takes it.
            if let (e, c) = placeholder(named: call.name, in: entries, from: turnStart) {
                entries[e].toolCalls[c] = call
            } else {
                leftover.append(call)
            }
        }
        var tail = TranscriptEntry(serial: 0, role: .assistant, toolCalls: leftover, isStreaming: true)
        if reply.text.hasPrefix(shownText) { tail.text = String(reply.text.dropFirst(shownText.count)) }
        if !shownReasoning {
            tail.reasoning = reply.reasoning
            tail.reasoningSecs = reply.reasoningSecs
        }
        guard !tail.isEmpty else { return entries }
        entries.append(tail)
        return entries
    }

    private static func locate(_ id: String, in entries: [TranscriptEntry], from start: Int) -> (Int, Int)? {
        for e in start..<entries.count {
            if let c = entries[e].toolCalls.firstIndex(where: { $0.id == id }) { return (e, c) }
        }
        return nil
    }

    private static func placeholder(named name: String, in entries: [TranscriptEntry], from start: Int) -> (Int, Int)? {
        for e in start..<entries.count {
            if let c = entries[e].toolCalls.firstIndex(where: { $0.id.hasPrefix(historyCallPrefix) && $0.name == name }) { return (e, c) }
        }
        return nil
    }

    /// The id a history's tool call gets when its row names it without one.
    static let historyCallPrefix = "history."
}
