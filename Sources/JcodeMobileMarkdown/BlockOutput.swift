// Turns closed block nodes into MarkdownBlock values, running the inline
// phase on their text. Recursion here follows the block tree, whose depth the
// block phase caps at Markdown.maxDepth.

struct BlockOutput {
    let definitions: [String: String]
    /// Buffers reused by the inline parses of this output's blocks.
    private let scratch = InlineScratch()

    init(definitions: [String: String]) {
        self.definitions = definitions
    }

    /// The value of `node`, nil for a paragraph of definitions only; `sensitive` is set
    /// when some inline content has a label no definition matched.
    func block(_ node: BlockNode, sensitive: inout Bool) -> MarkdownBlock? {
        switch node.kind {
        case .document:
            return nil
        case .paragraph:
            guard !node.isRemoved else { return nil }
            if node.streamsInlines {
                // A short one is read whole: no checkpoint would be found in it.
                guard node.content.count > InlineParser.checkpointSpacing else {
                    node.inlineCheckpoint = nil
                    return inline(.paragraph, node.content, &sensitive)
                }
                // Taken out of the node: held by the parse alone, it grows in place.
                let checkpoint = node.inlineCheckpoint
                node.inlineCheckpoint = nil
                let read = paragraph(node.content, resuming: consume checkpoint, &sensitive)
                node.inlineCheckpoint = read.checkpoint
                return read.block
            }
            return inline(.paragraph, node.content, &sensitive)
        case .heading:
            return inline(.heading(level: node.level), node.content, &sensitive)
        case .fencedCode:
            return MarkdownBlock(kind: .codeBlock(language: node.language, open: !node.fenceClosed && node.closedAtEnd),
                                 text: literal(node))
        case .indentedCode:
            return MarkdownBlock(kind: .codeBlock(language: nil, open: false), text: withoutFinalNewline(node.content))
        case .html:
            return MarkdownBlock(kind: .html, text: literal(node))
        case .thematicBreak:
            return MarkdownBlock(kind: .thematicBreak)
        case .quote:
            return MarkdownBlock(kind: .quote, children: children(node, &sensitive))
        case .list:
            return MarkdownBlock(kind: .list(ordered: node.ordered, start: node.startNumber, tight: isTight(node)),
                                 children: children(node, &sensitive))
        case .item:
            return item(node, &sensitive)
        case .table:
            return table(node, &sensitive)
        }
    }

    private func children(_ node: BlockNode, _ sensitive: inout Bool) -> [MarkdownBlock] {
        // Allocated once at its size (`compactMap` grows its array as it goes).
        var blocks: [MarkdownBlock] = []
        blocks.reserveCapacity(node.children.count)
        for child in node.children {
            if let value = block(child, sensitive: &sensitive) { blocks.append(value) }
        }
        return blocks
    }

    private func inline(_ kind: MarkdownBlock.Kind, _ content: [UInt8], _ sensitive: inout Bool) -> MarkdownBlock {
        inline(kind, content, in: 0..<content.count, &sensitive)
    }

    /// The inline content `content[bounds]`.
    private func inline(
        _ kind: MarkdownBlock.Kind, _ content: [UInt8], in bounds: Range<Int>, _ sensitive: inout Bool
    ) -> MarkdownBlock {
        let (text, spans, unresolved) = InlineParser.parse(content, in: bounds, definitions: definitions, scratch: scratch)
        if unresolved { sensitive = true }
        return MarkdownBlock(kind: kind, text: text, spans: MarkdownSpans(spans))
    }

    /// A paragraph read on from `resuming` (see `InlineParser.Checkpoint`), and where the next read goes on from.
    func paragraph(
        _ content: [UInt8], resuming: consuming InlineParser.Checkpoint?, _ sensitive: inout Bool
    ) -> (block: MarkdownBlock, checkpoint: InlineParser.Checkpoint?) {
        let (text, spans, unresolved, checkpoint) = InlineParser.parse(content, definitions: definitions, resuming: resuming)
        if unresolved { sensitive = true }
        return (MarkdownBlock(kind: .paragraph, text: text, spans: spans), checkpoint)
    }

    /// A fenced code or HTML block's text: its lines without the final newline,
    /// from the text kept for a resumed block's first lines and the rest decoded.
    private func literal(_ node: BlockNode) -> String {
        let kept = node.keptTextCount
        let content = node.content
        guard kept > 0, kept <= content.count else { return withoutFinalNewline(content) }
        let end = content.last == 10 ? content.count - 1 : content.count
        if kept <= end { return node.keptText + String(decoding: content[kept..<end], as: UTF8.self) }
        // Only the kept lines, the last one's "\n" dropped (one byte, one scalar).
        let text = node.keptText
        return String(text[..<text.utf8.index(before: text.utf8.endIndex)])
    }

    private func withoutFinalNewline(_ content: [UInt8]) -> String {
        String(decoding: content.last == 10 ? content.dropLast() : content[...], as: UTF8.self)
    }

    /// A list is loose when a blank line separates two of its items, or two blocks of one item.
    private func isTight(_ list: BlockNode) -> Bool { isTight(list, items: list.children.count) }

    /// Whether items 0 ..< count of `list` and the gaps after them are tight.
    private func isTight(_ list: BlockNode, items count: Int) -> Bool {
        let items = list.children
        for (index, item) in items.prefix(count).enumerated() {
            if index + 1 < items.count && item.endLine + 1 < items[index + 1].startLine { return false }
            // A paragraph of definitions only counts: it shows nothing but is a block.
            let blocks = item.children
            for (k, child) in blocks.enumerated() where k + 1 < blocks.count {
                if child.endLine + 1 < blocks[k + 1].startLine { return false }
            }
        }
        return true
    }

    /// The state to go on reading the open top-level `node` (a list or a
    /// table, whose value is `block`) at `resumeAt`, its first `kept` children final.
    /// `sensitive`: some inline content of the whole container looked a label
    /// up (taken for the kept children: a later definition then has
    /// everything read again, which is right if sometimes more than needed).
    /// `afterFence`: the open item's blocks before a fence that began on the
    /// text's last line, and that line (`FenceRestart`).
    func openContainer(
        _ node: BlockNode, _ block: MarkdownBlock, kept: Int, resumeAt: Int, item: OpenItem?,
        afterFence: (kept: Int, resumeAt: Int, fenceChar: UInt8)? = nil, sensitive: Bool
    ) -> OpenContainer? {
        guard kept <= block.children.count else { return nil }
        if let item, kept >= block.children.count || item.kept > block.children[kept].children.count { return nil }
        let kind: OpenContainer.Kind
        switch node.kind {
        case .list: kind = .list(ordered: node.ordered, startNumber: node.startNumber)
        case .table: kind = .table(alignments: node.alignments)
        case .quote: kind = .quote
        default: return nil
        }
        // The kept children's definitions (hoisted to the container: those of the paragraphs before `resumeAt`).
        guard node.definitionStarts.count == node.definitions.count else { return nil }
        func definitions(before resumeAt: Int) -> [(label: String, url: String)] {
            var kept: [(label: String, url: String)] = []
            for (definition, start) in zip(node.definitions, node.definitionStarts) where start < resumeAt { kept.append(definition) }
            return kept
        }
        // A list: a blank line between its kept items, or between the open item's blocks up to the one read on from.
        func loose(before resumeAt: Int, item: Bool) -> Bool {
            if !isTight(node, items: kept) { return true }
            guard item else { return false }
            let blocks = node.children[kept].children
            for k in blocks.indices where k + 1 < blocks.count && blocks[k].start < resumeAt {
                if blocks[k].endLine + 1 < blocks[k + 1].startLine { return true }
            }
            return false
        }
        var state = OpenContainer(kind: kind, start: node.start, resumeAt: resumeAt, kept: kept)
        if node.kind == .list {
            state.keptLoose = loose(before: resumeAt, item: item != nil)
            state.item = item
            if let fence = afterFence, kept < block.children.count, fence.kept <= block.children[kept].children.count {
                let open = node.children[kept]
                state.afterFence = FenceRestart(
                    resumeAt: fence.resumeAt, fenceChar: fence.fenceChar,
                    item: OpenItem(kept: fence.kept, listMarker: node.marker, markerOffset: open.markerOffset, padding: open.padding),
                    keptLoose: loose(before: fence.resumeAt, item: true), keptDefinitions: definitions(before: fence.resumeAt))
            }
        }
        state.keptDefinitions = definitions(before: resumeAt)
        state.keptSensitive = sensitive
        return state
    }

    /// A list item. A GFM task item (a first paragraph starting with "[ ]",
    /// "[x]" or "[X]" and a blank) has its first paragraph read after the
    /// check box, once (not read whole first and then again without the box).
    private func item(_ node: BlockNode, _ sensitive: inout Bool) -> MarkdownBlock {
        guard !node.continued, let first = node.children.first, first.kind == .paragraph, !first.isRemoved,
              let checked = Self.checkBox(first.content)
        else { return MarkdownBlock(kind: .listItem(checked: nil), children: children(node, &sensitive)) }
        var blocks: [MarkdownBlock] = []
        blocks.reserveCapacity(node.children.count)
        let content = first.content
        let rest = trimmedBounds(content, in: 4..<content.count)
        if !rest.isEmpty { blocks.append(inline(.paragraph, content, in: rest, &sensitive)) }
        // Its checkpoint (a streamed paragraph's) was for the text with the box: not this read's.
        first.inlineCheckpoint = nil
        for child in node.children.dropFirst() {
            if let value = block(child, sensitive: &sensitive) { blocks.append(value) }
        }
        return MarkdownBlock(kind: .listItem(checked: checked), children: blocks)
    }

    /// A paragraph beginning with a task item's check box ("[ ]", "[x]" or
    /// "[X]", then a blank or its end): whether it is checked; nil for any other.
    private static func checkBox(_ c: [UInt8]) -> Bool? {
        guard c.count >= 4, c[0] == UInt8(ascii: "["), c[2] == UInt8(ascii: "]"), isSpaceOrTab(c[3]) || c[3] == 10,
              c[1] == 32 || c[1] == UInt8(ascii: "x") || c[1] == UInt8(ascii: "X")
        else { return nil }
        return c[1] != 32
    }

    /// Whether an item's first paragraph `first` is a task's check box
    /// alone: it gives the item no value (`item` reads the box and nothing after it).
    static func isCheckBoxAlone(_ first: BlockNode) -> Bool {
        first.kind == .paragraph && !first.isRemoved && checkBox(first.content) != nil
            && trimmedBounds(first.content, in: 4..<first.content.count).isEmpty
    }

    private func table(_ node: BlockNode, _ sensitive: inout Bool) -> MarkdownBlock {
        // Arrays reserved at their size, each allocated once.
        var rows: [MarkdownBlock] = []
        rows.reserveCapacity(node.rows.count)
        for (index, row) in node.rows.enumerated() {
            // A cell without a backslash is read in place in the row (`Table.cells` would copy it).
            let cells = Table.cellBounds(row)
            var values: [MarkdownBlock] = []
            values.reserveCapacity(node.alignments.count)
            for (column, alignment) in node.alignments.enumerated() {
                let kind = MarkdownBlock.Kind.tableCell(alignment: alignment)
                if column >= cells.count {
                    values.append(inline(kind, [], &sensitive))
                } else if cells[column].escaped {
                    values.append(inline(kind, Table.cell(row, cells[column]), &sensitive))
                } else {
                    values.append(inline(kind, row, in: cells[column].from..<cells[column].to, &sensitive))
                }
            }
            rows.append(MarkdownBlock(kind: .tableRow(header: node.rowOffset + index == 0), children: values))
        }
        return MarkdownBlock(kind: .table(alignments: node.alignments), children: rows)
    }
}
