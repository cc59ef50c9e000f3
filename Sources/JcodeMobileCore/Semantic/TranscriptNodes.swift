import JcodeMobileMarkdown
import JcodeMobileToolCards

/// What a transcript entry shows beyond its bubble: its markdown as
/// semantic blocks, its reasoning, and its tool cards (a summary line, a
/// diff for an edit, a folded output). docs/ABI.md, "The transcript's nodes".
///
/// Ids are the message's, then the block's place: `message.m12.md.3` is the
/// fourth top-level block of entry 12, `message.m12.md.3.0` its first child.
/// A block's index does not change while a reply streams (blocks are only
/// added after it), so a closed block keeps its id and its node.
enum MarkdownNodes {
    /// The nodes of top-level `blocks[from...]`, ids `prefix.k`.
    static func nodes(_ blocks: [MarkdownBlock], prefix: String, from start: Int = 0) -> [SemanticNode] {
        var nodes: [SemanticNode] = []
        nodes.reserveCapacity(max(0, blocks.count &- start))
        var k = start
        while k < blocks.count {
            nodes.append(node(blocks[k], id: childID(prefix, k)))
            k &+= 1
        }
        return nodes
    }

    /// A list, table or quote's node `old` (for the same block before it grew),
    /// brought up to `block`: its first `kept` children are the same and
    /// stay; the others are built. Nil when `old` is not such a node.
    /// `item`: a list's child `kept` is the same item too, which kept its
    /// first `item` blocks (their nodes stay) and grew after them.
    static func grow(_ old: inout SemanticNode, to block: MarkdownBlock, kept: Int, item: Int? = nil) -> Bool {
        guard kept <= old.children.count, kept <= block.children.count else { return false }
        switch (block.kind, old.role) {
        case (.list, .list), (.table, .table), (.quote, .quote): break
        default: return false
        }
        let id = old.id
        var k = kept
        // No reserveCapacity: growing by one item at a time, the storage must grow by doubling.
        if let item, case .list = block.kind, kept < old.children.count, kept < block.children.count {
            old.children.removeSubrange((kept &+ 1)...)
            if !growItem(&old.children[kept], to: block.children[kept], kept: item) {
                old.children[kept] = child(of: block, kept, id: id)
            }
            k &+= 1
        } else {
            old.children.removeSubrange(kept...)
        }
        while k < block.children.count {
            old.children.append(child(of: block, k, id: id))
            k &+= 1
        }
        return true
    }

    /// A list item's node `old` brought up to `block`, the same item, whose
    /// first `kept` blocks are those `old` was built from: their nodes stay
    /// (the first paragraph, the item's value, with them), the others are
    /// built. False when `old` is not such a node (or no block stays).
    private static func growItem(_ old: inout SemanticNode, to block: MarkdownBlock, kept: Int) -> Bool {
        guard old.role == .listItem, kept >= 1, kept <= block.children.count else { return false }
        // The node holds the blocks after a first paragraph (its value) as children.
        var lead = 0
        if case .paragraph = block.children[0].kind { lead = 1 }
        guard kept &- lead <= old.children.count else { return false }
        let id = old.id
        old.children.removeSubrange((kept &- lead)...)
        var k = kept
        while k < block.children.count {
            old.children.append(node(block.children[k], id: childID(id, k)))
            k &+= 1
        }
        return true
    }

    /// The node of child `k` of a list, table or quote `block` whose id is `id`.
    private static func child(of block: MarkdownBlock, _ k: Int, id: String) -> SemanticNode {
        let childID = Self.childID(id, k)
        if case .quote = block.kind { return node(block.children[k], id: childID) }
        if case .list(let ordered, let start, let tight) = block.kind {
            // A loose list (a blank line between its items or their blocks) spaces its items as paragraphs.
            return listItem(block.children[k], id: childID, marker: ordered ? String(start &+ k) + "." : "•", loose: !tight)
        }
        let row = block.children[k]
        var header = false
        if case .tableRow(let h) = row.kind { header = h }
        var rowNode = SemanticNode(childID, .tableRow, label: "")
        if header { rowNode.variant = "header" }
        rowNode.children.reserveCapacity(row.children.count)
        for (c, cell) in row.children.enumerated() {
            var variant: String?
            if case .tableCell(let alignment) = cell.kind, alignment != .none { variant = alignment.rawValue }
            rowNode.children.append(textNode(Self.childID(childID, c), .tableCell, cell, variant: variant))
        }
        return rowNode
    }

    /// One block's node and its children's (the parser caps nesting, so
    /// this recursion is bounded).
    static func node(_ block: MarkdownBlock, id: String) -> SemanticNode {
        switch block.kind {
        case .paragraph, .html:
            return textNode(id, .paragraph, block)
        case .heading(let level):
            var node = textNode(id, .heading, block)
            node.level = level
            node.accessibilityLabel = "Heading level \(level)"
            return node
        case .list(let ordered, _, _):
            var node = SemanticNode(id, .list, label: "", accessibilityLabel: ordered ? "Numbered list" : "List")
            node.variant = ordered ? "ordered" : "bullet"
            node.children.reserveCapacity(block.children.count)
            for k in block.children.indices { node.children.append(child(of: block, k, id: id)) }
            return node
        case .listItem:
            return listItem(block, id: id, marker: "•")
        case .quote:
            return container(id, .quote, block, accessibilityLabel: "Quote")
        case .codeBlock(let language, let open):
            var node = SemanticNode(
                id, .codeBlock, label: "", value: block.text,
                accessibilityLabel: codeLabel(language), actions: ["copy"],
                children: [.button(id + ".copy", "Copy", .copy(nodeID: id), accessibilityLabel: "Copy the code", icon: "doc.on.doc")])
            node.language = language
            if open { node.variant = "open" }
            return node
        case .table:
            var node = SemanticNode(id, .table, label: "", accessibilityLabel: "Table")
            node.children.reserveCapacity(block.children.count)
            for k in block.children.indices { node.children.append(child(of: block, k, id: id)) }
            return node
        case .tableRow, .tableCell:
            return container(id, .group, block, accessibilityLabel: nil)
        case .thematicBreak:
            return SemanticNode(id, .divider, label: "", accessibilityLabel: "Divider")
        }
    }

    /// A code block's accessibility label: its language named.
    static func codeLabel(_ language: String?) -> String {
        language.map { "Code, \($0)" } ?? "Code"
    }

    /// A block of inline text: its text as the value, its runs as spans.
    /// Its detail (runs, `variant`) set at once: one storage for the node.
    private static func textNode(_ id: String, _ role: SemanticNode.Role, _ block: MarkdownBlock, variant: String? = nil) -> SemanticNode {
        var node = SemanticNode(id, role, label: "", value: block.text)
        if !block.spans.isEmpty || variant != nil {
            var detail = SemanticNode.Detail()
            if !block.spans.isEmpty { detail.spans = block.spans }
            detail.variant = variant
            node.detail = detail
        }
        return node
    }

    /// `id.k`, its bytes written once into one allocation (none when it fits
    /// a small string): no `String(k)`, no appends.
    private static func childID(_ id: String, _ k: Int) -> String {
        guard k >= 0 else { return id + "." + String(k) }
        var digits = 1
        var rest = k / 10
        while rest > 0 {
            digits &+= 1
            rest /= 10
        }
        var id = id
        return id.withUTF8 { head in
            let count = head.count &+ 1 &+ digits
            return String(unsafeUninitializedCapacity: count) { out in
                if let from = head.baseAddress, let to = out.baseAddress { to.initialize(from: from, count: head.count) }
                out[head.count] = UInt8(ascii: ".")
                var value = k
                var at = count
                repeat {
                    at &-= 1
                    out[at] = UInt8(truncatingIfNeeded: value % 10) &+ UInt8(ascii: "0")
                    value /= 10
                } while value > 0
                return count
            }
        }
    }

    private static func container(_ id: String, _ role: SemanticNode.Role, _ block: MarkdownBlock, accessibilityLabel: String?) -> SemanticNode {
        var node = SemanticNode(id, role, label: "", accessibilityLabel: accessibilityLabel)
        node.children = children(of: block, id: id)
        return node
    }

    private static func children(of block: MarkdownBlock, id: String, from start: Int = 0) -> [SemanticNode] {
        var nodes: [SemanticNode] = []
        nodes.reserveCapacity(max(0, block.children.count &- start))
        var k = start
        while k < block.children.count {
            nodes.append(node(block.children[k], id: childID(id, k)))
            k &+= 1
        }
        return nodes
    }

    /// A list item: its marker as the label; a first paragraph's text (the
    /// item's line) as its own value, the blocks after it as children.
    /// Its detail (check box, runs, `loose`) set at once: one storage for the node.
    private static func listItem(_ item: MarkdownBlock, id: String, marker: String, loose: Bool = false) -> SemanticNode {
        var node = SemanticNode(id, .listItem, label: marker, accessibilityLabel: "List item")
        var detail = SemanticNode.Detail()
        if case .listItem(let checked) = item.kind, let checked {
            detail.checked = checked
            node.accessibilityLabel = checked ? "Done" : "To do"
        }
        var first = 0
        if let lead = item.children.first, case .paragraph = lead.kind {
            node.value = lead.text
            node.accessibilityValue = lead.text
            if !lead.spans.isEmpty { detail.spans = lead.spans }
            first = 1
        }
        if loose { detail.variant = "loose" }
        if !detail.isEmpty { node.detail = detail }
        node.children = children(of: item, id: id, from: first)
        return node
    }


}

/// The markdown of the rows last built, parsed incrementally: a streamed
/// reply's delta parses its open last block again (`MarkdownStream`), and
/// the closed blocks keep their nodes; a delta that cannot change what the
/// open block is nor how its text is styled (plain words into a paragraph,
/// code into an open code block's line) is appended to its node as it is.
/// Kept by the `RowCache`, per message id, for the rows of the last build.
/// An optimisation: the nodes equal those of a parse from scratch (the
/// tests hold them to it after every delta of many replies).
public final class MarkdownCache {
    final class Entry {
        /// The text last parsed: a copy of its own, held by no one else (a
        /// streamed reply's text in the state then stays the state's alone,
        /// so appending to it does not copy it), kept by appending the deltas.
        @exclusivity(unchecked) var text: String
        @exclusivity(unchecked) var stream: MarkdownStream
        @exclusivity(unchecked) var nodes: [SemanticNode]
        @exclusivity(unchecked) var generation: Int
        /// What a delta needs to know to be appended to the last node as it is (nil: it cannot be).
        @exclusivity(unchecked) var tail: Tail?
        /// The open paragraph's only line has just ended, as a delta appended
        /// ended it, and blanks at most came after (nil otherwise).
        @exclusivity(unchecked) var ended: Ended?
        /// The nodes the blocks make (`MarkdownNodes.count`), counted until
        /// they pass the budget (`count(from:)`): per top-level block, their
        /// total, and the children's of block `sumsBlock` summed
        /// (`childSums[j]`: its first j children's), so a list or table that
        /// grew is counted from the children it kept.
        @exclusivity(unchecked) var counts: [Int] = []
        @exclusivity(unchecked) var total = 0
        @exclusivity(unchecked) var childSums: [Int] = []
        @exclusivity(unchecked) var sumsBlock = -1
        /// The reply is folded past `budget` nodes unless shown `whole` (`LongReply.swift`).
        let budget: Int
        let whole: Bool
        /// Folded: its first nodes shown (`MarkdownNodes.shown`), and where
        /// the fold stopped looking at the blocks.
        @exclusivity(unchecked) var fold: MarkdownNodes.Fold?
        /// Folded, and nothing appended can change what it shows: the blocks
        /// the fold looked at are stable (`MarkdownStream.stableCount`: closed,
        /// and none looked a label up that a definition written later could
        /// give). A delta then goes on the text alone, not parsed.
        @exclusivity(unchecked) var settled = false

        init(text: String, stream: MarkdownStream, budget: Int, whole: Bool, generation: Int) {
            self.text = text
            self.stream = stream
            self.nodes = []
            self.budget = budget
            self.whole = whole
            self.generation = generation
        }
    }

    /// The end of a text whose last block is an open paragraph or code block.
    struct Tail {
        /// The open block is a fenced code block or an HTML block, whose text is kept as it is (else a paragraph).
        var code: Bool
        /// The spaces and tabs that end the text (a paragraph's value leaves them out).
        var blanks: String
        /// The last word holds `:`, `@` or "www.": more letters could make it a link (`http://`, `a@b.c`, `www.a`).
        var wordMayLink: Bool
        /// Where the open paragraph's or code block's node is under the last
        /// node, a child index per level: [] (it is the last node), [row,
        /// cell] (a cell of a table's last row), or under a list or quote the
        /// last item's or block's index at each level down to it ([item]: a
        /// list's last item, whose only block is its value; [block]: a
        /// quote's last block; [item, block, item]: the value of the last item
        /// of a list ending a list's last item …).
        var path: [Int] = []
        /// Where the open paragraph's text begins when its only line is the
        /// text's last (a byte offset, after the marks of the blocks it is in):
        /// a delta that cannot be appended as it is may have that line's inline
        /// content read again (`rereadLine`). Nil for code, a table's cell, or
        /// a paragraph of more lines.
        var inlineFrom: Int?
        /// The open code is a fenced block whose lines are read here as the
        /// parser reads them (`appendToFence`): a delta may end its line and
        /// begin the next. Nil: a line ending is parsed.
        var fence: FenceLine?
        /// The text ends in an empty list item's marker and its blanks: the
        /// item's text begins with the next delta, which must begin with a
        /// letter (a paragraph's first character), after one blank when
        /// `opensItem` is true (the marker is the text's last character).
        /// Nil: the open paragraph's line has begun.
        var opensItem: Bool?
    }

    /// Where a paragraph whose only line has just ended is (`Tail.path`),
    /// and where that line's text begins (`Tail.inlineFrom`).
    struct Ended {
        var path: [Int]
        var inlineFrom: Int
    }

    /// An open fenced code block's line as the parser reads it: the columns
    /// of blanks a line needs to go on in the list items the fence is in (0
    /// at the top; none in a quote), the fence's own indent (that many blanks
    /// more are not code), and the blanks the text's last line holds when it
    /// holds nothing else (nil: it holds code, or it is the fence's own line;
    /// 0: the text ends with a line ending).
    struct FenceLine {
        var indent: Int
        var fenceOffset: Int
        var blanks: Int?
        /// The code has no line yet: the next line begun is its first (its
        /// value takes no line ending before it).
        var startsValue = false
        /// The text's last line is the fence's own: where its info string
        /// begins (after the fence's run), whose first word is the language.
        var infoFrom: Int?
        /// The fence's character and run length (a line that begins with a
        /// run of it that long may close it), and the run the text's last line
        /// begins with and holds only so far, shorter than that (nil: none).
        var fenceChar: UInt8 = 0
        var fenceLength = 0
        var closerRun: Int?
    }

    @exclusivity(unchecked) private var entries: [String: Entry] = [:]
    /// The buffers of the lines read again (`rereadLine`).
    private let scratch = MarkdownScratch()
    @exclusivity(unchecked) private var generation = 0
    @exclusivity(unchecked) private var used = 0

    package init() {}

    /// Where the next delta for `prefix` would be appended as it is (nil: it is parsed); for tests.
    func tail(for prefix: String) -> Tail? { entries[prefix]?.tail }

    /// The block nodes `blocks(of:prefix:appendedTo:)` answers, and those of a
    /// parse of the whole text (for the fuzzer: the two must be equal).
    /// `budget`: the nodes past which the text is folded (`MarkdownNodes.shown`).
    package func nodes(of text: String, prefix: String, appendedTo: Int?, budget: Int = .max) -> [SemanticNode] {
        blocks(of: text, prefix: prefix, appendedTo: appendedTo, budget: budget).nodes
    }
    package static func wholeParseNodes(of text: String, prefix: String, budget: Int = .max) -> [SemanticNode] {
        MarkdownNodes.reply(Markdown.parse(text), prefix: prefix, budget: budget, whole: false).nodes
    }
    /// How many texts and deltas the markdown streams parsed (for tests: the
    /// other deltas went on their nodes as they are, or had a line read again).
    private(set) var parses = 0

    /// The block nodes of `text`, ids `prefix.k`.
    func nodes(of text: String, prefix: String) -> [SemanticNode] {
        blocks(of: text, prefix: prefix).nodes
    }

    /// The nodes the text's blocks make, counted until they pass the budget (for tests: `MarkdownNodes.count`).
    func total(for prefix: String) -> Int? { entries[prefix]?.total }

    /// What changed since the last call for `prefix`.
    struct Blocks {
        /// The block nodes of the text, ids `prefix.k`.
        var nodes: [SemanticNode]
        /// How many nodes the last call for `prefix` answered, when the text
        /// it was given is the start of this one (nil: the text is not the
        /// last one and more, or the message was not kept).
        var before: Int?
        /// The bytes of the text the last call was given (0 when `before` is nil).
        var beforeBytes = 0
        /// Nodes 0 ..< unchanged are those the last call answered (their ids and values).
        var unchanged: Int
        /// Node `unchanged` is a list, table or quote that kept its first `grownFrom`
        /// children (the same values) and grew after them.
        var grownFrom: Int?
        /// The blocks make more nodes than the budget asked for (`nodes` are
        /// then their first ones, unless the text is shown whole).
        var long = false
    }

    /// The block nodes of `text`, ids `prefix.k`, and which of them the last
    /// call for `prefix` answered already: a streamed reply's delta changes
    /// its last blocks only.
    ///
    /// `appendedTo`: the caller knows `text` is the text of this many bytes
    /// last given and more (the prefix is then not compared). `budget`: the
    /// nodes past which the text is long, and folded unless shown `whole`
    /// (`MarkdownNodes.shown`); a text that becomes long, or no longer is,
    /// answers `before` nil.
    func blocks(of text: String, prefix: String, appendedTo: Int? = nil, budget: Int = .max, whole: Bool = false) -> Blocks {
        used &+= 1
        if let entry = entries[prefix], entry.budget == budget, entry.whole == whole {
            entry.generation = generation
            let old = entry.text.utf8.count
            let before = entry.nodes.count
            func answer(_ unchanged: Int, grownFrom: Int? = nil) -> Blocks {
                Blocks(
                    nodes: entry.nodes, before: before, beforeBytes: old, unchanged: unchanged, grownFrom: grownFrom,
                    long: entry.total > budget)
            }
            // Parsed on from where it was only when the text grew at its end.
            if text.utf8.count >= old && (appendedTo == old || LineMemo.hasPrefix(text, entry.text, count: old)) {
                guard text.utf8.count > old else { return answer(before) }
                if entry.settled {
                    Self.appendTail(of: text, to: &entry.text)
                    return answer(before)
                }
                // Into a list's last item or a table's last row: the ones before it are as they were.
                let grown = entry.tail?.path.first
                if entry.tail == nil {
                    // Blanks on a blank line: no node changed.
                    if appendBlanks(entry, text, from: old) { return answer(before) }
                    if let ended = entry.ended, appendBackticks(entry, ended, text, from: old) {
                        return answer(before &- 1, grownFrom: ended.path.first)
                    }
                }
                if appendInPlace(entry, text, from: old) { return answer(before &- 1, grownFrom: grown) }
                parses &+= 1
                // Set with `tail` to nil only, until this parse: its line is read now.
                entry.ended = nil
                // The last block, a paragraph not final: its text is built in its
                // node's storage (so the node is built again, whatever the stream says).
                var lent = false
                if let tail = entry.tail, tail.path.isEmpty, !tail.code, let last = entry.nodes.indices.last,
                   let value = Self.takeValue(of: &entry.nodes[last]) {
                    entry.stream.lend(value)
                    lent = true
                }
                let first = entry.stream.update(text, appendedOnly: true)
                // Folded, and the blocks it shows are as they were: it is as long
                // as it was (the blocks up to where the fold looked pass the budget).
                if let fold = entry.fold, fold.holds(first: first, kept: entry.stream.grown?.count, entry.stream.blocks) {
                    entry.settled = fold.examined < entry.stream.stableCount
                    Self.appendTail(of: text, to: &entry.text)
                    entry.stream.releaseOpenText()
                    return answer(before)
                }
                let wasLong = entry.total > budget
                entry.count(from: first)
                let long = entry.total > budget
                // Folded anew, or no longer long, or long now: the row is built again.
                if long != wasLong || (long && !whole) {
                    Self.appendTail(of: text, to: &entry.text)
                    show(entry, text, prefix: prefix)
                    entry.stream.releaseOpenText()
                    return Blocks(nodes: entry.nodes, before: nil, beforeBytes: 0, unchanged: 0, grownFrom: nil, long: long)
                }
                let kept = min(first, entry.nodes.count, lent ? entry.nodes.count &- 1 : Int.max)
                // A list, table or quote that grew: its kept items' (rows', blocks') nodes stay.
                var grownFrom: Int?
                if let grown = entry.stream.grown, grown.block == kept, kept < entry.nodes.count, kept < entry.stream.blocks.count {
                    var node = entry.nodes[kept]
                    entry.nodes.removeSubrange(kept...)  // the node held once: its children grow in place
                    if MarkdownNodes.grow(&node, to: entry.stream.blocks[kept], kept: grown.count, item: grown.item) {
                        entry.nodes.append(node)
                        grownFrom = grown.count
                    }
                }
                entry.nodes.removeSubrange(min(entry.nodes.count, kept &+ (grownFrom == nil ? 0 : 1))...)
                entry.nodes.append(contentsOf: MarkdownNodes.nodes(entry.stream.blocks, prefix: prefix, from: entry.nodes.count))
                Self.appendTail(of: text, to: &entry.text)
                entry.tail = Self.tail(of: text, last: entry.nodes.last, stream: entry.stream)
                // The last node's value is held by the node alone: an append grows it in place.
                entry.stream.releaseOpenText()
                return answer(kept, grownFrom: grownFrom)
            }
        }
        var stream = MarkdownStream()
        parses &+= 1
        stream.update(text, appendedOnly: false)
        // The stream moved into the entry, held once: changing a block then copies none.
        let entry = Entry(text: Self.copy(text), stream: consume stream, budget: budget, whole: whole, generation: generation)
        entry.count(from: 0)
        show(entry, text, prefix: prefix)
        entry.stream.releaseOpenText()
        entries[prefix] = entry
        return Blocks(nodes: entry.nodes, before: nil, beforeBytes: 0, unchanged: 0, grownFrom: nil, long: entry.total > budget)
    }

    /// The entry's nodes built from its blocks: their first ones when it is
    /// long and not shown whole (no delta then goes on a node as it is).
    private func show(_ entry: Entry, _ text: String, prefix: String) {
        entry.ended = nil
        if !entry.whole, entry.total > entry.budget, let shown = MarkdownNodes.shown(entry.stream.blocks, budget: entry.budget) {
            entry.nodes = MarkdownNodes.nodes(shown.blocks, prefix: prefix)
            entry.fold = shown.fold
            entry.tail = nil
            entry.settled = shown.fold.examined < entry.stream.stableCount
        } else {
            entry.nodes = MarkdownNodes.nodes(entry.stream.blocks, prefix: prefix)
            entry.fold = nil
            entry.tail = Self.tail(of: text, last: entry.nodes.last, stream: entry.stream)
            entry.settled = false
        }
    }

    /// Appends the delta `text[old...]` to the open paragraph's or code's
    /// node (the last block's, or under it: `Tail.path`) when it can change
    /// neither the blocks nor the styles: no line ends in it and no character
    /// that means something inline (`*`, `` ` ``, `[`, `&`, `:` …) but a run
    /// of `*` or `_` after a blank (it closes nothing); the line it goes on
    /// has begun with a character that starts no block; a paragraph's text
    /// does not end in a mark that what follows decides (a blank after a run
    /// of `*` or `_` decides nothing). Into a paragraph whose only line
    /// is the last, a delta with such characters has the line read again
    /// (`rereadLine`); a delta that ends the line (its last byte a "\n") goes
    /// on without its line ending (into code too; not into an HTML block),
    /// and the next one is parsed. The stream is not told: it parses its
    /// open tail from where it was at the next delta that is not appended so.
    private func appendInPlace(_ entry: Entry, _ text: String, from old: Int) -> Bool {
        guard let tail = entry.tail, let lastIndex = entry.nodes.indices.last else { return false }
        if entry.nodes[lastIndex].role == .table { return appendToRow(entry, tail, text, from: old, table: lastIndex) }
        if let fence = tail.fence { return appendToFence(entry, tail, fence, text, from: old, last: lastIndex) }
        let utf8 = text.utf8
        // A delta that ends a line: what comes before its "\n" goes on as any
        // delta does, and the next line is parsed. The last line ending of a
        // paragraph or of a code block's text changes no node (it is not
        // their text); an HTML block's is parsed. After a paragraph's, blanks
        // (a blank line so far) change none either (see `appendBlanks`).
        let html = tail.code && tail.path.isEmpty && entry.nodes[lastIndex].role != .codeBlock
        var end = utf8.count
        if !html {
            // The delta's last "\n", when it is its last byte or (after a paragraph) only blanks follow it.
            let code = tail.code
            end = utf8.withContiguousStorageIfAvailable { bytes -> Int in
                var at = bytes.count
                while !code && at > old && (bytes[at &- 1] == 0x20 || bytes[at &- 1] == 0x09) { at &-= 1 }
                return at > old && bytes[at &- 1] == 0x0A ? at &- 1 : bytes.count
            } ?? utf8.count
        }
        var old = old
        if let blank = tail.opensItem {
            // An empty item's text begins: a letter first (after the blank that ends its marker).
            var i = utf8.index(utf8.startIndex, offsetBy: old)
            if blank {
                guard i < utf8.endIndex, utf8[i] == 0x20 else { return false }
                i = utf8.index(after: i)
                old &+= 1
            }
            guard old < end, Self.beginsParagraph(utf8[i]) else { return false }
            // Its line has begun (parsed at once when what follows is not appended).
            entry.tail?.opensItem = nil
        }
        let endsLine = end < utf8.count
        if endsLine && end == old {
            guard tail.code || !Self.endsInEscape(entry.text) else { return false }
            Self.appendTail(of: text, to: &entry.text)
            entry.tail = nil
            if !tail.code, let from = tail.inlineFrom { entry.ended = Ended(path: tail.path, inlineFrom: from) }
            return true
        }
        var delta = Substring(utf8[utf8.index(utf8.startIndex, offsetBy: old)..<utf8.index(utf8.startIndex, offsetBy: end)])
        guard delta.utf8.first.map({ $0 & 0xC0 != 0x80 }) ?? false else { return false }
        var blankRun = 0
        var hasBlank = false
        var at = delta.startIndex
        while at < delta.endIndex {
            let byte = utf8[at]
            guard Self.readsAsItself(utf8, at, end: delta.endIndex, code: tail.code) else {
                if tail.code { return false }
                // A line ending, then a lazy line of one or two backticks (a fence's opener arriving in pieces).
                return endsThenBackticks(entry, tail, text, from: old) || rereadLine(entry, tail, text, from: old, end: end, last: lastIndex)
            }
            at = utf8.index(after: at)
            if byte == 0x20 || byte == 0x09 {
                blankRun &+= 1
                hasBlank = true
            } else {
                blankRun = 0
            }
        }
        if tail.code {
            Self.modify(at: tail.path, in: &entry.nodes, last: lastIndex) { Self.appendValue(delta, to: &$0) }
        } else {
            // After a backslash (the punctuation after it would be escaped) or
            // a run of `*`, `_` or `~` (what follows it decides whether it
            // opens or closes; a blank after a run of `*` or `_` is what the
            // text's end was to it), and before more letters of a word that
            // may become a link: the line is read again.
            let startsBlank = delta.utf8.first.map({ $0 == 0x20 || $0 == 0x09 }) ?? false
            if Self.endsInEscape(entry.text) || (Self.endsInClosingRun(entry.text) && !startsBlank) || (tail.wordMayLink && !startsBlank) {
                return rereadLine(entry, tail, text, from: old, end: end, last: lastIndex)
            }
            // A paragraph's value ends without its blanks: they come back before more text.
            let trailing = delta.utf8.suffix(blankRun)
            let body = delta.utf8.dropLast(blankRun)
            guard !body.isEmpty else {
                Self.appendTail(of: text, to: &entry.text)
                entry.tail?.blanks += String(delta)
                entry.tail?.wordMayLink = false
                if endsLine { entry.tail = nil }
                return true
            }
            delta = Substring(body)
            // The node the text goes on (the last block, or the paragraph
            // under it: an item's value, a quote's block …), changed where it
            // lies: its value, held once, grows in place.
            let appended = Self.modify(at: tail.path, in: &entry.nodes, last: lastIndex) { Self.appendPlain(tail.blanks + delta, to: &$0) }
            guard appended else { return rereadLine(entry, tail, text, from: old, end: end, last: lastIndex) }
            entry.tail?.blanks = String(Substring(trailing))
            if hasBlank { entry.tail?.wordMayLink = false }
        }
        Self.appendTail(of: text, to: &entry.text)
        if endsLine {
            entry.tail = nil
            if !tail.code, let from = tail.inlineFrom { entry.ended = Ended(path: tail.path, inlineFrom: from) }
        }
        return true
    }

    /// `appendBackticks` for a delta that ends the paragraph's only line
    /// (`tail`) and begins the next with backticks. Out of line: in
    /// `appendInPlace`, every delta's path, its checks made words' delta
    /// 135 instructions dearer (the compiler then inlined less there).
    @inline(never) private func endsThenBackticks(_ entry: Entry, _ tail: Tail, _ text: String, from old: Int) -> Bool {
        let utf8 = text.utf8
        guard tail.opensItem == nil, let from = tail.inlineFrom, old < utf8.count,
              utf8[utf8.index(utf8.startIndex, offsetBy: old)] == 0x0A
        else { return false }
        return appendBackticks(entry, Ended(path: tail.path, inlineFrom: from), text, from: old)
    }

    /// A paragraph's only line has ended (`ended`), and the text's last line
    /// is blanks and one or two backticks: a fence's opener arriving in
    /// pieces. Such a line starts no block (a fence takes three), so it goes
    /// on the paragraph, lazily or not, without its blanks, after a soft
    /// break; its backticks are text when they close no run before them. A
    /// lone one may be followed by a second the same way.
    /// Not when the line before ends in a blank, a backslash or a CR (a hard
    /// break), nor when it holds what could take a backtick into something
    /// else than a code span (`<`, a bracket, an autolink's `:`, `@` or `www.`).
    /// The next delta is parsed. False when it cannot be so.
    private func appendBackticks(_ entry: Entry, _ ended: Ended, _ text: String, from old: Int) -> Bool {
        guard let lastIndex = entry.nodes.indices.last else { return false }
        var copy = text
        let done = copy.withUTF8 { b -> Bool in
            // The last line, from its end: one or two backticks, then spaces, then its line ending.
            var i = b.count
            while i > 0 && b[i &- 1] == UInt8(ascii: "`") { i &-= 1 }
            let run = b.count &- i
            guard run == 1 || run == 2 else { return false }
            let runStart = i
            while i > 0 && b[i &- 1] == 0x20 { i &-= 1 }
            // The delta is the line's or begins with its line ending: nothing of the paragraph's line in it.
            let lineEnd = i &- 1
            guard lineEnd > ended.inlineFrom, old >= lineEnd, b[lineEnd] == 0x0A,
                  lineEnd &- ended.inlineFrom <= Self.longestLineReadAgain
            else { return false }
            // Not after a blank line (the paragraph ended), nor after a hard break.
            switch b[lineEnd &- 1] {
            case 0x0A, 0x20, 0x09, 0x0D, UInt8(ascii: "\\"): return false
            default: break
            }
            guard Self.leavesRunsOf(run, b, from: ended.inlineFrom, to: lineEnd) else { return false }
            // The backticks the kept text's last line has already put on the paragraph (after its line ending).
            let kept = max(0, old &- runStart)
            let addition = (kept == 0 ? "\n" : "") + String(repeating: "`", count: run &- kept)
            Self.modify(at: ended.path, in: &entry.nodes, last: lastIndex) { _ = Self.appendPlain(addition, to: &$0) }
            return true
        }
        guard done else { return false }
        Self.appendTail(of: text, to: &entry.text)
        entry.tail = nil
        // A lone backtick may be followed by a second, still the paragraph's.
        entry.ended = text.utf8.last == UInt8(ascii: "`") && text.utf8.dropLast().last != UInt8(ascii: "`") ? ended : nil
        return true
    }

    /// Whether a run of `length` backticks after `b[from ..< to]` (one line of
    /// inline text; false when it holds a line ending) closes nothing: no run of as many in it is open (a run
    /// closes the first open one of its length, as CommonMark's code spans
    /// read), and nothing in it could make a backtick other than a code
    /// span's or text (an HTML tag or autolink, a link, an extended autolink).
    static func leavesRunsOf(_ length: Int, _ b: UnsafeBufferPointer<UInt8>, from: Int, to: Int) -> Bool {
        var i = from
        while i < to {
            switch b[i] {
            case 0x0A, 0x0D, UInt8(ascii: "<"), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: ":"), UInt8(ascii: "@"):
                return false
            case UInt8(ascii: "w"), UInt8(ascii: "W"):
                // "www." begins an extended autolink.
                if i &+ 3 < to && b[i &+ 1] | 0x20 == UInt8(ascii: "w") && b[i &+ 2] | 0x20 == UInt8(ascii: "w") && b[i &+ 3] == UInt8(ascii: ".") {
                    return false
                }
                i &+= 1
            case UInt8(ascii: "\\"):
                // Escapes what follows (a backtick after it begins no run).
                i &+= 2
            case UInt8(ascii: "`"):
                var j = i
                while j < to && b[j] == UInt8(ascii: "`") { j &+= 1 }
                let n = j &- i
                // The next run of as many closes it: a code span, read past.
                var k = j
                var closer = -1
                while k < to {
                    guard b[k] == UInt8(ascii: "`") else {
                        k &+= 1
                        continue
                    }
                    var m = k
                    while m < to && b[m] == UInt8(ascii: "`") { m &+= 1 }
                    if m &- k == n {
                        closer = m
                        break
                    }
                    k = m
                }
                if closer >= 0 {
                    i = closer
                } else {
                    // Open: text until a run of its length comes.
                    if n == length { return false }
                    i = j
                }
            default:
                i &+= 1
            }
        }
        return true
    }

    /// A paragraph's first character that more text cannot make the start of another block: a letter.
    private static func beginsParagraph(_ byte: UInt8) -> Bool {
        byte >= 0x80 || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z"))
    }

    /// Whether a line whose first character (after its blanks and its
    /// containers' marks) is at `start` and is not a letter already reads
    /// as a paragraph's, whatever more text goes on it without a line
    /// ending: it begins with marks that, followed by what follows them,
    /// begin no block. A run of `*`, `_`, `-` or `+` followed by a
    /// character that is not a blank (`**bold`, `_x`, `-x`: no list marker,
    /// which a blank follows, no thematic break or setext underline, which
    /// hold only the mark and blanks; but not `-` followed by `|` or `:`,
    /// which may be a table's delimiter row); one or two backticks or tildes and
    /// anything after them (no fence, which needs three); digits not
    /// followed by `.` or `)` and a blank (`3 files`, `1.5x`: no ordered
    /// list's marker); `!`; a `[` that begins no link reference
    /// definition. A mark with nothing after it yet is not known
    /// to be text. Not `"`, `'` nor `(`: such a line may be the title of a
    /// link reference definition on the lines before it.
    private static func beginsParagraphLine(_ utf8: String.UTF8View, at start: String.Index) -> Bool {
        let lead = utf8[start]
        var i = start
        var run = 0
        switch lead {
        case UInt8(ascii: "!"):
            return true
        case UInt8(ascii: "["):
            // No link reference definition: its label (up to the first `]`
            // not escaped, no `[` in it, at most 999 bytes) is not followed by
            // `:` (`[a](u)`, `[a] b`, `[[a]]`).
            i = utf8.index(after: i)
            while i < utf8.endIndex && run < 1001 {
                switch utf8[i] {
                case UInt8(ascii: "["): return true
                case UInt8(ascii: "]"):
                    i = utf8.index(after: i)
                    return i < utf8.endIndex && utf8[i] != UInt8(ascii: ":")
                case UInt8(ascii: "\\"):
                    i = utf8.index(after: i)
                    run &+= 1
                    guard i < utf8.endIndex else { return false }
                default: break
                }
                i = utf8.index(after: i)
                run &+= 1
            }
            return run >= 1001
        case UInt8(ascii: "*"), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "+"):
            while i < utf8.endIndex && utf8[i] == lead { i = utf8.index(after: i) }
            guard i < utf8.endIndex, utf8[i] != 0x20 && utf8[i] != 0x09 else { return false }
            // `-|` or `-:` may go on to be a table's delimiter row (`-|-`), under its header.
            return lead != UInt8(ascii: "-") || (utf8[i] != UInt8(ascii: "|") && utf8[i] != UInt8(ascii: ":"))
        case UInt8(ascii: "`"), UInt8(ascii: "~"):
            while i < utf8.endIndex && utf8[i] == lead { i = utf8.index(after: i); run &+= 1 }
            return i < utf8.endIndex && run < 3
        case UInt8(ascii: "0") ... UInt8(ascii: "9"):
            while i < utf8.endIndex && utf8[i] >= UInt8(ascii: "0") && utf8[i] <= UInt8(ascii: "9") { i = utf8.index(after: i); run &+= 1 }
            guard i < utf8.endIndex else { return false }
            if run > 9 || (utf8[i] != UInt8(ascii: ".") && utf8[i] != UInt8(ascii: ")")) { return true }
            i = utf8.index(after: i)
            return i < utf8.endIndex && utf8[i] != 0x20 && utf8[i] != 0x09
        default:
            return false
        }
    }

    /// A delta of blanks only onto a last line of blanks only (after the
    /// text's last line ending), outside code and HTML at any depth: a blank
    /// line changes no node there, however long it grows (it ends a
    /// paragraph, a quote, a table, and is part of no block but code and
    /// HTML; what it may separate comes after it, and is parsed). It goes on
    /// the text; the stream reads it at the next delta that is not appended so.
    private func appendBlanks(_ entry: Entry, _ text: String, from old: Int) -> Bool {
        let utf8 = text.utf8
        var i = utf8.index(utf8.startIndex, offsetBy: old)
        guard i < utf8.endIndex else { return false }
        while i < utf8.endIndex {
            guard utf8[i] == 0x20 || utf8[i] == 0x09 else { return false }
            i = utf8.index(after: i)
        }
        // The kept text's last line: blanks only, after a line ending (looked for back 64 bytes at most).
        let kept = entry.text.utf8
        var k = kept.endIndex
        for _ in 0 ..< 64 {
            guard k > kept.startIndex else { return false }
            k = kept.index(before: k)
            let byte = kept[k]
            if byte == 0x0A || byte == 0x0D { break }
            guard byte == 0x20 || byte == 0x09 else { return false }
        }
        guard kept[k] == 0x0A || kept[k] == 0x0D, !Self.endsInCodeOrHTML(entry.stream.blocks) else { return false }
        Self.appendTail(of: text, to: &entry.text)
        return true
    }

    /// Whether the last block of `blocks`, or the last of its last children
    /// down, is code or HTML (an open fence at any depth, an open HTML block, is that block).
    private static func endsInCodeOrHTML(_ blocks: [MarkdownBlock]) -> Bool {
        guard var block = blocks.last else { return false }
        while true {
            switch block.kind {
            case .codeBlock, .html: return true
            default: break
            }
            guard let child = block.children.last else { return false }
            block = child
        }
    }

    /// `appendInPlace` into an open fenced code block's lines (`Tail.fence`),
    /// read as the parser reads them: a line of code goes on as it is; a line
    /// ending is none of the value's until a next line begins (a blank
    /// begins it: the value takes a "\n"); in list items a line's blanks are
    /// not code until something else comes, and then the items' indent and
    /// the fence's are dropped from them (a line indented less closes the
    /// items: parsed); at the top the blanks past the fence's indent are
    /// code as they come. A line whose first character after its blanks is
    /// a `` ` `` or a `~` (it may close the fence), a tab among a line's first
    /// blanks, a "\r" or a second line ending: parsed.
    private func appendToFence(_ entry: Entry, _ tail: Tail, _ fence: FenceLine, _ text: String, from old: Int, last lastIndex: Int) -> Bool {
        let utf8 = text.utf8
        var blanks = fence.blanks
        var startsValue = fence.startsValue
        var infoFrom = fence.infoFrom
        var closerRun = fence.closerRun
        var addition: [UInt8] = []
        var endings = 0
        var i = utf8.index(utf8.startIndex, offsetBy: old)
        guard i < utf8.endIndex, utf8[i] & 0xC0 != 0x80 else { return false }
        // The fence's own line: its info string goes on to the line's end, and names the language.
        var language: String?
        if let from = infoFrom {
            while i < utf8.endIndex && utf8[i] != 0x0A {
                guard Self.mayBeInInfo(utf8[i]) else { return false }
                i = utf8.index(after: i)
            }
            language = Self.language(ofInfo: utf8[utf8.index(utf8.startIndex, offsetBy: from)..<i])
            if i < utf8.endIndex {
                // Its line ending: the code's first line is next.
                i = utf8.index(after: i)
                infoFrom = nil
                blanks = 0
                endings = 1
            }
        }
        while i < utf8.endIndex {
            let byte = utf8[i]
            i = utf8.index(after: i)
            if byte == 0x0D || byte == 0x00 { return false }
            guard var k = blanks else {
                // A line of code: as it is, to its end; a run of the fence's character that begins it and
                // grows as long as the fence's may close it (parsed), one that does not stays code.
                if let run = closerRun {
                    if byte == fence.fenceChar {
                        guard run &+ 1 < fence.fenceLength else { return false }
                        closerRun = run &+ 1
                    } else {
                        closerRun = nil
                    }
                }
                if byte == 0x0A {
                    endings &+= 1
                    blanks = 0
                } else {
                    addition.append(byte)
                }
                continue
            }
            switch byte {
            case 0x20:
                // The first blank begins the line: the value takes its line ending (not before its first line).
                if k == 0 && !startsValue { addition.append(0x0A) }
                startsValue = false
                k &+= 1
                if fence.indent == 0 && k > fence.fenceOffset { addition.append(0x20) }
                blanks = k
            case 0x0A:
                // A blank line ends (or a second line ending: parsed).
                guard k > 0, endings == 0 else { return false }
                endings &+= 1
                blanks = 0
            case 0x09:
                return false
            case UInt8(ascii: "`"), UInt8(ascii: "~"):
                // The fence's character begins a run that may close it (its other one is code).
                if byte == fence.fenceChar {
                    guard fence.fenceLength > 1 else { return false }
                    closerRun = 1
                }
                fallthrough
            default:
                if fence.indent > 0 {
                    // In items: the line goes on in them when indented enough; its blanks past theirs and the fence's are code.
                    guard k >= fence.indent else { return false }
                    let extra = k &- fence.indent
                    addition.append(contentsOf: repeatElement(0x20, count: extra &- min(extra, fence.fenceOffset)))
                } else if k == 0 && !startsValue {
                    addition.append(0x0A)
                }
                startsValue = false
                addition.append(byte)
                blanks = nil
            }
            if endings > 1 { return false }
        }
        if !addition.isEmpty || fence.infoFrom != nil {
            let piece = String(decoding: addition, as: UTF8.self)
            Self.modify(at: tail.path, in: &entry.nodes, last: lastIndex) { node in
                if fence.infoFrom != nil && node.language != language {
                    node.language = language
                    node.accessibilityLabel = MarkdownNodes.codeLabel(language)
                }
                if !addition.isEmpty { Self.appendValue(piece, to: &node) }
            }
        }
        entry.tail?.fence?.blanks = blanks
        entry.tail?.fence?.startsValue = startsValue
        entry.tail?.fence?.infoFrom = infoFrom
        entry.tail?.fence?.closerRun = closerRun
        Self.appendTail(of: text, to: &entry.text)
        return true
    }

    /// A byte that may go on a fence's info string as it is: no `` ` `` or
    /// `~` (the fence's run may go on; a backtick fence's line with another
    /// is no fence), none the parser reads as more than itself (an escape,
    /// an entity), no tab, CR or NUL.
    private static func mayBeInInfo(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "`"), UInt8(ascii: "~"), UInt8(ascii: "\\"), UInt8(ascii: "&"), 0x09, 0x0D, 0x00: return false
        default: return true
        }
    }

    /// The language an info string names: its first word, as it is (`mayBeInInfo` let in no escape or entity).
    private static func language(ofInfo info: Substring.UTF8View) -> String? {
        let word = info.drop(while: { $0 == 0x20 }).prefix(while: { $0 != 0x20 })
        return word.isEmpty ? nil : String(Substring(word))
    }

    /// The longest line `rereadLine` reads again (a longer one is parsed on
    /// from its paragraph's last checkpoint by the stream).
    static let longestLineReadAgain = 1024

    /// A delta that `appendInPlace` cannot append as it is, into a paragraph
    /// whose only line is the text's last (`Tail.inlineFrom`): when it holds
    /// no line ending, the blocks stay what they are (the line has begun with
    /// a letter, and a paragraph that begins so is no definition), and only
    /// the line's inline content is read again, with the text's definitions
    /// (more of a paragraph adds none). The line is `text`'s bytes before
    /// `end` (the text's end, or its last "\n" when the delta ends the line).
    /// False when it cannot be.
    private func rereadLine(_ entry: Entry, _ tail: Tail, _ text: String, from old: Int, end: Int, last lastIndex: Int) -> Bool {
        guard let from = tail.inlineFrom else { return false }
        let utf8 = text.utf8
        let bytes = utf8.dropFirst(from).prefix(end &- from)
        guard bytes.count <= Self.longestLineReadAgain,
              !bytes.dropFirst(old &- from).contains(where: { $0 == 0x0A || $0 == 0x0D || $0 == 0 })
        else { return false }
        let read = Markdown.paragraphText(ofLine: Array(bytes), definitions: entry.stream.definitions, scratch: scratch)
        Self.modify(at: tail.path, in: &entry.nodes, last: lastIndex) { node in
            node.value = read.text
            node.accessibilityValue = read.text
            node.spans = read.spans.isEmpty ? nil : read.spans
        }
        Self.appendTail(of: text, to: &entry.text)
        if end < utf8.count {
            entry.tail = nil
            entry.ended = Ended(path: tail.path, inlineFrom: from)
        } else {
            let ending = Self.ending(of: text)
            entry.tail?.blanks = ending.blanks
            entry.tail?.wordMayLink = ending.wordMayLink
        }
        return true
    }

    /// Whether `text` ends in a backslash or a `~`, whose meaning what follows decides.
    private static func endsInEscape(_ text: String) -> Bool {
        switch text.utf8.last {
        case UInt8(ascii: "\\"), UInt8(ascii: "~"): return true
        default: return false
        }
    }

    /// Whether `text` ends in a run of `*` or `_` that may close (one after a
    /// blank cannot: see `followsBlank`). Whether it also opens, what follows
    /// decides (a blank or a line ending: as the text's end did).
    private static func endsInClosingRun(_ text: String) -> Bool {
        let utf8 = text.utf8
        switch utf8.last {
        case UInt8(ascii: "*"), UInt8(ascii: "_"): return !followsBlank(utf8, run: utf8.index(before: utf8.endIndex))
        default: return false
        }
    }

    /// Whether the run of `*` or `_` that the byte at `i` of `utf8` is in
    /// begins after a space or a tab (looked for back at most 32 bytes). Such
    /// a run is not right-flanking, so it closes nothing, whatever follows
    /// it: it is text as it is until a later run closes it, and that one is
    /// parsed (from a checkpoint before both).
    private static func followsBlank(_ utf8: String.UTF8View, run i: String.Index) -> Bool {
        let mark = utf8[i]
        var k = i
        for _ in 0 ..< 32 {
            guard k > utf8.startIndex else { return false }
            k = utf8.index(before: k)
            let byte = utf8[k]
            if byte != mark { return byte == 0x20 || byte == 0x09 }
        }
        return false
    }

    /// Runs `body` on the node at `path` under `nodes[last]` where it lies
    /// (neither it nor the nodes above it copied when held once).
    private static func modify<R>(at path: [Int], in nodes: inout [SemanticNode], last: Int, _ body: (inout SemanticNode) -> R) -> R {
        switch path.count {
        case 0: return body(&nodes[last])
        case 1: return body(&nodes[last].children[path[0]])
        case 2: return body(&nodes[last].children[path[0]].children[path[1]])
        case 3: return body(&nodes[last].children[path[0]].children[path[1]].children[path[2]])
        default: return modify(at: path[3...], under: &nodes[last].children[path[0]].children[path[1]].children[path[2]], body)
        }
    }

    private static func modify<R>(at path: ArraySlice<Int>, under top: inout SemanticNode, _ body: (inout SemanticNode) -> R) -> R {
        guard let k = path.first else { return body(&top) }
        return modify(at: path.dropFirst(), under: &top.children[k], body)
    }

    /// `appendInPlace` into a table's last row: a pipe in the delta ends
    /// the cell (its blanks at the end dropped) and the text after it goes
    /// on the next one (its blanks at the start dropped), as the row's line
    /// is split before its cells are read. Not past the header's cells (a
    /// row's extra cells are left out: the delta is parsed then).
    private func appendToRow(_ entry: Entry, _ tail: Tail, _ text: String, from old: Int, table: Int) -> Bool {
        let rowIndex = tail.path[0]
        var cell = tail.path[1]
        var blanks = tail.blanks
        var mayLink = tail.wordMayLink
        let delta = text.utf8.dropFirst(old)
        guard let first = delta.first, first & 0xC0 != 0x80 else { return false }
        // After a run of `*` or `_` that may close, only a blank or a pipe (what ends the cell's text).
        if Self.endsInClosingRun(entry.text) && first != 0x20 && first != 0x09 && first != UInt8(ascii: "|") {
            return rereadCell(entry, tail, text, from: old, table: table)
        }
        let cells = entry.nodes[table].children[rowIndex].children.count
        // What goes on which cell, found first; the row is changed only when all of the delta can go on it.
        var additions: [(cell: Int, text: String)] = []
        var i = delta.startIndex
        while i < delta.endIndex {
            // One cell's part of the delta: up to the next pipe or the end.
            var end = i
            while end < delta.endIndex && delta[end] != UInt8(ascii: "|") {
                guard Self.readsAsItself(text.utf8, end, end: delta.endIndex, code: false) else {
                    return rereadCell(entry, tail, text, from: old, table: table)
                }
                end = delta.index(after: end)
            }
            let empty = entry.nodes[table].children[rowIndex].children[cell].value?.isEmpty ?? true
            var start = i
            if empty {
                while start < end && (delta[start] == 0x20 || delta[start] == 0x09) { start = delta.index(after: start) }
            }
            var bodyEnd = end
            while bodyEnd > start && (delta[delta.index(before: bodyEnd)] == 0x20 || delta[delta.index(before: bodyEnd)] == 0x09) {
                bodyEnd = delta.index(before: bodyEnd)
            }
            if start < bodyEnd {
                // More letters after a word that may become a link are read by the parser.
                if mayLink && !empty && start == i && delta[start] != 0x20 && delta[start] != 0x09 { return false }
                guard entry.nodes[table].children[rowIndex].children[cell].spans.map({ !$0.isEmpty }) ?? true else { return false }
                additions.append((cell, (empty ? "" : blanks) + Substring(delta[start..<bodyEnd])))
                blanks = String(Substring(delta[bodyEnd..<end]))
                if bodyEnd < end || delta[start..<bodyEnd].contains(where: { $0 == 0x20 || $0 == 0x09 }) { mayLink = false }
            } else if !empty {
                blanks += String(Substring(delta[start..<end]))
                if start < end { mayLink = false }
            }
            guard end < delta.endIndex else { break }
            // A pipe: the next cell, when the header has one.
            cell &+= 1
            guard cell < cells else { return false }
            blanks = ""
            mayLink = false
            i = delta.index(after: end)
        }
        // Each cell changed where it lies (the row and its cells not copied out and back).
        for addition in additions {
            _ = Self.modify(at: [rowIndex, addition.cell], in: &entry.nodes, last: table) { Self.appendPlain(addition.text, to: &$0) }
        }
        entry.tail?.path[1] = cell
        entry.tail?.blanks = blanks
        entry.tail?.wordMayLink = mayLink
        Self.appendTail(of: text, to: &entry.text)
        return true
    }

    /// A delta into a table's last row that holds marks (`` ` ``, `*`, `(`
    /// …) but no pipe, line ending or backslash: it stays in the row's last
    /// cell (`tail`'s), whose inline content alone is read again (as
    /// `rereadLine` reads a paragraph's line), not the table.
    private func rereadCell(_ entry: Entry, _ tail: Tail, _ text: String, from old: Int, table: Int) -> Bool {
        let utf8 = text.utf8
        let delta = utf8.dropFirst(old)
        guard !delta.contains(where: {
            $0 == UInt8(ascii: "|") || $0 == 0x0A || $0 == 0x0D || $0 == 0 || $0 == UInt8(ascii: "\\")
        }) else { return false }
        // The row's line, from its first character that is not a blank. It
        // begins where the stream's last line does: a delta since the last
        // parse that was not parsed ended no line (`isSpecial`).
        var start = utf8.index(utf8.startIndex, offsetBy: min(entry.stream.lastLineStart, utf8.count))
        while start < utf8.endIndex && (utf8[start] == 0x20 || utf8[start] == 0x09) { start = utf8.index(after: start) }
        let row = Array(utf8[start...])
        guard row.count <= Self.longestLineReadAgain,
              let read = Markdown.lastCellText(ofRow: row, definitions: entry.stream.definitions, scratch: scratch), read.cell == tail.path[1]
        else { return false }
        Self.modify(at: tail.path, in: &entry.nodes, last: table) { node in
            node.value = read.text
            node.accessibilityValue = read.text
            node.spans = read.spans.isEmpty ? nil : read.spans
        }
        Self.appendTail(of: text, to: &entry.text)
        let ending = Self.ending(of: text)
        entry.tail?.blanks = ending.blanks
        entry.tail?.wordMayLink = ending.wordMayLink
        return true
    }

    /// Appends plain `addition` to a text node's value, and to its runs when
    /// it has some: to the last when it is plain, else as a run of its own.
    private static func appendPlain(_ addition: String, to node: inout SemanticNode) -> Bool {
        if var spans = node.spans {
            guard var last = spans.last else { return false }
            if last.styles.isEmpty && last.url == nil {
                last.text += addition
                spans[spans.count &- 1] = last
            } else {
                // After a styled run, a link or an image (closed: the text does not end in a mark), a plain run of its own.
                spans.append(MarkdownSpan(text: addition))
            }
            node.spans = spans
        }
        appendValue(addition, to: &node)
        return true
    }

    /// Appends `addition` to a node's value (its accessibility value the
    /// same): the value taken out of the node first, so that, held by no one
    /// else, it grows in place and is not copied.
    private static func appendValue<S: StringProtocol>(_ addition: S, to node: inout SemanticNode) {
        var value = node.value ?? ""
        node.value = nil
        node.accessibilityValue = nil
        value.append(contentsOf: addition)
        node.value = value
        node.accessibilityValue = value
    }

    /// A node's value taken out of it (with its accessibility value, the
    /// same string); nil, the node left as it is, when it has none.
    private static func takeValue(of node: inout SemanticNode) -> String? {
        guard let value = node.value else { return nil }
        node.value = nil
        node.accessibilityValue = nil
        return value
    }

    /// `text` in storage of its own (never shared with the caller's).
    private static func copy(_ text: String) -> String {
        var text = text
        let count = text.utf8.count
        return text.withUTF8 { bytes in
            String(unsafeUninitializedCapacity: count) { buffer in
                _ = buffer.initialize(fromContentsOf: bytes)
                return count
            }
        }
    }

    /// Appends to `kept` (a prefix of `text`) the rest of `text`.
    private static func appendTail(of text: String, to kept: inout String) {
        let utf8 = text.utf8
        kept.append(contentsOf: Substring(utf8[utf8.index(utf8.startIndex, offsetBy: kept.utf8.count)...]))
    }

    /// Whether the byte at `i` of `utf8` (a delta's, which ends at `end`)
    /// may be appended as it is: it means nothing inline or to the blocks, or
    /// it is special but inert there (`isInert`).
    private static func readsAsItself(_ utf8: String.UTF8View, _ i: String.Index, end: String.Index, code: Bool) -> Bool {
        !isSpecial(utf8[i], code: code) || isInert(utf8, i, end: end)
    }

    /// A byte a delta appended as it is may not hold.
    private static func isSpecial(_ byte: UInt8, code: Bool) -> Bool {
        switch byte {
        case 0x0A, 0x0D, 0x00: return true
        case UInt8(ascii: "*"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "!"),
             UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "&"), UInt8(ascii: "\\"), UInt8(ascii: "~"), UInt8(ascii: "|"),
             UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "."), UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: ";"):
            return !code
        default: return false
        }
    }

    /// Whether the special byte at `i` of `utf8` (a delta's, which ends at
    /// `end`) reads as itself in plain text whatever follows: a `*` or `_`
    /// of a run after a blank (it closes nothing: `followsBlank`), a `_`
    /// between two ASCII letters or digits (it can neither open nor close
    /// emphasis), or a `.` that does not end "www" (the only way a dot can
    /// begin a link without a `:` or an `@`, which are parsed).
    private static func isInert(_ utf8: String.UTF8View, _ i: String.Index, end: String.Index) -> Bool {
        switch utf8[i] {
        case UInt8(ascii: "_"):
            if followsBlank(utf8, run: i) { return true }
            let next = utf8.index(after: i)
            guard i > utf8.startIndex, next < end else { return false }
            return InlineParser.isASCIIAlphanumeric(utf8[utf8.index(before: i)]) && InlineParser.isASCIIAlphanumeric(utf8[next])
        case UInt8(ascii: "*"):
            return followsBlank(utf8, run: i)
        case UInt8(ascii: "."):
            var k = i
            for _ in 0 ..< 3 {
                guard k > utf8.startIndex else { return true }
                k = utf8.index(before: k)
                if utf8[k] | 0x20 != UInt8(ascii: "w") { return true }
            }
            return false
        default:
            return false
        }
    }

    /// What `appendInPlace` needs of `text`, when its last node is an open
    /// paragraph or code block whose last line has begun with a character
    /// that starts no block (nil otherwise).
    /// Not when the text ends in a paragraph of link reference definitions (no node: the last
    /// node is an earlier block), nor in an HTML block that is closed (shown as a paragraph; an
    /// open one's line goes on it as code does, its text kept as it is), nor in a paragraph that
    /// begins with "[" (more text can make it a definition, and take it away).
    static func tail(of text: String, last: SemanticNode?, stream: MarkdownStream) -> Tail? {
        guard let last, !stream.endsInDefinitions else { return nil }
        let utf8 = text.utf8
        guard let end = utf8.last, end != 0x0D else { return nil }
        // A line ending: only in an open fence whose lines are read here (its next line has no blanks yet).
        let endsLine = end == 0x0A
        if endsLine {
            guard stream.openFenceLine != nil, utf8.count >= 2, utf8[utf8.index(utf8.endIndex, offsetBy: -2)] != 0x0D else { return nil }
        }
        // The last line's first character that is not a blank (the stream knows where that line starts).
        let i = endsLine ? utf8.endIndex : utf8.index(utf8.startIndex, offsetBy: min(stream.lastLineStart, utf8.count))
        var lead: UInt8?
        var scan = i
        var spaces = 0
        while scan < utf8.endIndex {
            let byte = utf8[scan]
            if byte != 0x20 && byte != 0x09 {
                lead = byte
                break
            }
            spaces = byte == 0x20 && spaces >= 0 ? spaces &+ 1 : -1
            scan = utf8.index(after: scan)
        }
        // A line of spaces only in an open fence the parser's lines are known for: its next line's blanks so far.
        let blankFenceLine = lead == nil && (spaces > 0 || endsLine) && stream.openFenceLine != nil
        let code: Bool
        var path: [Int] = []
        var emptyItem = false
        // A paragraph whose value begins with "[" (more text can make it a
        // definition, and take it away) is one only when the last line is its
        // only one: then that line's own `[` is read (`beginsParagraphLine`).
        let bracketLine = stream.openParagraphStart.map { $0 >= stream.lastLineStart } ?? false
        switch last.role {
        case .paragraph:
            if case .html = stream.blocks.last?.kind {
                // An HTML block keeps its text as it is, blanks and all: as code, while its last line is its own.
                guard stream.endsInOpenHTML else { return nil }
                code = true
            } else {
                if last.value?.utf8.first == UInt8(ascii: "[") && !bracketLine { return nil }
                code = false
            }
        case .codeBlock where last.variant == "open": code = true
        case .list, .quote:
            // Its last item or block, down to the open paragraph or code the text ends in.
            guard let block = stream.blocks.last,
                  let leaf = Self.openLeaf(
                    under: last, block, stream: stream, lineless: blankFenceLine || stream.openFenceLine?.hasLines == false, bracketLine: bracketLine)
            else { return nil }
            path = leaf.path
            code = leaf.kind == .code
            emptyItem = leaf.kind == .emptyItem
        case .table:
            // A table whose last line is a row after its header, that does not end in a pipe: its last cell grows.
            guard last.children.count >= 2, let row = last.children.last, let cell = lastLineCell(text), cell < row.children.count
            else { return nil }
            code = false
            path = [last.children.count &- 1, cell]
        default: return nil
        }
        let fence = code && last.role != .paragraph ? stream.openFenceLine.map {
            FenceLine(indent: $0.indent, fenceOffset: $0.fenceOffset, fenceChar: $0.fenceChar, fenceLength: $0.fenceLength)
        } : nil
        if blankFenceLine, var fence {
            fence.blanks = spaces
            // After the fence's own line ending, the code has no line yet.
            fence.startsValue = endsLine && stream.openFenceLine?.hasLines == false
            return Tail(code: true, blanks: "", wordMayLink: false, path: path, inlineFrom: nil, fence: fence)
        }
        guard var lead else { return nil }
        if last.role == .table {
            // A row: its line may begin with a pipe.
            if lead == UInt8(ascii: "|") { lead = UInt8(ascii: "a") }
        } else if last.role == .list || last.role == .quote {
            // The containers' marks that begin the line: quote markers (and the
            // blank after each), list markers (and a task box) on an item's own
            // line; what follows them begins the paragraph or the code. Taken
            // greedily: what is taken for a mark is never the open text's first
            // character when that is a letter, and a fence's `` ` `` or `~` is
            // never taken. A task box ends them (what follows it is its paragraph's text).
            while scan < utf8.endIndex {
                if utf8[scan] == UInt8(ascii: ">") {
                    scan = utf8.index(after: scan)
                } else if let content = Self.listContent(utf8, from: scan) {
                    scan = content.at
                    if content.box { break }
                } else {
                    break
                }
                while scan < utf8.endIndex && (utf8[scan] == 0x20 || utf8[scan] == 0x09) { scan = utf8.index(after: scan) }
            }
            if emptyItem {
                // The empty item's marker and its blanks end the line (not a box, not a tab).
                guard let blank = Self.markerEndsLine(utf8, from: scan) else { return nil }
                return Tail(code: false, blanks: "", wordMayLink: false, path: path,
                            inlineFrom: utf8.count &+ (blank ? 1 : 0), fence: nil, opensItem: blank)
            }
            guard scan < utf8.endIndex else { return nil }
            lead = utf8[scan]
        }
        if code, var fence, stream.openFenceLine?.hasLines == false, lead == UInt8(ascii: "`") || lead == UInt8(ascii: "~") {
            // The fence's own line: its info string so far, after the fence's run, as it is.
            var k = scan
            while k < utf8.endIndex && utf8[k] == lead { k = utf8.index(after: k) }
            guard !utf8[k...].contains(where: { !Self.mayBeInInfo($0) }) else { return nil }
            fence.infoFrom = utf8.distance(from: utf8.startIndex, to: k)
            fence.startsValue = true
            return Tail(code: true, blanks: "", wordMayLink: false, path: path, inlineFrom: nil, fence: fence)
        }
        if code {
            guard lead != UInt8(ascii: "`"), lead != UInt8(ascii: "~") else { return nil }
        } else {
            guard Self.beginsParagraph(lead) || Self.beginsParagraphLine(utf8, at: scan) else { return nil }
        }
        // The paragraph's only line: its inline content may be read again alone.
        var inlineFrom: Int?
        if !code, last.role != .table, let start = stream.openParagraphStart, start >= stream.lastLineStart {
            inlineFrom = utf8.distance(from: utf8.startIndex, to: scan)
        }
        // Nor after a backslash (the punctuation after it would be escaped) or a
        // run of `~` (what follows it decides whether it opens or closes), but
        // for a line read again. After a run of `*` or `_`, a delta that begins
        // with a blank goes on as it is (see `appendInPlace`).
        guard inlineFrom != nil || !Self.endsInEscape(text) else { return nil }
        let ending = Self.ending(of: text)
        return Tail(code: code, blanks: ending.blanks, wordMayLink: ending.wordMayLink, path: path, inlineFrom: inlineFrom, fence: fence)
    }

    /// The spaces and tabs that end `text`, and whether its last word may
    /// become a link (`Tail.blanks`, `Tail.wordMayLink`).
    private static func ending(of text: String) -> (blanks: String, wordMayLink: Bool) {
        let utf8 = text.utf8
        var blanks = 0
        var j = utf8.endIndex
        while j > utf8.startIndex, utf8[utf8.index(before: j)] == 0x20 || utf8[utf8.index(before: j)] == 0x09 {
            j = utf8.index(before: j)
            blanks &+= 1
        }
        var mayLink = false
        if blanks == 0 {
            var k = j
            while k > utf8.startIndex {
                let before = utf8.index(before: k)
                let byte = utf8[before]
                if byte == 0x20 || byte == 0x09 || byte == 0x0A { break }
                // A dot only after "www" (see `isInert`).
                if byte == UInt8(ascii: ":") || byte == UInt8(ascii: "@") || (byte == UInt8(ascii: ".") && !Self.isInert(utf8, before, end: utf8.endIndex)) {
                    mayLink = true
                    break
                }
                k = before
            }
        }
        return (String(Substring(utf8[j...])), mayLink)
    }

    /// Under a list or quote `top` (the node of `block`): the path to the open
    /// paragraph or fenced code block the text ends in, following last items
    /// and last blocks (an item's first paragraph is its value: its text is the
    /// item's own when the item holds nothing else), and whether it is code.
    /// Nil when the text ends in anything else: an HTML block, a table, a
    /// paragraph of link reference definitions (which has no node) or one that
    /// begins with "[" (more text can make it a definition, and take it away),
    /// but for one whose only line is the last (`bracketLine`: the caller reads that line's `[`).
    private static func openLeaf(
        under top: SemanticNode, _ block: MarkdownBlock, stream: MarkdownStream, lineless: Bool, bracketLine: Bool
    ) -> (path: [Int], kind: Leaf)? {
        var path: [Int] = []
        path.reserveCapacity(4)
        guard let kind = leaf(under: top, block, stream: stream, lineless: lineless, bracketLine: bracketLine, path: &path) else { return nil }
        return (path, kind)
    }

    /// What `openLeaf` finds at the end: a paragraph, code, or a list item
    /// with no block yet (the text may end in its marker).
    enum Leaf { case paragraph, code, emptyItem }

    /// `openLeaf` from `node` (whose block is `block`) down, its path so far
    /// in `path`. The compiler still copies the node and the block of each
    /// level down before the call (seen in the disassembly, with the path
    /// returned instead of `inout` too); `TreeChange.diffNode` reads its
    /// nodes through pointers for that reason, which was not tried here.
    private static func leaf(
        under node: borrowing SemanticNode, _ block: borrowing MarkdownBlock, stream: MarkdownStream, lineless: Bool, bracketLine: Bool,
        path: inout [Int]
    ) -> Leaf? {
        switch (node.role, block.kind) {
        case (.list, .list), (.quote, .quote):
            let count = node.children.count
            guard count > 0, count == block.children.count else { return nil }
            path.append(count &- 1)
            return leaf(under: node.children[count &- 1], block.children[count &- 1], stream: stream, lineless: lineless, bracketLine: bracketLine, path: &path)
        case (.listItem, .listItem):
            var first = 0
            if case .paragraph? = block.children.first?.kind { first = 1 }
            let count = node.children.count
            guard count == block.children.count &- first else { return nil }
            guard count > 0 else {
                if first == 0 && block.children.isEmpty && node.value == nil { return .emptyItem }
                guard first == 1, stream.endsInParagraph, let value = node.value, bracketLine || value.utf8.first != UInt8(ascii: "[") else {
                    return nil
                }
                return .paragraph
            }
            path.append(count &- 1)
            return leaf(under: node.children[count &- 1], block.children[block.children.count &- 1], stream: stream, lineless: lineless, bracketLine: bracketLine, path: &path)
        case (.paragraph, .paragraph):
            guard stream.endsInParagraph, bracketLine || node.value?.utf8.first != UInt8(ascii: "[") else { return nil }
            return .paragraph
        case (.codeBlock, .codeBlock):
            // Not the fence's own line ("- ```sh": the code has none yet), unless the fence's lines are
            // read here (`lineless`: that line, or a line of blanks only, is read as the parser reads it).
            guard stream.endsInOpenFence, lineless || node.value.map({ !$0.isEmpty }) ?? false else { return nil }
            return .code
        default:
            return nil
        }
    }

    /// Where `text`'s last line begins: after its last line ending, "\n" or
    /// a lone "\r" (the text does not end in one).
    private static func lastLineStart(of text: String) -> String.Index {
        let utf8 = text.utf8
        var start = utf8.endIndex
        while start > utf8.startIndex, utf8[utf8.index(before: start)] != 0x0A, utf8[utf8.index(before: start)] != 0x0D {
            start = utf8.index(before: start)
        }
        return start
    }

    /// The index of the cell more text on `text`'s last line (a table's
    /// row) goes into: the cell its end is in, or the next one when it ends
    /// in a pipe (and blanks).
    private static func lastLineCell(_ text: String) -> Int? {
        let line = Array(text.utf8[lastLineStart(of: text)...])
        guard let end = line.lastIndex(where: { $0 != 0x20 && $0 != 0x09 }) else { return nil }
        // A backslash at the end would escape what comes next.
        guard line[end] != UInt8(ascii: "\\") else { return nil }
        return Table.openCell(line)
    }

    /// Just after the list marker (`-`, `+`, `*`, or 1 to 9 digits and `.`
    /// or `)`) at `start`; nil when none is there.
    private static func markerEnd(_ utf8: String.UTF8View, from start: String.Index) -> String.Index? {
        var k = start
        guard k < utf8.endIndex else { return nil }
        let c = utf8[k]
        if c == UInt8(ascii: "-") || c == UInt8(ascii: "+") || c == UInt8(ascii: "*") { return utf8.index(after: k) }
        var digits = 0
        while k < utf8.endIndex, utf8[k] >= UInt8(ascii: "0"), utf8[k] <= UInt8(ascii: "9"), digits < 10 {
            k = utf8.index(after: k)
            digits &+= 1
        }
        guard digits >= 1 && digits <= 9, k < utf8.endIndex, utf8[k] == UInt8(ascii: ".") || utf8[k] == UInt8(ascii: ")") else { return nil }
        return utf8.index(after: k)
    }

    /// Where an item's text begins when a list marker (`-`, `+`, `*`, or 1
    /// to 9 digits and `.` or `)`), its spaces and a task box (`[ ]`, `[x]`,
    /// `[X]` and a space) begin at `start`: after them (and whether a box
    /// was), or at the box's `[` when what follows it is not a whole box yet;
    /// nil when no marker does, or nothing follows it yet.
    private static func listContent(_ utf8: String.UTF8View, from start: String.Index) -> (at: String.Index, box: Bool)? {
        guard var k = markerEnd(utf8, from: start), k < utf8.endIndex, utf8[k] == 0x20 else { return nil }
        while k < utf8.endIndex && utf8[k] == 0x20 { k = utf8.index(after: k) }
        guard k < utf8.endIndex else { return nil }
        // A task box: "[ ] ", "[x] ", "[X] ".
        var box = k
        guard utf8[box] == UInt8(ascii: "[") else { return (k, false) }
        box = utf8.index(after: box)
        guard box < utf8.endIndex, utf8[box] == 0x20 || utf8[box] | 0x20 == UInt8(ascii: "x") else { return (k, false) }
        box = utf8.index(after: box)
        guard box < utf8.endIndex, utf8[box] == UInt8(ascii: "]") else { return (k, false) }
        box = utf8.index(after: box)
        guard box < utf8.endIndex, utf8[box] == 0x20 else { return (k, false) }
        while box < utf8.endIndex && utf8[box] == 0x20 { box = utf8.index(after: box) }
        guard box < utf8.endIndex else { return nil }
        return (box, true)
    }

    /// Whether a list marker (`-`, `+`, `*`, or 1 to 9 digits and `.` or
    /// `)`) at `start` ends the text, or is followed by one to four spaces
    /// that do (more spaces would make the item's text indented code): true
    /// when the marker is the text's last character (its item's text is
    /// one blank away), false after its blanks, nil when it is not so.
    private static func markerEndsLine(_ utf8: String.UTF8View, from start: String.Index) -> Bool? {
        guard var k = markerEnd(utf8, from: start) else { return nil }
        var spaces = 0
        while k < utf8.endIndex {
            guard utf8[k] == 0x20 else { return nil }
            spaces &+= 1
            k = utf8.index(after: k)
        }
        guard spaces <= 4 else { return nil }
        return spaces == 0
    }

    /// After a build: forgets the messages it did not show (once they are many).
    func sweep() {
        if entries.count > 2 &* used &+ 8 { entries = entries.filter { $0.value.generation == generation } }
        generation &+= 1
        used = 0
    }
}

extension ChatScreen {
    /// Lines of a tool's output shown before "Show all".
    static let foldedOutputLines = 12
    /// Lines of a diff shown before "Show all".
    static let foldedDiffLines = 40

    /// The model's reasoning, before the answer: open while it streams,
    /// closed once the answer came (tap to toggle).
    static func reasoning(_ entry: TranscriptEntry, navigation: NavigationState) -> SemanticNode {
        let id = "message.\(entry.id).reasoning"
        let live = entry.isStreaming && entry.reasoningSecs == nil
        let title = entry.reasoningSecs.map { "Thought for \(formatSeconds($0))" } ?? (live ? "Thinking…" : "Thought")
        let open = navigation.isExpanded(id, default: live)
        var node = SemanticNode(
            id, .reasoning, label: title, value: open ? entry.reasoning : nil,
            accessibilityLabel: title, accessibilityValue: open ? entry.reasoning : "collapsed",
            tap: .action(.setExpanded(nodeID: id, expanded: !open)))
        node.expanded = open
        return node
    }

    /// A tool call as a card: its name and status, a one-line summary, and,
    /// opened, what it did (a diff for an edit, else its input) and its
    /// output, long output folded. An error and the call's images always show.
    static func toolCard(
        _ call: ToolCall, id: String, images: [Int] = [], all: [HistoryImage] = [], navigation: NavigationState = NavigationState(),
        cards: ToolCardCache? = nil
    ) -> SemanticNode {
        let status = toolStatus(call)
        let open = navigation.isExpanded(id, default: false)
        // Read on from where the last build stopped when the input only grew.
        var (summary, diffs): (String, [FileDiff]?)
        if let cards {
            (summary, diffs) = cards.shown(call, id: id)
        } else {
            var reading = ToolInputReading(name: call.name)
            reading.read(call.input)
            (summary, diffs) = (reading.summary(), reading.diffs())
        }
        if let diffs, !diffs.isEmpty {
            let added = diffs.reduce(0) { $0 &+ $1.added }, removed = diffs.reduce(0) { $0 &+ $1.removed }
            summary += (summary.isEmpty ? "" : " ") + "+\(added) −\(removed)"
        }
        var children: [SemanticNode] = []
        // Open on one file's diff, whose header says the same, the summary is not shown twice.
        let saidByItsDiff = open && diffs?.count == 1
        if !summary.isEmpty { children.append(SemanticNode("\(id).summary", .text, label: "", value: summary, visible: !saidByItsDiff)) }
        if open {
            if let diffs, !diffs.isEmpty {
                for (k, diff) in diffs.enumerated() { children.append(diffNode(diff, id: "\(id).diff.\(k)", navigation: navigation)) }
            } else if !call.input.isEmpty {
                children.append(.text("\(id).input", "Input", value: call.input))
            }
            if !call.output.isEmpty { children.append(output(call.output, id: "\(id).output", navigation: navigation)) }
        }
        if let error = call.error { children.append(.text("\(id).error", "Error", value: error, role: .errorText)) }
        for k in images { children.append(image("\(id).image.\(k)", all[k])) }
        var node = SemanticNode(
            id, .toolCall, label: call.name, value: status,
            accessibilityLabel: summary.isEmpty ? "Tool \(call.name)" : "Tool \(call.name): \(summary)",
            accessibilityValue: call.error.map { "\(status): \($0)" } ?? status,
            tap: .action(.setExpanded(nodeID: id, expanded: !open)), children: children)
        node.expanded = open
        return node
    }

    /// A tool's output: its first lines and "Show all" when long.
    static func output(_ text: String, id: String, navigation: NavigationState) -> SemanticNode {
        let (shown, total) = firstLines(text, foldedOutputLines)
        guard shown.utf8.count < text.utf8.count else { return .text(id, "Output", value: text) }
        let open = navigation.isExpanded(id, default: false)
        var node = SemanticNode(
            id, .text, label: "Output", value: open ? text : shown,
            children: [
                .button(
                    id + ".more", open ? "Show less" : "Show all \(total) lines", .setExpanded(nodeID: id, expanded: !open),
                    accessibilityLabel: open ? "Show less output" : "Show all \(total) lines of output")
            ])
        node.expanded = open
        return node
    }

    /// A file's diff: its hunks' lines marked added, removed or context;
    /// past `foldedDiffLines` lines, folded until opened.
    static func diffNode(_ diff: FileDiff, id: String, navigation: NavigationState) -> SemanticNode {
        let kept = diff.hunks.reduce(0) { $0 &+ $1.lines.count }
        let long = kept > foldedDiffLines
        let open = !long || navigation.isExpanded(id, default: false)
        var budget = open ? Int.max : foldedDiffLines
        var children: [SemanticNode] = []
        for (h, hunk) in diff.hunks.enumerated() where budget > 0 {
            let hunkID = "\(id).\(h)"
            // Line numbers only where they are the file's (an edit's snippet
            // has none): else its own words, or "⋯" between two hunks.
            var header = diff.relativeLineNumbers ? (h > 0 ? "⋯" : "") : "@@ -\(hunk.oldStart) +\(hunk.newStart) @@"
            if let text = hunk.header, !text.isEmpty { header += header.isEmpty ? text : " " + text }
            var hunkNode = SemanticNode(hunkID, .diffHunk, label: header)
            hunkNode.children.reserveCapacity(min(hunk.lines.count, budget))
            for (n, line) in hunk.lines.enumerated() {
                guard budget > 0 else { break }
                budget &-= 1
                var lineNode = SemanticNode(
                    "\(hunkID).\(n)", .diffLine, label: "", value: line.text,
                    accessibilityLabel: line.kind == .added ? "Added" : (line.kind == .removed ? "Removed" : "Unchanged"))
                lineNode.variant = line.kind.rawValue
                hunkNode.children.append(lineNode)
            }
            children.append(hunkNode)
        }
        if long {
            children.append(
                .button(
                    id + ".more", open ? "Show less" : "Show all \(kept) lines", .setExpanded(nodeID: id, expanded: !open),
                    accessibilityLabel: open ? "Show less of the diff" : "Show all \(kept) lines of the diff"))
        }
        if diff.omittedLines > 0 {
            children.append(.text(id + ".omitted", "\(diff.omittedLines) more lines not shown", role: .status))
        }
        var node = SemanticNode(
            id, .diff, label: diff.path, value: "+\(diff.added) −\(diff.removed)",
            accessibilityLabel: diff.isNewFile ? "New file \(diff.path)" : (diff.isDeletion ? "Deleted file \(diff.path)" : "Changes to \(diff.path)"),
            accessibilityValue: "\(diff.added) lines added, \(diff.removed) removed", children: children)
        node.counts = SemanticNode.Counts(added: diff.added, removed: diff.removed)
        if long { node.expanded = open }
        return node
    }

    /// The first `limit` lines of `text` (without the newline after them) and how many lines it has.
    static func firstLines(_ text: String, _ limit: Int) -> (String, Int) {
        var lines = 1
        var cut: String.Index?
        var i = text.utf8.startIndex
        let end = text.utf8.endIndex
        while i < end {
            if text.utf8[i] == UInt8(ascii: "\n") {
                if lines == limit { cut = i }
                lines &+= 1
            }
            i = text.utf8.index(after: i)
        }
        if text.utf8.last == UInt8(ascii: "\n") { lines &-= 1 }
        guard let cut, lines > limit else { return (text, lines) }
        return (String(text[..<cut]), lines)
    }
}
