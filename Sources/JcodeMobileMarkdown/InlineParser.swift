@_spi(Leaves) import JcodeMobileJSON

// The inline phase: one left-to-right scan of a block's bytes into text nodes,
// delimiter runs and brackets, then CommonMark's "process emphasis" with
// per-kind openers bottoms (linear), and a last walk that turns the nodes and
// their style marks into merged spans. Styles are marks on nodes (an opener's
// mark starts after its node's text, a closer's ends before it), never a tree,
// so nesting costs no recursion.

/// An inline node: text with intrinsic styles, and the style marks that start and end at it.
/// Its text is `store[start..<end]` (the parser's one byte buffer): a node costs no array of its own.
/// Plain data: what few nodes have (a url, a source, marks) is in `NodeExtra`s,
/// so the node array is freed without visiting its nodes.
private struct InlineNode {
    var start: Int
    var end: Int
    var styles: MarkdownStyle = []
    /// Index of its `NodeExtra` in the parser's `extras`, -1 when it has none.
    var extra = -1
}

private struct NodeExtra {
    var url: String?
    /// An image's source (the node's text is its alt text).
    var source: String?
    /// The marks that start after the node's text and those that end before
    /// it: chains in the parser's `marks`, not arrays of their own (an array
    /// per mark list was an allocation per emphasis).
    var opens = MarkChain()
    var closes = MarkChain()
}

/// A node's list of marks: its first and last link in `marks` (-1: none).
private struct MarkChain {
    var first = -1
    var last = -1
}

private struct MarkLink {
    var mark: Mark
    /// The next link of the same chain, -1 at its end.
    var next = -1
}

private enum Mark {
    case style(MarkdownStyle)
    case link(String)
}

/// A run of `*`, `_` or `~` that may open or close emphasis.
private struct Delimiter {
    var node: Int
    var char: UInt8
    var count: Int
    let originalCount: Int
    let canOpen: Bool
    let canClose: Bool
    var previous: Int
    var next = -1
}

private struct Bracket {
    var node: Int
    var isImage: Bool
    var active = true
    /// The top of the delimiter stack when the bracket was pushed.
    var previousDelimiter: Int
    /// The source offset just after "[".
    var textStart: Int
}

package struct InlineParser {
    private let s: [UInt8]
    private let definitions: [String: String]
    private var position = 0
    private var nodes: [InlineNode] = []
    private var extras: [NodeExtra] = []
    /// Every node's marks, chained per node (see `NodeExtra`).
    private var marks: [MarkLink] = []
    /// The runs' bytes, built by `spans()` (a buffer here to be reused).
    private var out: [UInt8] = []
    /// `spans()`'s runs (a buffer here to be reused).
    private var runs: [Run] = []
    /// The bytes of every node's text, in order, then the pending text (from
    /// `pendingStart`) not yet a node: one buffer per parse instead of an array per node.
    private var store: [UInt8] = []
    private var pendingStart = 0
    private var delimiters: [Delimiter] = []
    private var topDelimiter = -1
    private var brackets: [Bracket] = []
    /// A bracketed label was looked up among the definitions (found or not): the block depends on them.
    private(set) var usesDefinitions = false
    /// Backtick runs by length: start offsets, and how far each list has been consumed
    /// (runs longer than `maxScannedRun` only; see `nextBacktickRun`).
    private var backtickRuns: [Int: [Int]]?
    private var backtickCursor: [Int: Int] = [:]
    /// For runs of 1 ... `maxScannedRun` backticks: the start of the last run of
    /// each length the forward scans saw (-1: none), and whether one reached the end.
    private var lastBacktickRun: [Int] = []
    private var backtickTableReady = false
    private var backticksScannedToEnd = false
    private static let maxScannedRun = 32
    /// For each terminator of a comment, processing instruction, CDATA section
    /// and declaration (`-->`, `?>`, `]]>`, `>`): where the first one at or
    /// after `from` starts, nil when the rest of the text has none. Openers
    /// are read left to right, so each stretch of text is searched once per
    /// terminator (an unclosed `<!--` before many others is not scanned again).
    /// Empty until the first opener (most parses have none: no allocation).
    private var nextTerminator: [(from: Int, at: Int?)] = []
    /// Whether the scan looks for a checkpoint (a streamed paragraph's parse).
    private var findsCheckpoints = false
    /// Something read so far may still change meaning with more text (a
    /// backtick run or a "<" not closed, a "](" without its ")"): no checkpoint from here on.
    private var open = false
    /// Where the next checkpoint is looked for, at the earliest.
    private var nextTry = 0
    /// The last checkpoint found: its offset, the nodes before it, whether they looked a label up.
    private var found: (offset: Int, nodes: Int, usesDefinitions: Bool)?

    /// Parses `content` (a paragraph's lines, a heading's or a cell's text).
    /// `scratch`: buffers kept from one parse to the next (a document's blocks
    /// are parsed one after the other), so a parse allocates less.
    static func parse(
        _ content: [UInt8], definitions: [String: String], scratch: InlineScratch? = nil
    ) -> (text: String, spans: [MarkdownSpan], unresolved: Bool) {
        parse(content, in: 0..<content.count, definitions: definitions, scratch: scratch)
    }

    /// `parse(Array(content[bounds]), …)` without the copy.
    static func parse(
        _ content: [UInt8], in bounds: Range<Int>, definitions: [String: String], scratch: InlineScratch? = nil
    ) -> (text: String, spans: [MarkdownSpan], unresolved: Bool) {
        // The trimmed text's bounds, not a copy of it: a plain text is decoded
        // from `content` itself, and a full parse gets the scratch's buffer.
        let range = trimmedBounds(content, in: bounds)
        if let text = content.withUnsafeBufferPointer({ plainText(UnsafeBufferPointer(rebasing: $0[range])) }) {
            return (text, [], false)
        }
        guard let scratch else { return parseFully(Array(content[range]), definitions: definitions) }
        var s: [UInt8] = []
        swap(&s, &scratch.input)
        emptyKeepingCapacity(&s)
        s.append(contentsOf: content[range])
        let result = parseFully(s, definitions: definitions, scratch: scratch)
        // The parser is gone: `s` is unique again, kept for the next parse.
        scratch.input = s
        return result
    }

    /// The text of `s` (trimmed content) when it holds nothing the inline
    /// syntax reads: no line break, backslash, backtick, `*`, `~`, bracket,
    /// `<`, `&`, `@`, "://" or "www." (autolinks), and no `_` but between two
    /// ASCII letters or digits (such a run can neither open nor close
    /// emphasis). Then `parseFully` would make one plain run of it; a table
    /// cell, a heading or a list item's line mostly is such a text, and a
    /// streamed list or table reads its open item (row) again at each delta.
    static func plainText(_ s: [UInt8]) -> String? {
        s.withUnsafeBufferPointer { plainText($0) }
    }

    /// `plainText` of the bytes `b` points to.
    static func plainText(_ b: UnsafeBufferPointer<UInt8>) -> String? {
        let plain = { () -> Bool in
            let count = b.count
            var i = 0
            while i < count {
                switch b[i] {
                case 10, 13, 0x5C, 0x60, 0x2A, 0x7E, 0x5B, 0x5D, 0x3C, 0x26, 0x40:  // \n \r \\ ` * ~ [ ] < & @
                    return false
                case 0x5F:  // _
                    guard i > 0, i + 1 < count, isASCIIAlphanumeric(b[i - 1]), isASCIIAlphanumeric(b[i + 1]) else { return false }
                case 0x3A:  // :
                    if i + 2 < count && b[i + 1] == 0x2F && b[i + 2] == 0x2F { return false }
                case 0x77:  // w
                    if i + 3 < count && b[i + 1] == 0x77 && b[i + 2] == 0x77 && b[i + 3] == 0x2E { return false }
                default:
                    break
                }
                i += 1
            }
            return true
        }()
        return plain ? String(decoding: b, as: UTF8.self) : nil
    }

    /// An ASCII letter or digit (also what `MarkdownCache` asks of the bytes around a `_`).
    package static func isASCIIAlphanumeric(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
    }

    /// `parse` without the plain-text shortcut (`s` trimmed).
    static func parseFully(
        _ s: [UInt8], definitions: [String: String], scratch: InlineScratch? = nil
    ) -> (text: String, spans: [MarkdownSpan], unresolved: Bool) {
        var parser = InlineParser(s: s, definitions: definitions)
        if let scratch {
            swap(&parser.store, &scratch.store)
            swap(&parser.nodes, &scratch.nodes)
            swap(&parser.out, &scratch.out)
            swap(&parser.lastBacktickRun, &scratch.lastBacktickRun)
            swap(&parser.extras, &scratch.extras)
            swap(&parser.delimiters, &scratch.delimiters)
            swap(&parser.brackets, &scratch.brackets)
            swap(&parser.runs, &scratch.runs)
            swap(&parser.marks, &scratch.marks)
        }
        parser.store.reserveCapacity(parser.s.count)
        parser.scan()
        parser.processEmphasis(bottom: -1)
        // Spans are not built when every run is plain (they would be dropped).
        let (text, spans, _) = parser.spans(keepPlain: false)
        if let scratch {
            emptyKeepingCapacity(&parser.store)
            emptyKeepingCapacity(&parser.nodes)
            emptyKeepingCapacity(&parser.out)
            emptyKeepingCapacity(&parser.extras)
            emptyKeepingCapacity(&parser.delimiters)
            emptyKeepingCapacity(&parser.brackets)
            emptyKeepingCapacity(&parser.marks)
            swap(&parser.store, &scratch.store)
            swap(&parser.nodes, &scratch.nodes)
            swap(&parser.out, &scratch.out)
            swap(&parser.lastBacktickRun, &scratch.lastBacktickRun)
            swap(&parser.extras, &scratch.extras)
            swap(&parser.delimiters, &scratch.delimiters)
            swap(&parser.brackets, &scratch.brackets)
            swap(&parser.runs, &scratch.runs)
            swap(&parser.marks, &scratch.marks)
        }
        return (text, spans, parser.usesDefinitions)
    }

    /// Where a streamed paragraph's inline parse goes on from at its next
    /// update: the text before `offset` is final. Nothing before it is left
    /// open (every emphasis opener matched, no bracket, backtick run, "<" or
    /// link destination waiting for its end), and a space or line break ends
    /// it, so the text after it reads the same at the start of a paragraph;
    /// no backslash follows it (a hard break takes the spaces before it).
    struct Checkpoint: Equatable, Sendable {
        /// In the paragraph's trimmed content.
        var offset: Int
        /// The content before `offset` (the next update's must be the same).
        var prefix: [UInt8]
        /// The runs of the text before `offset`, plain ones too, merged as `parse` merges them.
        var spans: MarkdownSpans
        var text: String
        /// The text before `offset` looked a label up (then `definitions` must stay the same).
        var usesDefinitions: Bool
        var definitions: [String: String]
        /// The storage of the last answer's text, lent by its holder (held by
        /// no one else): the next answer is built in it, from `text`, when it
        /// begins with `text`. Taken out at the next parse.
        var answer: String?
    }

    /// Checkpoints are at least this far apart (bytes): a checkpoint may cost
    /// a pass over the emphasis delimiters read since the last one, and a
    /// parse reads again what came after the last (a 16 KiB paragraph with
    /// emphasis streamed in tokens: 64 apart, a delta costs 4.7 % more).
    static let checkpointSpacing = 32

    /// `parse`, going on from `resuming` when `content` begins as it did, and
    /// finding the checkpoint the next update goes on from (the old one when
    /// no later one is found). The answer equals `parse`'s. A checkpoint
    /// given here and held by no one else grows in place into the next one
    /// (its text and prefix are not copied again at each checkpoint).
    static func parse(
        _ content: [UInt8], definitions: [String: String], resuming: consuming Checkpoint?
    ) -> (text: String, spans: MarkdownSpans, unresolved: Bool, checkpoint: Checkpoint?) {
        // The trimmed content is content[lo ..< hi]; not copied whole (only what is read again is).
        var lo = 0
        var hi = content.count
        while lo < hi && (isSpaceOrTab(content[lo]) || content[lo] == 10) { lo &+= 1 }
        while hi > lo && (isSpaceOrTab(content[hi &- 1]) || content[hi &- 1] == 10) { hi &-= 1 }
        var kept = resuming
        resuming = nil
        // The last answer's storage, taken out of the checkpoint: held here alone.
        var lent = kept?.answer
        kept?.answer = nil
        if let old = kept, !(old.offset < hi &- lo && (!old.usesDefinitions || old.definitions == definitions)
            && content.withUnsafeBufferPointer({ a in old.prefix.withUnsafeBufferPointer { b in
                RawMemory.equal(a.baseAddress! + lo, b.baseAddress!, old.offset) } })) {
            kept = nil
        }
        let base = kept?.offset ?? 0
        var parser = InlineParser(s: Array(content[(lo &+ base)..<hi]), definitions: definitions)
        parser.findsCheckpoints = true
        parser.store.reserveCapacity(parser.s.count)
        parser.scan()
        parser.processEmphasis(bottom: -1)
        let (read, runs, cut) = parser.spans()
        let unresolved = parser.usesDefinitions || (kept?.usesDefinitions ?? false)
        // The answer: what was kept (its runs' chunks shared, not copied), then what was read now.
        var text = read
        var spans: MarkdownSpans
        if let old = kept {
            let count = old.text.utf8.count
            if lent.map({ RawMemory.hasPrefix($0, old.text, count: count) }) ?? false {
                // Built in the lent storage: what stays is not copied.
                var answer = lent!
                lent = nil
                if answer.utf8.count > count { answer.removeSubrange(answer.utf8.index(answer.utf8.startIndex, offsetBy: count)...) }
                answer.append(read)
                text = answer
            } else {
                text = old.text + read
            }
            spans = old.spans
            join(&spans, runs)
        } else {
            spans = MarkdownSpans(runs)
        }
        if spans.isPlain { spans = [] }
        // The checkpoint: the new one (what was kept, then the runs before it), else the old one.
        guard let found = parser.found, let cut else { return (text, spans, unresolved, kept) }
        var before = Array(runs[..<cut.runs])
        if let bytes = cut.bytes {
            var last = runs[cut.runs]
            if last.text.utf8.count > bytes { last.text = String(decoding: last.text.utf8.prefix(bytes), as: UTF8.self) }
            before.append(last)
        }
        // The kept checkpoint, taken out: held here alone, it grows in place.
        var next = kept ?? Checkpoint(offset: 0, prefix: [], spans: [], text: "", usesDefinitions: false, definitions: [:])
        kept = nil
        next.prefix.append(contentsOf: content[(lo &+ base)..<(lo &+ base &+ found.offset)])
        next.offset = base &+ found.offset
        next.usesDefinitions = found.usesDefinitions || next.usesDefinitions
        next.definitions = definitions
        join(&next.spans, before)
        for span in before { next.text += span.text }
        return (text, spans, unresolved, next)
    }

    /// Appends `runs` to `spans`, the first merged into the last when they are styled alike (as `spans()` merges).
    private static func join(_ spans: inout MarkdownSpans, _ runs: [MarkdownSpan]) {
        var runs = runs[...]
        if let first = runs.first, let last = spans.last, last.source == nil, first.source == nil,
           last.styles == first.styles, last.url == first.url {
            spans[spans.count - 1].text += first.text
            runs = runs.dropFirst()
        }
        spans.append(contentsOf: runs)
    }

    private init(s: [UInt8], definitions: [String: String]) {
        self.s = s
        self.definitions = definitions
    }

    // MARK: - Scan

    private mutating func scan() {
        while position < s.count {
            if findsCheckpoints && !open && position >= nextTry && position > 0 { tryCheckpoint() }
            let c = s[position]
            if isEmailCharacter(c) && (position == 0 || !isEmailCharacter(s[position - 1])) && emailAutolink() { continue }
            switch c {
            case 10: newline()
            case UInt8(ascii: "\\"): backslash()
            case UInt8(ascii: "`"): codeSpan()
            case UInt8(ascii: "*"), UInt8(ascii: "_"), UInt8(ascii: "~"): delimiterRun(c)
            case UInt8(ascii: "["):
                pushBracket(image: false, length: 1)
            case UInt8(ascii: "!") where position + 1 < s.count && s[position + 1] == UInt8(ascii: "["):
                pushBracket(image: true, length: 2)
            case UInt8(ascii: "]"): closeBracket()
            case UInt8(ascii: "<"): angle()
            case UInt8(ascii: "&"): entity()
            case UInt8(ascii: "h"), UInt8(ascii: "w"), UInt8(ascii: "f"):
                if !extendedAutolink() { plainRun() }
            default:
                plainRun()
            }
        }
        flush()
    }

    /// Text at `position` (a byte the scan's switch took as text) and the plain
    /// bytes after it, appended at once (see `plainEnd`).
    private mutating func plainRun() {
        let start = position
        let limit = findsCheckpoints && !open ? min(s.count, nextTry) : s.count
        let end = s.withUnsafeBufferPointer { Self.plainEnd($0, from: start, limit: limit) }
        appendToStore(start..<end)
        position = end
    }

    /// Where the plain text after `b[from]` ends (at most at `limit`): at the
    /// first byte the scan would treat otherwise, a byte of its switch, an
    /// "h", "w" or "f" that begins what could be an extended autolink, or the
    /// start of a run of e-mail characters followed by "@". Every index read is
    /// checked against `b.count`.
    private static func plainEnd(_ b: UnsafeBufferPointer<UInt8>, from: Int, limit: Int) -> Int {
        var end = from + 1
        while end < limit {
            let c = b[end], before = b[end - 1]
            switch c {
            case 10, UInt8(ascii: "\\"), UInt8(ascii: "`"), UInt8(ascii: "*"), UInt8(ascii: "_"), UInt8(ascii: "~"),
                 UInt8(ascii: "["), UInt8(ascii: "!"), UInt8(ascii: "]"), UInt8(ascii: "<"), UInt8(ascii: "&"):
                return end
            case UInt8(ascii: "h"), UInt8(ascii: "w"), UInt8(ascii: "f"):
                // `extendedAutolink`'s tests: the byte before, then the prefixes
                // ("www.", "http://", "https://", "ftp://": their second letter).
                switch before {
                case 32, 9, 10, UInt8(ascii: "*"), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "("):
                    let second = c == UInt8(ascii: "w") ? UInt8(ascii: "w") : UInt8(ascii: "t")
                    if end + 1 < b.count && b[end + 1] | 0x20 == second { return end }
                default:
                    break
                }
            default:
                break
            }
            if isEmailCharacter(c) && !isEmailCharacter(before) {
                // `emailAutolink` needs an "@" after the run; without one the
                // run is text, and all of it when it has no "_" (a delimiter).
                var at = end + 1
                var underscore = false
                while at < b.count && isEmailCharacter(b[at]) {
                    if b[at] == UInt8(ascii: "_") { underscore = true }
                    at += 1
                }
                if at < b.count && b[at] == UInt8(ascii: "@") { return end }
                end = underscore ? end + 1 : min(at, limit)
                continue
            }
            end += 1
        }
        return end
    }

    /// Takes `position` as the checkpoint when nothing before it is left open
    /// (see `Checkpoint`): a blank or line break before it and none at it, no
    /// bracket open, and every emphasis opener matched by a closer before it
    /// (the closers read so far are matched now, as the end would match them:
    /// a closer's match depends only on what is before it).
    private mutating func tryCheckpoint() {
        let before = s[position - 1], at = s[position]
        // Not before a backslash: with a line ending after it, it is a hard
        // break, which takes the spaces before it off the text before.
        guard before == 32 || before == 10, at != 32, at != 9, at != 10, at != UInt8(ascii: "\\"), brackets.isEmpty
        else { return }
        nextTry = position + Self.checkpointSpacing
        if topDelimiter >= 0 {
            processEmphasis(bottom: -1, dropOpeners: false)
            var d = topDelimiter
            while d >= 0 {
                if delimiters[d].canOpen && delimiters[d].count > 0 { return }
                d = delimiters[d].previous
            }
            topDelimiter = -1
        }
        flush()
        found = (position, nodes.count, usesDefinitions)
    }

    private mutating func flush() {
        guard store.count > pendingStart else { return }
        nodes.append(InlineNode(start: pendingStart, end: store.count))
        pendingStart = store.count
    }

    /// The bytes of `s` in `range` appended to `store`, copied as a buffer
    /// (an `ArraySlice` goes through the general append, which allocates).
    @inline(__always) private mutating func appendToStore(_ range: Range<Int>) {
        s.withUnsafeBufferPointer { store.append(contentsOf: UnsafeBufferPointer(rebasing: $0[range])) }
    }

    /// A node of its own after the pending text, whose text is `s[range]`.
    private mutating func append(
        _ range: Range<Int>, styles: MarkdownStyle = [], url: String? = nil, closes: Mark? = nil
    ) {
        flush()
        appendToStore(range)
        var node = InlineNode(start: pendingStart, end: store.count, styles: styles)
        if url != nil || closes != nil {
            node.extra = extras.count
            extras.append(NodeExtra(url: url))
            if let closes { Self.add(closes, to: &extras[node.extra].closes, &marks) }
        }
        nodes.append(node)
        pendingStart = store.count
    }

    /// A node of its own after the pending text, whose text is `bytes`.
    private mutating func append<C: Collection>(bytes: C, styles: MarkdownStyle) where C.Element == UInt8 {
        flush()
        store.append(contentsOf: bytes)
        nodes.append(InlineNode(start: pendingStart, end: store.count, styles: styles))
        pendingStart = store.count
    }

    /// A soft line break ("\n" in the text) or a hard one (two spaces or more, or `hard`:
    /// a backslash, before it; a "\n" node of its own), without the spaces around it.
    private mutating func newline(hard: Bool = false) {
        var spaces = 0
        while store.count > pendingStart, let last = store.last, isSpaceOrTab(last) {
            spaces = last == 32 ? spaces + 1 : 0
            store.removeLast()
        }
        if hard || spaces >= 2 {
            append(bytes: CollectionOfOne(UInt8(10)), styles: .lineBreak)
        } else {
            store.append(10)
        }
        position += 1
        while position < s.count && isSpaceOrTab(s[position]) { position += 1 }
    }

    private mutating func backslash() {
        let next = position + 1 < s.count ? s[position + 1] : 0
        if next == 10 {
            position += 1
            newline(hard: true)
        } else if isASCIIPunctuation(next) {
            store.append(next)
            position += 2
        } else {
            store.append(UInt8(ascii: "\\"))
            position += 1
        }
    }

    private mutating func codeSpan() {
        let start = position
        while position < s.count && s[position] == UInt8(ascii: "`") { position += 1 }
        let length = position - start
        guard let close = nextBacktickRun(length: length, after: position) else {
            store.append(contentsOf: repeatElement(UInt8(ascii: "`"), count: length))
            open = true  // a later run of the same length would close it
            return
        }
        // Newlines read as spaces; one space is stripped from each end when both ends have one and not all are spaces.
        var from = position, to = close
        if to - from >= 2 && isSpaceOrNewline(s[from]) && isSpaceOrNewline(s[to - 1])
            && !s[from..<to].allSatisfy(isSpaceOrNewline) {
            from += 1
            to -= 1
        }
        append(bytes: s[from..<to].lazy.map { $0 == 10 ? 32 : $0 }, styles: .code)
        position = close + length
    }

    /// The start of the first backtick run of exactly `length` at or after `from` (just after an opening run).
    /// Short runs (cmark's way): a scan forward to the first match, which the
    /// code span then consumes; once a scan has reached the end, a length whose
    /// last run is before `from` has none, without a scan. So the text is
    /// scanned about once. Longer runs: an index of the runs by length, built once.
    private mutating func nextBacktickRun(length: Int, after from: Int) -> Int? {
        if length <= Self.maxScannedRun {
            if !backtickTableReady {
                // A buffer left by an earlier parse is reset, not allocated again.
                if lastBacktickRun.count == Self.maxScannedRun + 1 {
                    for k in lastBacktickRun.indices { lastBacktickRun[k] = -1 }
                } else {
                    lastBacktickRun = Array(repeating: -1, count: Self.maxScannedRun + 1)
                }
                backtickTableReady = true
            }
            if backticksScannedToEnd && lastBacktickRun[length] < from { return nil }
            var i = from
            while i < s.count {
                guard s[i] == UInt8(ascii: "`") else { i += 1; continue }
                let start = i
                while i < s.count && s[i] == UInt8(ascii: "`") { i += 1 }
                if i - start <= Self.maxScannedRun { lastBacktickRun[i - start] = start }
                if i - start == length { return start }
            }
            backticksScannedToEnd = true
            return nil
        }
        if backtickRuns == nil {
            var runs: [Int: [Int]] = [:]
            var i = 0
            while i < s.count {
                guard s[i] == UInt8(ascii: "`") else { i += 1; continue }
                let start = i
                while i < s.count && s[i] == UInt8(ascii: "`") { i += 1 }
                runs[i - start, default: []].append(start)
            }
            backtickRuns = runs
        }
        guard let runs = backtickRuns?[length] else { return nil }
        var cursor = backtickCursor[length] ?? 0
        while cursor < runs.count && runs[cursor] < from { cursor += 1 }
        backtickCursor[length] = cursor
        return cursor < runs.count ? runs[cursor] : nil
    }

    private mutating func delimiterRun(_ c: UInt8) {
        let start = position
        while position < s.count && s[position] == c { position += 1 }
        let count = position - start
        if c == UInt8(ascii: "~") && count > 2 {
            appendToStore(start..<position)
            return
        }
        let before = scalar(before: start)
        let after = scalar(at: position)
        let beforeSpace = isUnicodeWhitespace(before), afterSpace = isUnicodeWhitespace(after)
        let beforePunct = isUnicodePunctuation(before), afterPunct = isUnicodePunctuation(after)
        let leftFlanking = !afterSpace && (!afterPunct || beforeSpace || beforePunct)
        let rightFlanking = !beforeSpace && (!beforePunct || afterSpace || afterPunct)
        let canOpen, canClose: Bool
        if c == UInt8(ascii: "_") {
            canOpen = leftFlanking && (!rightFlanking || beforePunct)
            canClose = rightFlanking && (!leftFlanking || afterPunct)
        } else {
            canOpen = leftFlanking
            canClose = rightFlanking
        }
        append(start..<position)
        guard canOpen || canClose else { return }
        delimiters.append(Delimiter(node: nodes.count - 1, char: c, count: count, originalCount: count,
                                    canOpen: canOpen, canClose: canClose, previous: topDelimiter))
        if topDelimiter >= 0 { delimiters[topDelimiter].next = delimiters.count - 1 }
        topDelimiter = delimiters.count - 1
    }

    /// The scalar ending just before `i` (a newline at the start).
    private func scalar(before i: Int) -> Unicode.Scalar {
        guard i > 0 else { return "\n" }
        var j = i - 1
        while j > 0 && i - j < 4 && s[j] & 0xC0 == 0x80 { j -= 1 }
        return scalar(at: j)
    }

    /// The scalar starting at `i` (a newline at the end).
    private func scalar(at i: Int) -> Unicode.Scalar {
        guard i < s.count else { return "\n" }
        if s[i] < 0x80 { return Unicode.Scalar(s[i]) }
        var iterator = s[i...].makeIterator()
        var decoder = UTF8()
        if case .scalarValue(let scalar) = decoder.decode(&iterator) { return scalar }
        return "\u{FFFD}"
    }

    private mutating func pushBracket(image: Bool, length: Int) {
        append(position..<(position + length))
        position += length
        brackets.append(Bracket(node: nodes.count - 1, isImage: image, previousDelimiter: topDelimiter, textStart: position))
    }

    /// "]": a link or image when a bracket is open and a destination or a defined label follows.
    private mutating func closeBracket() {
        let closeAt = position
        position += 1
        guard let opener = brackets.last, opener.active else {
            if !brackets.isEmpty { brackets.removeLast() }
            store.append(UInt8(ascii: "]"))
            return
        }
        var url: String?
        var after = position
        if position < s.count && s[position] == UInt8(ascii: "("), let (destination, end) = inlineLinkTail(position + 1) {
            url = destination
            after = end
        } else {
            var label = s[opener.textStart..<closeAt]
            if position < s.count && s[position] == UInt8(ascii: "["), let end = LinkScanner.label(s, position) {
                if end - position > 2 { label = s[(position + 1)..<(end - 1)] }
                after = end
            } else if position + 1 < s.count && s[position] == UInt8(ascii: "[") && s[position + 1] == UInt8(ascii: "]") {
                after = position + 2
            }
            if label.count <= 999, !hasUnescapedBracket(label) {
                let key = LinkScanner.normalize(label)
                if !key.isEmpty {
                    url = definitions[key]
                    usesDefinitions = true
                }
            }
        }
        brackets.removeLast()
        guard let url else {
            // "](" or "][" not closed yet: more text could make a link of it.
            if position < s.count && (s[position] == UInt8(ascii: "(") || s[position] == UInt8(ascii: "[")) { open = true }
            store.append(UInt8(ascii: "]"))
            return
        }
        if opener.isImage {
            // An image: its content's plain text is the alt text, one node of its own.
            flush()
            processEmphasis(bottom: opener.previousDelimiter)
            let altStart = store.count
            for k in (opener.node + 1)..<nodes.count {
                for i in nodes[k].start..<nodes[k].end { store.append(store[i]) }
            }
            nodes.removeSubrange((opener.node + 1)...)
            nodes[opener.node] = InlineNode(start: altStart, end: store.count, styles: .image, extra: extras.count)
            extras.append(NodeExtra(source: url))
            pendingStart = store.count
            position = after
            return
        }
        nodes[opener.node].end = nodes[opener.node].start
        let openerExtra = extra(of: opener.node)
        Self.add(.link(url), to: &extras[openerExtra].opens, &marks)
        append(position..<position, closes: .link(url))
        processEmphasis(bottom: opener.previousDelimiter)
        position = after
        // Links may not contain links: earlier "[" can no longer make one.
        for i in brackets.indices.reversed() where !brackets[i].isImage {
            if !brackets[i].active { break }
            brackets[i].active = false
        }
    }

    private func hasUnescapedBracket(_ label: ArraySlice<UInt8>) -> Bool {
        var escaped = false
        for c in label {
            if !escaped && (c == UInt8(ascii: "[") || c == UInt8(ascii: "]")) { return true }
            escaped = !escaped && c == UInt8(ascii: "\\")
        }
        return false
    }

    /// `(destination "title")` after "](": the url and the end after ")".
    private func inlineLinkTail(_ i: Int) -> (String, Int)? {
        var j = LinkScanner.skipSpaceAndNewline(s, i)
        if j < s.count && s[j] == UInt8(ascii: ")") { return ("", j + 1) }
        guard let (url, destinationEnd) = LinkScanner.destination(s, j) else { return nil }
        j = LinkScanner.skipSpaceAndNewline(s, destinationEnd)
        if j > destinationEnd, let titleEnd = LinkScanner.title(s, j) {
            j = LinkScanner.skipSpaceAndNewline(s, titleEnd)
        }
        guard j < s.count && s[j] == UInt8(ascii: ")") else { return nil }
        return (url, j + 1)
    }

    /// "<": an autolink, raw HTML (kept as text) or a literal "<".
    private mutating func angle() {
        if let (end, url) = autolink(position) {
            append((position + 1)..<(end - 1), styles: .link, url: url)
            position = end
            return
        }
        let tag = s.withUnsafeBufferPointer { b in HTMLScanner.tag(b, position, s.count) }
        if let end = tag ?? otherHTML() {
            appendToStore(position..<end)
            position = end
        } else {
            // More text could make a tag, an autolink or a comment of it.
            let next = position + 1 < s.count ? s[position + 1] : 0
            if next == 0 || HTMLScanner.isLetter(next) || next == UInt8(ascii: "/") || next == UInt8(ascii: "!") || next == UInt8(ascii: "?") {
                open = true
            }
            store.append(UInt8(ascii: "<"))
            position += 1
        }
    }

    /// A comment, processing instruction, declaration or CDATA section at `position`, within the tag cap.
    private mutating func otherHTML() -> Int? {
        let text = s, position = position
        let limit = min(text.count, position + HTMLScanner.maxTagLength)
        let opening: (terminator: String, kind: Int, from: Int)? = text.withUnsafeBufferPointer { b in
            if HTMLScanner.hasPrefix(b, position, limit, "<!-->") { return ("", -5, 0) }
            if HTMLScanner.hasPrefix(b, position, limit, "<!--->") { return ("", -6, 0) }
            if HTMLScanner.hasPrefix(b, position, limit, "<!--") { return ("-->", 0, position + 4) }
            if HTMLScanner.hasPrefix(b, position, limit, "<?") { return ("?>", 1, position + 2) }
            if HTMLScanner.hasPrefix(b, position, limit, "<![CDATA[") { return ("]]>", 2, position + 9) }
            if position + 2 < limit && b[position + 1] == UInt8(ascii: "!") && HTMLScanner.isLetter(b[position + 2]) {
                return (">", 3, position + 2)
            }
            return nil
        }
        guard let opening else { return nil }
        if opening.kind < 0 { return position - opening.kind }
        // The first terminator at or after `from` in the whole text, searched once per stretch.
        if nextTerminator.isEmpty { nextTerminator = Array(repeating: (Int.max, nil), count: 4) }
        var known = nextTerminator[opening.kind]
        if known.from > opening.from || (known.at.map { $0 < opening.from } ?? false) {
            let at = text.withUnsafeBufferPointer { HTMLScanner.find($0, opening.from, text.count, opening.terminator) }
            known = (opening.from, at)
            nextTerminator[opening.kind] = known
        }
        guard let at = known.at, at + opening.terminator.utf8.count <= limit else { return nil }
        return at + opening.terminator.utf8.count
    }

    /// `<scheme:...>` or `<user@host>` at `i`: its end and url.
    private func autolink(_ i: Int) -> (Int, String)? {
        var j = i + 1
        let schemeStart = j
        while j < s.count && j - schemeStart <= 32 && (HTMLScanner.isLetter(s[j]) || (j > schemeStart && (isDigit(s[j]) || s[j] == UInt8(ascii: "+") || s[j] == UInt8(ascii: ".") || s[j] == UInt8(ascii: "-")))) {
            j += 1
        }
        if j - schemeStart >= 2 && j - schemeStart <= 32 && j < s.count && s[j] == UInt8(ascii: ":") {
            while j < s.count && s[j] > 32 && s[j] != UInt8(ascii: "<") && s[j] != UInt8(ascii: ">") { j += 1 }
            if j < s.count && s[j] == UInt8(ascii: ">") {
                return (j + 1, String(decoding: s[(i + 1)..<j], as: UTF8.self))
            }
            return nil
        }
        // An e-mail address.
        j = i + 1
        while j < s.count && (HTMLScanner.isLetter(s[j]) || isDigit(s[j]) || ".!#$%&'*+/=?^_`{|}~-".utf8.contains(s[j])) { j += 1 }
        guard j > i + 1, j < s.count, s[j] == UInt8(ascii: "@") else { return nil }
        j += 1
        let domainStart = j
        while j < s.count && (HTMLScanner.isLetter(s[j]) || isDigit(s[j]) || s[j] == UInt8(ascii: "-") || s[j] == UInt8(ascii: ".")) { j += 1 }
        guard j > domainStart, j < s.count, s[j] == UInt8(ascii: ">"), s[domainStart] != UInt8(ascii: "."),
              s[j - 1] != UInt8(ascii: "."), s[j - 1] != UInt8(ascii: "-") else { return nil }
        let address = String(decoding: s[(i + 1)..<j], as: UTF8.self)
        return (j + 1, "mailto:" + address)
    }

    private mutating func entity() {
        if let (bytes, end) = Entities.decode(s, position) {
            store.append(contentsOf: bytes)
            position = end
        } else {
            store.append(UInt8(ascii: "&"))
            position += 1
        }
    }

    /// GFM: `www.`, `http://` or `https://` after a space, the start, or one of `*_~(`; true when one was taken.
    private mutating func extendedAutolink() -> Bool {
        if position > 0 {
            let before = s[position - 1]
            switch before {
            case 32, 9, 10, UInt8(ascii: "*"), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "("): break
            default: return false
            }
        }
        let prefixLength: Int
        let scheme: String
        if hasPrefix("www.") { prefixLength = 4; scheme = "http://" }
        else if hasPrefix("http://") { prefixLength = 7; scheme = "" }
        else if hasPrefix("https://") { prefixLength = 8; scheme = "" }
        else if hasPrefix("ftp://") { prefixLength = 6; scheme = "" }
        else { return false }
        // The domain first: a failed attempt costs only its length, not the rest of the line.
        guard isValidDomain(position + (scheme.isEmpty ? prefixLength : 0), s.count) else { return false }
        var end = position + prefixLength
        while end < s.count && s[end] > 32 && s[end] != UInt8(ascii: "<") { end += 1 }
        end = trimAutolinkEnd(position, end)
        guard isValidDomain(position + (scheme.isEmpty ? prefixLength : 0), end) else { return false }
        append(position..<end, styles: .link, url: scheme + String(decoding: s[position..<end], as: UTF8.self))
        position = end
        return true
    }

    @inline(__always) private func isEmailCharacter(_ c: UInt8) -> Bool { Self.isEmailCharacter(c) }

    @inline(__always) private static func isEmailCharacter(_ c: UInt8) -> Bool {
        HTMLScanner.isLetter(c) || isDigit(c) || c == UInt8(ascii: ".") || c == UInt8(ascii: "+") || c == UInt8(ascii: "-")
            || c == UInt8(ascii: "_")
    }

    /// GFM: a bare e-mail address starting at `position` (the start of a run of the characters
    /// of its local part): `local@domain.tld`, the domain with a "." and not ending in "-" or
    /// "_" (a final "." is left out); true when one was taken.
    @inline(__always) private mutating func emailAutolink() -> Bool {
        // The run and its "@" looked for where the scan is (most runs are
        // words without one); the address after it read in a call.
        var at = position
        while at < s.count && isEmailCharacter(s[at]) { at += 1 }
        guard at < s.count, s[at] == UInt8(ascii: "@"), at > position else { return false }
        return emailAutolink(at: at)
    }

    /// The address whose "@" is at `at`, its local part from `position`.
    @inline(never) private mutating func emailAutolink(at: Int) -> Bool {
        var end = at + 1
        var dots = 0
        while end < s.count {
            let c = s[end]
            if c == UInt8(ascii: ".") {
                guard end + 1 < s.count, HTMLScanner.isLetter(s[end + 1]) || isDigit(s[end + 1]) else { break }
                dots += 1
            } else if !(HTMLScanner.isLetter(c) || isDigit(c) || c == UInt8(ascii: "-") || c == UInt8(ascii: "_")) {
                break
            }
            end += 1
        }
        guard dots > 0, end > at + 1, s[end - 1] != UInt8(ascii: "-"), s[end - 1] != UInt8(ascii: "_") else { return false }
        append(position..<end, styles: .link, url: "mailto:" + String(decoding: s[position..<end], as: UTF8.self))
        position = end
        return true
    }

    private func hasPrefix(_ prefix: String) -> Bool {
        var i = position
        for p in prefix.utf8 {
            guard i < s.count, s[i] | (p >= 97 ? 0x20 : 0) == p else { return false }
            i += 1
        }
        return true
    }

    /// The end of an extended autolink without its trailing punctuation, unbalanced ")" and entity-like tail.
    private func trimAutolinkEnd(_ start: Int, _ end: Int) -> Int {
        var end = end
        let opens = s[start..<end].filter { $0 == UInt8(ascii: "(") }.count
        var closes = s[start..<end].filter { $0 == UInt8(ascii: ")") }.count
        while end > start {
            let c = s[end - 1]
            if Self.isTrailingAutolinkPunctuation(c) {
                end -= 1
            } else if c == UInt8(ascii: ")") {
                guard closes > opens else { break }
                closes -= 1
                end -= 1
            } else if c == UInt8(ascii: ";") {
                var j = end - 1
                while j > start && (HTMLScanner.isLetter(s[j - 1]) || isDigit(s[j - 1])) { j -= 1 }
                guard j > start, s[j - 1] == UInt8(ascii: "&") else { break }
                end = j - 1
            } else {
                break
            }
        }
        return end
    }

    /// `?!.,:*_~'"`: left off the end of an extended autolink.
    private static func isTrailingAutolinkPunctuation(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "?"), UInt8(ascii: "!"), UInt8(ascii: "."), UInt8(ascii: ","), UInt8(ascii: ":"), UInt8(ascii: "*"),
             UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "'"), UInt8(ascii: "\""):
            return true
        default:
            return false
        }
    }

    /// Segments of letters, digits, "_" and "-" separated by ".", at least one ".", no "_" in the last two.
    private func isValidDomain(_ start: Int, _ end: Int) -> Bool {
        var i = start
        var segments: [Bool] = []  // whether each segment has an underscore
        var underscore = false
        var length = 0
        while i < end {
            let c = s[i]
            if c == UInt8(ascii: ".") {
                guard length > 0 else { return false }
                segments.append(underscore)
                underscore = false
                length = 0
            } else if HTMLScanner.isLetter(c) || isDigit(c) || c == UInt8(ascii: "-") || c >= 0x80 {
                length += 1
            } else if c == UInt8(ascii: "_") {
                underscore = true
                length += 1
            } else {
                break
            }
            i += 1
        }
        if length > 0 { segments.append(underscore) }
        return segments.count >= 2 && !segments.suffix(2).contains(true)
    }

    // MARK: - Emphasis

    /// CommonMark's process emphasis over the delimiters above `bottom`, then drops them.
    private mutating func processEmphasis(bottom: Int, dropOpeners: Bool = true) {
        // No delimiter above `bottom`: nothing to match or drop (and no openers table to allocate).
        guard topDelimiter > bottom else { return }
        var openersBottom = [Int](repeating: bottom, count: 18)
        var closer = -1
        var walk = topDelimiter
        while walk > bottom {
            closer = walk
            walk = delimiters[walk].previous
        }
        while closer >= 0 {
            let d = delimiters[closer]
            guard d.canClose else { closer = d.next; continue }
            let key = bottomKey(d)
            var opener = d.previous
            var found = false
            while opener > bottom && opener > openersBottom[key] {
                let o = delimiters[opener]
                if o.char == d.char && o.canOpen {
                    if d.char == UInt8(ascii: "~") {
                        if o.count == d.count { found = true; break }
                    } else {
                        let oddMatch = (d.canOpen || o.canClose) && d.originalCount % 3 != 0
                            && (o.originalCount + d.originalCount) % 3 == 0
                        if !oddMatch { found = true; break }
                    }
                }
                opener = o.previous
            }
            if !found {
                openersBottom[key] = d.previous
                let next = d.next
                if !d.canOpen { removeDelimiter(closer) }
                closer = next
                continue
            }
            let o = delimiters[opener]
            let use = d.char == UInt8(ascii: "~") ? d.count : (d.count >= 2 && o.count >= 2 ? 2 : 1)
            let style: MarkdownStyle = d.char == UInt8(ascii: "~") ? .strikethrough : use == 2 ? .bold : .italic
            delimiters[opener].count -= use
            delimiters[closer].count -= use
            nodes[o.node].end -= use
            // A run's text is its delimiter characters only: taken from its end, not shifted.
            nodes[d.node].end -= use
            let openerExtra = extra(of: o.node), closerExtra = extra(of: d.node)
            Self.add(.style(style), to: &extras[openerExtra].opens, &marks)
            Self.add(.style(style), to: &extras[closerExtra].closes, &marks)
            delimiters[opener].next = closer
            delimiters[closer].previous = opener
            if delimiters[opener].count == 0 { removeDelimiter(opener) }
            if delimiters[closer].count == 0 {
                let next = delimiters[closer].next
                removeDelimiter(closer)
                closer = next
            }
        }
        if dropOpeners {
            while topDelimiter > bottom { removeDelimiter(topDelimiter) }
        }
    }

    /// `mark` appended to `chain` (a node's opens or closes), its link in `marks`.
    private static func add(_ mark: Mark, to chain: inout MarkChain, _ marks: inout [MarkLink]) {
        let index = marks.count
        marks.append(MarkLink(mark: mark))
        if chain.last >= 0 { marks[chain.last].next = index } else { chain.first = index }
        chain.last = index
    }

    /// The index of node `index`'s `NodeExtra`, made empty when it has none.
    private mutating func extra(of index: Int) -> Int {
        if nodes[index].extra < 0 {
            nodes[index].extra = extras.count
            extras.append(NodeExtra())
        }
        return nodes[index].extra
    }

    private func bottomKey(_ d: Delimiter) -> Int {
        let kind = d.char == UInt8(ascii: "*") ? 0 : d.char == UInt8(ascii: "_") ? 1 : 2
        return kind * 6 + (d.canOpen ? 3 : 0) + d.originalCount % 3
    }

    private mutating func removeDelimiter(_ i: Int) {
        let previous = delimiters[i].previous, next = delimiters[i].next
        if previous >= 0 { delimiters[previous].next = next }
        if next >= 0 { delimiters[next].previous = previous }
        if topDelimiter == i { topDelimiter = previous }
    }

    // MARK: - Spans

    /// A merged run of `spans()`: its bytes are `out[start..<end]` of one buffer
    /// (the last run is always at the buffer's end, so merging into it appends).
    fileprivate struct Run {
        var start: Int
        var end: Int
        var styles: MarkdownStyle
        var url: String?
        var source: String?
    }

    /// The nodes as merged spans (plain ones too, unless `keepPlain` is false
    /// and every run is plain: then none) and their text, and where
    /// the checkpoint falls among them (the runs before it, and the bytes of
    /// the next one that are before it).
    private mutating func spans(keepPlain: Bool = true) -> (String, [MarkdownSpan], cut: (runs: Int, bytes: Int?)?) {
        var counts = (0, 0, 0)  // bold, italic, strikethrough
        var urls: [String] = []
        emptyKeepingCapacity(&out)
        out.reserveCapacity(store.count)
        var runs: [Run] = []
        swap(&runs, &self.runs)
        runs.reserveCapacity(nodes.count)
        // Emptied and handed back once the spans are built from them.
        defer {
            emptyKeepingCapacity(&runs)
            swap(&runs, &self.runs)
        }
        // Per open link: the nodes shown when it opened (a link with no text keeps an empty run).
        var linkStarts: [Int] = []
        var shown = 0
        var cut: (runs: Int, bytes: Int?)?
        for index in nodes.indices {
            if index == found?.nodes {
                // Nothing is open there: the last run may go on after it, as one run.
                cut = runs.last.map { (runs.count - 1, $0.end - $0.start) } ?? (0, nil)
            }
            let node = nodes[index]
            // The node's extra read in place: a copy of it would retain and release its four fields.
            let extra = node.extra
            var link = extra >= 0 ? extras[extra].closes.first : -1
            while link >= 0 {
                let mark = marks[link].mark
                link = marks[link].next
                if case .link(let url) = mark, let start = linkStarts.popLast(), start == shown {
                    var styles: MarkdownStyle = .link
                    if counts.0 > 0 { styles.insert(.bold) }
                    if counts.1 > 0 { styles.insert(.italic) }
                    if counts.2 > 0 { styles.insert(.strikethrough) }
                    runs.append(Run(start: out.count, end: out.count, styles: styles, url: url, source: nil))
                }
                apply(mark, -1, &counts, &urls)
            }
            let source = extra >= 0 ? extras[extra].source : nil
            if node.end > node.start || source != nil {
                shown += 1
                var styles = node.styles
                if counts.0 > 0 { styles.insert(.bold) }
                if counts.1 > 0 { styles.insert(.italic) }
                if counts.2 > 0 { styles.insert(.strikethrough) }
                if !urls.isEmpty { styles.insert(.link) }
                let url = (extra >= 0 ? extras[extra].url : nil) ?? urls.last
                out.append(contentsOf: store[node.start..<node.end])
                if source == nil, let last = runs.last, last.source == nil, last.styles == styles, last.url == url {
                    runs[runs.count - 1].end = out.count
                } else {
                    runs.append(Run(start: out.count - (node.end - node.start), end: out.count, styles: styles, url: url,
                                    source: source))
                }
            }
            link = extra >= 0 ? extras[extra].opens.first : -1
            while link >= 0 {
                let mark = marks[link].mark
                link = marks[link].next
                if case .link = mark { linkStarts.append(shown) }
                apply(mark, 1, &counts, &urls)
            }
        }
        if found != nil && cut == nil { cut = runs.last.map { (runs.count - 1, $0.end - $0.start) } ?? (0, nil) }
        // The text is the runs' bytes decoded at once: runs meet at ASCII bytes
        // (markers, spaces, punctuation), so this equals joining each run's decoding.
        let text = String(decoding: out, as: UTF8.self)
        if !keepPlain && runs.allSatisfy({ $0.styles.isEmpty && $0.url == nil }) { return (text, [], cut) }
        if runs.count == 1 {
            // One run: its text is the whole text (the same storage, no copy).
            let run = runs[0]
            return (text, [MarkdownSpan(text: text, styles: run.styles, url: run.url, source: run.source)], cut)
        }
        let spans = runs.map {
            MarkdownSpan(text: String(decoding: out[$0.start..<$0.end], as: UTF8.self), styles: $0.styles, url: $0.url,
                         source: $0.source)
        }
        return (text, spans, cut)
    }

    private func apply(_ mark: Mark, _ delta: Int, _ counts: inout (Int, Int, Int), _ urls: inout [String]) {
        switch mark {
        case .style(let style):
            if style == .bold { counts.0 += delta } else if style == .italic { counts.1 += delta } else { counts.2 += delta }
        case .link(let url):
            if delta > 0 { urls.append(url) } else if !urls.isEmpty { urls.removeLast() }
        }
    }

    // MARK: - Unescaping

    /// Backslash escapes and entities resolved (link destinations, info strings).
    static func unescape<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        // Most (a fence's language, a link's destination) hold neither: decoded as they are, not copied first.
        guard bytes.contains(where: { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "&") }) else {
            return String(decoding: bytes, as: UTF8.self)
        }
        let s = Array(bytes)
        var out: [UInt8] = []
        out.reserveCapacity(s.count)  // unescaping shortens the text or keeps its length
        var i = 0
        while i < s.count {
            if s[i] == UInt8(ascii: "\\") && i + 1 < s.count && isASCIIPunctuation(s[i + 1]) {
                out.append(s[i + 1])
                i += 2
            } else if s[i] == UInt8(ascii: "&"), let (decoded, end) = Entities.decode(s, i) {
                out.append(contentsOf: decoded)
                i = end
            } else {
                out.append(s[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

@inline(__always) private func isSpaceOrNewline(_ c: UInt8) -> Bool { c == 32 || c == 10 }

// ASCII first, inlined where called (a call costs more than the test); the
// general category lookup, a table search, is a call of its own.
@inline(__always) func isUnicodeWhitespace(_ c: Unicode.Scalar) -> Bool {
    if c.isASCII { return c == " " || c == "\t" || c == "\n" || c == "\u{0C}" || c == "\r" }
    return isNonASCIIWhitespace(c)
}

@inline(never) func isNonASCIIWhitespace(_ c: Unicode.Scalar) -> Bool {
    c.properties.generalCategory == .spaceSeparator
}

@inline(__always) func isUnicodePunctuation(_ c: Unicode.Scalar) -> Bool {
    if c.isASCII { return isASCIIPunctuation(UInt8(c.value)) }
    return isNonASCIIPunctuation(c)
}

@inline(never) func isNonASCIIPunctuation(_ c: Unicode.Scalar) -> Bool {
    switch c.properties.generalCategory {
    case .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation, .initialPunctuation,
         .finalPunctuation, .otherPunctuation, .mathSymbol, .currencySymbol, .modifierSymbol, .otherSymbol:
        return true
    default:
        return false
    }
}

/// `array` emptied, its buffer kept: the standard library's
/// `removeAll(keepingCapacity:)` is a call into a general range
/// replacement even for an array that is already empty, and a parse
/// empties its scratch arrays once per block.
@inline(__always) func emptyKeepingCapacity<T>(_ array: inout [T]) {
    if !array.isEmpty { array.removeAll(keepingCapacity: true) }
}

/// Buffers an inline parse leaves for the next (see `InlineParser.parse`); one per document parse, not shared between threads.
/// Its properties skip the run-time exclusivity check (each parse swaps them in and out; no two accesses overlap).
final class InlineScratch {
    /// The trimmed text being parsed (see `parse`).
    @exclusivity(unchecked) fileprivate var input: [UInt8] = []
    @exclusivity(unchecked) fileprivate var extras: [NodeExtra] = []
    @exclusivity(unchecked) fileprivate var delimiters: [Delimiter] = []
    @exclusivity(unchecked) fileprivate var brackets: [Bracket] = []
    @exclusivity(unchecked) fileprivate var runs: [InlineParser.Run] = []
    @exclusivity(unchecked) fileprivate var marks: [MarkLink] = []
    @exclusivity(unchecked) fileprivate var store: [UInt8] = []
    @exclusivity(unchecked) fileprivate var nodes: [InlineNode] = []
    @exclusivity(unchecked) fileprivate var out: [UInt8] = []
    @exclusivity(unchecked) fileprivate var lastBacktickRun: [Int] = []
}
