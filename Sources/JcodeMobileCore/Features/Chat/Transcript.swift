import JcodeMobileJSON

/// The conversation, built for streaming at any length.
///
/// Every mutation is O(size of the change): text deltas append in place to
/// the entry being streamed (tracked by index, never searched for), and each
/// mutation records a `TranscriptChange` so the change feed can tell a host
/// what happened without diffing the transcript.
///
/// Soft interrupts the agent has not received yet sit at the tail
/// (`isQueued`); new entries are inserted before them, so the queued bubbles
/// always read last.
public struct Transcript: Sendable {
    public private(set) var entries: [TranscriptEntry] = []
    /// The next entry serial; never reused, so ids stay unique across history reloads.
    public private(set) var nextSerial = 1
    /// The assistant entry receiving streamed output, if any.
    public private(set) var streamingIndex: Int?
    /// How many queued entries sit at the tail.
    public private(set) var queuedCount = 0
    /// The tool call `tool_input` appends to.
    public private(set) var latestToolCallID: String?
    /// Which entry (by serial) holds each tool call.
    private var toolOwners: [String: Int] = [:]
    /// The tool calls of the running turn, oldest first.
    private var turnToolCallIDs: [String] = []
    /// Every tool call id of the running turn, whatever its status (ids are
    /// unique only within a turn): a set, so checking one costs the same at
    /// any number of calls.
    private var turnToolCallSet: Set<String> = []
    /// Changes since the last `drainChanges()`.
    public private(set) var changes: [TranscriptChange] = []
    /// Whether the transcript was replaced whole since the last drain.
    public private(set) var wasReset = false
    /// Bytes held, as the budget counts them: every entry's text and
    /// reasoning and its tool calls' inputs, outputs and errors, plus
    /// `entryOverhead` per entry and `toolCallOverhead` per tool call (so
    /// many tiny entries cannot pass the budget either).
    public private(set) var textBytes = 0
    /// What the budget counts for an entry and for a tool call beyond their
    /// text: about what they cost in memory (the entry itself, the strings'
    /// headers, the allocator's rounding).
    public static let entryOverhead = 128
    public static let toolCallOverhead = 64
    /// Entries dropped from the front to stay within `textBudget`, since
    /// the transcript was last replaced.
    public private(set) var trimmedEntries = 0
    /// The most the transcript holds, counted as `textBytes` (see `trimIfOverBudget`).
    public let textBudget: Int
    /// What the layout needs to estimate where an entry sits without
    /// measuring the ones before it: `rowWeights[i]` sums the weights
    /// (`RowWeight`) of the entries before `i` (`entries.count + 1` sums).
    /// Kept up to date by every mutation at the cost of the entries after
    /// the one it touched (streaming writes the last ones), so finding the
    /// entry at a scroll position is a binary search.
    public private(set) var rowWeights: [RowWeight] = [RowWeight()]

    /// `textBudget`: tests use a small one; the app keeps `defaultTextBudget`.
    public init(textBudget: Int = Transcript.defaultTextBudget) {
        self.textBudget = max(textBudget, 1)
    }

    /// An empty transcript, shared (comparing states without their transcripts).
    static let placeholder = Transcript()
    /// One entry: what the chrome knows of a transcript that is not empty (`SemanticTree.chromeKey`).
    static let nonEmptyPlaceholder: Transcript = {
        var transcript = Transcript()
        transcript.append(role: .system)
        return transcript
    }()

    /// 64 MiB of text: far more than a phone shows, a bound on what a long
    /// session (or a server that never stops) makes the app keep.
    public static let defaultTextBudget = 64 << 20

    public var count: Int { entries.count }
    public var isEmpty: Bool { entries.isEmpty }
    /// Where new (unqueued) entries go: before the queued tail.
    public var boundary: Int { entries.count &- queuedCount }

    /// The index of the entry with `serial`, scanning from the end (recent
    /// entries are the ones addressed).
    public func index(ofSerial serial: Int) -> Int? {
        var i = entries.count
        while i > 0 {
            i &-= 1
            if entries[i].serial == serial { return i }
        }
        return nil
    }

    /// Where the tool call `id` is: (entry index, call index).
    public func locateToolCall(_ id: String) -> (entry: Int, call: Int)? {
        guard let serial = toolOwners[id], let e = index(ofSerial: serial),
              let c = entries[e].toolCalls.lastIndex(where: { $0.id == id })
        else { return nil }
        return (e, c)
    }

    // MARK: - Appending

    /// Inserts a new entry before the queued tail; returns its index.
    @discardableResult
    public mutating func append(
        role: TranscriptEntry.Role, text: String = "", isStreaming: Bool = false, imageCount: Int = 0
    ) -> Int {
        let entry = TranscriptEntry(
            serial: takeSerial(), role: role, text: text, isStreaming: isStreaming, imageCount: imageCount)
        let index = boundary
        entries.insert(entry, at: index)
        changes.append(.insert(index: index, entry: entry))
        textBytes &+= Self.entryOverhead &+ text.utf8.count
        refreshWeights(from: index)
        return trimIfOverBudget(keeping: index)
    }

    /// Appends a queued user bubble at the very end; returns its serial.
    @discardableResult
    public mutating func appendQueued(text: String, imageCount: Int = 0) -> Int {
        let entry = TranscriptEntry(serial: takeSerial(), role: .user, text: text, isQueued: true, imageCount: imageCount)
        entries.append(entry)
        queuedCount &+= 1
        changes.append(.insert(index: entries.count &- 1, entry: entry))
        textBytes &+= Self.entryOverhead &+ text.utf8.count
        refreshWeights(from: entries.count &- 1)
        trimIfOverBudget(keeping: entries.count &- 1)
        return entry.serial
    }

    /// The assistant entry being streamed, created (and marked streaming) if
    /// there is none.
    public mutating func streamingEntryCreatingIfNeeded() -> Int {
        if let index = streamingIndex { return index }
        let index = append(role: .assistant, isStreaming: true)
        streamingIndex = index
        return index
    }

    // MARK: - Limits

    /// One field of one entry (its text, its reasoning, a tool call's input
    /// or output) keeps at most this many bytes. What passes it is cut at a
    /// character boundary and `cutMarker` ends the field; later additions to
    /// it are dropped. The caller logs each cut (the methods return false).
    public static let fieldLimit = 1 << 20
    /// Ends a field that was cut, so the person sees that something is missing.
    public static let cutMarker = "\n[… cut: the rest passed the 1 MiB one entry keeps]"

    /// What of `addition` a field of `current` bytes keeps, and whether the
    /// rest was cut (the marker is then part of what is kept).
    static func fitting(_ addition: String, after current: Int) -> (kept: String, cut: Bool) {
        let room = fieldLimit - current
        if addition.utf8.count <= room { return (addition, false) }
        guard room > 0 else { return ("", true) }
        let utf8 = addition.utf8
        var end = utf8.index(utf8.startIndex, offsetBy: room)
        // Back to the start of a character's bytes (never inside a UTF-8 sequence).
        while end > utf8.startIndex && utf8[end] & 0xC0 == 0x80 { end = utf8.index(before: end) }
        return (String(decoding: utf8[..<end], as: UTF8.self) + cutMarker, true)
    }

    /// `text` within the field limit; false in `.cut` when it was cut.
    public static func limited(_ text: String) -> (text: String, cut: Bool) {
        let (kept, cut) = fitting(text, after: 0)
        return (kept, cut)
    }

    // MARK: - Streaming

    /// Appends streamed text; false when some of it was cut (the field is full).
    @discardableResult
    public mutating func appendText(_ text: String, at index: Int) -> Bool {
        let (kept, cut) = Self.fitting(text, after: entries[index].text.utf8.count)
        guard !kept.isEmpty else { return !cut }
        entries[index].text.append(kept)
        changes.append(.appendText(index: index, field: .text, text: kept))
        textBytes &+= kept.utf8.count
        addWeight(RowWeight(bytes: kept.utf8.count), at: index)
        if textBytes > textBudget { trimIfOverBudget(keeping: index) }
        return !cut
    }

    /// Replaces the text; false when it was cut.
    @discardableResult
    public mutating func setText(_ text: String, at index: Int) -> Bool {
        let (kept, cut) = Self.limited(text)
        textBytes &+= kept.utf8.count &- entries[index].text.utf8.count
        entries[index].text = kept
        changes.append(.set(index: index, field: .text, value: .string(kept)))
        refreshWeights(from: index)
        if textBytes > textBudget { trimIfOverBudget(keeping: index) }
        return !cut
    }

    /// Replaces the reasoning (a secret masked across two deltas); false when it was cut.
    @discardableResult
    public mutating func setReasoning(_ text: String, at index: Int) -> Bool {
        let (kept, cut) = Self.limited(text)
        textBytes &+= kept.utf8.count &- entries[index].reasoning.utf8.count
        entries[index].reasoning = kept
        changes.append(.set(index: index, field: .reasoning, value: .string(kept)))
        refreshWeights(from: index)
        if textBytes > textBudget { trimIfOverBudget(keeping: index) }
        return !cut
    }

    /// Appends streamed reasoning; false when some of it was cut.
    @discardableResult
    public mutating func appendReasoning(_ text: String, at index: Int) -> Bool {
        let (kept, cut) = Self.fitting(text, after: entries[index].reasoning.utf8.count)
        guard !kept.isEmpty else { return !cut }
        let opensReasoning = entries[index].reasoning.isEmpty
        entries[index].reasoning.append(kept)
        changes.append(.appendText(index: index, field: .reasoning, text: kept))
        textBytes &+= kept.utf8.count
        addWeight(RowWeight(bytes: kept.utf8.count, boxes: opensReasoning ? 1 : 0), at: index)
        if textBytes > textBudget { trimIfOverBudget(keeping: index) }
        return !cut
    }

    public mutating func setReasoningSecs(_ secs: Double?, at index: Int) {
        entries[index].reasoningSecs = secs
        changes.append(.set(index: index, field: .reasoningSecs, value: .from(secs)))
    }

    public mutating func setStopReason(_ reason: TranscriptEntry.StopReason, at index: Int) {
        entries[index].stopReason = reason
        changes.append(.set(index: index, field: .stopReason, value: .from(reason.wireName)))
    }

    /// Closes the streaming entry: the next delta starts a new one. An entry
    /// left empty is dropped.
    public mutating func finishStreaming() {
        guard let index = streamingIndex else { return }
        streamingIndex = nil
        if entries[index].isEmpty {
            remove(at: index)
        } else {
            entries[index].isStreaming = false
            changes.append(.set(index: index, field: .isStreaming, value: .bool(false)))
        }
    }

    /// Drops the streaming entry and everything it held (a retried attempt).
    public mutating func discardStreaming() {
        guard let index = streamingIndex else { return }
        streamingIndex = nil
        remove(at: index)
    }

    // MARK: - Tool calls

    /// A new turn starts: `tool_input` only ever extends a call of this turn.
    public mutating func beginTurn() {
        latestToolCallID = nil
        turnToolCallIDs.removeAll(keepingCapacity: true)
        turnToolCallSet.removeAll(keepingCapacity: true)
    }

    /// The turn was interrupted: its tool calls that never reported a
    /// result (still preparing or running) are marked interrupted. Costs
    /// the number of tool calls in the turn, not the transcript's length.
    public mutating func interruptOpenToolCalls() {
        for id in turnToolCallIDs {
            guard let (e, c) = locateToolCall(id) else { continue }
            let status = entries[e].toolCalls[c].status
            guard status == .pending || status == .running else { continue }
            entries[e].toolCalls[c].status = .interrupted
            changes.append(.setToolCall(index: e, call: c, value: entries[e].toolCalls[c]))
        }
        turnToolCallIDs.removeAll(keepingCapacity: true)
        turnToolCallSet.removeAll(keepingCapacity: true)
    }

    /// Whether the tool call `id` was started in the running turn. Tool ids
    /// are unique only within a turn: a later turn may use the same id for
    /// a new call.
    public func isToolCallOfThisTurn(_ id: String) -> Bool {
        turnToolCallSet.contains(id)
    }

    /// The turn ended on this side: its tool calls are no longer "this turn's".
    public mutating func forgetTurnToolCalls() {
        turnToolCallIDs.removeAll(keepingCapacity: true)
        turnToolCallSet.removeAll(keepingCapacity: true)
    }

    /// Tool calls one entry holds at most: the next call starts a new entry,
    /// so nothing is dropped and finding a call in its entry stays bounded.
    public static let toolCallsPerEntry = 256

    /// The streaming entry, with room for one more tool call: a full one is
    /// closed and a new one begun.
    public mutating func streamingEntryWithRoomForToolCall() -> Int {
        let index = streamingEntryCreatingIfNeeded()
        guard entries[index].toolCalls.count >= Self.toolCallsPerEntry else { return index }
        finishStreaming()
        return streamingEntryCreatingIfNeeded()
    }

    /// Adds a tool call to the entry at `index`.
    public mutating func addToolCall(_ call: ToolCall, at index: Int) {
        textBytes &+= Self.bytes(of: call)
        entries[index].toolCalls.append(call)
        addWeight(RowWeight(bytes: Self.bytes(of: call) &- Self.toolCallOverhead, boxes: 1), at: index)
        toolOwners[call.id] = entries[index].serial
        latestToolCallID = call.id
        if call.status == .pending || call.status == .running { turnToolCallIDs.append(call.id) }
        turnToolCallSet.insert(call.id)
        changes.append(.insertToolCall(index: index, call: entries[index].toolCalls.count &- 1, value: call))
        if textBytes > textBudget { trimIfOverBudget(keeping: index) }
    }

    /// Appends to the input of the latest tool call. nil: there is none;
    /// false: some of the delta was cut.
    public mutating func appendToLatestToolInput(_ delta: String) -> Bool? {
        guard let id = latestToolCallID, let (e, c) = locateToolCall(id) else { return nil }
        let (kept, cut) = Self.fitting(delta, after: entries[e].toolCalls[c].input.utf8.count)
        guard !kept.isEmpty else { return !cut }
        entries[e].toolCalls[c].input.append(kept)
        changes.append(.appendToolInput(index: e, call: c, text: kept))
        textBytes &+= kept.utf8.count
        addWeight(RowWeight(bytes: kept.utf8.count), at: e)
        if textBytes > textBudget { trimIfOverBudget(keeping: e) }
        return !cut
    }

    /// Updates the tool call `id`; false if it is not in the transcript.
    @discardableResult
    public mutating func updateToolCall(_ id: String, _ update: (inout ToolCall) -> Void) -> Bool {
        guard let (e, c) = locateToolCall(id) else { return false }
        let before = Self.bytes(of: entries[e].toolCalls[c])
        update(&entries[e].toolCalls[c])
        changes.append(.setToolCall(index: e, call: c, value: entries[e].toolCalls[c]))
        let grown = Self.bytes(of: entries[e].toolCalls[c]) &- before
        textBytes &+= grown
        addWeight(RowWeight(bytes: grown), at: e)
        if textBytes > textBudget { trimIfOverBudget(keeping: e) }
        return true
    }

    // MARK: - Queued soft interrupts

    /// Moves the queued entry `serial` to the end of the delivered entries
    /// and marks it delivered; false if it is not queued.
    @discardableResult
    public mutating func unqueue(serial: Int) -> Bool {
        guard let index = index(ofSerial: serial), entries[index].isQueued else { return false }
        var entry = entries[index]
        entry.isQueued = false
        let target = boundary
        if index != target {
            entries.remove(at: index)
            changes.append(.remove(index: index))
            entries.insert(entry, at: target)
            changes.append(.insert(index: target, entry: entry))
            refreshWeights(from: min(index, target))
        } else {
            entries[index] = entry
            changes.append(.set(index: index, field: .isQueued, value: .bool(false)))
        }
        queuedCount &-= 1
        return true
    }

    /// Marks every queued entry delivered, in place.
    public mutating func unqueueAll() {
        for index in boundary..<entries.count {
            entries[index].isQueued = false
            changes.append(.set(index: index, field: .isQueued, value: .bool(false)))
        }
        queuedCount = 0
    }

    /// Removes every queued entry.
    public mutating func removeQueued() {
        while queuedCount > 0 { remove(at: entries.count &- 1) }
    }

    // MARK: - Whole transcript

    public mutating func remove(at index: Int) {
        let entry = entries.remove(at: index)
        textBytes &-= Self.bytes(of: entry)
        if entry.isQueued { queuedCount &-= 1 }
        for call in entry.toolCalls where toolOwners[call.id] == entry.serial { toolOwners[call.id] = nil }
        if let s = streamingIndex {
            if s == index { streamingIndex = nil } else if s > index { streamingIndex = s &- 1 }
        }
        if let latest = latestToolCallID, toolOwners[latest] == nil { latestToolCallID = nil }
        changes.append(.remove(index: index))
        refreshWeights(from: index)
    }

    /// Replaces everything (the server's authoritative history). Entries get
    /// fresh serials.
    public mutating func replaceAll(with newEntries: [TranscriptEntry]) {
        entries = newEntries
        for i in entries.indices {
            entries[i].serial = takeSerial()
        }
        queuedCount = entries.reversed().prefix(while: \.isQueued).count
        streamingIndex = entries.lastIndex(where: \.isStreaming)
        toolOwners.removeAll(keepingCapacity: true)
        turnToolCallIDs.removeAll(keepingCapacity: true)
        turnToolCallSet.removeAll(keepingCapacity: true)
        latestToolCallID = nil
        textBytes = 0
        for entry in entries {
            textBytes &+= Self.bytes(of: entry)
            for call in entry.toolCalls { toolOwners[call.id] = entry.serial }
        }
        trimmedEntries = 0
        changes.removeAll()
        wasReset = true
        refreshWeights(from: 0)
        trimIfOverBudget(keeping: entries.count &- 1)
    }

    // MARK: - The text budget

    static func bytes(of call: ToolCall) -> Int {
        toolCallOverhead &+ call.input.utf8.count &+ call.output.utf8.count &+ (call.error?.utf8.count ?? 0)
    }

    static func bytes(of entry: TranscriptEntry) -> Int {
        var n = entryOverhead &+ entry.text.utf8.count &+ entry.reasoning.utf8.count
        for call in entry.toolCalls { n &+= bytes(of: call) }
        return n
    }

    /// Past `textBudget`, the oldest entries go, at once, until a quarter of
    /// the budget is free again (so a trim happens once per that much text,
    /// and its cost, proportional to the entries kept, is amortised). The
    /// entry at `keep` (the one just written) and the queued tail stay; a
    /// system entry first in the transcript says how many went, and the
    /// host is told to take the transcript again (the change feed resyncs).
    /// Returns where the entry at `keep` is now.
    @discardableResult
    mutating func trimIfOverBudget(keeping keep: Int) -> Int {
        guard textBytes > textBudget else { return keep }
        let target = textBudget - textBudget / 4
        let marked = trimmedEntries > 0 && entries.first?.role == .system
        var first = marked ? 1 : 0
        var freed = 0
        var end = first
        let stop = min(keep, streamingIndex ?? keep, boundary)
        while end < stop && textBytes &- freed > target {
            freed &+= Self.bytes(of: entries[end])
            end &+= 1
        }
        guard end > first else { return keep }
        for entry in entries[first..<end] {
            for call in entry.toolCalls where toolOwners[call.id] == entry.serial { toolOwners[call.id] = nil }
        }
        let dropped = end &- first
        entries.removeSubrange(first..<end)
        textBytes &-= freed
        trimmedEntries &+= dropped
        if let latest = latestToolCallID, toolOwners[latest] == nil { latestToolCallID = nil }
        let marker = "[\(trimmedEntries) earlier entries are not kept: the transcript keeps \(textBudget >> 20) MiB of text]"
        if marked {
            textBytes &+= marker.utf8.count &- entries[0].text.utf8.count
            entries[0].text = marker
        } else {
            entries.insert(TranscriptEntry(serial: takeSerial(), role: .system, text: marker), at: 0)
            textBytes &+= Self.entryOverhead &+ marker.utf8.count
            first = 0
        }
        let shift = marked ? dropped : dropped &- 1
        if let s = streamingIndex { streamingIndex = s &- shift }
        changes.removeAll()
        wasReset = true
        refreshWeights(from: 0)
        return keep &- shift
    }

    public mutating func removeAll() { replaceAll(with: []) }

    /// Makes sure entries created from now on get serials of at least
    /// `next` (a replaced state must not reuse ids a host has seen).
    public mutating func advanceSerial(atLeast next: Int) {
        nextSerial = max(nextSerial, next)
    }

    /// Records that the whole transcript was swapped in from elsewhere (a
    /// fixture replacing the state), so the change feed resends it.
    public mutating func recordReset() {
        changes.removeAll()
        wasReset = true
    }

    /// Hands the changes recorded since the last call to `drained` (which
    /// must be empty; its storage is kept for the next ones: no allocation
    /// per call), and whether the transcript was reset (then only the
    /// reset is reported: `drained` stays empty).
    mutating func drainChanges(into drained: inout [TranscriptChange]) -> Bool {
        let reset = wasReset
        wasReset = false
        guard !changes.isEmpty else { return reset }
        swap(&changes, &drained)
        if reset { drained.removeAll(keepingCapacity: true) }
        return reset
    }

    /// Returns and forgets the changes recorded since the last call. After
    /// a reset only the reset is reported (the whole transcript is resent).
    public mutating func drainChanges() -> (changes: [TranscriptChange], reset: Bool) {
        var drained: [TranscriptChange] = []
        let reset = drainChanges(into: &drained)
        return (drained, reset)
    }

    // MARK: - Row weights

    /// Recomputes the sums after `index` (an entry was inserted, removed
    /// or rewritten there): the cost of the entries from `index` on.
    private mutating func refreshWeights(from index: Int) {
        let start = min(max(0, index), entries.count)
        rowWeights.removeSubrange((start &+ 1)...)
        var sum = rowWeights[start]
        rowWeights.reserveCapacity(entries.count &+ 1)
        for k in start..<entries.count {
            sum = sum + RowWeight(of: entries[k])
            rowWeights.append(sum)
        }
    }

    /// Adds `weight` to the entry at `index` (it grew in place).
    private mutating func addWeight(_ weight: RowWeight, at index: Int) {
        var k = index &+ 1
        while k < rowWeights.count {
            rowWeights[k] = rowWeights[k] + weight
            k &+= 1
        }
    }

    private mutating func takeSerial() -> Int {
        defer { nextSerial &+= 1 }
        return nextSerial
    }
}

extension Transcript: Equatable {
    /// Equal content and cursors; the change journal is not part of the value.
    public static func == (lhs: Transcript, rhs: Transcript) -> Bool {
        lhs.entries == rhs.entries && lhs.nextSerial == rhs.nextSerial && lhs.streamingIndex == rhs.streamingIndex
            && lhs.queuedCount == rhs.queuedCount && lhs.latestToolCallID == rhs.latestToolCallID
    }
}

/// One recorded mutation of the transcript, with the values it wrote, in the
/// order it happened. Written to the change feed as an operation on
/// `/transcript` (assembled from fixed pieces: this runs for every delta).
public enum TranscriptChange: Equatable, Sendable {
    public enum Field: String, Sendable {
        case text
        case reasoning
        case reasoningSecs = "reasoning_secs"
        case isStreaming = "is_streaming"
        case isQueued = "is_queued"
        case stopReason = "stop_reason"
    }

    case insert(index: Int, entry: TranscriptEntry)
    case remove(index: Int)
    case set(index: Int, field: Field, value: JSONValue)
    case appendText(index: Int, field: Field, text: String)
    case insertToolCall(index: Int, call: Int, value: ToolCall)
    case setToolCall(index: Int, call: Int, value: ToolCall)
    case appendToolInput(index: Int, call: Int, text: String)
}

extension TranscriptChange {
    /// Streamed text appended to an entry's field.
    var isAppendedText: Bool {
        if case .appendText = self { return true }
        return false
    }
}

extension TranscriptChange.Field {
    /// `/<field>"`: the end of the operation's path.
    var pathTail: StaticString {
        switch self {
        case .text: return "/text\""
        case .reasoning: return "/reasoning\""
        case .reasoningSecs: return "/reasoning_secs\""
        case .isStreaming: return "/is_streaming\""
        case .isQueued: return "/is_queued\""
        case .stopReason: return "/stop_reason\""
        }
    }
}

extension TranscriptChange {
    /// `{"op":…,"path":"/transcript/…","value":…}`
    func write(to w: inout JSONWriter) {
        switch self {
        case .insert(let index, let entry):
            begin(&w, #"{"op":"add","path":"/transcript/"#, index, tail: #"","value":"#)
            entry.write(to: &w)
        case .remove(let index):
            begin(&w, #"{"op":"remove","path":"/transcript/"#, index, tail: "\"")
        case .set(let index, let field, let value):
            begin(&w, #"{"op":"replace","path":"/transcript/"#, index, tail: field.pathTail)
            w.fragment(#","value":"#)
            w.valueFollows()
            w.value(value)
        case .appendText(let index, let field, let text):
            begin(&w, #"{"op":"append","path":"/transcript/"#, index, tail: field.pathTail)
            w.fragment(#","value":"#)
            w.valueFollows()
            w.string(text)
        case .insertToolCall(let index, let call, let value):
            begin(&w, #"{"op":"add","path":"/transcript/"#, index, call: call, tail: #"","value":"#)
            value.write(to: &w)
        case .setToolCall(let index, let call, let value):
            begin(&w, #"{"op":"replace","path":"/transcript/"#, index, call: call, tail: #"","value":"#)
            value.write(to: &w)
        case .appendToolInput(let index, let call, let text):
            begin(&w, #"{"op":"append","path":"/transcript/"#, index, call: call, tail: #"/input","value":"#)
            w.string(text)
        }
        w.fragment("}")
        w.endFragment()
    }

    /// Writes the operation up to its value: `{"op":…,"path":"/transcript/<index>[/tool_calls/<call>]<tail>`.
    private func begin(_ w: inout JSONWriter, _ head: StaticString, _ index: Int, call: Int? = nil, tail: StaticString) {
        w.beginFragment()
        w.fragment(head)
        w.fragment(integer: index)
        if let call {
            w.fragment("/tool_calls/")
            w.fragment(integer: call)
        }
        w.fragment(tail)
        w.valueFollows()
    }
}

/// How much an entry holds, as the layout estimates heights from it: its
/// boxes (the entry, its reasoning, each tool card) and the bytes of text
/// they show. Additive, so sums over a range of entries estimate the range.
public struct RowWeight: Equatable, Sendable {
    // 32 bits each (8 bytes a sum): the transcript's text budget keeps both far below 2^31.
    private var storedBytes: Int32 = 0
    private var storedBoxes: Int32 = 0
    public var bytes: Int { Int(storedBytes) }
    public var boxes: Int { Int(storedBoxes) }

    public init(bytes: Int = 0, boxes: Int = 0) {
        storedBytes = Int32(truncatingIfNeeded: bytes)
        storedBoxes = Int32(truncatingIfNeeded: boxes)
    }

    public init(of entry: TranscriptEntry) {
        var bytes = entry.text.utf8.count &+ entry.reasoning.utf8.count
        for call in entry.toolCalls {
            bytes &+= call.input.utf8.count &+ call.output.utf8.count &+ (call.error?.utf8.count ?? 0)
        }
        self.init(bytes: bytes, boxes: 1 &+ entry.toolCalls.count &+ (entry.reasoning.isEmpty ? 0 : 1))
    }

    public static func + (a: RowWeight, b: RowWeight) -> RowWeight {
        var sum = a
        sum.storedBytes &+= b.storedBytes
        sum.storedBoxes &+= b.storedBoxes
        return sum
    }

    public static func - (a: RowWeight, b: RowWeight) -> RowWeight {
        var difference = a
        difference.storedBytes &-= b.storedBytes
        difference.storedBoxes &-= b.storedBoxes
        return difference
    }
}
