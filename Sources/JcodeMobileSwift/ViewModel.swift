import Observation

/// The jcode mobile core for a SwiftUI (or any Swift) host: observable view
/// state, `send` for what the person does, and a `PlatformAdapter` that
/// carries out the effects the core requests.
///
///     @State private var model = ViewModel(options: options, adapter: PhoneAdapter())
///
///     var body: some View {
///         ChromeView(node: model.chrome)                     // header, banners, composer
///         ForEach(model.messages) { row in MessageView(row: row) }   // one observable per row
///         Button("Pair") { model.send(.tapNode(id: "pair.submit")) }
///     }
///
/// What it publishes (`@Observable`), split so that a view is told only of
/// what it reads:
///
/// - `chrome`: the semantic tree of the current screen without the message
///   list's rows (the `chat.messages` node is there, childless).
/// - `messageList`: the `chat.messages` node's own fields (its scroll
///   position, its window of rows, "12 messages"), nil off the chat screen.
/// - `messages`: the list's rows, one `MessageRow` (an observable object)
///   each. The array changes only when rows come or go or move; a change
///   inside a row (a streamed delta, a tool's output) changes that row only.
/// - `tree`: the whole screen (the chrome with the rows in their list),
///   composed when read: a view reading it is told of any change.
/// - `state` (the domain state), `revision` and `screen`.
///
/// All of it moves once per call into the core that changed the state,
/// never for a call that changed nothing. The view model does not rebuild
/// the tree: after each change it asks the core what changed in the tree
/// (`JcodeMobileApp.treeChanges(since:)`) and applies those operations,
/// finding their nodes through an index, so a streamed delta costs the same
/// at 100 000 messages as at 10.
///
/// Threading. The core is not thread-safe per app; the view model is bound to
/// the main actor, so every call into the core, every change a view observes
/// and every `perform` of the adapter happens there, one at a time. The core
/// is synchronous and quick (a streamed delta costs microseconds): calling it
/// on the main actor is what it is built for.
@available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, *)
@MainActor
@Observable
public final class ViewModel {
    /// The domain state after the last change. Read from the core each time
    /// (a copy costs a few references): use it and let it go. A copy kept
    /// across a change makes the core copy what it changes, the transcript
    /// included, instead of writing it in place.
    public var state: AppState {
        access(keyPath: \.state)
        return app.state
    }

    /// The screen's tree without the message list's rows: what a delta in a
    /// message does not touch. Changes of the list node's own fields (its
    /// scroll position and window) are told to readers of `messageList`, not
    /// to readers of `chrome`.
    public var chrome: SemanticNode {
        access(keyPath: \.chrome)
        return chromeStorage
    }

    /// The message list's node (`chat.messages`) with its own fields and no
    /// children (they are `messages`); nil when the screen has no message list.
    public var messageList: SemanticNode? {
        access(keyPath: \.messageList)
        guard let listPath else { return nil }
        return chromeStorage.node(at: listPath[...])
    }

    /// The message list's rows in order, the ones the core's window holds (in
    /// and near the viewport). Replaced only when rows come, go or move.
    public private(set) var messages: [MessageRow] = []

    /// The semantic tree of the current screen: `chrome` with `messages` in
    /// the message list. Composed when read (a copy of references per row);
    /// a view reading it is told of every change.
    public var tree: SemanticNode {
        var root = chrome
        _ = messageList
        guard let listPath else { return root }
        let rows = messages
        root.modify(at: listPath[...]) { list in
            list.children.reserveCapacity(rows.count)
            for row in rows { list.children.append(row.node) }
        }
        return root
    }

    /// Increases by one on every change of `state`.
    public private(set) var revision: Int

    /// The screen the tree shows.
    public var screen: Screen {
        access(keyPath: \.screen)
        return currentScreen
    }

    /// The core itself, for what the view state does not carry (`logsJSON`,
    /// `snapshotDocument`, `changesJSON`). Calls on it must stay on the main actor.
    @ObservationIgnored public let app: JcodeMobileApp
    /// Carries out the effects; nil drops them (a preview, a test of the view
    /// state alone). Set it before the first `send`.
    @ObservationIgnored public var adapter: (any PlatformAdapter)?

    /// Effects not yet handed to the adapter and answers not yet fed to the
    /// core: one call's effects are all handed out before any answer runs.
    @ObservationIgnored private var effectQueue: [RequestedEffect] = []
    @ObservationIgnored private var effectHead = 0
    @ObservationIgnored private var eventQueue: [PlatformEvent] = []
    @ObservationIgnored private var eventHead = 0
    @ObservationIgnored private var draining = false

    // The tree, applied from the core's changes.
    @ObservationIgnored private var chromeStorage: SemanticNode
    /// Where `chat.messages` is in `chromeStorage` (child indexes from the root).
    @ObservationIgnored private var listPath: [Int]?
    /// The row holding each node id of the rows (the row's own id included).
    @ObservationIgnored private var rowOf: [String: MessageRow] = [:]
    /// The revision whose tree the view model holds.
    @ObservationIgnored private var treeRevision: Int
    @ObservationIgnored private var currentScreen: Screen
    /// How many times the view model took the whole tree after its first
    /// (the core kept no way from its revision, or an operation did not fit).
    @ObservationIgnored private(set) var resyncCount = 0

    /// A view model over `app` (a restored or scenario app), driving `adapter`.
    public init(app: JcodeMobileApp, adapter: (any PlatformAdapter)? = nil) {
        self.app = app
        self.adapter = adapter
        self.revision = app.state.revision
        self.currentScreen = app.state.navigation.screen
        self.chromeStorage = SemanticNode("root", .screen)
        treeRevision = app.state.revision
        resync(app.tree())
    }

    /// A view model over a new app made from `options` (a first launch by default).
    public convenience init(options: AppOptions = AppOptions(), adapter: (any PlatformAdapter)? = nil) {
        self.init(app: JcodeMobileApp(options: options), adapter: adapter)
    }

    /// Where the adapter delivers platform events (also handed to every `perform`).
    public var events: PlatformEventSink { PlatformEventSink(self) }

    // MARK: - Into the core

    /// What the person did: dispatches `action`, publishes the new view
    /// state, and hands the requested effects to the adapter.
    @discardableResult
    public func send(_ action: Action) -> DispatchReport {
        let report = publish(app.dispatch(action))
        drain()
        return report
    }

    /// `send`, named as a view event (Lattice's spelling).
    @discardableResult
    public func sendViewEvent(_ action: Action) -> DispatchReport {
        send(action)
    }

    /// What happened on the platform (an effect's answer, the app coming to
    /// the foreground, a push token). Fed to the core now, or, while effects
    /// are being handed out, right after them, in the order received.
    public func receive(_ event: PlatformEvent) {
        eventQueue.append(event)
        drain()
    }

    // MARK: - Where things are on screen

    /// What is at (x, y) of the viewport (points, origin top-left), as the
    /// core laid out the current tree: the same answer as
    /// `jcode_mobile_hit_test`. Send `.tapXY(x:y:)` to tap it.
    public func hitTest(x: Double, y: Double) -> SemanticTree.Hit? {
        SemanticTree.hitTest(tree, x: x, y: y)
    }

    /// The current screen as an SVG document (`jcode_mobile_screenshot_svg`).
    public func screenshotSVG() -> String {
        Screenshot.svg(tree, appearance: app.state.lifecycle.appearance, safeArea: app.viewport.safeArea)
    }

    // MARK: - The loop

    /// Hands out queued effects, then feeds queued answers, until both are empty.
    private func drain() {
        guard !draining else { return }
        draining = true
        defer {
            draining = false
            effectQueue.removeAll(keepingCapacity: true)
            effectHead = 0
            eventQueue.removeAll(keepingCapacity: true)
            eventHead = 0
        }
        while true {
            if effectHead < effectQueue.count {
                let request = effectQueue[effectHead]
                effectHead += 1
                adapter?.perform(request, events: events)
            } else if eventHead < eventQueue.count {
                let event = eventQueue[eventHead]
                eventHead += 1
                publish(app.platformEvent(event))
            } else {
                return
            }
        }
    }

    /// Publishes a call's result (only when the state changed) and queues its effects.
    @discardableResult
    private func publish(_ transition: Store.Transition) -> DispatchReport {
        let effects = transition.effects.map { RequestedEffect(id: $0.id, effect: $0.effect) }
        if transition.revision != revision {
            withMutation(keyPath: \.state) {}
            updateTree()
            let screen = app.state.navigation.screen
            if screen != currentScreen { withMutation(keyPath: \.screen) { currentScreen = screen } }
            revision = transition.revision
        }
        effectQueue.append(contentsOf: effects)
        return DispatchReport(revision: transition.revision, changed: transition.changed, effects: effects)
    }
}

// MARK: - Applying the core's tree changes

@available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, *)
extension ViewModel {
    private static let listID = Layout.messagesID

    /// Brings the tree to the core's revision: the operations since the one
    /// held, applied in order; the whole tree when the core cannot say (it
    /// kept no way from there) or an operation does not fit.
    private func updateTree() {
        guard let answer = app.treeChanges(since: treeRevision) else {
            treeRevision = app.state.revision
            resyncCount += 1
            resync(app.tree())
            return
        }
        switch answer {
        case .resync(let revision, let tree):
            treeRevision = revision
            resyncCount += 1
            resync(tree)
        case .changes(let revision, let changes):
            treeRevision = revision
            do {
                for change in changes { try apply(change) }
            } catch {
                resyncCount += 1
                resync(app.tree())
            }
        }
    }

    /// One operation, routed by its node: a row's (through the index), the
    /// list's (its rows or its own fields), or the chrome's.
    private func apply(_ change: TreeChange) throws(SemanticNode.ApplyError) {
        switch change {
        case .splice(let parent, let index, let removed, let inserted):
            if parent == Self.listID, listPath != nil {
                try spliceRows(at: index, removed: removed, inserted: inserted)
            } else if let row = rowOf[parent] {
                for node in row.children(of: parent, index..<(index + removed.count)) { forget(node) }
                try row.apply(change)
                for node in inserted { claim(node, for: row) }
            } else {
                try applyToChrome(change)
            }
        case .move(let id, let parent, let index):
            if parent == Self.listID, listPath != nil {
                try moveRow(id, to: index)
            } else if let row = rowOf[parent] {
                try row.apply(change)
            } else {
                try applyToChrome(change)
            }
        case .update(let id, _, _), .append(let id, _, _), .spans(let id, _, _):
            if id == Self.listID, let listPath {
                // The list's own fields: told to `messageList` readers only.
                var failure: SemanticNode.ApplyError?
                withMutation(keyPath: \.messageList) {
                    chromeStorage.modify(at: listPath[...]) { list in
                        do throws(SemanticNode.ApplyError) { try list.apply(change) } catch { failure = error }
                    }
                }
                if let failure { throw failure }
            } else if let row = rowOf[id] {
                try row.apply(change)
            } else {
                try applyToChrome(change)
            }
        }
    }

    private func spliceRows(at index: Int, removed: [String], inserted: [SemanticNode]) throws(SemanticNode.ApplyError) {
        guard index >= 0, index + removed.count <= messages.count else {
            throw .mismatch("splice at \(index) of \(messages.count) rows")
        }
        for (k, id) in removed.enumerated() where messages[index + k].id != id {
            throw .mismatch("splice removes \(id), found \(messages[index + k].id)")
        }
        for k in index..<(index + removed.count) { forget(messages[k].node) }
        var rows: [MessageRow] = []
        rows.reserveCapacity(inserted.count)
        for node in inserted {
            let row = MessageRow(node)
            claim(node, for: row)
            rows.append(row)
        }
        messages.replaceSubrange(index..<(index + removed.count), with: rows)
    }

    private func moveRow(_ id: String, to index: Int) throws(SemanticNode.ApplyError) {
        guard let from = messages.firstIndex(where: { $0.id == id }) else { throw .noNode(id) }
        guard index >= 0, index < messages.count else { throw .mismatch("move to \(index)") }
        var rows = messages
        let row = rows.remove(at: from)
        rows.insert(row, at: index)
        messages = rows
    }

    /// An operation on the chrome (never inside the list: that one is routed
    /// before). A subtree that brings the message list (the chat screen
    /// coming back) brings its rows, which become `messages`.
    private func applyToChrome(_ change: TreeChange) throws(SemanticNode.ApplyError) {
        var change = change
        var arrivingRows: [SemanticNode]?
        if case .splice(let parent, let index, let removed, var inserted) = change {
            for k in inserted.indices {
                if let path = inserted[k].path(of: Self.listID) {
                    inserted[k].modify(at: path[...]) { list in
                        arrivingRows = list.children
                        list.children = []
                    }
                }
            }
            change = .splice(parent: parent, index: index, removed: removed, inserted: inserted)
        }
        var failure: SemanticNode.ApplyError?
        withMutation(keyPath: \.chrome) {
            do throws(SemanticNode.ApplyError) { try chromeStorage.apply(change) } catch { failure = error }
        }
        if let failure { throw failure }
        switch change {
        case .update, .append, .spans: return
        case .splice, .move: break
        }
        // Children came, went or moved: the list may have moved, come or gone.
        let path = chromeStorage.path(of: Self.listID)
        if path != listPath { withMutation(keyPath: \.messageList) { listPath = path } }
        if path == nil {
            setRows([])
        } else if let arrivingRows {
            setRows(arrivingRows)
        }
    }

    /// Takes `tree` whole: the chrome, the list and the rows, each told only
    /// when it differs from what was held (rows are matched by id and keep
    /// their identity).
    private func resync(_ tree: SemanticNode) {
        var chrome = tree
        var rowNodes: [SemanticNode] = []
        let path = chrome.path(of: Self.listID)
        if let path {
            chrome.modify(at: path[...]) { list in
                rowNodes = list.children
                list.children = []
            }
        }
        if chrome != chromeStorage || path != listPath {
            withMutation(keyPath: \.chrome) {
                withMutation(keyPath: \.messageList) {
                    chromeStorage = chrome
                    listPath = path
                }
            }
        }
        setRows(rowNodes)
    }

    /// The rows become `nodes`: a row whose id is still there is kept (and
    /// told only if its node changed); the array is replaced only when the
    /// rows differ.
    private func setRows(_ nodes: [SemanticNode]) {
        var kept: [String: MessageRow] = [:]
        for row in messages { kept[row.id] = row }
        var rows: [MessageRow] = []
        rows.reserveCapacity(nodes.count)
        rowOf.removeAll(keepingCapacity: true)
        for node in nodes {
            let row: MessageRow
            if let old = kept.removeValue(forKey: node.id) {
                old.replace(with: node)
                row = old
            } else {
                row = MessageRow(node)
            }
            claim(node, for: row)
            rows.append(row)
        }
        if rows.count != messages.count || zip(rows, messages).contains(where: { $0 !== $1 }) { messages = rows }
    }

    /// Every node id of `node`'s subtree now belongs to `row`.
    private func claim(_ node: SemanticNode, for row: MessageRow) {
        rowOf[node.id] = row
        for child in node.children { claim(child, for: row) }
    }

    /// The node ids of `node`'s subtree belong to no row any more.
    private func forget(_ node: SemanticNode) {
        rowOf[node.id] = nil
        for child in node.children { forget(child) }
    }
}

extension SemanticNode {
    /// The child indexes from this node to the node `id` (empty: this one).
    func path(of id: String) -> [Int]? {
        if self.id == id { return [] }
        for (k, child) in children.enumerated() {
            if var path = child.path(of: id) {
                path.insert(k, at: 0)
                return path
            }
        }
        return nil
    }

    func node(at path: ArraySlice<Int>) -> SemanticNode {
        guard let first = path.first else { return self }
        return children[first].node(at: path.dropFirst())
    }

    /// Changes the node at `path` in place.
    mutating func modify(at path: ArraySlice<Int>, _ body: (inout SemanticNode) -> Void) {
        guard let first = path.first else { return body(&self) }
        children[first].modify(at: path.dropFirst(), body)
    }
}
