/// A line diff of two snippets (an edit's old and new strings), bounded in
/// time and memory whatever their size.
///
/// The lines the two have in common at the start and at the end are taken
/// off first (cheap, and usually almost everything). The middle is diffed
/// with Myers' greedy algorithm, which costs O((N + M) · D) time and O(D²)
/// memory for an edit distance D; it is run only when the middle has at most
/// `maxMiddleLines` lines in all and gives up past `maxEditDistance`. Beyond
/// either bound the middle is shown as all old lines removed, then all new
/// lines added: a correct diff, only not the smallest.
enum LineDiff {
    /// Unchanged lines shown before and after each change.
    static let contextLines = 3
    /// Most old + new lines in the middle that Myers' algorithm is run on.
    static let maxMiddleLines = 20_000
    /// Largest edit distance searched for before giving up.
    static let maxEditDistance = 1_000

    /// One line of the full diff and where it stands: `old` and `new` are the
    /// numbers of old and new lines before it (so its index in its own side).
    struct Step: Equatable {
        var kind: DiffLine.Kind
        var old: Int
        var new: Int
    }

    /// Diffs `old` against `new` and gives the result to `collector` in hunks
    /// with `contextLines` of context, numbered from 1 within the snippets.
    static func collect(old: String, new: String, into collector: inout DiffCollector) {
        let oldLines = TextLines.split(old)
        let newLines = TextLines.split(new)
        let steps = steps(oldLines, newLines)
        for range in hunkRanges(steps) {
            let first = steps[range.lowerBound]
            collector.beginHunk(oldStart: first.old + 1, newStart: first.new + 1)
            for step in steps[range] {
                collector.line(step.kind, step.kind == .added ? newLines[step.new] : oldLines[step.old])
            }
        }
        collector.endHunk()
    }

    /// The whole diff, line by line: common head, the middle's edit script, common tail.
    static func steps(_ old: [Substring], _ new: [Substring]) -> [Step] {
        let shorter = min(old.count, new.count)
        var head = 0
        while head < shorter, TextLines.sameBytes(old[head], new[head]) { head += 1 }
        var tail = 0
        while tail < shorter - head, TextLines.sameBytes(old[old.count - 1 - tail], new[new.count - 1 - tail]) {
            tail += 1
        }
        let oldMiddle = old[head..<(old.count - tail)]
        let newMiddle = new[head..<(new.count - tail)]

        var steps: [Step] = []
        steps.reserveCapacity(old.count + new.count)
        var position = (old: 0, new: 0)
        func append(_ kind: DiffLine.Kind) {
            steps.append(Step(kind: kind, old: position.old, new: position.new))
            if kind != .added { position.old += 1 }
            if kind != .removed { position.new += 1 }
        }
        for _ in 0..<head { append(.context) }
        for kind in middleScript(oldMiddle, newMiddle) { append(kind) }
        for _ in 0..<tail { append(.context) }
        return steps
    }

    /// The middle's edit script: Myers' when within bounds, else all removed then all added.
    private static func middleScript(_ old: ArraySlice<Substring>, _ new: ArraySlice<Substring>) -> [DiffLine.Kind] {
        if old.count + new.count <= maxMiddleLines {
            let (a, b) = intern(old, new)
            if let script = myers(a, b, maxDistance: maxEditDistance) { return script }
        }
        return Array(repeating: .removed, count: old.count) + Array(repeating: .added, count: new.count)
    }

    /// Both sides as numbers, equal numbers for byte-equal lines, so the
    /// search compares integers.
    private static func intern(_ old: ArraySlice<Substring>, _ new: ArraySlice<Substring>) -> ([Int], [Int]) {
        var ids: [LineKey: Int] = [:]
        func id(_ line: Substring) -> Int {
            let key = LineKey(text: line)
            if let known = ids[key] { return known }
            ids[key] = ids.count
            return ids.count - 1
        }
        return (old.map(id), new.map(id))
    }

    /// A line hashed and compared by its bytes.
    private struct LineKey: Hashable {
        let text: Substring
        static func == (l: LineKey, r: LineKey) -> Bool { TextLines.sameBytes(l.text, r.text) }
        func hash(into hasher: inout Hasher) {
            let done: Void? = text.utf8.withContiguousStorageIfAvailable { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
            if done == nil { for byte in text.utf8 { hasher.combine(byte) } }
        }
    }

    /// Myers' greedy shortest edit script of `a` into `b`, removals before
    /// additions within a change; nil when it needs more than `maxDistance` edits.
    /// Keeps the frontier of every round (O(D²) numbers) to walk back the path.
    static func myers(_ a: [Int], _ b: [Int], maxDistance: Int) -> [DiffLine.Kind]? {
        let n = a.count, m = b.count
        let bound = min(n + m, maxDistance)
        let offset = bound + 1
        // frontier[offset + k]: the furthest x reached on diagonal k = x - y.
        var frontier = [Int](repeating: 0, count: 2 * bound + 3)
        var rounds: [[Int]] = []
        for d in 0...bound {
            rounds.append(Array(frontier[(offset - d)...(offset + d)]))
            for k in stride(from: -d, through: d, by: 2) {
                var x = takesDown(frontier, offset, k, d) ? frontier[offset + k + 1] : frontier[offset + k - 1] + 1
                var y = x - k
                while x < n, y < m, a[x] == b[y] { x += 1; y += 1 }
                frontier[offset + k] = x
                if x >= n, y >= m { return walkBack(rounds, n: n, m: m, d: d) }
            }
        }
        return nil
    }

    /// Whether diagonal k is best reached from k + 1 (an addition) rather than k - 1 (a removal).
    private static func takesDown(_ frontier: [Int], _ offset: Int, _ k: Int, _ d: Int) -> Bool {
        k == -d || (k != d && frontier[offset + k - 1] < frontier[offset + k + 1])
    }

    /// The script from the frontiers kept before each round, read from the end back.
    private static func walkBack(_ rounds: [[Int]], n: Int, m: Int, d last: Int) -> [DiffLine.Kind] {
        var script: [DiffLine.Kind] = []
        var x = n, y = m
        for d in stride(from: last, through: 1, by: -1) {
            // rounds[d] holds diagonals -d...d at index k + d.
            let before = rounds[d]
            let k = x - y
            let down = k == -d || (k != d && before[k - 1 + d] < before[k + 1 + d])
            let previousK = down ? k + 1 : k - 1
            let previousX = before[previousK + d]
            let previousY = previousX - previousK
            while x > previousX, y > previousY {
                script.append(.context)
                x -= 1; y -= 1
            }
            script.append(down ? .added : .removed)
            x = previousX
            y = previousY
        }
        script.append(contentsOf: repeatElement(.context, count: x))
        return script.reversed()
    }

    /// The ranges of steps shown: each change with up to `contextLines`
    /// unchanged lines on either side, changes closer than twice that merged.
    static func hunkRanges(_ steps: [Step]) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var i = 0
        while let change = steps[i...].firstIndex(where: { $0.kind != .context }) {
            var last = change
            var j = change + 1
            while j < steps.count {
                if steps[j].kind != .context {
                    last = j
                } else if j - last > 2 * contextLines {
                    break
                }
                j += 1
            }
            let end = min(steps.count, last + contextLines + 1)
            ranges.append(max(i, change - contextLines)..<end)
            i = end
        }
        return ranges
    }
}
