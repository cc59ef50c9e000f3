import JcodeMobileJSON
import JcodeMobileWire

/// The whole app behind one handle, speaking JSON bytes in and out: what
/// every `jcode_mobile_*` function calls. Not thread-safe by itself; the FFI
/// layer serialises calls on a handle.
///
///     let app = try JcodeMobileApp(options: AppOptions())
///     let report = app.dispatch(json: #"{"type":"set_host","value":"devbox.local"}"#)
public final class JcodeMobileApp {
    // The stored properties a call reads and writes skip Swift's dynamic
    // exclusivity check (`@exclusivity(unchecked)`): calls on an app are
    // serialised (the FFI's lock, the view model's main actor) and none
    // re-enters the app, and the check costs about a hundred instructions
    // per access on every input (docs/PERFORMANCE.md, "Cheap inputs").
    @exclusivity(unchecked) public private(set) var store: Store
    public let options: AppOptions
    /// Parser stacks reused across calls (calls on an app are serialised).
    @exclusivity(unchecked) private var workspace = JSONParser.Workspace()
    /// The buffer reports are written into, reused across calls: the caller
    /// copies the bytes out before the next call, so it is never shared then.
    @exclusivity(unchecked) private var reportWriter = JSONWriter(capacity: 256)

    /// Whether calls record stream events for `takeEvents()`: the FFI turns
    /// it on while the app has subscribers, so an app without any pays nothing.
    @exclusivity(unchecked) public var collectsEvents = false {
        didSet { if !collectsEvents { pendingEvents.removeAll() } }
    }
    /// Whether calls that change the state record `tree_changed` events
    /// (a subscriber asked for the `tree` kind): each such call then builds
    /// the tree's window and diffs it.
    public var collectsTreeEvents = false {
        didSet { if collectsTreeEvents && !oldValue { _ = treeFeed.tree(of: store.state, inPlace: store.inPlace) } }
    }
    /// The tree last built, and what changed in it between revisions.
    public private(set) var treeFeed: TreeFeed
    /// `collectsEvents`, read here: another module's read of the stored
    /// property would pay the dynamic exclusivity check on every call.
    @inline(never) public var isCollectingEvents: Bool { collectsEvents }

    /// The `seq` the next stream event gets.
    public private(set) var nextEventSeq = 1
    private var pendingEvents: [StreamEvent] = []

    /// Whether the hot paths read their inputs straight from the tape (a
    /// frame of one server event, a keystroke). Tests turn it off to hold
    /// the shortcuts to the general decoder: the same reports, state,
    /// change records, log and events.
    @exclusivity(unchecked) var usesShortcuts = true

    /// Inputs larger than this are logged as a summary instead of in full.
    static let loggedPayloadLimit = TransitionLog.keptLimit

    public init(options: AppOptions) {
        self.options = options
        var state = options.scenario?.state() ?? AppState()
        if let restored = options.snapshot {
            restored.snapshot.restore(into: &state)
            if !restored.problems.isEmpty {
                state.notices.add(.warning, "Some saved data could not be restored: \(restored.problems.joined(separator: ", ")).")
            }
        }
        if let deviceID = options.deviceID { state.lifecycle.deviceID = deviceID }
        if let name = options.deviceName, state.pairing.deviceName.isEmpty { state.pairing.deviceName = name }
        store = Store(state: state, interactor: AppInteractor(viewport: options.viewport), logCapacity: options.logCapacity)
        if let problems = options.snapshot?.problems, !problems.isEmpty { store.logRestore(problems) }
        treeFeed = TreeFeed(viewport: options.viewport)
    }

    /// Creates an app from the bytes of `app_new`'s argument (nil for NULL).
    public convenience init(optionsJSON bytes: UnsafeBufferPointer<UInt8>?) throws(CoreError) {
        self.init(options: try AppOptions.parse(bytes))
    }

    public var state: AppState { store.state }

    // MARK: - Inputs

    // Every output is a `JSONWriter`: one malloc'd buffer the FFI hands to C
    // as is. The `[UInt8]`-returning forms are conveniences for Swift callers.

    /// `jcode_mobile_dispatch`: one action → the dispatch report or an error.
    public func dispatchDocument(_ bytes: UnsafeBufferPointer<UInt8>) -> JSONWriter {
        handle(bytes, kind: .action, union: Action.wire, shortcut: Self.keystroke) { Input.action($0) }
    }

    /// A keystroke read without the general decoder; it declares no secret.
    private static func keystroke(_ tape: JSONTape) -> (Action, type: String)? {
        Action.keystroke(in: tape).map { ($0, "set_draft") }
    }

    /// `jcode_mobile_platform_event`: one platform event → the dispatch report or an error.
    public func platformEventDocument(_ bytes: UnsafeBufferPointer<UInt8>) -> JSONWriter {
        // A raw frame of one server event, its envelope read without the tokenizer.
        if usesShortcuts, let envelope = FrameEnvelope(bytes),
           let read = oneEvent(
               ofLine: envelope.line, escaped: envelope.escaped, effectID: envelope.effectID.map(EffectID.init), exactEnvelope: true) {
            let transition = store.sendFrame(read, logged: Self.logPayload(of: bytes, type: PlatformEvent.webSocketEventType))
            if collectsEvents { recordEvents(of: transition) }
            return report(transition)
        }
        return handle(bytes, kind: .event, union: PlatformEvent.wire, readsFrames: true) { Input.platform($0) }
    }

    public func dispatch(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8] { dispatchDocument(bytes).bytes }
    public func platformEvent(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8] { platformEventDocument(bytes).bytes }

    public func dispatch(json: String) -> [UInt8] {
        var json = json
        return json.withUTF8 { dispatch($0) }
    }

    public func platformEvent(json: String) -> [UInt8] {
        var json = json
        return json.withUTF8 { platformEvent($0) }
    }

    // MARK: - Inputs as Swift values

    // For Swift hosts that link the core (the JcodeMobileSwift product): the
    // same transitions as `dispatch` and `platform_event`, without writing or
    // parsing JSON. The log records the input's type with no payload, so no
    // field of it (a pairing code, a token) can reach the log.

    /// One action → what it did (the revision and the effects to execute).
    @discardableResult
    public func dispatch(_ action: Action) -> Store.Transition {
        send(.action(action), kind: .action, type: action.typeName)
    }

    /// One platform event → what it did (the revision and the effects to execute).
    @discardableResult
    public func platformEvent(_ event: PlatformEvent) -> Store.Transition {
        send(.platform(event), kind: .event, type: event.typeName)
    }

    private func send(_ input: Input, kind: LogEntry.Kind, type: String) -> Store.Transition {
        let transition = store.send(input, logKind: kind, logType: type, logPayload: nil)
        if collectsEvents { recordEvents(of: transition) }
        return transition
    }

    /// `readsFrames`: a `websocket_event` of one server event is read by
    /// `frameEvent` (App/StreamedFrames.swift) and run by `Store.sendFrame`
    /// (the hot path of a reply).
    /// `shortcut`: a member read straight from the tape before the general
    /// decoder (and its type), when it declares no secret.
    private func handle<Value>(
        _ bytes: UnsafeBufferPointer<UInt8>, kind: LogEntry.Kind, union: WireUnion<Value>, readsFrames: Bool = false,
        shortcut: ((JSONTape) -> (Value, type: String)?)? = nil, input: (Value) -> Input
    ) -> JSONWriter {
        // The input runs while its tape is read (nothing of it is copied out
        // first); the store never reads the tape.
        var transition: Store.Transition?
        do throws(CoreError) {
            try JSONParser.withTape(bytes, workspace: &workspace) { (tape) throws(CoreError) in
                if readsFrames && usesShortcuts, let read = frameEvent(in: tape) {
                    transition = store.sendFrame(read, logged: Self.logPayload(of: bytes, type: PlatformEvent.webSocketEventType))
                    return
                }
                if usesShortcuts, let shortcut, let (value, type) = shortcut(tape) {
                    let payload = Self.logPayload(of: bytes, tape: tape, type: type, secrets: nil)
                    transition = store.send(input(value), logKind: kind, logType: type, logged: payload)
                    return
                }
                let (value, spec) = try union.decodeMember(tape: tape)
                let payload = Self.logPayload(of: bytes, tape: tape, type: spec.type, secrets: spec.hasSecrets ? spec.fields : nil)
                transition = store.send(input(value), logKind: kind, logType: spec.type, logged: payload)
            }
        } catch {
            store.logRejected(kind: kind, type: Self.typeName(in: bytes), error: error)
            return Self.errorDocument(error)
        }
        guard let transition else { preconditionFailure("a decoded input runs") }
        if collectsEvents { recordEvents(of: transition) }
        return report(transition)
    }

    /// An input that declares no secret as the log keeps it: as received,
    /// summarised above `loggedPayloadLimit`.
    private static func logPayload(of bytes: UnsafeBufferPointer<UInt8>, type: String) -> LoggedInput {
        if bytes.count > loggedPayloadLimit {
            return .payload(.json(["type": .string(type), "summary": .string(TransitionLog.summary(bytes: bytes.count))]))
        }
        return .bytes(bytes)
    }

    /// The input of member `type` as the log keeps it: as received,
    /// redacted when its member declares secrets (`secrets`: its fields),
    /// summarised above `loggedPayloadLimit`.
    private static func logPayload(
        of bytes: UnsafeBufferPointer<UInt8>, tape: JSONTape, type: String, secrets: [FieldSpec]?
    ) -> LoggedInput {
        if bytes.count <= loggedPayloadLimit, let secrets, case .object(let object) = tape.value(at: 0) {
            return .payload(.json(.object(Redaction.redact(object, fields: secrets))))
        }
        return logPayload(of: bytes, type: type)
    }

    // MARK: - Frames

    /// A raw frame's line, unescaped (the hot path's scratch, App/StreamedFrames.swift;
    /// a longer line takes the general way).
    let lineBuffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 4096)
    /// The tokens of that line, reused across calls.
    @exclusivity(unchecked) var lineWorkspace = JSONParser.Workspace()

    deinit { lineBuffer.deallocate() }

    // MARK: - The event stream

    /// The stream events of the calls since the last take, oldest first.
    public func takeEvents() -> [StreamEvent] {
        defer { pendingEvents.removeAll(keepingCapacity: true) }
        return pendingEvents
    }

    /// `state_changed`, the announced app events, then `effects_requested`.
    private func recordEvents(of transition: Store.Transition) {
        let revision = transition.revision
        func event(_ kind: StreamEvent.Kind, _ type: String, _ body: (inout JSONWriter) -> Void) {
            var w = JSONWriter(capacity: 96)
            w.objectStart()
            w.key("seq"); w.int(nextEventSeq)
            w.key("type"); w.string(type)
            w.key("revision"); w.int(revision)
            body(&w)
            w.objectEnd()
            pendingEvents.append(StreamEvent(kind: kind, seq: nextEventSeq, bytes: w.bytes))
            nextEventSeq &+= 1
        }
        if transition.changed {
            let ops = store.feed.newest(ofRevision: revision)?.ops
            event(.state, "state_changed") { w in
                if let ops {
                    w.key("ops"); w.raw(ops)
                } else {
                    w.key("resync"); w.bool(true)
                }
            }
            if collectsTreeEvents {
                let inPlace = store.inPlace
                _ = store.withState { treeFeed.tree(of: $0, inPlace: inPlace) }
                let step = treeFeed.newestStep(to: revision)
                event(.tree, "tree_changed") { w in
                    if let step {
                        w.key("since"); w.int(step.from)
                        w.key("ops"); Self.write(step.changes, to: &w)
                    } else {
                        w.key("resync"); w.bool(true)
                    }
                }
            }
        }
        for app in transition.events {
            event(.app, app.type) { w in
                for (key, value) in app.fields.entries { w.key(string: key); w.value(value) }
            }
        }
        if !transition.effects.isEmpty {
            event(.effects, "effects_requested") { w in
                w.key("effects")
                Self.writeEffects(of: transition, to: &w)
            }
        }
    }

    /// Records an input refused before it could be read (NULL, too large)
    /// and returns its error: every call on a handle is accounted for in the log.
    public func reject(_ error: CoreError, kind: LogEntry.Kind) -> JSONWriter {
        store.logRejected(kind: kind, type: "", error: error)
        return Self.errorDocument(error)
    }

    /// The input's `type`, when it can be read, for logging a rejected input.
    private static func typeName(in bytes: UnsafeBufferPointer<UInt8>) -> String {
        guard bytes.count <= loggedPayloadLimit, let value = try? JSONParser.parse(bytes),
              let type = value["type"]?.stringValue
        else { return "" }
        return String(type.prefix(64))
    }

    // MARK: - Outputs

    /// The transition's effects as the host receives them, a JSON array:
    /// the bytes the store encoded for the log when they hold no secret.
    private static func writeEffects(of transition: Store.Transition, to w: inout JSONWriter) {
        if let bytes = transition.effectsJSON {
            w.raw(bytes)
            return
        }
        w.arrayStart()
        for (id, effect) in transition.effects { effect.write(id: id, redacted: false, to: &w) }
        w.arrayEnd()
    }

    /// `{"ok":true,"revision":…,"effects":[…]}`: from fixed pieces and the
    /// effects the store encoded when none holds a secret (every call but
    /// one that sends a token or a password), else written into the reused
    /// buffer and copied out once, at its exact size.
    func report(_ transition: Store.Transition) -> JSONWriter {
        let refused = transition.notes.isEmpty ? nil : transition.notes.first(where: { $0.kind == .refused })?.text
        if refused == nil, let effects = transition.effectsJSON {
            // The common case (a streamed delta, a keystroke): assembled from fixed pieces.
            var w = JSONWriter(capacity: 45 &+ effects.count)
            w.beginFragment()
            w.fragment(#"{"ok":true,"revision":"#)
            w.fragment(integer: transition.revision)
            w.fragment(#","effects":"#)
            w.valueFollows()
            w.raw(effects)
            w.fragment("}")
            w.endFragment()
            return w
        }
        reportWriter.reset()
        reportWriter.objectStart()
        reportWriter.key("ok"); reportWriter.bool(true)
        reportWriter.key("revision"); reportWriter.int(transition.revision)
        reportWriter.key("effects")
        Self.writeEffects(of: transition, to: &reportWriter)
        if let refused { reportWriter.key("refused"); reportWriter.string(refused) }
        reportWriter.objectEnd()
        return JSONWriter(copying: reportWriter)
    }

    public static func errorDocument(_ error: CoreError) -> JSONWriter {
        var w = JSONWriter(capacity: 128)
        w.value(error.json)
        return w
    }

    public static func errorBytes(_ error: CoreError) -> [UInt8] { error.json.jsonBytes }

    /// `jcode_mobile_state`: `{"ok":true,"state":{…}}`.
    public func stateDocument() -> JSONWriter {
        var w = JSONWriter(capacity: 4096)
        w.objectStart()
        w.key("ok"); w.bool(true)
        w.key("state")
        store.state.writeJSON(to: &w)
        w.objectEnd()
        return w
    }

    /// `jcode_mobile_tree`: `{"ok":true,"revision":…,"tree":{…}}`.
    public func treeDocument() -> JSONWriter {
        let root = tree()
        var w = JSONWriter(capacity: 8192)
        w.objectStart()
        w.key("ok"); w.bool(true)
        w.key("revision"); w.int(store.state.revision)
        w.key("tree")
        root.write(to: &w)
        w.objectEnd()
        return w
    }

    /// `jcode_mobile_hit_test`: the node at (x, y) of the viewport, the ids
    /// from the root down to it, and what a `tap_xy` there would tap.
    /// `node` is null outside the viewport; a coordinate that is not a
    /// finite number is `invalid_field`.
    public func hitTestDocument(x: Double, y: Double) -> JSONWriter {
        for (name, value) in [("x", x), ("y", y)] where !value.isFinite {
            return Self.errorDocument(CoreError.notACoordinate(name, name: name, got: "\(value)"))
        }
        let hit = SemanticTree.hitTest(tree(), x: x, y: y)
        var w = JSONWriter(capacity: 512)
        w.objectStart()
        w.key("ok"); w.bool(true)
        w.key("revision"); w.int(store.state.revision)
        w.key("node")
        if let node = hit?.node {
            w.objectStart()
            w.key("id"); w.string(node.id)
            w.key("role"); w.string(node.role.rawValue)
            w.key("label"); w.string(node.label)
            w.key("value"); w.string(node.value)
            w.key("enabled"); w.bool(node.enabled)
            w.key("supported_actions")
            w.arrayStart()
            for action in node.supportedActions { w.string(action) }
            w.arrayEnd()
            // On the screen (a message's bounds in the tree are the list's content coordinates).
            let bounds = hit!.screenBounds
            w.key("bounds")
            w.objectStart()
            w.key("x"); w.int(bounds.x)
            w.key("y"); w.int(bounds.y)
            w.key("width"); w.int(bounds.width)
            w.key("height"); w.int(bounds.height)
            w.objectEnd()
            w.objectEnd()
        } else {
            w.null()
        }
        w.key("path")
        w.arrayStart()
        for node in hit?.path ?? [] { w.string(node.id) }
        w.arrayEnd()
        w.key("tap_target"); w.string(hit?.tappable?.id)
        w.objectEnd()
        return w
    }

    /// `jcode_mobile_screenshot_svg`: the current screen as an SVG document.
    public func screenshotDocument() -> JSONWriter {
        let root = tree()
        let svg = Screenshot.svg(root, appearance: state.lifecycle.appearance, safeArea: viewport.safeArea)
        var w = JSONWriter(capacity: svg.utf8.count + 128)
        w.objectStart()
        w.key("ok"); w.bool(true)
        w.key("revision"); w.int(store.state.revision)
        w.key("format"); w.string("svg")
        w.key("width"); w.int(root.bounds.width)
        w.key("height"); w.int(root.bounds.height)
        w.key("svg"); w.string(svg)
        w.objectEnd()
        return w
    }

    /// `jcode_mobile_logs`: the last `limit` transitions (0: all retained), oldest first.
    public func logsDocument(limit: Int) -> JSONWriter {
        let entries = store.log.recent(limit == 0 ? store.log.capacity : limit)
        var w = JSONWriter(capacity: 1024)
        w.objectStart()
        w.key("ok"); w.bool(true)
        w.key("capacity"); w.int(store.log.capacity)
        w.key("next_seq"); w.int(store.log.nextSeq)
        w.key("entries")
        w.arrayStart()
        for entry in entries { entry.write(to: &w) }
        w.arrayEnd()
        w.objectEnd()
        return w
    }

    /// `jcode_mobile_changes`: what changed after revision `since`, or the
    /// whole state when the feed cannot say.
    ///
    ///     {"ok":true,"revision":12,"since":10,"changes":[{"revision":11,"ops":[…]},{"revision":12,"ops":[…]}]}
    ///     {"ok":true,"revision":12,"since":3,"resync":true,"state":{…}}
    public func changesDocument(since: UInt64) -> JSONWriter {
        let current = store.state.revision
        let answer = since > UInt64(Int.max) ? .resync : store.feed.changes(since: Int(since), current: current)
        var w = JSONWriter(capacity: 256)
        w.objectStart()
        w.key("ok"); w.bool(true)
        w.key("revision"); w.int(current)
        w.key("since"); w.uint(since)  // echoed exactly as passed, whatever its size
        switch answer {
        case .changes(let records):
            w.key("changes")
            w.arrayStart()
            for record in records {
                w.objectStart()
                w.key("revision"); w.int(record.revision)
                w.key("ops")
                w.raw(record.ops ?? [])
                w.objectEnd()
            }
            w.arrayEnd()
        case .resync:
            w.key("resync"); w.bool(true)
            w.key("state")
            store.state.writeJSON(to: &w)
        }
        w.objectEnd()
        return w
    }

    /// `jcode_mobile_snapshot`: `{"ok":true,"snapshot":{…}}`, what
    /// `app_new({"snapshot": …})` restores.
    public func snapshotDocument() -> JSONWriter {
        var w = JSONWriter(capacity: 512)
        w.objectStart()
        w.key("ok"); w.bool(true)
        w.key("snapshot"); w.value(Snapshot(of: store.state).json)
        w.objectEnd()
        return w
    }

    public func stateJSON() -> [UInt8] { stateDocument().bytes }
    public func treeJSON() -> [UInt8] { treeDocument().bytes }
    public func logsJSON(limit: Int) -> [UInt8] { logsDocument(limit: limit).bytes }
    public func changesJSON(since: UInt64) -> [UInt8] { changesDocument(since: since).bytes }

    /// The tree of the current revision as a value: built at most once per
    /// revision, reusing the rows of the last build.
    public func tree() -> SemanticNode { treeFeed.tree(of: store.state, inPlace: store.inPlace) }

    /// The viewport the tree is laid out for (app_new's `viewport` option).
    public var viewport: SemanticTree.Viewport { treeFeed.viewport }

    /// What changed in the tree after revision `since` (a revision whose tree
    /// the caller holds: from `tree()` or an earlier answer), or the whole
    /// tree when the feed cannot say. nil for a `since` after the current revision.
    public func treeChanges(since: Int) -> TreeFeed.Answer? {
        guard since <= store.state.revision else { return nil }
        return treeFeed.changes(since: since, state: store.state, inPlace: store.inPlace)
    }

    /// `jcode_mobile_tree_changes`: the tree's operations after revision
    /// `since`, or the whole tree when the feed cannot describe the way.
    ///
    ///     {"ok":true,"revision":12,"since":10,"ops":[{"op":"append","id":"message.m7","field":"value","text":"lo"},…]}
    ///     {"ok":true,"revision":12,"since":3,"resync":true,"tree":{…}}
    ///
    /// A `since` after the current revision is `invalid_field`.
    public func treeChangesDocument(since: UInt64) -> JSONWriter {
        let current = store.state.revision
        if since > UInt64(current) {
            return Self.errorDocument(CoreError(
                .invalidField, "since_revision \(since) is after the current revision \(current)", field: "since_revision"))
        }
        let inPlace = store.inPlace
        let answer = store.withState { treeFeed.changes(since: Int(since), state: $0, inPlace: inPlace) }
        var w = JSONWriter(capacity: 256)
        w.objectStart()
        w.key("ok"); w.bool(true)
        w.key("revision"); w.int(current)
        w.key("since"); w.uint(since)
        switch answer {
        case .changes(_, let changes):
            w.key("ops"); Self.write(changes, to: &w)
        case .resync(_, let tree):
            w.key("resync"); w.bool(true)
            w.key("tree"); tree.write(to: &w)
        }
        w.objectEnd()
        return w
    }

    static func write(_ changes: [TreeChange], to w: inout JSONWriter) {
        w.arrayStart()
        // In place: each change written where it is, not copied out first.
        changes.withUnsafeBufferPointer { changes in
            for i in changes.indices { changes[i].write(to: &w) }
        }
        w.arrayEnd()
    }
}
