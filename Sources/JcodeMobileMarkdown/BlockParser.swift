// The block phase of the markdown parser: CommonMark's line-by-line algorithm
// (open blocks are matched against each line, new block starts are tried, the
// rest of the line goes to the innermost open block), on UTF-8 bytes, without
// recursion. The parse is online: what it decides while reading a line depends
// on that line and the ones before only, which is what lets MarkdownStream keep
// the blocks closed by complete lines.

/// A block being built.
/// Its stored properties are `@exclusivity(unchecked)`: the parser reads and
/// writes them on every line, each access a run-time exclusivity check
/// otherwise, and a node is only used by the one parse that made it, on one
/// thread, never through two overlapping accesses.
final class BlockNode {
    enum Kind { case document, quote, list, item, paragraph, heading, fencedCode, indentedCode, html, thematicBreak, table }

    @exclusivity(unchecked) var kind: Kind
    /// Not `weak`: a weak reference gives every node a side table, and its
    /// release a slow path. A node's parent holds it (in `children`) and the
    /// parser holds the document, so a parent outlives each use of this
    /// reference (only the parser reads it, while it runs).
    @exclusivity(unchecked) unowned(unsafe) var parent: BlockNode?
    @exclusivity(unchecked) var children: [BlockNode] = []
    @exclusivity(unchecked) var isOpen = true
    /// Source byte offset and line index of the first line.
    @exclusivity(unchecked) var start: Int
    let startLine: Int
    /// Index of the last line of the block (containers: of their last child), set when closed.
    @exclusivity(unchecked) var endLine: Int
    /// Container nesting of this node: quotes, lists and items, itself included.
    let depth: Int
    /// Lines of a paragraph, heading, code or HTML block, each ending with "\n" (a heading's: its text).
    @exclusivity(unchecked) var content: [UInt8] = []
    /// Where the last line begins in `content`, and that line's source offset (a table's header).
    @exclusivity(unchecked) var lastLineInContent = 0
    @exclusivity(unchecked) var lastLineSource = 0
    /// The two before the last line was added (a resumed paragraph's, whose last line is read again).
    @exclusivity(unchecked) var previousLineInContent = 0
    @exclusivity(unchecked) var previousLineSource = 0
    @exclusivity(unchecked) var level = 0
    // Lists and items.
    @exclusivity(unchecked) var ordered = false
    @exclusivity(unchecked) var marker: UInt8 = 0
    @exclusivity(unchecked) var startNumber = 1
    @exclusivity(unchecked) var markerOffset = 0
    @exclusivity(unchecked) var padding = 0
    // Fenced code.
    @exclusivity(unchecked) var fenceChar: UInt8 = 0
    @exclusivity(unchecked) var fenceLength = 0
    @exclusivity(unchecked) var fenceOffset = 0
    @exclusivity(unchecked) var language: String?
    @exclusivity(unchecked) var fenceClosed = false
    /// `content.count` before the last line was added, and where that line starts in the source.
    @exclusivity(unchecked) var contentBeforeLastLine = 0
    @exclusivity(unchecked) var lastAddedLineStart = -1
    /// Where in the source the last line's bytes in `content` begin (-1:
    /// they begin with spaces for a tab, not with source bytes).
    @exclusivity(unchecked) var lastLineBytesFrom = -1
    /// A resumed paragraph's last line as the last parse read it (see
    /// `OpenFence.keptLine`): `content` ends with the source bytes
    /// `keptLineFrom ..< keptLineEnd` (-1: none kept) of the line the
    /// parser starts at, without their "\n". Taken by `addLine`.
    @exclusivity(unchecked) var keptLineFrom = -1
    @exclusivity(unchecked) var keptLineEnd = 0
    /// Where the kept bytes begin in `content`.
    var keptLineInContent: Int { content.count &- (keptLineEnd &- keptLineFrom) }
    /// A resumed open fence or HTML block: `content[0..<keptTextCount]` decoded
    /// (grown by `openFenceState`), so that its text is not decoded whole again.
    @exclusivity(unchecked) var keptText = ""
    @exclusivity(unchecked) var keptTextCount = 0
    @exclusivity(unchecked) var htmlType = 0
    /// The text's last paragraph: read from `inlineCheckpoint` (the last
    /// update's, if any), which `BlockOutput` sets to this read's.
    @exclusivity(unchecked) var streamsInlines = false
    @exclusivity(unchecked) var inlineCheckpoint: InlineParser.Checkpoint?
    // Tables.
    @exclusivity(unchecked) var alignments: [MarkdownAlignment] = []
    @exclusivity(unchecked) var rows: [[UInt8]] = []
    /// Where each row's line starts in the source.
    @exclusivity(unchecked) var rowStarts: [Int] = []
    /// Rows read by an earlier parse (a resumed table): row 0 here is not the header.
    @exclusivity(unchecked) var rowOffset = 0
    /// An item a parse goes on inside (`OpenItem`): its first block here is
    /// not its first (no task check box is looked for in it).
    @exclusivity(unchecked) var continued = false
    /// A paragraph made only of link reference definitions: no block.
    @exclusivity(unchecked) var isRemoved = false
    @exclusivity(unchecked) var definitions: [(label: String, url: String)] = []
    /// A top-level container's: where the paragraph each of `definitions`
    /// came from starts (they are hoisted here from inside it).
    @exclusivity(unchecked) var definitionStarts: [Int] = []
    // Top-level blocks: the source offset of the line during which the block was
    // closed (nil: open at the end), and where a parse may start again after it.
    @exclusivity(unchecked) var closeLine: Int?
    @exclusivity(unchecked) var resumeAt = 0
    @exclusivity(unchecked) var closedAtEnd = false
    /// A top-level paragraph cut short by a table whose header line, read on its
    /// own at the start of a document, would not be a paragraph line (indented
    /// code, a list item, an HTML block): a parse cannot start again at the
    /// header, so the paragraph is final only when the table after it is.
    @exclusivity(unchecked) var finalWithNext = false

    init(_ kind: Kind, start: Int, line: Int, depth: Int) {
        self.kind = kind
        self.start = start
        self.startLine = line
        self.endLine = line
        self.depth = depth
    }

    var isContainer: Bool { kind == .document || kind == .quote || kind == .list || kind == .item }

    func canContain(_ child: Kind) -> Bool {
        switch kind {
        case .document, .quote, .item: return child != .item
        case .list: return child == .item
        default: return false
        }
    }

    var acceptsLines: Bool { kind == .paragraph || kind == .fencedCode || kind == .indentedCode || kind == .html }
}

/// What a top-level block became, and what MarkdownStream needs to restart after it.
struct TopLevelNode {
    var block: MarkdownBlock?
    var start: Int
    var closeLine: Int?
    var resumeAt: Int
    var definitions: [(label: String, url: String)]
    /// Its inline content looked a label up among the definitions: a definition
    /// appended later could change it.
    var dependsOnLaterDefinitions: Bool
}

/// An open top-level list or table at the end of the text, whose children
/// before the last one are final: their lines are complete, and a new child
/// began after them. A later parse goes on from `resumeAt` (the start of the
/// line of the last child) and puts the first `kept` children of the
/// container as it was before what it reads.
struct OpenContainer {
    enum Kind: Equatable {
        case list(ordered: Bool, startNumber: Int)
        case table(alignments: [MarkdownAlignment])
        /// A block quote: its children are blocks; the one a later parse
        /// starts at begins on a line that starts a quote at the start of a
        /// document too (its ">" marker, then a block start).
        case quote
    }
    var kind: Kind
    /// The container's first line (its top-level node's start).
    var start: Int
    var resumeAt: Int
    /// How many children are final: list items, or table rows (the header first).
    var kept: Int
    /// A list: a blank line separates two of the kept items, the last kept one
    /// and the next, or two blocks of a kept item.
    var keptLoose = false
    /// Some inline content of the kept children has a label no definition matched.
    var keptSensitive = false
    /// The link reference definitions of the kept children, in order.
    var keptDefinitions: [(label: String, url: String)] = []
    /// A list whose last item (child `kept`) is open and has final blocks
    /// too: `resumeAt` is then the line of that item's last block that
    /// began on a complete line, and a later parse goes on inside the item
    /// (see `OpenItem`). Nil: it goes on from the item's first line.
    var item: OpenItem?
    /// Where a later parse can go on instead, once the fence that began on
    /// the text's last line is known to be one (see `FenceRestart`).
    var afterFence: FenceRestart?

    /// The state to go on from at `bytes` (the text this state was found
    /// for and more): after the fence that began on its last line when that
    /// line has ended and still begins a fence.
    func confirmed(in bytes: UnsafeBufferPointer<UInt8>) -> OpenContainer {
        guard let fence = afterFence, fence.resumeAt < bytes.count else { return self }
        // The fence's run, then its info string to the line's end.
        var i = fence.resumeAt
        while i < bytes.count && (bytes[i] == 32 || bytes[i] == 9) { i += 1 }
        guard i < bytes.count, bytes[i] == fence.fenceChar else { return self }
        while i < bytes.count && bytes[i] == fence.fenceChar { i += 1 }
        while i < bytes.count && bytes[i] != 10 && bytes[i] != 13 {
            // A backtick fence's line with another backtick is no fence.
            if fence.fenceChar == UInt8(ascii: "`") && bytes[i] == fence.fenceChar { return self }
            i += 1
        }
        guard i < bytes.count else { return self }
        var open = self
        open.resumeAt = fence.resumeAt
        open.item = fence.item
        open.keptLoose = fence.keptLoose
        open.keptDefinitions = fence.keptDefinitions
        open.afterFence = nil
        return open
    }
}

/// The open last item of an open top-level list whose last block is a
/// fenced code block that began on the text's last line, not ended yet:
/// where a later parse can go on from once that line has ended and still
/// begins a fence (its run, and no backtick after a backtick run), as it
/// would had the line been complete: at that line, inside the item, its
/// blocks before the fence final. More of the line can only make it no
/// fence (then the parse goes on from where `OpenContainer` says); a line
/// that begins a fence reads so whatever came before it, and a fence
/// interrupts any block.
/// (A class: an open container that holds one is copied at every update.)
final class FenceRestart: Sendable {
    let resumeAt: Int
    let fenceChar: UInt8
    let item: OpenItem
    /// `OpenContainer`'s, for the item's blocks before the fence.
    let keptLoose: Bool
    let keptDefinitions: [(label: String, url: String)]

    init(resumeAt: Int, fenceChar: UInt8, item: OpenItem, keptLoose: Bool, keptDefinitions: [(label: String, url: String)]) {
        self.resumeAt = resumeAt
        self.fenceChar = fenceChar
        self.item = item
        self.keptLoose = keptLoose
        self.keptDefinitions = keptDefinitions
    }
}

/// The open last item of an open top-level list, whose blocks before its
/// last one are final. The line a later parse starts at (that block's) is
/// read as it was: inside the list and the item, whose continuation needs
/// its indent, with nothing else open in it (a block that began on that
/// line closed what was open in the item before it, and the blocks it can
/// interrupt are those it starts alone too).
struct OpenItem: Equatable {
    /// How many of the item's blocks are final (its values, a paragraph of definitions only not counted).
    var kept: Int
    /// The list's marker (a bullet, or an ordered list's delimiter), and the
    /// item's: where its marker is and the indent its content needs.
    var listMarker: UInt8
    var markerOffset: Int
    var padding: Int
}

/// The state of an open top-level fenced code block, HTML block or
/// paragraph, to go on reading it from `resumeAt` (the start of its last,
/// incomplete line, or the text's end) with its complete lines kept.
struct OpenFence: Sendable {
    var start: Int
    var fenceChar: UInt8
    var fenceLength: Int
    var fenceOffset: Int
    var language: String?
    /// Its lines as last read, each ending with "\n"; the first `complete`
    /// bytes are final (the last line's are read again). Kept whole and cut
    /// by the parser that takes it over, so that the buffer is held once and
    /// grows in place: a delta into a long open block copies none of it.
    var content: [UInt8]
    var complete: Int
    /// `content[0..<complete]` decoded.
    var text: String
    var resumeAt: Int
    /// Nonzero: an open top-level HTML block of this type (1-7), not a fence;
    /// its lines already read are final (its end condition is line-based).
    var htmlType = 0
    /// An open top-level paragraph, not a fence: its complete lines are
    /// paragraph text whatever follows (a setext underline or a table's
    /// delimiter row after them is read with the paragraph open, as the
    /// whole parse reads it), and its last complete line, where a table's
    /// header would be, starts at `lastLineInContent` (`lastLineSource` in the text).
    var paragraph = false
    var lastLineInContent = 0
    var lastLineSource = 0
    /// An open paragraph's last line, not ended yet, when nothing more on
    /// it can make it anything but this paragraph's text (it begins with a
    /// letter: no block starts with one): `content[complete ..< count - 1]`
    /// are its bytes `from ..< end` (the "\n" after them is the parse's),
    /// kept, so that the next parse appends only what follows them (one
    /// long line is not copied again at each delta).
    var keptLine: (from: Int, end: Int)?
}

struct BlockParser {
    private let bytes: UnsafeBufferPointer<UInt8>
    private let from: Int
    private let document: BlockNode
    // Not counted references: each line moves them, a retain and a release
    // each time otherwise. They point into the tree under `document`, which
    // this parser holds and from which no node is ever taken out.
    private unowned(unsafe) var tip: BlockNode
    private unowned(unsafe) var oldTip: BlockNode
    private unowned(unsafe) var lastMatched: BlockNode
    private var lineStart = 0
    private var lineEnd = 0
    private var nextLineStart = 0
    private var lineIndex = -1
    private var offset = 0
    private var column = 0
    private var nextNonspace = 0
    private var nextNonspaceColumn = 0
    private var indent = 0
    private var indented = false
    private var blank = false
    private var partiallyConsumedTab = false
    private var allClosed = true
    /// Set while a block is closed by a line that belongs to it (closing fence, setext underline, HTML end).
    private var closingLineBelongs = false
    /// Set when a block start took the whole line (a fence's info string, a table's delimiter row).
    private var lineTaken = false
    /// After `run`: the open top-level list, table or quote the text ends in, when a later parse can go on inside it.
    private(set) var openContainer: OpenContainer?
    /// The text's last block at any depth (a list item's, a quote's), when it is a paragraph: where it starts and the
    /// checkpoint its inline parse goes on from. Given by the caller (the
    /// last update's), set by `run` (this one's; nil when the last block is
    /// not a paragraph).
    var lastParagraph: (start: Int, checkpoint: InlineParser.Checkpoint)?
    /// After `run`: the text ends inside a fenced code block not closed yet, at any depth.
    private(set) var endsInOpenFence = false
    /// After `run`, when the text ends inside an open fenced code block that
    /// is at the top or in list items only: how its next line is read.
    private(set) var openFenceLine: OpenFenceLine?
    /// After `run`: the text ends inside a top-level HTML block not closed
    /// yet, on a line after its first (whose start condition more text can undo: `<del>*`).
    private(set) var endsInOpenHTML = false
    /// After `run`: where the text's last block at any depth begins, when it
    /// is a paragraph of text (not one of link reference definitions, which
    /// has no block, nor one that begins with them).
    private(set) var openParagraphStart: Int?
    /// Bytes the caller knows hold no line ending (the last line as far as
    /// the last update read it): a line starting in them is looked at for
    /// its end from their end on, not read again.
    var noLineEnd: Range<Int> = 0..<0

    /// A parser of `bytes[from...]`; `from` is the start of a line.
    init(bytes: UnsafeBufferPointer<UInt8>, from: Int) {
        self.bytes = bytes
        self.from = from
        document = BlockNode(.document, start: from, line: 0, depth: 0)
        tip = document
        oldTip = document
        lastMatched = document
    }

    /// A parser that goes on reading an open top-level fenced code block at `fence.resumeAt`;
    /// it takes `fence.content` over (left empty), so that the buffer grows in place.
    init(bytes: UnsafeBufferPointer<UInt8>, resuming fence: inout OpenFence) {
        self.init(bytes: bytes, from: fence.resumeAt)
        let node = BlockNode(fence.paragraph ? .paragraph : fence.htmlType == 0 ? .fencedCode : .html,
                             start: fence.start, line: 0, depth: 0)
        node.htmlType = fence.htmlType
        node.lastLineInContent = fence.lastLineInContent
        node.lastLineSource = fence.lastLineSource
        node.fenceChar = fence.fenceChar
        node.fenceLength = fence.fenceLength
        node.fenceOffset = fence.fenceOffset
        node.language = fence.language
        swap(&node.content, &fence.content)
        if let kept = fence.keptLine, node.content.count == fence.complete &+ (kept.end &- kept.from) &+ 1 {
            node.content.removeLast()  // the "\n" the last parse ended the line with
            node.keptLineFrom = kept.from
            node.keptLineEnd = kept.end
        } else {
            node.content.removeSubrange(min(fence.complete, node.content.count)...)
        }
        if fence.complete == node.content.count {
            swap(&node.keptText, &fence.text)
            node.keptTextCount = fence.complete
        }
        node.parent = document
        document.children.append(node)
        tip = node
        oldTip = node
    }

    /// A parser that goes on reading an open top-level table at `table.resumeAt`
    /// (its rows before are kept by the caller).
    init(bytes: UnsafeBufferPointer<UInt8>, resuming table: OpenContainer) {
        self.init(bytes: bytes, from: table.resumeAt)
        guard case .table(let alignments) = table.kind else { return }
        let node = BlockNode(.table, start: table.start, line: 0, depth: 0)
        node.alignments = alignments
        node.rowOffset = table.kept
        node.parent = document
        document.children.append(node)
        tip = node
        oldTip = node
    }

    /// A parser that goes on reading an open top-level list inside its last
    /// item (`list.item`) at `list.resumeAt`: the list and the item are open
    /// (their blocks before are kept by the caller).
    init(bytes: UnsafeBufferPointer<UInt8>, resuming list: OpenContainer, item open: OpenItem) {
        self.init(bytes: bytes, from: list.resumeAt)
        guard case .list(let ordered, let startNumber) = list.kind else { return }
        let node = BlockNode(.list, start: list.resumeAt, line: 0, depth: 1)
        node.ordered = ordered
        node.marker = open.listMarker
        node.startNumber = startNumber
        node.parent = document
        document.children.append(node)
        let item = BlockNode(.item, start: list.resumeAt, line: 0, depth: 2)
        item.markerOffset = open.markerOffset
        item.padding = open.padding
        item.continued = true
        item.parent = node
        node.children.append(item)
        tip = item
        oldTip = item
    }

    /// Reads every line, closes what is open, and turns the top-level blocks into values;
    /// inline content is resolved against `definitions` and then the ones found here (first wins).
    mutating func run(definitions: [String: String]) -> (nodes: [TopLevelNode], openFence: (OpenFence, lastLineStart: Int)?) {
        var position = from
        while position < bytes.count {
            // A line ends at "\n", "\r\n" or a lone "\r".
            let end = Self.lineEnd(bytes, from: noLineEnd.contains(position) ? noLineEnd.upperBound : position)
            lineEnd = end
            nextLineStart = end < bytes.count && bytes[end] == 13 && end + 1 < bytes.count && bytes[end + 1] == 10
                ? end + 2 : min(end + 1, bytes.count)
            lineStart = position
            incorporateLine()
            position = nextLineStart
        }
        let fence = openFenceState()
        let container = openContainerAtEnd()
        lineStart = bytes.count
        lineIndex += 1
        endsInOpenFence = tip.kind == .fencedCode
        if endsInOpenFence {
            var columns = 0
            var node = tip.parent
            while let container = node, container !== document {
                if container.kind == .item {
                    columns &+= container.markerOffset &+ container.padding
                } else if container.kind != .list {
                    columns = -1
                    break
                }
                node = container.parent
            }
            if columns >= 0 {
                openFenceLine = OpenFenceLine(indent: columns, fenceOffset: tip.fenceOffset, hasLines: !tip.content.isEmpty,
                                              fenceChar: tip.fenceChar, fenceLength: tip.fenceLength)
            }
        }
        endsInOpenHTML = tip.kind == .html && tip.parent === document && tip.contentBeforeLastLine > 0
        while tip !== document { finalize(tip, atEnd: true) }
        var resolved = definitions
        for node in document.children {
            for definition in node.definitions where resolved[definition.label] == nil {
                resolved[definition.label] = definition.url
            }
        }
        let output = BlockOutput(definitions: resolved)
        // The text's last block, at any depth (the last child of the last
        // child …: a list's last item's paragraph, a quote's), when it is a
        // paragraph: a streamed reply's open one, whose inline parse goes on
        // from its checkpoint (`BlockOutput.block` reads it so).
        var last = document.children.last
        while let node = last, node.isContainer { last = node.children.last }
        if let node = last, node.kind == .paragraph, !node.isRemoved, node.definitions.isEmpty {
            node.streamsInlines = true
            node.inlineCheckpoint = lastParagraph?.start == node.start ? lastParagraph?.checkpoint : nil
        } else {
            last = nil
        }
        // Held by the paragraph's node alone now (its inline parse grows it in place); set again below.
        lastParagraph = nil
        openParagraphStart = last?.start
        var nodes = document.children.map { node -> TopLevelNode in
            var sensitive = false
            let block = output.block(node, sensitive: &sensitive)
            return TopLevelNode(block: block, start: node.start, closeLine: node.closedAtEnd ? nil : node.closeLine,
                                resumeAt: node.resumeAt, definitions: node.definitions, dependsOnLaterDefinitions: sensitive)
        }
        lastParagraph = last.flatMap { node in node.inlineCheckpoint.map { (node.start, $0) } }
        if let container, let last = nodes.last, let block = last.block {
            openContainer = output.openContainer(container.node, block, kept: container.kept, resumeAt: container.resumeAt, item: container.item,
                                                 afterFence: container.afterFence, sensitive: last.dependsOnLaterDefinitions)
        }
        // A paragraph that must stay with the table after it closes when the table does.
        for index in document.children.indices.dropLast().reversed() where document.children[index].finalWithNext {
            nodes[index].closeLine = nodes[index + 1].closeLine
        }
        return (nodes, fence)
    }

    /// The first "\n" or "\r" at or after `from` (`bytes.count` when none): eight
    /// bytes at a time while eight are left (a word holds one when one of its
    /// bytes XOR the character is zero), then byte by byte.
    static func lineEnd(_ bytes: UnsafeBufferPointer<UInt8>, from: Int) -> Int {
        var i = from
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            // 16 bytes at a time (a long paragraph's one line is read again at each delta), then 8, then one.
            let lf16 = SIMD16<UInt8>(repeating: 10), cr16 = SIMD16<UInt8>(repeating: 13)
            while i <= bytes.count &- 16 {
                let v = raw.loadUnaligned(fromByteOffset: i, as: SIMD16<UInt8>.self)
                if any((v .== lf16) .| (v .== cr16)) { break }
                i &+= 16
            }
            let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
            while i <= bytes.count - 8 {
                let word = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                let lf = word ^ (ones &* 10), cr = word ^ (ones &* 13)
                if ((lf &- ones) & ~lf | (cr &- ones) & ~cr) & highs != 0 { break }
                i += 8
            }
        }
        while i < bytes.count && bytes[i] != 10 && bytes[i] != 13 { i += 1 }
        return i
    }

    /// Where the last line of `bytes[from...]` starts: after its last line ending, a final "\r"
    /// excepted (a "\n" after it would make them one ending: the line is not complete yet).
    static func lastLineStart(_ bytes: UnsafeBufferPointer<UInt8>, from: Int) -> Int {
        var start = bytes.count
        if start > from && bytes[start - 1] == 13 { start -= 1 }
        while start > from && bytes[start - 1] != 10 && bytes[start - 1] != 13 { start -= 1 }
        return start
    }

    /// The open top-level fence at the end, if the text ends inside one, with its complete lines.
    private func openFenceState() -> (OpenFence, lastLineStart: Int)? {
        guard let last = document.children.last, last.isOpen, tip === last else { return nil }
        // A paragraph that may be link reference definitions is read whole again (as they are found).
        let paragraph = last.kind == .paragraph && last.content.first != UInt8(ascii: "[") && last.definitions.isEmpty
        guard last.kind == .fencedCode || last.kind == .html || paragraph else { return nil }
        let lastLineStart: Int
        if paragraph {
            // Not looked for backwards (a long paragraph's one line would be read
            // again): an open paragraph took the text's last line, unless the text
            // ends with a "\n" (its lines are complete then; a final "\r" is not an end yet).
            lastLineStart = bytes.last == 10 ? bytes.count : last.lastAddedLineStart
            assert(lastLineStart == Self.lastLineStart(bytes, from: from), "an open paragraph's last line is the text's")
        } else {
            lastLineStart = Self.lastLineStart(bytes, from: from)
        }
        let lastIncomplete = last.lastAddedLineStart == lastLineStart
        // A paragraph's last line, not ended yet, that begins with a letter
        // (a line ending in "\r" has ended: "\r\n" would end it too).
        let keepsLine = paragraph && lastIncomplete && last.lastLineBytesFrom >= lastLineStart
            && last.lastLineBytesFrom < bytes.count && bytes[bytes.count &- 1] != 13
            && HTMLScanner.isLetter(bytes[last.lastLineBytesFrom])
        guard last.start < lastLineStart || keepsLine else { return nil }
        let complete = lastIncomplete ? last.contentBeforeLastLine : last.content.count
        if paragraph {
            var state = OpenFence(start: last.start, fenceChar: 0, fenceLength: 0, fenceOffset: 0, language: nil,
                                  content: last.content, complete: complete, text: "", resumeAt: lastLineStart)
            state.paragraph = true
            if keepsLine { state.keptLine = (from: last.lastLineBytesFrom, end: bytes.count) }
            state.lastLineInContent = lastIncomplete ? last.previousLineInContent : last.lastLineInContent
            state.lastLineSource = lastIncomplete ? last.previousLineSource : last.lastLineSource
            return (state, lastLineStart)
        }
        // The complete lines' text: what was kept, and the lines completed since (decoded apart:
        // each part ends at a line ending, where UTF-8 decoding starts afresh).
        if last.keptTextCount > complete {
            last.keptText = ""
            last.keptTextCount = 0
        }
        if last.keptTextCount < complete {
            last.keptText += String(decoding: last.content[last.keptTextCount..<complete], as: UTF8.self)
            last.keptTextCount = complete
        }
        let fence = OpenFence(start: last.start, fenceChar: last.fenceChar, fenceLength: last.fenceLength,
                              fenceOffset: last.fenceOffset, language: last.language, content: last.content,
                              complete: complete, text: last.keptText, resumeAt: lastLineStart, htmlType: last.htmlType)
        return (fence, lastLineStart)
    }

    /// The open top-level list, table or quote the text ends in, when its children
    /// before the last one began on complete lines: the node, how many of
    /// its children are final, and where the last one's line starts.
    /// What `openContainerAtEnd` finds (a struct, not a tuple: a tuple
    /// holding a reference has its type metadata built at run time, from its
    /// mangled name, the first time it is copied).
    private struct ContainerAtEnd {
        unowned(unsafe) let node: BlockNode
        let kept: Int
        let resumeAt: Int
        let item: OpenItem?
        /// Its last item's blocks before a fence that began on the text's
        /// last line (`FenceRestart`), kept as three plain fields for the
        /// reason above.
        var afterFence: (kept: Int, resumeAt: Int, fenceChar: UInt8)? {
            get { fenceKept < 0 ? nil : (fenceKept, fenceResumeAt, fenceChar) }
            set {
                fenceKept = newValue?.kept ?? -1
                fenceResumeAt = newValue?.resumeAt ?? 0
                fenceChar = newValue?.fenceChar ?? 0
            }
        }
        private var fenceKept = -1
        private var fenceResumeAt = 0
        private var fenceChar: UInt8 = 0

        init(node: BlockNode, kept: Int, resumeAt: Int, item: OpenItem?) {
            self.node = node
            self.kept = kept
            self.resumeAt = resumeAt
            self.item = item
        }
    }

    private func openContainerAtEnd() -> ContainerAtEnd? {
        guard let last = document.children.last, last.isOpen else { return nil }
        switch last.kind {
        case .list, .quote:
            let lastLineStart = Self.lastLineStart(bytes, from: from)
            // The last child that began on a complete line: the children before it are final.
            var index = last.children.count - 1
            while index > 0 && lineStartOf(last.children[index].start) >= lastLineStart { index -= 1 }
            // A list's last item that began on a complete line, and has final
            // blocks: read on inside it, from its last block's line.
            if last.kind == .list && index == last.children.count - 1,
               let (kept, resumeAt) = finalBlocks(of: last.children[index], lastLineStart: lastLineStart) {
                let item = last.children[index]
                var found = ContainerAtEnd(node: last, kept: index, resumeAt: resumeAt,
                                           item: OpenItem(kept: kept, listMarker: last.marker, markerOffset: item.markerOffset, padding: item.padding))
                found.afterFence = finalBlocksBeforeFence(of: item, lastLineStart: lastLineStart)
                return found
            }
            // A quote's table may begin on its paragraph's last line (its
            // header): read alone, that line is paragraph text, and more text
            // can still undo the table. Read on from the paragraph then.
            while index > 0 && last.kind == .quote && last.children[index].kind == .table
                    && last.children[index - 1].kind == .paragraph { index -= 1 }
            guard index > 0 else { return nil }
            // Kept: the blocks the children before it became (a quote's paragraph of definitions only is none).
            var kept = index
            if last.kind == .quote {
                for child in last.children[..<index] where child.kind == .paragraph && child.isRemoved { kept -= 1 }
            }
            var found = ContainerAtEnd(node: last, kept: kept, resumeAt: lineStartOf(last.children[index].start), item: nil)
            if last.kind == .list && index == last.children.count - 1 {
                found.afterFence = finalBlocksBeforeFence(of: last.children[index], lastLineStart: lastLineStart)
            }
            return found
        case .table:
            // The rows before the last one (the header and delimiter rows stay kept).
            let index = last.rows.count - 1
            guard index >= 0, last.rowStarts.count == last.rows.count else { return nil }
            // A row is one line: once its line ended, nothing after it reads
            // it otherwise (a later line is a row of its own or closes the
            // table). The last row is final too then, and a later parse goes
            // on from the text's last line, not from that row again. Not the
            // header (the delimiter row's line comes after it): a row after
            // it, or any row of a parse that went on from one.
            let lastLineStart = Self.lastLineStart(bytes, from: from)
            if index >= 1 || last.rowOffset > 0, last.rowStarts[index] < lastLineStart {
                return ContainerAtEnd(node: last, kept: index + 1, resumeAt: lastLineStart, item: nil)
            }
            guard index >= 1, last.rowStarts[index] > last.start else { return nil }
            return ContainerAtEnd(node: last, kept: index, resumeAt: last.rowStarts[index], item: nil)
        default:
            return nil
        }
    }

    /// An open item's final blocks: how many values they are, and the line
    /// of the block after them (its last block that began on a complete
    /// line, after the item's first line: a parse can go on there); nil when
    /// it has none. A table that begins on its paragraph's last line (its
    /// header) is read on from the paragraph, as in a quote.
    private func finalBlocks(of item: BlockNode, lastLineStart: Int) -> (kept: Int, resumeAt: Int)? {
        let blocks = item.children
        var index = blocks.count - 1
        while index > 0 && lineStartOf(blocks[index].start) >= lastLineStart { index -= 1 }
        while index > 0 && blocks[index].kind == .table && blocks[index - 1].kind == .paragraph { index -= 1 }
        guard index > 0 else { return nil }
        let resumeAt = lineStartOf(blocks[index].start)
        guard resumeAt > lineStartOf(item.start) else { return nil }
        var kept = index
        for block in blocks[..<index] where block.kind == .paragraph && block.isRemoved { kept -= 1 }
        // A task's first paragraph that is its check box alone is no value either.
        if BlockOutput.isCheckBoxAlone(blocks[0]) { kept -= 1 }
        return (kept, resumeAt)
    }

    /// An open item's final blocks once its last block, a fence that began
    /// on the text's last line (not ended yet), is known to be one: those
    /// before the fence, read on from at the fence's line (`FenceRestart`).
    private func finalBlocksBeforeFence(of item: BlockNode, lastLineStart: Int) -> (kept: Int, resumeAt: Int, fenceChar: UInt8)? {
        guard lastLineStart < bytes.count, let fence = item.children.last, fence.kind == .fencedCode,
              lineStartOf(fence.start) == lastLineStart,
              let (kept, resumeAt) = finalBlocks(of: item, lastLineStart: lastLineStart + 1), resumeAt == lastLineStart
        else { return nil }
        return (kept, resumeAt, fence.fenceChar)
    }

    /// The start of the line holding `offset` (after a "\n", "\r\n" or a lone "\r").
    private func lineStartOf(_ offset: Int) -> Int {
        var i = offset
        while i > from && bytes[i - 1] != 10 && bytes[i - 1] != 13 { i -= 1 }
        return i
    }

    // MARK: - Lines

    private func peek(_ i: Int) -> UInt8 { i < lineEnd ? bytes[i] : 10 }

    private mutating func findNextNonspace() {
        var i = offset
        var cols = column
        while i < lineEnd {
            let c = bytes[i]
            if c == 32 { i += 1; cols += 1 } else if c == 9 { i += 1; cols += 4 - cols % 4 } else { break }
        }
        blank = i >= lineEnd
        nextNonspace = i
        nextNonspaceColumn = cols
        indent = cols - column
        indented = indent >= 4
    }

    private mutating func advanceNextNonspace() {
        offset = nextNonspace
        column = nextNonspaceColumn
        partiallyConsumedTab = false
    }

    /// Advances by `count` characters, or by `count` columns when `columns` (a tab may be partly consumed).
    private mutating func advanceOffset(_ count: Int, columns: Bool) {
        var count = count
        while count > 0 && offset < lineEnd {
            if bytes[offset] == 9 {
                let toTab = 4 - column % 4
                if columns {
                    partiallyConsumedTab = toTab > count
                    let advance = min(count, toTab)
                    column += advance
                    if !partiallyConsumedTab { offset += 1 }
                    count -= advance
                } else {
                    partiallyConsumedTab = false
                    column += toTab
                    offset += 1
                    count -= 1
                }
            } else {
                partiallyConsumedTab = false
                offset += 1
                column += 1
                count -= 1
            }
        }
    }

    private mutating func incorporateLine() {
        lineIndex += 1
        offset = lineStart
        column = 0
        blank = false
        partiallyConsumedTab = false
        oldTip = tip
        lineTaken = false
        var container = document
        allClosed = true

        while let last = container.children.last, last.isOpen {
            container = last
            findNextNonspace()
            switch continues(container) {
            case .matched: continue
            case .failed:
                container = container.parent!
                allClosed = false
            case .lineDone:
                return
            }
            break
        }
        if allClosed { allClosed = container === oldTip }
        lastMatched = container

        var matchedLeaf = container.kind != .paragraph && container.acceptsLines
        while !matchedLeaf {
            findNextNonspace()
            if !indented && !mayStartBlock(peek(nextNonspace)) {
                advanceNextNonspace()
                break
            }
            guard let started = tryBlockStarts(&container) else {
                advanceNextNonspace()
                break
            }
            if started == .leaf { matchedLeaf = true }
            if container.kind == .fencedCode && !container.isOpen { return }
        }

        if !allClosed && !blank && tip.kind == .paragraph {
            addLine(to: tip)  // lazy continuation
            return
        }
        closeUnmatchedBlocks()
        if container.acceptsLines {
            if !lineTaken { addLine(to: container) }
            if container.kind == .html && htmlBlockEnds(container) {
                closingLineBelongs = true
                finalize(container, atEnd: false)
                closingLineBelongs = false
            }
        } else if container.kind == .table && !blank && !lineTaken {
            container.rows.append(Array(bytes[nextNonspace..<lineEnd]))
            container.rowStarts.append(lineStart)
            container.endLine = lineIndex
        } else if offset < lineEnd && !blank {
            container = addChild(.paragraph, at: nextNonspace)
            advanceNextNonspace()
            addLine(to: container)
        }
    }

    private func mayStartBlock(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "#"), UInt8(ascii: "`"), UInt8(ascii: "~"), UInt8(ascii: ">"), UInt8(ascii: "-"),
             UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "_"), UInt8(ascii: "="), UInt8(ascii: "<"),
             UInt8(ascii: "|"), UInt8(ascii: ":"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return false
        }
    }

    private mutating func addLine(to node: BlockNode) {
        var tab = 0
        if partiallyConsumedTab {
            offset += 1
            tab = 4 - column % 4
        }
        let bytesFrom = min(offset, lineEnd)
        // The line's first bytes may be in `content` already, kept from the
        // last parse (the text only grew): then only what follows is added.
        var keptEnd = -1
        if node.keptLineFrom >= 0 {
            if lineStart == from && tab == 0 && bytesFrom == node.keptLineFrom && node.keptLineEnd <= lineEnd {
                keptEnd = node.keptLineEnd
            } else {
                node.content.removeSubrange(node.keptLineInContent...)
            }
        }
        let lineInContent = keptEnd >= 0 ? node.keptLineInContent : node.content.count
        node.keptLineFrom = -1
        node.contentBeforeLastLine = lineInContent
        node.lastAddedLineStart = lineStart
        node.previousLineInContent = node.lastLineInContent
        node.previousLineSource = node.lastLineSource
        node.lastLineInContent = lineInContent
        node.lastLineSource = lineStart
        node.lastLineBytesFrom = tab == 0 ? bytesFrom : -1
        // One access to `content` for the line (each access to a class's
        // property is checked for exclusivity at run time).
        Self.appendLine(&node.content, spaces: tab, UnsafeBufferPointer(rebasing: bytes[(keptEnd >= 0 ? keptEnd : bytesFrom)..<lineEnd]))
        node.endLine = lineIndex
    }

    /// `spaces` spaces, `line` and a "\n" appended to `content`.
    private static func appendLine(_ content: inout [UInt8], spaces: Int, _ line: UnsafeBufferPointer<UInt8>) {
        // Room for a few lines at the first: most blocks are then allocated
        // once (appending line by line grows the array two or three times).
        if content.isEmpty { content.reserveCapacity(max(256, spaces + line.count + 1)) }
        if spaces > 0 { content.append(contentsOf: repeatElement(32, count: spaces)) }
        content.append(contentsOf: line)
        content.append(10)
    }

    private mutating func addChild(_ kind: BlockNode.Kind, at start: Int) -> BlockNode {
        while !tip.canContain(kind) { finalize(tip, atEnd: false) }
        let parentDepth = tip.depth
        let isContainer = kind == .quote || kind == .list || kind == .item
        let node = BlockNode(kind, start: tip === document ? lineStart : start, line: lineIndex,
                             depth: parentDepth + (isContainer ? 1 : 0))
        node.parent = tip
        // Room for a few children at the first: a list's items, a quote's
        // blocks are then not reallocated at the second and the third.
        if tip.children.isEmpty { tip.children.reserveCapacity(4) }
        tip.children.append(node)
        tip = node
        return node
    }

    private mutating func closeUnmatchedBlocks() {
        guard !allClosed else { return }
        while oldTip !== lastMatched {
            let parent = oldTip.parent!
            finalize(oldTip, atEnd: false)
            oldTip = parent
        }
        allClosed = true
    }

    // MARK: - Continuation

    private enum Continuation { case matched, failed, lineDone }

    private mutating func continues(_ node: BlockNode) -> Continuation {
        switch node.kind {
        case .document, .list:
            return .matched
        case .quote:
            guard !indented && peek(nextNonspace) == UInt8(ascii: ">") else { return .failed }
            advanceNextNonspace()
            advanceOffset(1, columns: false)
            if isSpaceOrTab(peek(offset)) { advanceOffset(1, columns: true) }
            node.endLine = lineIndex  // a ">" line is the quote's, even with nothing after it
            return .matched
        case .item:
            if blank {
                if node.children.isEmpty { return .failed }
                advanceNextNonspace()
            } else if indent >= node.markerOffset + node.padding {
                advanceOffset(node.markerOffset + node.padding, columns: true)
                node.endLine = lineIndex
            } else {
                return .failed
            }
            return .matched
        case .heading, .thematicBreak:
            return .failed
        case .fencedCode:
            if isClosingFence(node) {
                node.fenceClosed = true
                node.endLine = lineIndex
                closingLineBelongs = true
                finalize(node, atEnd: false)
                closingLineBelongs = false
                return .lineDone
            }
            var skip = node.fenceOffset
            while skip > 0 && isSpaceOrTab(peek(offset)) { advanceOffset(1, columns: true); skip -= 1 }
            return .matched
        case .indentedCode:
            if indent >= 4 { advanceOffset(4, columns: true) } else if blank { advanceNextNonspace() } else { return .failed }
            return .matched
        case .html:
            return blank && (node.htmlType == 6 || node.htmlType == 7) ? .failed : .matched
        case .paragraph, .table:
            return blank ? .failed : .matched
        }
    }

    private func isClosingFence(_ node: BlockNode) -> Bool {
        guard indent <= 3, peek(nextNonspace) == node.fenceChar else { return false }
        var i = nextNonspace
        while i < lineEnd && bytes[i] == node.fenceChar { i += 1 }
        guard i - nextNonspace >= node.fenceLength else { return false }
        while i < lineEnd && isSpaceOrTab(bytes[i]) { i += 1 }
        return i == lineEnd
    }

    // MARK: - Block starts

    private enum Started { case container, leaf }

    /// Tries each block start in CommonMark's order; nil when none starts here.
    private mutating func tryBlockStarts(_ container: inout BlockNode) -> Started? {
        let c = peek(nextNonspace)
        if !indented {
            if c == UInt8(ascii: ">") && container.depth < Markdown.maxContainerDepth {
                advanceNextNonspace()
                advanceOffset(1, columns: false)
                if isSpaceOrTab(peek(offset)) { advanceOffset(1, columns: true) }
                closeUnmatchedBlocks()
                container = addChild(.quote, at: nextNonspace)
                return .container
            }
            if c == UInt8(ascii: "#"), startATXHeading(&container) { return .leaf }
            if c == UInt8(ascii: "`") || c == UInt8(ascii: "~"), startFence(&container) { return .leaf }
            if c == UInt8(ascii: "<"), startHTMLBlock(&container) { return .leaf }
            if container.kind == .paragraph && (c == UInt8(ascii: "=") || c == UInt8(ascii: "-")), startSetextHeading(&container) {
                return .leaf
            }
            if container.kind == .paragraph && allClosed, startTable(&container) { return .leaf }
            if isThematicBreak() {
                closeUnmatchedBlocks()
                container = addChild(.thematicBreak, at: nextNonspace)
                advanceOffset(lineEnd - offset, columns: false)
                return .leaf
            }
        }
        if (!indented || container.kind == .list) && container.depth + 2 <= Markdown.maxContainerDepth,
           startListItem(&container) {
            return .container
        }
        if indented && tip.kind != .paragraph && !blank {
            advanceOffset(4, columns: true)
            closeUnmatchedBlocks()
            container = addChild(.indentedCode, at: offset)
            return .leaf
        }
        return nil
    }

    private mutating func startATXHeading(_ container: inout BlockNode) -> Bool {
        var i = nextNonspace
        while i < lineEnd && bytes[i] == UInt8(ascii: "#") { i += 1 }
        let level = i - nextNonspace
        guard level <= 6, i == lineEnd || isSpaceOrTab(bytes[i]) else { return false }
        closeUnmatchedBlocks()
        container = addChild(.heading, at: nextNonspace)
        container.level = level
        // The text: trimmed, without a closing sequence of #s preceded by a space.
        var start = i
        while start < lineEnd && isSpaceOrTab(bytes[start]) { start += 1 }
        var end = lineEnd
        while end > start && isSpaceOrTab(bytes[end - 1]) { end -= 1 }
        var hashes = end
        while hashes > start && bytes[hashes - 1] == UInt8(ascii: "#") { hashes -= 1 }
        if hashes == start || isSpaceOrTab(bytes[hashes - 1]) {
            end = hashes
            while end > start && isSpaceOrTab(bytes[end - 1]) { end -= 1 }
        }
        container.content = Array(bytes[start..<end])
        advanceOffset(lineEnd - offset, columns: false)
        return true
    }

    private mutating func startFence(_ container: inout BlockNode) -> Bool {
        let char = bytes[nextNonspace]
        var i = nextNonspace
        while i < lineEnd && bytes[i] == char { i += 1 }
        let length = i - nextNonspace
        guard length >= 3 else { return false }
        if char == UInt8(ascii: "`") && bytes[i..<lineEnd].contains(UInt8(ascii: "`")) { return false }
        closeUnmatchedBlocks()
        container = addChild(.fencedCode, at: nextNonspace)
        container.fenceChar = char
        container.fenceLength = length
        container.fenceOffset = indent
        lineTaken = true
        while i < lineEnd && isSpaceOrTab(bytes[i]) { i += 1 }
        var wordEnd = i
        while wordEnd < lineEnd && !isSpaceOrTab(bytes[wordEnd]) { wordEnd += 1 }
        if wordEnd > i { container.language = InlineParser.unescape(bytes[i..<wordEnd]) }
        advanceOffset(lineEnd - offset, columns: false)
        return true
    }

    private mutating func startHTMLBlock(_ container: inout BlockNode) -> Bool {
        let lazyParagraph = !allClosed && !blank && tip.kind == .paragraph
        let canInterrupt = container.kind != .paragraph && !lazyParagraph
        guard let type = HTMLScanner.blockStart(bytes, nextNonspace, lineEnd, allowType7: canInterrupt) else { return false }
        closeUnmatchedBlocks()
        container = addChild(.html, at: offset)
        container.htmlType = type
        return true
    }

    private func htmlBlockEnds(_ node: BlockNode) -> Bool {
        guard (1...5).contains(node.htmlType) else { return false }
        return HTMLScanner.blockEnds(type: node.htmlType, bytes, lineStart, lineEnd)
    }

    private mutating func startSetextHeading(_ container: inout BlockNode) -> Bool {
        let char = bytes[nextNonspace]
        var i = nextNonspace
        while i < lineEnd && bytes[i] == char { i += 1 }
        while i < lineEnd && isSpaceOrTab(bytes[i]) { i += 1 }
        guard i == lineEnd else { return false }
        closeUnmatchedBlocks()
        let paragraph = container
        paragraph.content = Definitions.extract(paragraph.content, into: &paragraph.definitions)
        hoistDefinitions(paragraph)
        guard !paragraph.content.isEmpty else { return false }
        paragraph.kind = .heading
        paragraph.level = char == UInt8(ascii: "=") ? 1 : 2
        paragraph.content = trimmed(paragraph.content)
        paragraph.endLine = lineIndex
        advanceOffset(lineEnd - offset, columns: false)
        return true
    }

    /// GFM: a delimiter row under a paragraph whose last line has as many cells starts a table.
    private mutating func startTable(_ container: inout BlockNode) -> Bool {
        let line = bytes[nextNonspace..<lineEnd]
        guard let alignments = Table.delimiterRow(line) else { return false }
        let paragraph = container
        // A paragraph emptied by a setext check that took its definitions has no header line.
        guard paragraph.lastLineInContent < paragraph.content.count else { return false }
        let header = Array(paragraph.content[paragraph.lastLineInContent..<(paragraph.content.count - 1)])
        // A header of a lone "|" has no cell ("|" then "-|" is a paragraph).
        guard trimmed(header) != [UInt8(ascii: "|")], Table.cells(header).count == alignments.count,
              line.contains(UInt8(ascii: "|")) || header.contains(UInt8(ascii: "|")) else { return false }
        closeUnmatchedBlocks()
        let table: BlockNode
        if paragraph.lastLineInContent == 0 {
            table = paragraph
            table.kind = .table
            table.content = []
        } else {
            paragraph.content.removeSubrange(paragraph.lastLineInContent...)
            let headerStart = paragraph.lastLineSource
            paragraph.finalWithNext = paragraph.parent === document && !startsParagraphAlone(headerStart)
            finalize(paragraph, atEnd: false, resumeAt: headerStart)
            table = addChild(.table, at: headerStart)
            table.start = headerStart
        }
        table.alignments = alignments
        table.rows = [header]
        table.rowStarts = [table.start]
        table.endLine = lineIndex
        container = table
        lineTaken = true
        advanceOffset(lineEnd - offset, columns: false)
        return true
    }

    /// Whether the line at `start`, read first in a document, is a paragraph line. Only
    /// for a line that continued a top-level paragraph: it starts none of the blocks
    /// that can interrupt one, so it starts a block alone only if it is indented code
    /// or a list item or HTML block that could not interrupt (conservatively: begins
    /// with "<", "-", "+", "*" or a digit).
    private func startsParagraphAlone(_ start: Int) -> Bool {
        var i = start
        var columns = 0
        while i < bytes.count {
            if bytes[i] == 32 { columns += 1 } else if bytes[i] == 9 { columns += 4 - columns % 4 } else { break }
            i += 1
        }
        guard columns < 4, i < bytes.count else { return false }
        switch bytes[i] {
        case UInt8(ascii: "<"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "*"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return false
        default:
            return true
        }
    }

    private func isThematicBreak() -> Bool {
        let char = peek(nextNonspace)
        guard char == UInt8(ascii: "*") || char == UInt8(ascii: "-") || char == UInt8(ascii: "_") else { return false }
        var count = 0
        for i in nextNonspace..<lineEnd {
            if bytes[i] == char { count += 1 } else if !isSpaceOrTab(bytes[i]) { return false }
        }
        return count >= 3
    }

    private mutating func startListItem(_ container: inout BlockNode) -> Bool {
        guard indent < 4 else { return false }
        var i = nextNonspace
        let c = peek(i)
        var ordered = false
        var number = 1
        if c == UInt8(ascii: "*") || c == UInt8(ascii: "+") || c == UInt8(ascii: "-") {
            i += 1
        } else {
            var digits = 0
            number = 0
            while digits < 10, isDigit(peek(i)) { number = number * 10 + Int(bytes[i] - 48); i += 1; digits += 1 }
            guard digits >= 1 && digits <= 9, peek(i) == UInt8(ascii: ".") || peek(i) == UInt8(ascii: ")") else { return false }
            ordered = true
            i += 1
        }
        let marker = bytes[i - 1]
        guard i >= lineEnd || isSpaceOrTab(bytes[i]) else { return false }
        if container.kind == .paragraph {
            var j = i
            while j < lineEnd && isSpaceOrTab(bytes[j]) { j += 1 }
            guard j < lineEnd, !ordered || number == 1 else { return false }
        }
        let markerOffset = indent
        let markerLength = i - nextNonspace
        advanceNextNonspace()
        advanceOffset(markerLength, columns: true)
        let spacesStartColumn = column
        let spacesStartOffset = offset
        repeat { advanceOffset(1, columns: true) } while column - spacesStartColumn < 5 && isSpaceOrTab(peek(offset))
        let blankItem = offset >= lineEnd
        let spacesAfter = column - spacesStartColumn
        let padding: Int
        if spacesAfter >= 5 || spacesAfter < 1 || blankItem {
            padding = markerLength + 1
            column = spacesStartColumn
            offset = spacesStartOffset
            partiallyConsumedTab = false
            if isSpaceOrTab(peek(offset)) { advanceOffset(1, columns: true) }
        } else {
            padding = markerLength + spacesAfter
        }
        closeUnmatchedBlocks()
        if tip.kind != .list || tip.ordered != ordered || tip.marker != marker {
            let list = addChild(.list, at: nextNonspace)
            list.ordered = ordered
            list.marker = marker
            list.startNumber = number
        }
        container = addChild(.item, at: nextNonspace)
        container.markerOffset = markerOffset
        container.padding = padding
        return true
    }

    // MARK: - Closing

    private mutating func finalize(_ node: BlockNode, atEnd: Bool, resumeAt: Int? = nil) {
        node.isOpen = false
        switch node.kind {
        case .paragraph:
            if node.keptLineFrom >= 0 {
                // Its kept line went elsewhere (it cannot, for a line that begins with a letter): not its text.
                node.content.removeSubrange(node.keptLineInContent...)
                node.keptLineFrom = -1
            }
            node.content = Definitions.extract(node.content, into: &node.definitions)
            node.isRemoved = node.content.isEmpty
            hoistDefinitions(node)
        case .indentedCode:
            node.content = withoutTrailingBlankLines(node.content)
        case .quote, .list, .item:
            if let last = node.children.last { node.endLine = max(node.endLine, last.endLine) }
        default:
            break
        }
        if node.parent === document {
            node.closeLine = lineStart
            node.closedAtEnd = atEnd
            node.resumeAt = resumeAt ?? (closingLineBelongs ? nextLineStart : lineStart)
        }
        tip = node.parent ?? document
    }

    /// Moves the definitions of a paragraph inside a container (a quote, a list item) to its
    /// top-level block: they count for the whole document, and the stream keeps them per top-level block.
    private func hoistDefinitions(_ node: BlockNode) {
        guard !node.definitions.isEmpty, var top = node.parent, top !== document else { return }
        while let parent = top.parent, parent !== document { top = parent }
        top.definitions.append(contentsOf: node.definitions)
        top.definitionStarts.append(contentsOf: repeatElement(node.start, count: node.definitions.count))
        node.definitions = []
    }

    /// An indented code block's lines without its trailing blank ones.
    private func withoutTrailingBlankLines(_ content: [UInt8]) -> [UInt8] {
        var end = content.count
        while end > 0 {
            var start = end - 1  // at the last line's "\n"
            while start > 0 && content[start - 1] != 10 { start -= 1 }
            guard content[start..<(end - 1)].allSatisfy(isSpaceOrTab) else { break }
            end = start
        }
        return Array(content[0..<end])
    }
}

@inline(__always) func isSpaceOrTab(_ c: UInt8) -> Bool { c == 32 || c == 9 }
@inline(__always) func isDigit(_ c: UInt8) -> Bool { c >= 48 && c <= 57 }

/// `bytes` without leading and trailing spaces, tabs and newlines.
/// Where `trimmed(bytes[bounds])` is in `bytes`.
func trimmedBounds(_ bytes: [UInt8], in bounds: Range<Int>) -> Range<Int> {
    var start = bounds.lowerBound
    var end = bounds.upperBound
    while start < end && (isSpaceOrTab(bytes[start]) || bytes[start] == 10) { start += 1 }
    while end > start && (isSpaceOrTab(bytes[end - 1]) || bytes[end - 1] == 10) { end -= 1 }
    return start..<end
}

func trimmed<C: Collection>(_ bytes: C) -> [UInt8] where C.Element == UInt8, C.Index == Int {
    var start = bytes.startIndex
    var end = bytes.endIndex
    while start < end && (isSpaceOrTab(bytes[start]) || bytes[start] == 10) { start += 1 }
    while end > start && (isSpaceOrTab(bytes[end - 1]) || bytes[end - 1] == 10) { end -= 1 }
    return Array(bytes[start..<end])
}
