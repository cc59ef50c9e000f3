/// The message list, windowed: the tree holds the rows in and near the
/// viewport, never the whole conversation.
///
/// The list's rows are, in order: "Load earlier messages" (a compacted
/// conversation), one row per transcript entry, the images the history did
/// not anchor to a message, and the messages still waiting in the outbox.
/// Where a row sits is estimated from the transcript's running sums of
/// `RowWeight` (no row before it is measured), so finding the rows at a
/// scroll position is a binary search; the rows of the window are then laid
/// out exactly, one after the other. A list of at most `exactRowLimit` rows
/// is laid out whole, exactly.
struct MessageRows {
    enum Row: Equatable {
        case older
        case entry(Int)
        case image(Int)
        case outbox(Int)
    }

    let chat: ChatState
    /// Which collapsible nodes the person opened or closed.
    let navigation: NavigationState
    let images: ChatScreen.ImagePlaces
    /// The outbox messages not yet in the transcript, in order.
    let waiting: [Int]
    let hasOlder: Bool
    let count: Int
    /// Characters per line of a row's text, at the list's width.
    let perLine: Int

    init(_ state: AppState, width: Int) {
        self = withUnsafePointer(to: state) { MessageRows($0, width: width) }
    }

    /// The same, of the state read in place.
    init(_ state: UnsafePointer<AppState>, width: Int) {
        chat = state.pointee.chat
        navigation = state.pointee.navigation
        images = ChatScreen.ImagePlaces(state.pointee.chat.images)
        var waiting: [Int] = []
        for (k, message) in state.pointee.chat.outbox.enumerated() where !message.isInTranscript { waiting.append(k) }
        self.waiting = waiting
        hasOlder = state.pointee.chat.olderHistory != nil
        count = (hasOlder ? 1 : 0) &+ state.pointee.chat.transcript.count &+ images.unanchored.count &+ waiting.count
        perLine = Layout.charactersPerLine(width)
    }

    func row(_ r: Int) -> Row {
        var r = r
        if hasOlder {
            if r == 0 { return .older }
            r &-= 1
        }
        let entries = chat.transcript.count
        if r < entries { return .entry(r) }
        r &-= entries
        if r < images.unanchored.count { return .image(images.unanchored[r]) }
        return .outbox(waiting[r &- images.unanchored.count])
    }

    // MARK: - Estimates

    /// What a row not laid out is taken to measure: a box per entry,
    /// reasoning and tool card, plus its text at the list's width.
    static let boxHeight = 60
    static let otherRowHeight = 60

    func estimate(_ weight: RowWeight) -> Int {
        weight.boxes &* Self.boxHeight &+ weight.bytes / perLine &* Layout.lineHeight
    }

    /// Where row `r` starts in the list's content, estimated (`count` for the end).
    func estimatedTop(_ r: Int) -> Int {
        guard r > 0 else { return 0 }
        var r = r
        var top = 0
        if hasOlder {
            top = Layout.buttonHeight &+ Layout.gap
            r &-= 1
        }
        let entries = chat.transcript.count
        top &+= estimate(chat.transcript.rowWeights[min(r, entries)])
        if r > entries { top &+= (r &- entries) &* Self.otherRowHeight }
        return top
    }

    /// The row whose estimated extent holds `y` (the first for y < 0, the last past the end).
    func row(atEstimated y: Int) -> Int {
        var low = 0
        var high = count &- 1
        while low < high {
            let mid = (low &+ high &+ 1) / 2
            if estimatedTop(mid) <= y { low = mid } else { high = mid &- 1 }
        }
        return low
    }

    // MARK: - Nodes

    static func isPrompt(_ entry: TranscriptEntry) -> Bool { entry.role == .user && !entry.isQueued }

    /// The node of row `r`, not laid out. `prompt`: the entry's prompt
    /// ordinal, when it is a prompt.
    func node(_ r: Row, prompt: Int?, markdown: MarkdownCache? = nil, cards: ToolCardCache? = nil) -> SemanticNode {
        switch r {
        case .older:
            guard let older = chat.olderHistory else { return ChatScreen.message(TranscriptEntry(serial: 0, role: .system)) }
            return ChatScreen.loadOlder(older, processing: chat.turn.isProcessing)
        case .entry(let i):
            return ChatScreen.message(
                chat.transcript.entries[i], images: images, prompt: prompt, all: chat.images, navigation: navigation, markdown: markdown,
                cards: cards)
        case .image(let k):
            return ChatScreen.image("image.\(k)", chat.images[k])
        case .outbox(let k):
            return ChatScreen.outboxMessage(chat.outbox[k])
        }
    }
}

/// Rows already built and measured, by transcript entry: a row whose entry
/// has not changed is reused as laid out, so a tree after one streamed
/// delta builds one row. Holds the rows of the last window only. A cache
/// is an optimisation: a tree built with one equals the tree built without.
public final class RowCache {
    /// A class: the build reads and updates slots in place, never copying
    /// the entry and the nodes out of the dictionary and back.
    final class Slot {
        let entry: TranscriptEntry
        let prompt: Int?
        /// Laid out at y = 0 (made from `placed` when first asked for, for a
        /// row laid out where it is placed), the height including the gap after it.
        @exclusivity(unchecked) private var atZero: SemanticNode?
        let height: Int
        /// The node as last placed, moved down by `placedBy` (reused as is
        /// when the row has not moved: the tree diff then skips it whole).
        @exclusivity(unchecked) var placed: SemanticNode?
        @exclusivity(unchecked) var placedBy = 0

        init(entry: TranscriptEntry, prompt: Int?, node: SemanticNode, height: Int) {
            self.entry = entry
            self.prompt = prompt
            self.atZero = node
            self.height = height
        }

        /// A row laid out where it is placed, `by` down.
        init(entry: TranscriptEntry, prompt: Int?, placed: SemanticNode, by: Int, height: Int) {
            self.entry = entry
            self.prompt = prompt
            self.placed = placed
            self.placedBy = by
            self.height = height
        }

        var node: SemanticNode {
            if let atZero { return atZero }
            var node = placed!
            Layout.shift(&node, by: -placedBy)
            atZero = node
            return node
        }
    }

    @exclusivity(unchecked) private var slots: [Int: Slot] = [:]
    /// Line counts of the rows' long texts.
    let lines = LineMemo()
    /// The rows' markdown, parsed on as replies stream.
    let markdown = MarkdownCache()
    /// The tool cards' inputs, read on as they stream.
    let cards = ToolCardCache()
    @exclusivity(unchecked) private var images: [HistoryImage] = []
    @exclusivity(unchecked) private var expansions: [NavigationState.Expansion] = []
    @exclusivity(unchecked) private var x = 0
    @exclusivity(unchecked) private var width = 0
    /// The rows the running build used.
    @exclusivity(unchecked) private var used: [Int] = []
    /// Whether a build is running (between `begin` and `end`).
    @exclusivity(unchecked) private var building = false
    /// How the last build placed its window (nil: not laid out, or the
    /// list was hidden).
    @exclusivity(unchecked) var plan: WindowPlan?

    public init() {}

    /// Before a build: rows built at another place or width, or with other
    /// images or other nodes opened, are not reused.
    func begin(images: [HistoryImage], expansions: [NavigationState.Expansion], x: Int, width: Int) {
        if images != self.images || expansions != self.expansions || x != self.x || width != self.width {
            slots.removeAll()
            self.images = images
            self.expansions = expansions
            self.x = x
            self.width = width
        }
        used.removeAll(keepingCapacity: true)
        building = true
    }

    func lookup(serial: Int, entry: TranscriptEntry, prompt: Int?) -> (node: SemanticNode, height: Int)? {
        guard let slot = slots[serial], slot.prompt == prompt, slot.entry == entry else { return nil }
        if building { used.append(serial) }
        return (slot.node, slot.height)
    }

    func store(serial: Int, entry: TranscriptEntry, prompt: Int?, node: SemanticNode, height: Int) {
        if building { used.append(serial) }
        slots[serial] = Slot(entry: entry, prompt: prompt, node: node, height: height)
    }

    /// Keeps a row laid out where it is placed, `by` down.
    func store(serial: Int, entry: TranscriptEntry, prompt: Int?, placed node: SemanticNode, by: Int, height: Int) {
        if building { used.append(serial) }
        slots[serial] = Slot(entry: entry, prompt: prompt, placed: node, by: by, height: height)
    }

    /// The entry row `serial` was built for, and its prompt ordinal.
    func entry(serial: Int) -> (entry: TranscriptEntry, prompt: Int?)? {
        slots[serial].map { ($0.entry, $0.prompt) }
    }

    func has(serial: Int) -> Bool { slots[serial] != nil }

    /// Drops row `serial` (a row patched in place is then held by the tree alone).
    func forget(serial: Int) { slots[serial] = nil }

    /// The row `serial` placed `dy` down: the one placed before when it moved the same.
    func placed(serial: Int, by dy: Int, _ place: (inout SemanticNode) -> Void) -> SemanticNode? {
        guard let slot = slots[serial] else { return nil }
        if let placed = slot.placed, slot.placedBy == dy { return placed }
        var node = slot.node
        place(&node)
        slot.placed = node
        slot.placedBy = dy
        return node
    }

    /// After a build: forgets the rows it did not use (when they are many).
    func end() {
        building = false
        if slots.count > 2 &* used.count &+ 16 {
            let kept = Set(used)
            slots = slots.filter { kept.contains($0.key) }
        }
        lines.sweep()
        markdown.sweep()
        cards.sweep()
    }
}

/// How `placeMessages` chose and placed the rows of the window it laid
/// out last: what `patchMessages` needs to tell whether a row changed in
/// place leaves every other row where it was.
struct WindowPlan {
    enum Mode: Equatable {
        /// The list laid out whole (at most `Layout.exactRowLimit` rows):
        /// every place comes from measured heights.
        case exact
        /// Scrolled away from the end: the row at the offset (`anchor`)
        /// keeps its estimated place, which the estimates of the rows
        /// above it decide.
        case anchored(Int)
        /// At the end: the last rows, measured up from the last one.
        case end
    }

    struct Row {
        /// The transcript entry's serial (nil for the other rows).
        var serial: Int?
        /// How far down from y = 0 the row was placed.
        var by: Int
        var height: Int
    }

    var mode: Mode
    var frame: SemanticNode.Bounds
    /// The scroll position asked for (nil: the end).
    var requested: Int?
    /// Where the window's first row starts in the content (exact and end).
    var top: Int
    var start: Int
    var total: Int
    var rows: [Row]

    /// The scroll offset of a window laid out whole or at the end, with
    /// `contentHeight` of content: the end, or the offset asked for within it.
    static func offset(_ mode: Mode, requested: Int?, contentHeight: Int, frameHeight: Int) -> Int {
        let maxOffset = max(0, contentHeight &- frameHeight)
        switch mode {
        case .exact: return min(max(0, requested ?? maxOffset), maxOffset)
        case .end, .anchored: return maxOffset
        }
    }

    /// Whether the end's window, measured up from the last row until the
    /// rows fill `wanted`, is still the one laid out when its rows measure
    /// `heights`: no row more above it, none fewer.
    func endWindowHolds(heights: [Int], wanted: Int) -> Bool {
        var sum = 0
        var k = heights.count
        while k > 0 && sum < wanted {
            k &-= 1
            sum &+= heights[k]
        }
        return k == 0 && (sum >= wanted || start == 0)
    }

    /// Whether row `r` of the window can change its content, keeping its
    /// height, with every other row, the window and the scroll staying as
    /// laid out. Its estimate may change too: at the end the window is
    /// measured from the last row, and the content above it is estimated
    /// from the rows before the window's first; scrolled away, the anchor
    /// and its place come from the estimates of the rows before the anchor
    /// (so a row above the anchor cannot change in place), and the content
    /// below the window from the rows after it.
    func keeps(_ r: Int) -> Bool {
        guard r >= start, r < start &+ rows.count else { return false }
        switch mode {
        case .exact, .end: return true
        case .anchored(let anchor): return r >= anchor
        }
    }
}

extension Layout {
    /// A list of at most this many rows is laid out whole.
    static let exactRowLimit = 64

    /// Fills the message list with its window of rows and lays them out in
    /// `frame`, scrolled to `requested` (nil: the end, following new
    /// messages). Rows lie in the list's content coordinates (x as on the
    /// screen, y from the top of the content: on screen it is
    /// `frame.y - scroll.offset + y`), so scrolling, or a reply growing at
    /// the end, moves no row; the window holds the rows in the viewport
    /// and the overscan (a frame's height above and below it).
    static func placeMessages(
        _ node: inout SemanticNode, frame: SemanticNode.Bounds, offset requested: Int?, rows: MessageRows, cache: RowCache?
    ) {
        node.bounds = frame
        node.children.removeAll()
        cache?.plan = nil
        guard node.visible else {
            node.scroll = SemanticNode.Scroll(offset: 0, contentHeight: 0, maxOffset: 0)
            node.window = SemanticNode.Window(start: 0, end: 0, total: rows.count)
            return
        }
        cache?.begin(images: rows.chat.images, expansions: rows.navigation.expansions, x: frame.x, width: frame.width)
        defer { cache?.end() }
        var measurer = RowMeasurer(rows: rows, x: frame.x, width: frame.width, cache: cache)
        let total = rows.count
        let height = max(0, frame.height)

        var start = 0
        var tops: [Int] = []  // content y of each measured row, from `start`
        var heights: [Int] = []  // and its height
        var placed: [SemanticNode] = []
        var contentHeight = 0
        var offset = 0
        var settled = false
        var mode = WindowPlan.Mode.end
        var top = 0

        if total <= exactRowLimit {
            var y = 0
            for r in 0..<total {
                let (row, h) = measurer.measure(r)
                tops.append(y)
                heights.append(h)
                placed.append(row)
                y &+= h
            }
            contentHeight = y
            offset = WindowPlan.offset(.exact, requested: requested, contentHeight: contentHeight, frameHeight: height)
            settled = true
            mode = .exact
        } else if let requested {
            // The row at the wanted offset keeps its estimated place, the
            // rows around it are measured; near the top, where the rows
            // above it reach the first, the list is placed exactly from 0.
            let wanted = max(0, requested)
            let anchor = rows.row(atEstimated: wanted)
            var above: [(node: SemanticNode, height: Int)] = []
            var up = 0
            start = anchor
            while start > 0 && up < height {
                start &-= 1
                let row = measurer.measure(start)
                above.append(row)
                up &+= row.height
            }
            var y = start == 0 ? up : rows.estimatedTop(anchor)
            for (row, h) in above {  // nearest first
                y &-= h
                tops.append(y)
                heights.append(h)
                placed.append(row)
            }
            tops.reverse()
            heights.reverse()
            placed.reverse()
            y = start == 0 ? up : rows.estimatedTop(anchor)
            var r = anchor
            while r < total && y < wanted &+ 2 &* height {
                let (row, h) = measurer.measure(r)
                tops.append(y)
                heights.append(h)
                placed.append(row)
                y &+= h
                r &+= 1
            }
            contentHeight = y &+ (rows.estimatedTop(total) &- rows.estimatedTop(r))
            if wanted <= max(0, contentHeight &- height) {
                offset = wanted
                settled = true
                mode = .anchored(anchor)
            }
        }
        if !settled {
            // The end: the last rows, measured from the last one up until
            // they fill the frame and a frame above it. Which rows these are
            // depends on their measured heights alone, never on estimates.
            let wanted = 2 &* height
            start = total
            heights.removeAll()
            placed.removeAll()
            var sum = 0
            while start > 0 && sum < wanted {
                start &-= 1
                let (row, h) = measurer.measure(start)
                placed.append(row)
                heights.append(h)
                sum &+= h
            }
            placed.reverse()
            heights.reverse()
            top = start == 0 ? 0 : rows.estimatedTop(start)
            tops.removeAll()
            var y = top
            for h in heights {
                tops.append(y)
                y &+= h
            }
            contentHeight = y
            offset = WindowPlan.offset(.end, requested: nil, contentHeight: contentHeight, frameHeight: height)
            mode = .end
        }
        var plan = WindowPlan(mode: mode, frame: frame, requested: requested, top: top, start: start, total: total, rows: [])
        plan.rows.reserveCapacity(placed.count)
        for k in placed.indices {
            // In the list's content coordinates: scrolling moves no row.
            let by = tops[k]
            let serial = measurer.serial(start &+ k)
            if let cache, let serial, let node = cache.placed(serial: serial, by: by, { shift(&$0, by: by) }) {
                placed[k] = node
            } else if by != 0 {
                shift(&placed[k], by: by)
            }
            plan.rows.append(WindowPlan.Row(serial: serial, by: by, height: heights[k]))
        }
        cache?.plan = plan
        node.children = placed
        node.scroll = SemanticNode.Scroll(offset: offset, contentHeight: contentHeight, maxOffset: max(0, contentHeight &- height))
        node.window = SemanticNode.Window(start: start, end: start &+ placed.count, total: total)
    }

    /// Rows whose transcript entries changed in place (nothing inserted,
    /// removed or requeued, nothing else in the state changed), replaced in
    /// the list `placeMessages` laid out last, without laying it out again.
    /// When their heights stayed, every other row, the scroll and the
    /// window stay as they were; when one changed in a list laid out whole
    /// or at its end, the rows move by what the content grew and the scroll
    /// follows (the window itself must stay: `WindowPlan.endWindowHolds`).
    /// nil when that would not be the list `placeMessages` lays out now (a
    /// row outside the window changed, the window would change, or its
    /// place depends on the row's estimate: `WindowPlan.keeps`); the caller
    /// then lays it out.
    ///
    /// `textAppended`: the one changed entry changed only by text appended
    /// to its text (the store's record says so: `InPlaceChanges`); its row,
    /// a reply in markdown, is then patched where it lies.
    ///
    /// What it returns, row by row: a row replaced (its index in the
    /// window and the row as it was: the caller diffs it), or a streamed
    /// reply's row patched where it lies (`StreamedRowPatch`) and the tree
    /// changes that say how.
    enum RowUpdate {
        case replaced(index: Int, old: SemanticNode)
        case patched([TreeChange])
    }

    static func patchMessages(
        _ node: inout SemanticNode, changedEntries: [Int], textAppended: Bool = false, rows: MessageRows, cache: RowCache
    ) -> [RowUpdate]? {
        guard let plan = cache.plan, plan.total == rows.count, plan.rows.count == node.children.count else { return nil }
        var measurer = RowMeasurer(rows: rows, x: plan.frame.x, width: plan.frame.width, cache: cache)
        // A streamed reply (one entry, its text grown at its end).
        if textAppended && changedEntries.count == 1 {
            let r = changedEntries[0] &+ (rows.hasOlder ? 1 : 0)
            let k = r &- plan.start
            if plan.keeps(r), let serial = plan.rows[k].serial, serial == measurer.serial(r),
               let patch = measurer.streamedPatch(r, serial: serial, row: node.children[k]) {
                let updates = patchStreamed(&node, k, serial, patch, plan: plan, cache: cache)
                #if DEBUG
                if updates != nil {
                    assert(measurer.builtAgain(r, at: plan.rows[k].by) == node.children[k], "a patched row differs from the row built again")
                }
                #endif
                return updates
            }
        }
        var changed: [(index: Int, serial: Int)] = []
        var heights: [Int]?
        for entry in changedEntries {
            let r = entry &+ (rows.hasOlder ? 1 : 0)
            let k = r &- plan.start
            guard plan.keeps(r), let serial = plan.rows[k].serial, serial == measurer.serial(r) else { return nil }
            let height = measurer.measureChanged(r, at: plan.rows[k].by)
            if height != plan.rows[k].height {
                if heights == nil { heights = plan.rows.map(\.height) }
                heights![k] = height
            }
            changed.append((k, serial))
        }
        guard let heights else {
            // Every row keeps its place: the changed ones are placed where they were.
            var built: [(index: Int, row: SemanticNode)] = []
            for (k, serial) in changed {
                let by = plan.rows[k].by
                guard let row = cache.placed(serial: serial, by: by, { shift(&$0, by: by) }) else { return nil }
                built.append((k, row))
            }
            // Every row holds: only now is the list changed.
            var replaced: [RowUpdate] = []
            replaced.reserveCapacity(built.count)
            for (k, row) in built {
                replaced.append(.replaced(index: k, old: node.children[k]))
                node.children[k] = row
            }
            return replaced
        }
        guard restackHolds(plan, heights: heights, cache: cache) else { return nil }
        return restack(&node, plan: plan, heights: heights, cache: cache)
    }

    /// The streamed reply's row `k` patched where it lies; when its height
    /// changed, the rows after it moved (nil, the list unchanged, when they
    /// cannot be).
    private static func patchStreamed(
        _ node: inout SemanticNode, _ k: Int, _ serial: Int, _ patch: StreamedRowPatch, plan: WindowPlan, cache: RowCache
    ) -> [RowUpdate]? {
        var heights: [Int]?
        if patch.height != plan.rows[k].height {
            heights = plan.rows.map(\.height)
            heights![k] = patch.height
            guard restackHolds(plan, heights: heights!, cache: cache, except: k) else { return nil }
        }
        // The tree alone holds the row while it is patched (else its
        // children would be copied, all of them).
        cache.forget(serial: serial)
        var changes: [TreeChange] = []
        patch.apply(to: &node.children[k], changes: &changes)
        let by = plan.rows[k].by
        // The slot's entry holds the row's copy of the text, not the
        // state's (whose next delta is then appended in place).
        var entry = patch.entry
        entry.text = node.children[k].value ?? entry.text
        cache.store(serial: serial, entry: entry, prompt: patch.prompt, placed: node.children[k], by: by, height: patch.height)
        var updates: [RowUpdate] = [.patched(changes)]
        if let heights { updates += restack(&node, plan: plan, heights: heights, cache: cache, patched: k) }
        return updates
    }

    /// Whether the rows can be stacked again with `heights` (the window
    /// stays, and every entry's row other than `except` is in the cache).
    private static func restackHolds(_ plan: WindowPlan, heights: [Int], cache: RowCache, except: Int? = nil) -> Bool {
        switch plan.mode {
        case .anchored: return false
        case .end: guard plan.endWindowHolds(heights: heights, wanted: 2 &* max(0, plan.frame.height)) else { return false }
        case .exact: break
        }
        for (k, row) in plan.rows.enumerated() where k != except {
            if let serial = row.serial, !cache.has(serial: serial) { return false }
        }
        return true
    }

    /// A row grew or shrank: the rows are stacked again from the window's
    /// top (`patched`, placed already, stays as it is).
    private static func restack(
        _ node: inout SemanticNode, plan: WindowPlan, heights: [Int], cache: RowCache, patched: Int? = nil
    ) -> [RowUpdate] {
        var plan = plan
        let frameHeight = max(0, plan.frame.height)
        var contentHeight = plan.top
        for h in heights { contentHeight &+= h }
        let offset = WindowPlan.offset(plan.mode, requested: plan.requested, contentHeight: contentHeight, frameHeight: frameHeight)
        var y = plan.top
        var updates: [RowUpdate] = []
        updates.reserveCapacity(heights.count)
        for k in heights.indices {
            let by = y
            y &+= heights[k]
            if k == patched {
                assert(by == plan.rows[k].by, "a patched row moved")
            } else if let serial = plan.rows[k].serial {
                // Every row's slot is there (`restackHolds`).
                let row = cache.placed(serial: serial, by: by, { shift(&$0, by: by) })!
                updates.append(.replaced(index: k, old: node.children[k]))
                node.children[k] = row
            } else {
                updates.append(.replaced(index: k, old: node.children[k]))
                shift(&node.children[k], by: by &- plan.rows[k].by)
            }
            plan.rows[k].by = by
            plan.rows[k].height = heights[k]
        }
        node.scroll = SemanticNode.Scroll(offset: offset, contentHeight: contentHeight, maxOffset: max(0, contentHeight &- frameHeight))
        cache.plan = plan
        return updates
    }

    /// The rows above row `r`, measured up to a frame's height: whether they
    /// reach the list's first row within it (the layout then places the
    /// window from the first row, measured: `placeMessages`), and how tall
    /// the ones measured are.
    static func rowsAbove(_ r: Int, frameHeight: Int, _ height: (Int) -> Int) -> (reachTheTop: Bool, height: Int) {
        var above = 0
        var s = r
        while s > 0 && above < frameHeight {
            s &-= 1
            above &+= height(s)
        }
        return (s == 0, above)
    }

    /// Where the list places row `row`'s top when it is scrolled to that
    /// top plus `within` (in a windowed list, the row at the offset anchors
    /// the rows around it: the offset and its anchor are settled together).
    static func topOf(_ row: Int, within: Int = 0, rows: MessageRows, frameHeight: Int, measurer: inout RowMeasurer) -> Int {
        if rows.count <= exactRowLimit {
            var top = 0
            for r in 0..<row { top &+= measurer.measure(r).height }
            return top
        }
        var wanted = rows.estimatedTop(row) &+ within
        var top = rows.estimatedTop(row)
        for _ in 0..<4 {
            let anchor = rows.row(atEstimated: max(0, wanted))
            // Near the top the rows are placed from the first (`placeMessages`).
            let above = rowsAbove(anchor, frameHeight: frameHeight) { measurer.measure($0).height }
            var at = above.reachTheTop ? above.height : rows.estimatedTop(anchor)
            if anchor <= row {
                for r in anchor..<row { at &+= measurer.measure(r).height }
            } else {
                for r in row..<anchor { at &-= measurer.measure(r).height }
            }
            top = at
            if at &+ within == wanted { break }
            wanted = at &+ within
        }
        return top
    }

    /// Builds and measures rows, through the cache when there is one.
    struct RowMeasurer {
        let rows: MessageRows
        let x: Int
        let width: Int
        let cache: RowCache?
        /// The prompt ordinal of the entry at `promptIndex` (counted once, then carried along).
        private var promptIndex = -1
        private var promptCount = 0

        init(rows: MessageRows, x: Int, width: Int, cache: RowCache?) {
            self.rows = rows
            self.x = x
            self.width = width
            self.cache = cache
        }

        /// Row `r` laid out at y = 0, and its height with the gap after it.
        /// `changed`: the row's entry is known to have changed since it was
        /// built (the cache is not asked).
        mutating func measure(_ r: Int, changed: Bool = false) -> (node: SemanticNode, height: Int) {
            let row = rows.row(r)
            guard case .entry(let i) = row else { return layOut(rows.node(row, prompt: nil)) }
            let entry = rows.chat.transcript.entries[i]
            let prompt = MessageRows.isPrompt(entry) ? ordinal(of: i) : nil
            if !changed, let cached = cache?.lookup(serial: entry.serial, entry: entry, prompt: prompt) { return cached }
            let built = layOut(rows.node(row, prompt: prompt, markdown: cache?.markdown, cards: cache?.cards))
            if let cache {
                cache.store(serial: entry.serial, entry: cache.cards.withOwnInputs(entry), prompt: prompt, node: built.node, height: built.height)
            }
            return built
        }

        /// The height of row `r`, an entry's, built again and laid out
        /// where it is placed, `by` down (kept so: `RowCache.placed` then
        /// finds it there, moving nothing, and the blocks a streamed reply
        /// did not change are the nodes placed before).
        mutating func measureChanged(_ r: Int, at by: Int) -> Int {
            let row = rows.row(r)
            guard case .entry(let i) = row, let cache else { return measure(r, changed: true).height }
            let entry = rows.chat.transcript.entries[i]
            let prompt = MessageRows.isPrompt(entry) ? ordinal(of: i) : nil
            // The slot's entry holds the cards' copies of the tool inputs:
            // forgotten first, the copies are the cards' alone while a
            // streamed input's delta is appended to them.
            cache.forget(serial: entry.serial)
            var node = rows.node(row, prompt: prompt, markdown: cache.markdown, cards: cache.cards)
            var y = by
            Layout.place(&node, x: x, y: &y, width: width, memo: cache.lines)
            cache.store(serial: entry.serial, entry: cache.cards.withOwnInputs(entry), prompt: prompt, placed: node, by: by, height: y &- by)
            return y &- by
        }

        /// Row `r`'s `row` (placed, in the tree) brought up to its entry by
        /// `StreamedRowPatch`, when only its text grew (nil otherwise).
        func streamedPatch(_ r: Int, serial: Int, row: SemanticNode) -> StreamedRowPatch? {
            guard case .entry(let i) = rows.row(r), let cache, let old = cache.entry(serial: serial), old.prompt == nil else { return nil }
            let entry = rows.chat.transcript.entries[i]
            guard !MessageRows.isPrompt(entry) else { return nil }
            return StreamedRowPatch.make(
                row: row, old: old.entry, new: entry, prompt: nil, navigation: rows.navigation, markdown: cache.markdown, memo: cache.lines,
                x: x, width: width)
        }

        /// Row `r` built and laid out again, `by` down, nothing reused (what a patched row must equal).
        func builtAgain(_ r: Int, at by: Int) -> SemanticNode {
            var node = rows.node(rows.row(r), prompt: nil)
            var y = by
            Layout.place(&node, x: x, y: &y, width: width)
            return node
        }

        /// The transcript entry's serial of row `r` (nil for the other rows).
        func serial(_ r: Int) -> Int? {
            guard case .entry(let i) = rows.row(r) else { return nil }
            return rows.chat.transcript.entries[i].serial
        }

        private func layOut(_ node: SemanticNode) -> (node: SemanticNode, height: Int) {
            var node = node
            var h = 0
            Layout.place(&node, x: x, y: &h, width: width, memo: cache?.lines)
            return (node, h)
        }

        /// The prompt ordinal of entry `i` (a prompt): 0 when no image anchors to prompts.
        private mutating func ordinal(of i: Int) -> Int {
            guard !rows.images.byPrompt.isEmpty else { return 0 }
            if promptIndex < 0 || i < promptIndex {
                promptIndex = 0
                promptCount = 0
            }
            while promptIndex < i {
                if MessageRows.isPrompt(rows.chat.transcript.entries[promptIndex]) { promptCount &+= 1 }
                promptIndex &+= 1
            }
            return promptCount
        }
    }
}
