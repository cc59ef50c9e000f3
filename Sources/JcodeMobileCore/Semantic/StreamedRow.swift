/// A streamed reply's row, brought up to its entry where it lies in the
/// tree instead of being built again: what makes a delta into a long reply
/// cost what it costs into a short one.
///
/// A row built again costs its every block: the children gathered, each
/// block looked up in the layout's memo and compared, and the tree diff
/// visiting each. When only the entry's text grew (a `text_delta`), the
/// row's blocks before the first one the markdown cache changed are those
/// already in the tree, at the same places. The patch places the changed
/// and new blocks from where the first of them starts, moves the children
/// after the blocks (tool cards, the stop note) by what the blocks grew,
/// and says so as tree changes: the text appended to the row's value, its
/// new bounds, and the diff of the children from the first changed one.
///
/// An optimisation: the row equals the one `ChatScreen.message` builds and
/// `Layout.place` lays out (debug builds check it at every patch; the
/// tests build trees from scratch and compare).
struct StreamedRowPatch {
    /// The row's children from this one on are replaced.
    let first: Int
    /// The row's children from `first` on, placed.
    let suffix: [SemanticNode]
    /// The entry's text and what it gained (appended to the row's value).
    let text: String
    let appended: String
    /// The row's new height, without and with the gap after it.
    let boxHeight: Int
    let height: Int
    let entry: TranscriptEntry
    let prompt: Int?
    /// Child `first` is a list or table that grew: its first `kept`
    /// children stay (placed as they were), the ones after are `children`
    /// (placed), and its height is `height`; the suffix then starts after it.
    struct Grown {
        let kept: Int
        let children: [SemanticNode]
        let height: Int
    }
    let grown: Grown?
    /// The last block's value is long (`longValue` bytes or more): the tree
    /// keeps its own copy of it, grown in place (`keepGrownValues`).
    let longLast: Bool

    /// The patch bringing `row` (the tree's, built for `old` and placed)
    /// up to `new`; nil when more than the text changed, or the text did
    /// not grow at its end, or the row is not a reply written in markdown:
    /// the row is then built again.
    static func make(
        row: SemanticNode, old: TranscriptEntry, new: TranscriptEntry, prompt: Int?, navigation: NavigationState,
        markdown: MarkdownCache, memo: LineMemo, x: Int, width: Int
    ) -> StreamedRowPatch? {
        guard new.role == .assistant || new.role == .backgroundTask, !old.text.isEmpty,
              new.text.utf8.count > old.text.utf8.count
        else { return nil }
        var same = new
        same.text = old.text
        guard same == old else { return nil }
        let blocks = markdown.blocks(
            of: new.text, prefix: "message.\(new.id).md", appendedTo: old.text.utf8.count, budget: ChatScreen.foldedReplyNodes,
            whole: ChatScreen.replyOpen(new, navigation))
        guard let before = blocks.before, before > 0, blocks.beforeBytes == old.text.utf8.count, !blocks.nodes.isEmpty
        else { return nil }
        // The row's children: what comes before the blocks (reasoning,
        // images), `before` blocks, then what comes after (tool cards, the stop note).
        let children = row.children
        var lead = 0
        while lead < children.count && !children[lead].role.isMarkdownBlock { lead &+= 1 }
        let after = lead &+ before
        guard after <= children.count, children[after &- 1].role.isMarkdownBlock,
              after == children.count || !children[after].role.isMarkdownBlock
        else { return nil }
        let first = lead &+ blocks.unchanged
        var y = first < children.count ? children[first].bounds.y : Layout.end(of: children[first &- 1])
        let inset = Layout.indent
        let innerX = x &+ inset
        let innerWidth = max(0, width &- 2 &* inset)
        var suffix: [SemanticNode] = []
        suffix.reserveCapacity(blocks.nodes.count &- blocks.unchanged &+ children.count &- after)
        var k = blocks.unchanged
        var grown: Grown?
        if let kept = blocks.grownFrom, first < after, children[first].id == blocks.nodes[k].id,
           children[first].children.count >= kept, children[first].visible {
            // A list, table or quote that grew: its kept children stay where they
            // are (the row's node is not copied here: `apply` changes it in
            // place), the ones after them are placed below.
            let old = children[first]
            let top = old.bounds.y
            var cy = kept > 0 ? Layout.end(of: old.children[kept &- 1]) : top &+ Layout.ownHeight(old, width: old.bounds.width, memo: memo)
            let fresh = blocks.nodes[k].children
            // As `Layout.place` places them: a quote's inside its box (indented, padded below).
            let inset = Layout.holdsItsChildren(old.role) ? Layout.indent : 0
            var placed: [SemanticNode] = []
            placed.reserveCapacity(fresh.count &- kept)
            var c = kept
            while c < fresh.count {
                var child = fresh[c]
                Layout.place(&child, x: old.bounds.x &+ inset, y: &cy, width: max(0, old.bounds.width &- 2 &* inset), memo: memo)
                placed.append(child)
                c &+= 1
            }
            if inset > 0 && (kept > 0 || placed.contains(where: \.visible)) {
                cy &+= Layout.padding
            }
            grown = Grown(kept: kept, children: placed, height: cy &- top)
            y = cy &+ Layout.gapAfter(old.role)
            k &+= 1
        }
        var longLast = false
        while k < blocks.nodes.count {
            var block = blocks.nodes[k]
            if k == blocks.nodes.count &- 1 {
                longLast = (block.value?.utf8.count ?? 0) >= longValue
                // The open last block: it changes at every delta, a placed
                // copy kept for the next one would never be reused.
                Layout.place(&block, x: innerX, y: &y, width: innerWidth, memo: memo)
            } else {
                memo.placeBlock(&block, x: innerX, y: &y, width: innerWidth)
            }
            suffix.append(block)
            k &+= 1
        }
        if after < children.count {
            let dy = y &- children[after].bounds.y
            var c = after
            while c < children.count {
                var child = children[c]
                if dy != 0 { Layout.shift(&child, by: dy) }
                y = Layout.end(of: child)
                suffix.append(child)
                c &+= 1
            }
        }
        // The blocks are shown: the box's padding closes it.
        y &+= Layout.padding
        let utf8 = new.text.utf8
        let appended = String(Substring(utf8[utf8.index(utf8.startIndex, offsetBy: old.text.utf8.count)...]))
        return StreamedRowPatch(
            first: first, suffix: suffix, text: new.text, appended: appended,
            boxHeight: y &- row.bounds.y, height: y &- row.bounds.y &+ Layout.gap, entry: new, prompt: prompt, grown: grown,
            longLast: longLast)
    }

    /// Applies the patch to `row`, in place (O(what changed) when the
    /// row's children are held by it alone), and appends the tree changes
    /// that say so.
    func apply(to row: inout SemanticNode, changes: inout [TreeChange]) {
        var rest = first
        if let grown {
            // The list or table grows in place: its kept children are not copied.
            let oldTail = Array(row.children[first].children[grown.kept...])
            row.children[first].children.removeSubrange(grown.kept...)
            row.children[first].children.append(contentsOf: grown.children)
            if row.children[first].bounds.height != grown.height {
                row.children[first].bounds.height = grown.height
                var own = SemanticNode(row.children[first].id, row.children[first].role, label: "")
                own.bounds = row.children[first].bounds
                changes.append(.update(id: own.id, fields: .bounds, node: own))
            }
            TreeChange.diff(children: oldTail, to: grown.children, of: row.children[first].id, from: grown.kept, into: &changes)
            rest = first &+ 1
        }
        var oldSuffix = Array(row.children[rest...])
        // Removed, then appended: an append grows the storage by doubling
        // (a replacement that grows it would copy every child each time).
        row.children.removeSubrange(rest...)
        row.children.append(contentsOf: suffix)
        // Appended in place: the row's value is the tree's own copy of the
        // text (copied once, at the first patch), the state's stays its own.
        if row.value == nil { row.value = text } else { row.value!.append(appended) }
        changes.append(.append(id: row.id, field: .value, text: appended))
        if row.bounds.height != boxHeight {
            row.bounds.height = boxHeight
            // The operation holds what it sets: the bounds (not the text).
            var own = SemanticNode(row.id, row.role, label: "")
            own.bounds = row.bounds
            changes.append(.update(id: row.id, fields: .bounds, node: own))
        }
        let mark = changes.count
        TreeChange.diff(children: oldSuffix, to: suffix, of: row.id, from: rest, into: &changes)
        if longLast { Self.keepGrownValues(changes[mark...], from: &oldSuffix, in: &row.children, at: rest) }
    }

    /// The shortest value `keepGrownValues` gives the tree's own storage
    /// (bytes), as the line memo does: below it, copying the value costs
    /// less than the bookkeeping that spares the copy.
    static let longValue = 8192

    /// For each value the diff found grown at its end or changed in its
    /// last runs (`changes`, made by diffing `old` against `new[start...]`):
    /// the new node takes the old node's value (the tree's), changed in
    /// place, instead of the equal one it was given (the markdown cache's,
    /// which grows its own in place at the next delta). Two holders of one
    /// long value (a streamed code block, a long paragraph) would make each
    /// append copy it whole. A node not found by its id keeps what it has.
    static func keepGrownValues(
        _ changes: ArraySlice<TreeChange>, from old: inout [SemanticNode], in new: inout [SemanticNode], at start: Int
    ) {
        for change in changes {
            if case .spans(let id, let keep, let spans) = change {
                keepRunsValue(id, keep: keep, spans: spans, from: &old, in: &new, at: start)
                continue
            }
            guard case .append(let id, let field, let text) = change, field == .value else { continue }
            // Taken out of the old node, which is dropped after this: held here alone, it grows in place.
            var same = false
            guard var value = node(id, in: &old, from: 0, { node -> String? in
                guard let value = node.value else { return nil }
                same = node.accessibilityValue == value
                node.value = nil
                node.accessibilityValue = nil
                return value
            }) ?? nil else { continue }
            value.append(text)
            // The accessibility value was the value and grew by the same text: it is the value still.
            let alike = same && changes.contains(.append(id: id, field: .accessibilityValue, text: text))
            _ = node(id, in: &new, from: start) { node in
                guard node.value?.utf8.count == value.utf8.count else { return }
                if alike { node.accessibilityValue = value }
                node.value = value
            }
        }
    }

    /// `keepGrownValues` for a text node whose spans kept their first `keep`
    /// and went on with `spans` (its value is theirs joined, as the old
    /// node's was): the old value is cut back to the kept runs' text and
    /// the new runs' text appended, where it lies.
    private static func keepRunsValue(
        _ id: String, keep: Int, spans: [TextSpan], from old: inout [SemanticNode], in new: inout [SemanticNode], at start: Int
    ) {
        // The bytes of the kept runs: the new value's but for the new runs' (a few).
        guard let newCount = node(id, in: &new, from: start, { node -> Int? in
            TreeChange.spansMakeText(node) ? node.value?.utf8.count : nil
        }) ?? nil else { return }
        var tail = 0
        for span in spans { tail &+= span.text.utf8.count }
        let kept = newCount &- tail
        guard kept > 0 else { return }
        guard var value = node(id, in: &old, from: 0, { node -> String? in
            guard let spans = node.spans, spans.count >= keep, TreeChange.spansMakeText(node),
                  let value = node.value, value.utf8.count >= kept else { return nil }
            node.value = nil
            node.accessibilityValue = nil
            return value
        }) ?? nil else { return }
        if value.utf8.count > kept { LineMemo.cut(&value, to: kept) }
        for span in spans { value.append(span.text) }
        _ = node(id, in: &new, from: start) { node in
            guard node.value?.utf8.count == value.utf8.count else { return }
            node.value = value
            node.accessibilityValue = value
        }
    }

    /// `body` on the node whose id is `id` among `nodes[start...]` and their
    /// descendants (a child's id begins with its parent's and a "."); nil
    /// when there is none.
    private static func node<R>(_ id: String, in nodes: inout [SemanticNode], from start: Int, _ body: (inout SemanticNode) -> R) -> R? {
        let count = id.utf8.count
        var k = start
        while k < nodes.count {
            let here = nodes[k].id
            if here == id { return body(&nodes[k]) }
            let length = here.utf8.count
            if count > length, LineMemo.hasPrefix(id, here, count: length),
               id.utf8[id.utf8.index(id.utf8.startIndex, offsetBy: length)] == UInt8(ascii: ".") {
                return node(id, in: &nodes[k].children, from: 0, body)
            }
            k &+= 1
        }
        return nil
    }
}
