import JcodeMobileToolCards

/// The tool cards' readings of their inputs, by card id, kept between
/// builds: a card whose input grew at its end (a `tool_input` delta) reads
/// on from where it stopped (`ToolInputReading`) instead of reading the
/// whole input again. An optimisation: a card built with it equals the
/// card built without.
public final class ToolCardCache {
    // Its stored properties skip Swift's dynamic exclusivity check, as the
    // app's own do (`JcodeMobileApp`): a cache belongs to one app, whose
    // calls are serialised, and a reading's mutation in place is a call into
    // the ToolCards module, across which the check cannot be proved away.
    final class Entry {
        /// The input last read: a copy of its own (the state's input stays
        /// the state's alone), kept by appending what the input gained.
        @exclusivity(unchecked) var input: String
        @exclusivity(unchecked) var reading: ToolInputReading
        @exclusivity(unchecked) var generation: Int

        init(input: String, reading: ToolInputReading, generation: Int) {
            self.input = input
            self.reading = reading
            self.generation = generation
        }
    }

    @exclusivity(unchecked) private var entries: [String: Entry] = [:]
    @exclusivity(unchecked) private var generation = 0
    @exclusivity(unchecked) private var used = 0

    /// The summary and diffs of `call`'s card `id`.
    func shown(_ call: ToolCall, id: String) -> (summary: String, diffs: [FileDiff]?) {
        used &+= 1
        let count = call.input.utf8.count
        if let entry = entries[id], entry.reading.name == call.name {
            let old = entry.input.utf8.count
            if count >= old && LineMemo.hasPrefix(call.input, entry.input, count: old) {
                entry.generation = generation
                if count > old {
                    let utf8 = call.input.utf8
                    entry.input.append(contentsOf: Substring(utf8[utf8.index(utf8.startIndex, offsetBy: old)...]))
                    entry.reading.read(entry.input)
                }
                return (entry.reading.summary(), entry.reading.diffs())
            }
        }
        var reading = ToolInputReading(name: call.name)
        reading.read(call.input)
        let entry = Entry(input: Self.copy(call.input), reading: reading, generation: generation)
        entries[id] = entry
        return (entry.reading.summary(), entry.reading.diffs())
    }

    /// `entry` with its tool calls' inputs replaced by the cards' copies of
    /// them, for a row cache to keep: the state's inputs then stay the
    /// state's alone, and a `tool_input` delta is appended to its call's
    /// input in place instead of copying it whole. Right after the row of
    /// `entry` was built with this cache, each card's copy is its call's
    /// input (the byte count and name are checked all the same).
    func withOwnInputs(_ entry: TranscriptEntry) -> TranscriptEntry {
        guard !entry.toolCalls.isEmpty else { return entry }
        var entry = entry
        for (c, id) in ChatScreen.cardIDs(entry).enumerated() {
            guard let own = entries[id], own.reading.name == entry.toolCalls[c].name,
                  own.input.utf8.count == entry.toolCalls[c].input.utf8.count, own.input.utf8.count > 15
            else { continue }
            entry.toolCalls[c].input = own.input
        }
        return entry
    }

    /// `text` in storage of its own (never shared with the caller's).
    private static func copy(_ text: String) -> String {
        var text = text
        let count = text.utf8.count
        guard count > 0 else { return "" }
        return text.withUTF8 { bytes in
            String(unsafeUninitializedCapacity: count) { buffer in
                _ = buffer.initialize(fromContentsOf: bytes)
                return count
            }
        }
    }

    /// After a build: forgets the cards it did not show (once they are many).
    func sweep() {
        if entries.count > 2 &* used &+ 8 { entries = entries.filter { $0.value.generation == generation } }
        generation &+= 1
        used = 0
    }
}
