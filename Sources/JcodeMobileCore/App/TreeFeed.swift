/// The tree's counterpart of the change feed: what changed in the semantic
/// tree between revisions, as `TreeChange` operations
/// (`jcode_mobile_tree_changes`, the event stream's `tree_changed`).
///
/// The tree is built only when someone asks for it (`tree`, `hit_test`, a
/// screenshot, tree changes, a `tree` subscriber): inputs never pay for
/// it. Each time it is built at a new revision, it is diffed against the
/// last one built and the operations are kept as a step from that revision
/// to this one. The steps form a chain; a host holding the tree of a
/// revision on the chain gets the steps after it, one holding any other
/// (too old, never built, from the future) is told to resync. The window
/// keeps rows built before (`RowCache`), so a build after one streamed
/// delta builds one row, and a step is O(window), never O(conversation).
public struct TreeFeed {
    public struct Step: Sendable {
        public var from: Int
        public var to: Int
        public var changes: [TreeChange]
        var weight: Int
    }

    public enum Answer: Sendable {
        /// The operations from the asked revision to `revision`, in order
        /// (none when it is the current one).
        case changes(revision: Int, [TreeChange])
        /// The asked revision is not one the feed can start from: take the whole tree.
        // Indirect: both cases then have a small payload, and the tag is
        // never read from bytes the other case leaves unset (valgrind).
        indirect case resync(revision: Int, SemanticNode)
    }

    let viewport: SemanticTree.Viewport
    let cache = RowCache()
    /// The chrome last built and the state it was built from (`SemanticTree.chromeKey`):
    /// a change of the transcript or the scroll position alone rebuilds the list only.
    private var chrome: (key: AppState, chrome: SemanticTree.Chrome)?
    /// The tree last built and its revision.
    public private(set) var last: (revision: Int, tree: SemanticNode)?
    private var steps: [Step] = []
    private var head = 0
    private var weight = 0

    /// Steps kept at most, and their weight (operations, nodes and text bytes).
    public static let capacity = 256
    public static let weightBudget = 1 << 20

    init(viewport: SemanticTree.Viewport) {
        self.viewport = viewport
    }

    /// The tree of `state`, built when the revision moved since the last
    /// build (and the step to it recorded). `inPlace`: the store's record
    /// of transcript entries changed in place; when it covers the way from
    /// the last build, only their rows are built again (a streamed delta).
    mutating func tree(of state: AppState, inPlace: InPlaceChanges? = nil) -> SemanticNode {
        withUnsafePointer(to: state) { tree(of: $0, inPlace: inPlace) }
    }

    /// `tree(of:inPlace:)` of the state read in place: a streamed delta's
    /// patch reads the state where it is, never a copy of it.
    mutating func tree(of pointer: UnsafePointer<AppState>, inPlace: InPlaceChanges? = nil) -> SemanticNode {
        if let last, last.revision == pointer.pointee.revision { return last.tree }
        if let inPlace, let tree = patched(to: pointer, inPlace) { return tree }
        return built(pointer.pointee)
    }

    /// The tree of `state` built (its chrome when that changed), and the step to it recorded.
    private mutating func built(_ state: AppState) -> SemanticNode {
        let key = SemanticTree.chromeKey(state)
        if chrome?.key != key { chrome = (key, SemanticTree.chrome(state, viewport: viewport)) }
        let tree = SemanticTree.filled(chrome!.chrome, state, viewport: viewport, cache: cache)
        if let last, last.revision < state.revision {
            let changes = TreeChange.diff(from: last.tree, to: tree)
            record(Step(from: last.revision, to: state.revision, changes: changes, weight: Self.weight(of: changes)))
        } else {
            forget()
        }
        last = (state.revision, tree)
        return tree
    }

    /// Whether the chrome built from `state` is the one kept (debug builds
    /// check it for an in-place change). The store records a change in place
    /// only when no state section changed, but bookkeeping no section shows
    /// may have (a request id, the effect ledger's counter), so the key may
    /// differ while the chrome does not.
    private func chromeUnchanged(_ state: AppState) -> Bool {
        guard let chrome else { return false }
        if chrome.key == SemanticTree.chromeKey(state) { return true }
        let built = SemanticTree.chrome(state, viewport: viewport)
        return built.root == chrome.chrome.root && built.list?.index == chrome.chrome.list?.index
            && built.list?.frame == chrome.chrome.list?.frame
    }

    /// The last tree with the rows of the entries `inPlace` names built
    /// again (`Layout.patchMessages`), and the step to it recorded; nil
    /// when the record does not cover the way from the last build or the
    /// window must be laid out again.
    private mutating func patched(to state: UnsafePointer<AppState>, _ inPlace: InPlaceChanges) -> SemanticNode? {
        guard var (revision, tree) = last, inPlace.since <= revision, inPlace.to == state.pointee.revision,
              let list = chrome?.chrome.list
        else { return nil }
        assert(chromeUnchanged(state.pointee), "an in-place change reached the chrome")
        // The tree is changed in place: held only here while it is.
        last = nil
        let rows = MessageRows(state, width: list.frame.width)
        let scroll = tree.children[list.index].scroll
        let appended = inPlace.entries.count == 1 && inPlace.onlyTextAppended(inPlace.entries[0])
        guard let replaced = Layout.patchMessages(
            &tree.children[list.index], changedEntries: inPlace.entries, textAppended: appended, rows: rows, cache: cache)
        else {
            // Nothing was replaced: the tree is the last one.
            last = (revision, tree)
            return nil
        }
        var changes: [TreeChange] = []
        // What the diff of the whole tree finds: the list's scroll (its only
        // own field a patch changes), then the rows, in order.
        if tree.children[list.index].scroll != scroll {
            var own = tree.children[list.index]
            own.children = []
            changes.append(.update(id: own.id, fields: .scroll, node: own))
        }
        for update in replaced {
            switch update {
            case .replaced(let k, let old): TreeChange.diff(from: old, to: tree.children[list.index].children[k], into: &changes)
            case .patched(let ops):
                // The first (a streamed delta's only) is shared, not copied.
                if changes.isEmpty { changes = ops } else { changes.append(contentsOf: ops) }
            }
        }
        record(Step(from: revision, to: state.pointee.revision, changes: changes, weight: Self.weight(of: changes)))
        revision = state.pointee.revision
        last = (revision, tree)
        return tree
    }

    /// The operations from revision `since` to the tree of `state`.
    mutating func changes(since: Int, state: AppState, inPlace: InPlaceChanges? = nil) -> Answer {
        withUnsafePointer(to: state) { changes(since: since, state: $0, inPlace: inPlace) }
    }

    /// `changes(since:state:inPlace:)` of the state read in place.
    mutating func changes(since: Int, state: UnsafePointer<AppState>, inPlace: InPlaceChanges? = nil) -> Answer {
        let tree = tree(of: state, inPlace: inPlace)
        let revision = state.pointee.revision
        if since == revision { return .changes(revision: revision, []) }
        guard let first = stepIndex(from: since) else { return .resync(revision: revision, tree) }
        // One step (a host that follows every delta): its changes as they are kept, not copied.
        if first == steps.count &- 1 { return .changes(revision: revision, steps[first].changes) }
        var result: [TreeChange] = []
        for k in first..<steps.count { result.append(contentsOf: steps[k].changes) }
        return .changes(revision: revision, result)
    }

    /// The newest step, when it leads to `revision` (the `tree_changed` event of the call that just ran).
    func newestStep(to revision: Int) -> Step? {
        guard let step = steps.last, step.to == revision else { return nil }
        return step
    }

    private func stepIndex(from revision: Int) -> Int? {
        var k = steps.count
        while k > head {
            k &-= 1
            if steps[k].from == revision { return k }
            if steps[k].from < revision { return nil }
        }
        return nil
    }

    private mutating func record(_ step: Step) {
        steps.append(step)
        weight &+= step.weight
        while steps.count &- head > Self.capacity || (weight > Self.weightBudget && steps.count &- head > 1) {
            weight &-= steps[head].weight
            steps[head].changes = []
            head &+= 1
        }
        // Compact once the dropped steps are half the array.
        if head > 0 && head &* 2 >= steps.count {
            steps.removeFirst(head)
            head = 0
        }
    }

    private mutating func forget() {
        steps.removeAll()
        head = 0
        weight = 0
    }

    static func weight(of changes: [TreeChange]) -> Int {
        var w = 0
        for change in changes {
            switch change {
            case .splice(_, _, let removed, let inserted):
                w &+= 64 &+ removed.count &* 32
                for node in inserted { w &+= weight(of: node) }
            case .move: w &+= 64
            case .update(_, _, let node): w &+= 64 &+ weight(of: node)
            case .append(_, _, let text): w &+= 64 &+ text.utf8.count
            case .spans(_, _, let spans):
                w &+= 64
                for span in spans { w &+= 32 &+ span.text.utf8.count }
            }
        }
        return w
    }

    private static func weight(of node: SemanticNode) -> Int {
        var w = 128 &+ node.label.utf8.count &+ (node.value?.utf8.count ?? 0)
        for child in node.children { w &+= weight(of: child) }
        return w
    }
}
