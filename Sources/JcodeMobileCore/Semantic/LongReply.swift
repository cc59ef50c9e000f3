import JcodeMobileMarkdown

/// A reply too long to show whole: past `ChatScreen.foldedReplyNodes`
/// nodes, a reply's markdown shows its first nodes (in document order, a
/// list, table or quote cut between its children) and a button to show
/// the rest, as a long diff or output does. What a reply of any shape
/// costs to show is then bounded by the budget and its parse, not by how
/// many nodes its bytes make (a table row of 30 bytes is four nodes, a
/// paragraph of 400 is one). docs/ABI.md, "A reply too long to show whole".
///
/// Which nodes are shown is a function of the reply's blocks alone (the
/// markdown cache, streaming, shows the same ones: `MarkdownCache`).
extension MarkdownNodes {
    /// How many nodes `node(block, id:)` makes of `block`, its own and its
    /// children's (as `child(of:_:id:)` makes a list's items and a table's
    /// rows), counted until they pass `limit` (then more than `limit`, not all).
    static func count(_ block: MarkdownBlock, limit: Int = .max) -> Int {
        withUnsafePointer(to: block) { count($0, limit: limit) }
    }

    /// The same, of a block read in place (none of it copied).
    static func count(_ block: UnsafePointer<MarkdownBlock>, limit: Int) -> Int {
        var item = false
        switch block.pointee.kind {
        case .paragraph, .html, .heading, .thematicBreak:
            return 1
        case .codeBlock:
            return 2  // and its Copy button
        case .tableRow, .tableCell:
            return 1 &+ block.pointee.children.count  // a row's cells hold no blocks
        case .listItem:
            item = true
        case .list, .table, .quote:
            break
        }
        return block.pointee.children.withUnsafeBufferPointer { children in
            guard let first = children.baseAddress, children.count > 0 else { return 1 }
            // A list item's first paragraph is the item's own value.
            var k = 0
            if item, case .paragraph = first.pointee.kind { k = 1 }
            var n = 1
            while k < children.count && n <= limit {
                n &+= count(first + k, limit: limit &- n)
                k &+= 1
            }
            return n
        }
    }

    /// The total of `count` over `blocks`.
    static func count(_ blocks: [MarkdownBlock]) -> Int {
        var n = 0
        for block in blocks { n &+= count(block) }
        return n
    }

    /// Where a fold stopped looking at a reply's blocks: what it shows
    /// depends on the blocks before `examined`, the first that did not fit,
    /// and on that one only as `looked` says.
    struct Fold: Equatable {
        enum Looked: Equatable {
            /// Its children up to this one (the first that did not fit whole).
            case children(through: Int)
            /// Only that it is there (no room was left for any node).
            case there
            /// Only that it is a code block (its two nodes did not fit in one).
            case codeBlock
        }
        var examined: Int
        var looked: Looked

        /// Whether `blocks`, of which those before `first` are as they were
        /// and block `first` kept its first `kept` children (`MarkdownStream.grown`),
        /// fold as before: the same nodes shown, and still long.
        func holds(first: Int, kept: Int?, _ blocks: [MarkdownBlock]) -> Bool {
            if first > examined { return true }
            guard first == examined, examined < blocks.count else { return false }
            switch looked {
            case .children(let through): return (kept ?? 0) > through
            case .there: return true
            case .codeBlock:
                if case .codeBlock = blocks[examined].kind { return true }
                return false
            }
        }
    }

    /// What a reply of `blocks` shows within `budget` nodes: the blocks
    /// whose nodes fit whole, in order, then the first that does not fit
    /// cut to what does (a list's, table's or quote's first children, the
    /// last of them cut in turn; a table's row is never cut), and nothing
    /// after it; and where it stopped looking. nil when every block fits.
    static func shown(_ blocks: [MarkdownBlock], budget: Int) -> (blocks: [MarkdownBlock], fold: Fold)? {
        var room = budget
        var shown: [MarkdownBlock] = []
        for k in blocks.indices {
            let n = count(blocks[k], limit: room)
            if n <= room {
                room &-= n
                continue
            }
            shown.reserveCapacity(k &+ 1)
            shown.append(contentsOf: blocks[..<k])
            guard room > 0 else { return (shown, Fold(examined: k, looked: .there)) }
            if case .codeBlock = blocks[k].kind { return (shown, Fold(examined: k, looked: .codeBlock)) }
            // A paragraph, heading or break fits in any room: what did not fit holds children.
            let cut = self.cut(blocks[k], room: room)
            if let block = cut.block { shown.append(block) }
            return (shown, Fold(examined: k, looked: .children(through: cut.child)))
        }
        return nil
    }

    /// The nodes of a reply of `blocks` (parsed whole), ids `prefix.k`:
    /// past `budget`, the ones `shown` keeps unless it is shown `whole`;
    /// whether they are more than `budget`.
    static func reply(_ blocks: [MarkdownBlock], prefix: String, budget: Int, whole: Bool) -> (nodes: [SemanticNode], long: Bool) {
        let shown = Self.shown(blocks, budget: budget)
        if !whole, let shown { return (nodes(shown.blocks, prefix: prefix), true) }
        return (nodes(blocks, prefix: prefix), shown != nil)
    }

    /// `block`, a list, table, quote or list item whose nodes are more than
    /// `room`, cut to its first nodes that fit in `room` (nil: none does),
    /// and the index of its first child that did not fit whole.
    private static func cut(_ block: MarkdownBlock, room: Int) -> (block: MarkdownBlock?, child: Int) {
        var lead = 0
        var rowsOnly = false
        switch block.kind {
        case .list, .quote: break
        case .table: rowsOnly = true
        case .listItem: if let first = block.children.first, case .paragraph = first.kind { lead = 1 }
        // A leaf or a table's row is not cut.
        default: return (nil, 0)
        }
        guard room >= 1 else { return (nil, lead) }
        var left = room &- 1
        var k = lead
        while k < block.children.count {
            let n = count(block.children[k], limit: left)
            if n > left { break }
            left &-= n
            k &+= 1
        }
        var cut = block
        cut.children.removeSubrange(k...)
        if k < block.children.count, !rowsOnly, left > 0, let inner = self.cut(block.children[k], room: left).block {
            cut.children.append(inner)
        }
        // A container of nothing shows nothing (an item shows its own line).
        if cut.children.count == 0 { return (nil, k) }
        return (cut, k)
    }
}

extension MarkdownCache.Entry {
    /// Counts the nodes of the stream's blocks from block `first` on (those
    /// before it are as they were) until they pass the budget: a list, table
    /// or quote that grew from the children it kept (`MarkdownStream.grown`),
    /// so a delta costs what it changed. Past the budget the blocks are not
    /// all counted (`total` is then more than the budget, not theirs).
    func count(from first: Int) {
        if first >= counts.count && total > budget { return }
        while counts.count > first { total &-= counts.removeLast() }
        var k = counts.count
        while k < stream.blocks.count && total <= budget {
            let n = count(k)
            counts.append(n)
            total &+= n
            k &+= 1
        }
    }

    /// The nodes of block `k`: a list, table or quote from the children's
    /// sums kept when it grew, and up to where they pass the budget.
    private func count(_ k: Int) -> Int {
        switch stream.blocks[k].kind {
        case .list, .table, .quote: break
        case .codeBlock: return 2
        case .paragraph, .html, .heading, .thematicBreak: return 1
        default: return stream.blocks.withUnsafeBufferPointer { MarkdownNodes.count($0.baseAddress! + k, limit: .max) }
        }
        if let grown = stream.grown, grown.block == k, sumsBlock == k {
            // The sums of the children it kept stay.
            while childSums.count > grown.count &+ 1 { childSums.removeLast() }
        } else {
            childSums.removeAll(keepingCapacity: true)
            childSums.append(0)
            sumsBlock = k
        }
        var j = childSums.count &- 1
        var sum = childSums[j]
        let children = stream.blocks[k].children.count
        while j < children && total &+ 1 &+ sum <= budget {
            sum &+= childCount(k, j)
            childSums.append(sum)
            j &+= 1
        }
        return 1 &+ sum
    }

    /// The nodes of child `j` of block `k`, up to the budget.
    private func childCount(_ k: Int, _ j: Int) -> Int {
        switch stream.blocks[k].children[j].kind {
        case .tableRow: return 1 &+ stream.blocks[k].children[j].children.count
        case .listItem where stream.blocks[k].children[j].children.count <= 1:
            // An item of one line (or of one block).
            guard stream.blocks[k].children[j].children.count == 1 else { return 1 }
            switch stream.blocks[k].children[j].children[0].kind {
            case .paragraph: return 1
            case .html, .heading, .thematicBreak: return 2
            case .codeBlock: return 3
            default: break
            }
        case .paragraph, .html, .heading, .thematicBreak: return 1
        case .codeBlock: return 2
        default: break
        }
        return stream.blocks[k].children.withUnsafeBufferPointer { MarkdownNodes.count($0.baseAddress! + j, limit: budget) }
    }
}

extension ChatScreen {
    /// Nodes past which a reply's markdown is folded until opened.
    static let foldedReplyNodes = 4096

    /// Reply `entry`'s markdown nodes, ids `message.<id>.md.k`: past
    /// `foldedReplyNodes`, its first ones unless the person opened it
    /// `whole`; whether it is that long.
    static func replyBlocks(_ entry: TranscriptEntry, whole: Bool, markdown: MarkdownCache?) -> (nodes: [SemanticNode], long: Bool) {
        let prefix = "message.\(entry.id).md"
        if let markdown {
            let blocks = markdown.blocks(of: entry.text, prefix: prefix, budget: foldedReplyNodes, whole: whole)
            return (blocks.nodes, blocks.long)
        }
        return MarkdownNodes.reply(Markdown.parse(entry.text), prefix: prefix, budget: foldedReplyNodes, whole: whole)
    }

    /// Whether the person opened reply `entry` whole (the message's expansion).
    static func replyOpen(_ entry: TranscriptEntry, _ navigation: NavigationState) -> Bool {
        !navigation.expansions.isEmpty && navigation.isExpanded("message.\(entry.id)", default: false)
    }

    /// The button that opens a long reply whole, or folds it again.
    static func replyFold(_ entry: TranscriptEntry, open: Bool) -> SemanticNode {
        let id = "message.\(entry.id)"
        return .button(
            id + ".more", open ? "Show less" : "Show the whole reply", .setExpanded(nodeID: id, expanded: !open),
            accessibilityLabel: open ? "Show only the start of this reply" : "Show the whole reply: only its start is shown")
    }
}
