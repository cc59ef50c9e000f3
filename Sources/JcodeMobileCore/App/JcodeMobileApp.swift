/// The whole app behind one handle, speaking JSON bytes in and out: what
/// every `jcode_mobile_*` function calls. Not thread-safe by itself; the FFI
/// layer serialises calls on a handle.
///
///     let app = try JcodeMobileApp(options: AppOptions())
///     let report = app.dispatch(json: #"{"type":"set_host","value":"devbox.local"}"#)
public final class JcodeMobileApp {
    public private(set) var store: Store
    public let options: AppOptions
    /// Parser stacks reused across calls (calls on an app are serialised).
    private var workspace = JSONParser.Workspace()

    /// Inputs larger than this are logged as a summary instead of in full.
    static let loggedPayloadLimit = 4096

    public init(options: AppOptions) {
        self.options = options
        var state = options.scenario?.state() ?? AppState()
        if let deviceID = options.deviceID { state.lifecycle.deviceID = deviceID }
        if let name = options.deviceName, state.pairing.deviceName.isEmpty { state.pairing.deviceName = name }
        store = Store(state: state, logCapacity: options.logCapacity)
    }

    /// Creates an app from the bytes of `app_new`'s argument (nil for NULL).
    public convenience init(optionsJSON bytes: UnsafeBufferPointer<UInt8>?) throws(CoreError) {
        self.init(options: try AppOptions.parse(bytes))
    }

    public var state: AppState { store.state }

    // MARK: - Inputs

    /// `jcode_mobile_dispatch`: one action → the dispatch report or an error.
    public func dispatch(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        handle(bytes, kind: .action, union: Action.wire) { Input.action($0) }
    }

    /// `jcode_mobile_platform_event`: one platform event → the dispatch report or an error.
    public func platformEvent(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        handle(bytes, kind: .event, union: PlatformEvent.wire) { Input.platform($0) }
    }

    public func dispatch(json: String) -> [UInt8] {
        var json = json
        return json.withUTF8 { dispatch($0) }
    }

    public func platformEvent(json: String) -> [UInt8] {
        var json = json
        return json.withUTF8 { platformEvent($0) }
    }

    private func handle<Value>(
        _ bytes: UnsafeBufferPointer<UInt8>, kind: LogEntry.Kind, union: WireUnion<Value>, input: (Value) -> Input
    ) -> [UInt8] {
        let value: JSONValue
        let decoded: Value
        do throws(CoreError) {
            value = try JSONParser.parse(bytes, workspace: &workspace)
            decoded = try union.decode(value)
        } catch {
            store.logRejected(kind: kind, type: Self.typeName(in: bytes), error: error)
            return Self.errorBytes(error)
        }
        guard case .object(let object) = value else { return Self.errorBytes(CoreError(.internal, "decoded a non-object")) }
        let type = object["type"]?.stringValue ?? ""
        let payload: JSONValue =
            bytes.count > Self.loggedPayloadLimit
            ? ["type": .string(type), "summary": .string("\(bytes.count) bytes, not kept in the log")]
            : .object(union.redact(object))
        let transition = store.send(input(decoded), logKind: kind, logType: type, logPayload: payload)
        return Self.report(transition)
    }

    /// Records an input refused before it could be read (NULL, too large)
    /// and returns its error: every call on a handle is accounted for in the log.
    public func reject(_ error: CoreError, kind: LogEntry.Kind) -> [UInt8] {
        store.logRejected(kind: kind, type: "", error: error)
        return Self.errorBytes(error)
    }

    /// The input's `type`, when it can be read, for logging a rejected input.
    private static func typeName(in bytes: UnsafeBufferPointer<UInt8>) -> String {
        guard bytes.count <= loggedPayloadLimit, let value = try? JSONParser.parse(bytes),
              let type = value["type"]?.stringValue
        else { return "" }
        return String(type.prefix(64))
    }

    // MARK: - Outputs

    /// `{"ok":true,"revision":…,"effects":[…]}`
    static func report(_ transition: Store.Transition) -> [UInt8] {
        var w = JSONWriter(capacity: 64)
        w.objectStart()
        w.key("ok"); w.bool(true)
        w.key("revision"); w.int(transition.revision)
        w.key("effects")
        w.arrayStart()
        for (id, effect) in transition.effects { w.value(effect.json(id: id)) }
        w.arrayEnd()
        w.objectEnd()
        return w.bytes
    }

    public static func errorBytes(_ error: CoreError) -> [UInt8] { error.json.jsonBytes }

    /// `jcode_mobile_state`: `{"ok":true,"state":{…}}`.
    public func stateJSON() -> [UInt8] {
        var w = JSONWriter(capacity: 4096)
        w.objectStart()
        w.key("ok"); w.bool(true)
        w.key("state")
        store.state.writeJSON(to: &w)
        w.objectEnd()
        return w.bytes
    }

    /// `jcode_mobile_tree`: `{"ok":true,"revision":…,"tree":{…}}`.
    public func treeJSON() -> [UInt8] {
        let root = SemanticTree.build(store.state, viewport: options.viewport)
        var w = JSONWriter(capacity: 8192)
        w.objectStart()
        w.key("ok"); w.bool(true)
        w.key("revision"); w.int(store.state.revision)
        w.key("tree")
        root.write(to: &w)
        w.objectEnd()
        return w.bytes
    }

    /// `jcode_mobile_logs`: the last `limit` transitions (0: all retained), oldest first.
    public func logsJSON(limit: Int) -> [UInt8] {
        let entries = store.log.recent(limit == 0 ? store.log.capacity : limit)
        var w = JSONWriter(capacity: 1024)
        w.objectStart()
        w.key("ok"); w.bool(true)
        w.key("capacity"); w.int(store.log.capacity)
        w.key("next_seq"); w.int(store.log.nextSeq)
        w.key("entries")
        w.arrayStart()
        for entry in entries { w.value(entry.json) }
        w.arrayEnd()
        w.objectEnd()
        return w.bytes
    }

    /// `jcode_mobile_changes`: what changed after revision `since`, or the
    /// whole state when the feed cannot say.
    ///
    ///     {"ok":true,"revision":12,"since":10,"changes":[{"revision":11,"ops":[…]},{"revision":12,"ops":[…]}]}
    ///     {"ok":true,"revision":12,"since":3,"resync":true,"state":{…}}
    public func changesJSON(since: UInt64) -> [UInt8] {
        let current = store.state.revision
        let answer = since > UInt64(Int.max) ? .resync : store.feed.changes(since: Int(since), current: current)
        var w = JSONWriter(capacity: 256)
        w.objectStart()
        w.key("ok"); w.bool(true)
        w.key("revision"); w.int(current)
        w.key("since"); w.int(Int64(truncatingIfNeeded: since))
        switch answer {
        case .changes(let records):
            w.key("changes")
            w.arrayStart()
            for record in records {
                w.objectStart()
                w.key("revision"); w.int(record.revision)
                w.key("ops")
                w.arrayStart()
                for op in record.ops ?? [] { op.write(to: &w) }
                w.arrayEnd()
                w.objectEnd()
            }
            w.arrayEnd()
        case .resync:
            w.key("resync"); w.bool(true)
            w.key("state")
            store.state.writeJSON(to: &w)
        }
        w.objectEnd()
        return w.bytes
    }

    /// The tree as a value (tests and tools).
    public func tree() -> SemanticNode { SemanticTree.build(store.state, viewport: options.viewport) }
}
