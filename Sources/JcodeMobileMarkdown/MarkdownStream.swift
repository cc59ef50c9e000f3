// Incremental parsing of a growing text (a streamed reply).
//
// Rules:
// - A top-level block closed while reading a complete line (one ending in
//   "\n") is final: the parse is online, so no later text changes how those
//   lines were read. Such blocks form the head; the parse restarts where the
//   first block that is not final begins (or after the last final one), with
//   the head's link reference definitions.
// - A block closed during the last, incomplete line is not final: more of that
//   line can undo it ("#" closes a paragraph, "#x" continues it).
// - Restarting at a line start must read that line as the whole parse did. A
//   top-level block closes at a line that starts a new block or fails to
//   continue it, and such a line reads the same at the start of a document;
//   the exception is a table whose header is the last line of a paragraph: the
//   paragraph closes at the delimiter row but the parse restarts at the header,
//   a line that was paragraph text. The restart is kept there when the header
//   would be a paragraph line on its own (it could interrupt nothing else);
//   when it could start a block alone (indented 4 or more: indented code;
//   beginning with "<", "-", "+", "*" or a digit: HTML or a list item, taken
//   conservatively), the paragraph is final only when the table is, and until
//   then the tail starts at the paragraph.
// - An open top-level fenced code block is not read again: its complete lines
//   are kept and the next update goes on from its last, incomplete line.
// - An open top-level list or table is not read again from its start: its
//   items (rows) that began before the item (row) the last complete line is
//   in are final, kept as they are, and the next update goes on from the
//   line that item (row) begins on, which reads the same at the start of a
//   document (a list item's marker starts a list there; a table row is read
//   as one, the parser given the table's columns). A table's row is one
//   line: once that line has ended, the row is final too and the update
//   goes on from the line after it. The list's start number
//   and looseness so far are carried over. When that item is the list's last
//   and its blocks before the one the last complete line is in are final
//   too (that block began on a complete line after the item's first), the
//   update goes on from that block's line inside the list and the item, the
//   parser given them open (their markers and indent: `OpenItem`); a line that
//   began a block in the item read the same with nothing open before it in
//   the item, as at the start of a document. An open top-level block quote is
//   read on the same way from the line its last child begins on (a ">" there
//   starts a quote at the start of a document, then the same block), but
//   never from a table whose header was its paragraph's last line.
// - Link reference definitions reach back: when the definitions found in the
//   re-parsed tail change and a head block looked a label up, everything is
//   parsed again. Such a head block, and every block after it, is not counted
//   in `stableCount`.

/// Incremental parse of a text that only grows (a streamed reply).
public struct MarkdownStream: Sendable {
    /// The top-level blocks of the text as last updated.
    public private(set) var blocks: [MarkdownBlock] = []
    /// Blocks 0 ..< stableCount are closed: no later append can change them (they keep their index, hence their node ids).
    public private(set) var stableCount = 0

    /// The text ends in a paragraph of link reference definitions only (it has no block).
    public private(set) var endsInDefinitions = false
    /// The text ends inside a fenced code block not closed yet, at any depth
    /// (a top-level one's block says so too: `open`).
    public private(set) var endsInOpenFence = false
    /// When the text ends inside an open fenced code block at the top or in
    /// list items only (at the last update): how its next line is read.
    public private(set) var openFenceLine: OpenFenceLine?
    /// The text ends inside a top-level HTML block not closed yet, on a line after its first.
    public private(set) var endsInOpenHTML = false
    /// The text's last block at any depth (a list item's, a quote's) is a
    /// paragraph of text, not one of link reference definitions (which has no block).
    public var endsInParagraph: Bool { openParagraphStart != nil }
    /// Where that paragraph begins (the offset of its first line or of its
    /// text in it, at or after `lastLineStart` when the last line is its only one).
    public private(set) var openParagraphStart: Int?

    /// Blocks 0 ..< headCount are final (closed by a complete line).
    private var headCount = 0
    /// Where the next parse starts (the start of a line).
    private var restartOffset = 0
    /// The text's link reference definitions as last updated (a label's first wins):
    /// what a parse of the whole text resolves references with.
    public var definitions: [String: String] {
        if tailDefinitions.isEmpty { return headDefinitions }
        if headDefinitions.isEmpty { return tailDefinitions }
        return headDefinitions.merging(tailDefinitions) { head, _ in head }
    }
    /// Where the next append's parse starts (for tests: the cost of an update).
    var restartPoint: Int { openFence?.resumeAt ?? openContainer?.resumeAt ?? restartOffset }
    private var headDefinitions: [String: String] = [:]
    /// The definitions found in the tail at the last update, in first-wins order.
    private var tailDefinitions: [String: String] = [:]
    /// The first head block that looked a label up, if any.
    private var firstDependentHeadBlock: Int?
    /// The open top-level fenced code block the tail is, when it is one.
    private var openFence: OpenFence?
    /// The open top-level list, table or quote the tail is, when it is one with final children.
    private var openContainer: OpenContainer?
    /// After an update: the first block that may differ kept its first
    /// `count` children (the same values, the same kind): a list or table
    /// that only grew. `item`: a list's child `count` too kept its first
    /// `item` blocks (the same values) and its kind, and grew after them.
    public private(set) var grown: (block: Int, count: Int, item: Int?)?
    /// The last block, when it is a paragraph: where its inline parse goes on from.
    private var lastParagraph: (start: Int, checkpoint: InlineParser.Checkpoint)?
    /// Where the text's last line starts (after its last line ending, a final
    /// "\r" excepted), and the length it was found for: found again from there.
    public private(set) var lastLineStart = 0
    private var lineScanned = 0
    /// How many bytes of its last line, not ended yet, the open paragraph
    /// keeps for the next update, which appends only what follows them
    /// (for tests: a long line is not copied again at each delta).
    var keptLineBytes: Int { openFence?.keptLine.map { $0.end &- $0.from } ?? 0 }
    /// Where the last paragraph's inline parse goes on from at the next update (for tests: its cost).
    var inlineRestart: Int? { lastParagraph?.checkpoint.offset }

    public init() {}

    /// Whether an append parses only the open tail (off: every update parses the
    /// whole text; kept as a switch for measuring and for bisecting a mismatch).
    static let resumesTail = true

    /// Brings the parse up to `text`. If `text` starts with the text last given (the caller says so with
    /// `appendedOnly: true`; the caller guarantees it, the prefix is not compared), only the open tail is
    /// parsed again; otherwise everything is. Returns the index of the first top-level block that may differ
    /// from before (blocks before it are unchanged, same values).
    @discardableResult
    public mutating func update(_ text: String, appendedOnly: Bool) -> Int {
        var text = text
        grown = nil
        return text.withUTF8 { bytes in
            guard Self.resumesTail, appendedOnly, bytes.count >= restartOffset else {
                return parseAll(bytes, keepStable: appendedOnly)
            }
            let firstChanged = headCount
            if var open = openContainer, openFence == nil {
                if open.afterFence != nil { open = open.confirmed(in: bytes) }
                if bytes.count >= open.resumeAt { return resume(open, bytes) ?? parseAll(bytes, keepStable: true) }
            }
            var parser: BlockParser
            if var fence = openFence {
                // Taken out first: the parser holds the fence's lines once.
                openFence = nil
                parser = BlockParser(bytes: bytes, resuming: &fence)
            } else {
                parser = BlockParser(bytes: bytes, from: restartOffset)
            }
            let (nodes, fence) = read(&parser, bytes, definitions: headDefinitions)
            let definitions = newDefinitions(nodes)
            if definitions != tailDefinitions && firstDependentHeadBlock != nil {
                return parseAll(bytes, keepStable: true)
            }
            tailDefinitions = definitions
            accept(nodes, fence?.0, bytes, container: parser.openContainer)
            return firstChanged
        }
    }

    /// Goes on reading the open list, table or quote `open` from its last child's
    /// line; nil when what is read there is not that container going on
    /// (then everything is parsed again).
    private mutating func resume(_ open: OpenContainer, _ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        let firstChanged = headCount
        var known = headDefinitions
        for definition in open.keptDefinitions where known[definition.label] == nil { known[definition.label] = definition.url }
        var parser: BlockParser
        if case .table = open.kind {
            parser = BlockParser(bytes: bytes, resuming: open)
        } else if let item = open.item {
            parser = BlockParser(bytes: bytes, resuming: open, item: item)
        } else {
            parser = BlockParser(bytes: bytes, from: open.resumeAt)
        }
        var (nodes, fence) = read(&parser, bytes, definitions: known)
        guard var first = nodes.first, var block = first.block, first.start == (open.kind.isTable ? open.start : open.resumeAt),
              headCount == blocks.count - 1, blocks[headCount].children.count >= open.kept
        else { return nil }
        // Read on inside the last item: the list read begins with it (its blocks from `resumeAt` on).
        if let item = open.item {
            guard blocks[headCount].children.count > open.kept, blocks[headCount].children[open.kept].children.count >= item.kept,
                  let read = block.children.first, case .listItem = read.kind
            else { return nil }
        }
        switch (open.kind, block.kind) {
        case (.list(let ordered, let startNumber), .list(let readOrdered, _, let tight)) where readOrdered == ordered:
            block.kind = .list(ordered: ordered, start: startNumber, tight: tight && !open.keptLoose)
        case (.table(let alignments), .table(let read)) where read == alignments:
            break
        case (.quote, .quote):
            break
        default:
            return nil
        }
        let definitions = newDefinitions(nodes, before: open.keptDefinitions)
        if definitions != tailDefinitions && (firstDependentHeadBlock != nil || open.keptSensitive) { return nil }
        tailDefinitions = definitions
        // The container: its kept children, then those read now (taken out
        // of `blocks` first, so that its children are held once and grow in place).
        var container = blocks.removeLast()
        let previousKind = container.kind
        container.kind = block.kind
        if let item = open.item {
            // The open item: its kept blocks, then those read now (it taken out too, its blocks held once).
            container.children.removeSubrange((open.kept + 1)...)
            var kept = container.children.removeLast()
            kept.children.removeSubrange(item.kept...)
            kept.children.append(contentsOf: block.children[0].children)
            container.children.append(kept)
            kept = MarkdownBlock(kind: .thematicBreak)
            container.children.append(contentsOf: block.children.dropFirst())
        } else {
            container.children.removeSubrange(open.kept...)
            container.children.append(contentsOf: block.children)
        }
        block = MarkdownBlock(kind: .thematicBreak)
        first.block = container
        container = MarkdownBlock(kind: .thematicBreak)
        first.start = open.start
        first.definitions = open.keptDefinitions + first.definitions
        first.dependsOnLaterDefinitions = first.dependsOnLaterDefinitions || open.keptSensitive
        nodes[0] = first
        var stillOpen = parser.openContainer
        if nodes.count == 1, var next = stillOpen, next.start == first.start || next.start == open.resumeAt {
            // The same container still open: what this parse kept comes after what was kept before.
            next.start = open.start
            next.kind = open.kind
            if let item = open.item, next.kept == 0, var inner = next.item {
                // Still inside the same item: its blocks kept now come after those kept before.
                inner.kept = item.kept + inner.kept
                next.item = inner
            }
            next.kept = open.kept + next.kept  // counts
            next.keptLoose = next.keptLoose || open.keptLoose
            next.keptSensitive = next.keptSensitive || open.keptSensitive
            next.keptDefinitions = open.keptDefinitions + next.keptDefinitions
            stillOpen = next
        } else if nodes.count == 1 {
            // Still open and no child became final: the same place to go on from next time.
            stillOpen = first.closeLine == nil ? open : nil
        }
        accept(nodes, fence?.0, bytes, container: stillOpen)
        if headCount == firstChanged, firstChanged < blocks.count, previousKind == blocks[firstChanged].kind {
            grown = (firstChanged, open.kept, open.item?.kept)
        }
        return firstChanged
    }

    /// Lends the storage of the last paragraph's text, as its holder has it
    /// (a node's value, taken out of the node: held by no one else, and grown
    /// since by what was appended as it is), to the next update, which builds
    /// that paragraph's new text in it instead of copying what stays (not
    /// when it does not begin as the last parse's text did).
    package mutating func lend(_ text: String) {
        lastParagraph?.checkpoint.answer = text
    }

    /// Empties the text of the last block in `blocks` when the next update
    /// reads it again (it is not final) and it is a leaf (a paragraph, code
    /// or HTML block): for a caller that took that text as its own (a
    /// node's value) and grows it where it lies at each delta, which it can
    /// then do without copying it. The stream never reads a block's text
    /// again; `blocks` says it again after the next update.
    package mutating func releaseOpenText() {
        guard headCount < blocks.count, blocks[blocks.count &- 1].children.isEmpty else { return }
        switch blocks[blocks.count &- 1].kind {
        case .paragraph, .codeBlock, .html: blocks[blocks.count &- 1].text = ""
        default: return
        }
    }

    /// Runs `parser` with what the last update found (the last paragraph's
    /// checkpoint, the last line read) and keeps what this run finds.
    private mutating func read(
        _ parser: inout BlockParser, _ bytes: UnsafeBufferPointer<UInt8>, definitions: [String: String]
    ) -> (nodes: [TopLevelNode], openFence: (OpenFence, lastLineStart: Int)?) {
        // Handed to the parser (held by it alone: its checkpoint grows in place), and taken back after.
        parser.lastParagraph = lastParagraph
        lastParagraph = nil
        parser.noLineEnd = knownLastLine(bytes)
        let result = parser.run(definitions: definitions)
        lastParagraph = parser.lastParagraph
        endsInOpenFence = parser.endsInOpenFence
        openFenceLine = parser.openFenceLine
        endsInOpenHTML = parser.endsInOpenHTML
        openParagraphStart = parser.openParagraphStart
        return result
    }

    /// The last line as the last update read it (`bytes` begins with that
    /// text): no line ending in it, but for a "\r" it ended in, which more
    /// text may make part of a "\r\n".
    private func knownLastLine(_ bytes: UnsafeBufferPointer<UInt8>) -> Range<Int> {
        guard lineScanned <= bytes.count, lastLineStart <= lineScanned else { return 0..<0 }
        let end = lineScanned > 0 && bytes[lineScanned &- 1] == 13 ? lineScanned &- 1 : lineScanned
        return lastLineStart..<max(lastLineStart, end)
    }

    /// Parses everything again; returns the first block that differs from before.
    private mutating func parseAll(_ bytes: UnsafeBufferPointer<UInt8>, keepStable: Bool) -> Int {
        let old = blocks
        let oldStable = stableCount
        self = MarkdownStream()
        var parser = BlockParser(bytes: bytes, from: 0)
        let (nodes, fence) = read(&parser, bytes, definitions: [:])
        tailDefinitions = newDefinitions(nodes)
        accept(nodes, fence?.0, bytes, container: parser.openContainer)
        if keepStable { stableCount = max(stableCount, oldStable) }
        var first = 0
        while first < old.count && first < blocks.count && old[first] == blocks[first] { first += 1 }
        return first
    }

    /// The definitions of `nodes` (after `before`) not already in the head, first one winning.
    private func newDefinitions(_ nodes: [TopLevelNode], before: [(label: String, url: String)] = []) -> [String: String] {
        var found: [String: String] = [:]
        for definition in before where headDefinitions[definition.label] == nil && found[definition.label] == nil {
            found[definition.label] = definition.url
        }
        for node in nodes {
            for definition in node.definitions where headDefinitions[definition.label] == nil && found[definition.label] == nil {
                found[definition.label] = definition.url
            }
        }
        return found
    }

    /// Takes a parse of the tail: moves the final nodes to the head, keeps the rest as the tail.
    private mutating func accept(
        _ nodes: [TopLevelNode], _ fence: OpenFence?, _ bytes: UnsafeBufferPointer<UInt8>, container: OpenContainer?
    ) {
        // Looked for in what came since the last update (and its last byte: a "\r" it ended in).
        let floor = lineScanned > 0 && lineScanned <= bytes.count ? lineScanned - 1 : 0
        let found = BlockParser.lastLineStart(bytes, from: floor)
        if found > floor || floor == 0 { self.lastLineStart = found }
        lineScanned = bytes.count
        let lastLineStart = max(restartOffset, self.lastLineStart)
        // A block the last line closed (a list before a heading, a quote
        // before a paragraph) is final too when that line has begun as
        // what it is, whatever follows on it: then no delta of the line
        // parses the block again. Not one the line belongs to (a closing
        // fence, a setext underline), whose text the line is part of.
        let settled = lastLineStart == self.lastLineStart && Self.lineHasBegun(bytes, from: lastLineStart)
        blocks.removeSubrange(headCount...)
        var index = 0
        while index < nodes.count, let closeLine = nodes[index].closeLine,
              closeLine < lastLineStart || (settled && closeLine == lastLineStart && nodes[index].resumeAt == lastLineStart) {
            let node = nodes[index]
            if let block = node.block {
                if node.dependsOnLaterDefinitions && firstDependentHeadBlock == nil { firstDependentHeadBlock = blocks.count }
                blocks.append(block)
            }
            for definition in node.definitions where headDefinitions[definition.label] == nil {
                headDefinitions[definition.label] = definition.url
                tailDefinitions[definition.label] = nil
            }
            restartOffset = node.resumeAt
            index += 1
        }
        headCount = blocks.count
        if index < nodes.count { restartOffset = nodes[index].start }
        for node in nodes[index...] {
            if let block = node.block { blocks.append(block) }
        }
        openFence = index == nodes.count - 1 ? fence : nil
        openContainer = index == nodes.count - 1 && openFence == nil ? container : nil
        endsInDefinitions = nodes.last.map { $0.block == nil } ?? false
        stableCount = max(stableCount, firstDependentHeadBlock ?? headCount)
    }
}

extension MarkdownStream {
    /// Whether the line from `start` (the text's last, not ended) has begun
    /// as what it is whatever more text goes on it: its first character
    /// that is not a blank is a letter (a paragraph's line), a `>` (a
    /// quote's), one to six `#` and a blank (a heading's), or a list's
    /// marker (`-`, `+`, `*`, or one to nine digits and `.` or `)`), a
    /// blank and more. Then the blocks it closed stay closed. Not a line of
    /// blanks, a fence, a thematic break, an HTML tag, a table's row, nor
    /// marks with nothing after them yet (`-` may become `- a` or `---`).
    static func lineHasBegun(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Bool {
        var i = start
        while i < bytes.count && (bytes[i] == 0x20 || bytes[i] == 0x09) { i &+= 1 }
        guard i < bytes.count else { return false }
        let lead = bytes[i]
        if lead >= 0x80 || (lead | 0x20 >= UInt8(ascii: "a") && lead | 0x20 <= UInt8(ascii: "z")) { return true }
        var marks = i
        switch lead {
        case UInt8(ascii: ">"):
            return true
        case UInt8(ascii: "#"):
            while marks < bytes.count && bytes[marks] == lead { marks &+= 1 }
            guard marks &- i <= 6 else { return false }
        case UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "*"):
            marks &+= 1
        case UInt8(ascii: "0") ... UInt8(ascii: "9"):
            while marks < bytes.count && bytes[marks] >= UInt8(ascii: "0") && bytes[marks] <= UInt8(ascii: "9") { marks &+= 1 }
            guard marks &- i <= 9, marks < bytes.count, bytes[marks] == UInt8(ascii: ".") || bytes[marks] == UInt8(ascii: ")") else { return false }
            marks &+= 1
        default:
            return false
        }
        // The marks, a blank, and something that is not a blank after it.
        guard marks < bytes.count, bytes[marks] == 0x20 || bytes[marks] == 0x09 else { return false }
        while marks < bytes.count && (bytes[marks] == 0x20 || bytes[marks] == 0x09) { marks &+= 1 }
        guard marks < bytes.count else { return false }
        // Not a thematic break's (`- - -`, `* * *`): a list marker's text begins with another character.
        return lead == UInt8(ascii: "#") || bytes[marks] != lead
    }
}

extension OpenContainer.Kind {
    var isTable: Bool {
        if case .table = self { return true }
        return false
    }
}
