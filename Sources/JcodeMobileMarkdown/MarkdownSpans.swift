/// The inline runs of a block, read as an array, held in chunks that copies
/// share.
///
/// A streamed paragraph's runs only grow at their end, and every layer keeps
/// a copy of them: the parser's checkpoint, the block, the block's node, the
/// tree's node. Held as one array, each of those copies, comparisons and
/// releases costs every run at every delta (a 16 KiB paragraph with emphasis
/// has about 1 600). Held here, the runs before the last `chunkSize` are in
/// full chunks that copies share and that are never written again (a write
/// to one copies that chunk alone), so a copy, a release, a comparison with
/// the runs before (`commonPrefixCount`) and an append cost about the number
/// of chunks, not of runs. The texts' UTF-8 length and whether any run is
/// styled are kept as the runs change, not counted again.
public struct MarkdownSpans: RandomAccessCollection, Equatable, ExpressibleByArrayLiteral, Sendable {
    /// Runs per full chunk: a write to the last runs copies up to this many
    /// (at 64, a delta into a 16 KiB paragraph with emphasis cost 1.6 % more;
    /// at 8, with twice the chunks to copy the list of, 6 % more).
    static let chunkSize = 16

    /// Runs 0 ..< full.count * chunkSize, `chunkSize` per chunk.
    private var full: [[MarkdownSpan]] = []
    /// The runs after them (fewer than `chunkSize`, or exactly as many until the next append).
    private var tail: [MarkdownSpan] = []
    /// The runs' texts' UTF-8 length, together.
    public private(set) var utf8Count = 0
    /// How many runs have a style, a link or an image (0: the text is plain).
    private var styledCount = 0

    public init() {}

    public init(arrayLiteral elements: MarkdownSpan...) {
        self.init(elements)
    }

    public init<S: Sequence>(_ runs: S) where S.Element == MarkdownSpan {
        for run in runs { append(run) }
    }

    /// The runs of `runs`: a short array is held as it is (not copied).
    public init(_ runs: [MarkdownSpan]) {
        guard runs.count <= Self.chunkSize else {
            append(contentsOf: runs)
            return
        }
        tail = runs
        for run in runs { counts(run) }
    }

    /// No run has a style, a link or an image.
    public var isPlain: Bool { styledCount == 0 }

    public var startIndex: Int { 0 }
    public var endIndex: Int { full.count &* Self.chunkSize &+ tail.count }
    public var count: Int { endIndex }

    public subscript(position: Int) -> MarkdownSpan {
        get {
            precondition(position >= 0 && position < count, "MarkdownSpans index out of range")
            let inFull = full.count &* Self.chunkSize
            if position < inFull { return full[position / Self.chunkSize][position % Self.chunkSize] }
            return tail[position &- inFull]
        }
        set {
            precondition(position >= 0 && position < count, "MarkdownSpans index out of range")
            let old = self[position]
            uncount(old)
            counts(newValue)
            let inFull = full.count &* Self.chunkSize
            if position < inFull {
                full[position / Self.chunkSize][position % Self.chunkSize] = newValue
            } else {
                tail[position &- inFull] = newValue
            }
        }
    }

    public mutating func append(_ run: MarkdownSpan) {
        if tail.count >= Self.chunkSize {
            // The chunk is full: it moves to `full` (not copied) and is shared from now on.
            full.append(tail)
            tail = []
        }
        if tail.capacity == 0 { tail.reserveCapacity(Self.chunkSize) }
        counts(run)
        tail.append(run)
    }

    public mutating func append<S: Sequence>(contentsOf runs: S) where S.Element == MarkdownSpan {
        for run in runs { append(run) }
    }

    /// Keeps the first `count` runs (`0 ... self.count`).
    public mutating func removeSuffix(keeping count: Int) {
        precondition(count >= 0 && count <= self.count, "MarkdownSpans count out of range")
        while self.count > count {
            if tail.isEmpty, let last = full.popLast() { tail = last }
            let drop = Swift.min(tail.count, self.count &- count)
            for run in tail.suffix(drop) { uncount(run) }
            tail.removeLast(drop)
        }
    }

    /// How many first runs `self` and `other` have alike: chunks the two
    /// share are skipped without reading their runs.
    public func commonPrefixCount(with other: MarkdownSpans) -> Int {
        var k = 0
        var c = 0
        // One list of chunks, held by both (one is the other grown or changed
        // in its tail only): every chunk alike, none read.
        if Self.same(full, other.full) {
            c = full.count
            k = c &* Self.chunkSize
        }
        while c < full.count && c < other.full.count {
            if !Self.same(full[c], other.full[c]) {
                let alike = Self.common(full[c], other.full[c])
                if alike < Self.chunkSize { return k &+ alike }
            }
            k &+= Self.chunkSize
            c &+= 1
        }
        let a = c < full.count ? full[c] : tail
        let b = c < other.full.count ? other.full[c] : other.tail
        return k &+ Self.common(a, b)
    }

    public static func == (a: MarkdownSpans, b: MarkdownSpans) -> Bool {
        a.count == b.count && a.utf8Count == b.utf8Count && a.commonPrefixCount(with: b) == a.count
    }

    private static func same<Element>(_ a: [Element], _ b: [Element]) -> Bool {
        a.withUnsafeBufferPointer { pa in b.withUnsafeBufferPointer { pb in pa.baseAddress == pb.baseAddress && pa.count == pb.count } }
    }

    private static func common(_ a: [MarkdownSpan], _ b: [MarkdownSpan]) -> Int {
        var k = 0
        let limit = Swift.min(a.count, b.count)
        while k < limit && a[k] == b[k] { k &+= 1 }
        return k
    }

    private mutating func counts(_ run: MarkdownSpan) {
        utf8Count &+= run.text.utf8.count
        if run.isStyled { styledCount &+= 1 }
    }

    private mutating func uncount(_ run: MarkdownSpan) {
        utf8Count &-= run.text.utf8.count
        if run.isStyled { styledCount &-= 1 }
    }
}

extension MarkdownSpan {
    /// It has a style, a link or an image.
    var isStyled: Bool { !styles.isEmpty || url != nil || source != nil }
}
