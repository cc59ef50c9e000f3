import JcodeMobileJSON

/// Runs the loop: hands each input to the root interactor, follows up the
/// inputs it emits, assigns `effect_id`s and settles answered effects in the
/// ledger, bumps `revision` once per input that changed the state, and logs
/// the transition (one entry per host call, naming the follow-ups it ran).
public struct Store: Sendable {
    public private(set) var state: AppState
    public private(set) var log: TransitionLog
    /// What changed at each revision (`jcode_mobile_changes`).
    public private(set) var feed: ChangeFeed
    let interactor: AppInteractor
    /// The snapshot last written (or restored); nil when the store does not
    /// persist (spec tests that look at one feature's effects).
    public var persisted: Snapshot? { persists ? written.snapshot : nil }
    /// The same, with each member's JSON kept for the next write (not an
    /// optional: reading it never copies it).
    private var written: Snapshot.Written
    private let persists: Bool
    /// Whether an input of the running call could have changed the snapshot
    /// (the streamed deltas cannot: see `AppRouter.Delivery.mayChangeSnapshot`).
    private var callMayChangeSnapshot = false
    /// The haptics this call already asked for: one call (a frame of many
    /// events) buzzes once per style, however many events wanted it.
    private var hapticsThisCall: [Effect] = []
    /// Where this call's local notification for each session is in its
    /// effects: a later one for the same session takes its place, so a
    /// frame of many turns and questions asks for one notification per
    /// session, saying the latest (the host would replace the earlier anyway).
    private var notificationsThisCall: [(sessionID: String?, index: Int)] = []
    /// The app events of the running call.
    private var announced: [AppEvent] = []
    /// The features the running call's inputs reached (`FeatureID.bit`): the
    /// change feed compares only the sections that read their slices.
    private var reached: UInt32 = 0
    /// The state as the previous call left it, without the transcript (which
    /// records its own changes): what a call's state is compared with. It is
    /// brought up to date only in the slices a call reached, and only when
    /// one of their sections changed, so a call that changes nothing
    /// visible (or one field of one feature) does not copy the whole state.
    private var shadow: AppState
    /// The revisions through which only transcript entries changed, in
    /// place (the tree's rows of other entries stay as they were built:
    /// `TreeFeed` replaces the changed ones only).
    public private(set) var inPlace: InPlaceChanges?
    /// The transcript changes of the running call (the storage is reused).
    private var drained: [TranscriptChange] = []
    /// The secret values the core holds: text that repeats one is masked as
    /// it enters and where the core composes words (`SecretValues`). Never
    /// in the state: it is not encoded anywhere.
    public private(set) var secrets = SecretValues()
    /// How far the streamed entry's text and reasoning were scanned for
    /// secrets with no secret's first bytes left open at the end: the next
    /// delta is then scanned alone (`maskStreamed`).
    private var scannedText: StreamedTail?
    private var scannedReasoning: StreamedTail?
    /// Whether the running call masked anything (its log copy is then checked too).
    private var maskedThisCall = false

    /// How deep follow-ups may nest (a follow-up of a follow-up …) before the
    /// store stops following: a guard against a feature loop, never reached
    /// by the app's features.
    static let followUpDepthLimit = 16

    public init(
        state: AppState, interactor: AppInteractor = AppInteractor(), logCapacity: Int = TransitionLog.defaultCapacity,
        persists: Bool = true
    ) {
        self.state = state
        self.interactor = interactor
        self.log = TransitionLog(capacity: logCapacity)
        self.feed = ChangeFeed(state: state)
        self.shadow = state.withoutTranscript
        self.persists = persists
        self.written = Snapshot.Written(Snapshot(of: state))
        learnSecrets(reaching: FeatureID.servers.bit | FeatureID.pairing.bit)
    }

    /// What one input did.
    public struct Transition: Equatable, Sendable {
        public var revision: Int
        public var changed: Bool
        public var effects: [(id: EffectID, effect: Effect)]
        public var notes: [Note]
        /// The inputs the features emitted and the store ran after the
        /// host's (server events unpacked from a frame excepted), in order.
        public var followUps: [Input]
        /// What the features announced, in order, then the connection's
        /// phase change when the call moved it (the event stream's app events).
        public var events: [AppEvent] = []
        /// `effects` as the host receives them, a JSON array, when that is
        /// also what the log keeps (none holds a secret): the report and the
        /// event stream copy it instead of encoding the effects again.
        var effectsJSON: [UInt8]? = nil

        public static func == (lhs: Transition, rhs: Transition) -> Bool {
            lhs.revision == rhs.revision && lhs.changed == rhs.changed && lhs.notes == rhs.notes && lhs.followUps == rhs.followUps
                && lhs.events == rhs.events
                && lhs.effects.elementsEqual(rhs.effects, by: { $0.id == $1.id && $0.effect == $1.effect })
        }
    }

    /// Applies `input` and everything it leads to. The revision moves when
    /// the state's JSON changed, and the change feed records how.
    ///
    /// - Parameters:
    ///   - input: what the host sent (decoded).
    ///   - logKind, logType, logPayload: how the transition is logged (the payload already redacted).
    @discardableResult
    public mutating func send(
        _ input: Input, logKind: LogEntry.Kind = .action, logType: String = "", logPayload: LogPayload? = nil
    ) -> Transition {
        send(input, logKind: logKind, logType: logType, logged: .payload(logPayload))
    }

    /// Runs `body` with the state read in place (a reader that would
    /// otherwise be handed a copy: the tree feed after each delta).
    mutating func withState<Result>(_ body: (UnsafePointer<AppState>) -> Result) -> Result {
        withUnsafePointer(to: &state, body)
    }

    /// `send`, with the input as the log keeps it given as `LoggedInput`.
    mutating func send(_ input: Input, logKind: LogEntry.Kind, logType: String, logged: LoggedInput) -> Transition {
        var effects: [(id: EffectID, effect: Effect)] = []
        var notes: [Note] = []
        var scrubs: [JSONPath] = []
        var followUps: [Input] = []
        beginCall()
        var input = input
        if case .action(.respondStdin(let id, let answer)) = input {
            let isPassword = state.approvals.stdinRequests.first(where: { $0.requestID == id })?.isPassword ?? false
            secrets.learnAnswer(answer, isPassword: isPassword)
        }
        // The server's words in a platform result (a frame's events are masked one by one as they run).
        if !secrets.isEmpty, case .platform(let event) = input, !event.isWebSocketEvent, let masked = secrets.masking(event) {
            input = .platform(masked)
            maskedThisCall = true
        }
        run(input, effects: &effects, notes: &notes, scrubs: &scrubs, followUps: &followUps, depth: 0)
        return finishCall(
            effects: &effects, notes: notes, scrubs: scrubs, followUps: followUps, logKind: logKind, logType: logType,
            logged: logged)
    }

    /// A `websocket_event` of one server event, as the hot path read it
    /// (App/StreamedFrames.swift): the transition
    /// `send(.platform(.webSocket(.event(effectID:, items: [.event(event)]))))`
    /// makes, with the same log entry, change record and report. For the
    /// current socket, streamed text (which `AppRouter` routes to the chat's
    /// stream alone) is handed to the chat without a `ServerEvent`, and any
    /// other event runs as the follow-up the frame would make of it, without
    /// the frame built and delivered; a frame of another socket is sent whole.
    /// A streamed read's `exact`: the input holds nothing a server wrote
    /// but the streamed text (a frame of the exact canonical shape), so the
    /// log's copy needs no scan for secrets of its own when the text held none.
    @discardableResult @inline(__always)
    mutating func sendFrame(_ read: FrameRead, logged: LoggedInput) -> Transition {
        switch read {
        case .streamed(let effectID, let text, let exact):
            guard ConnectionInteractor.acceptsFrame(state.connection, effectID: effectID) else {
                return send(
                    .platform(.webSocket(.event(effectID: effectID, items: [.event(text.event)]))), logKind: .event,
                    logType: PlatformEvent.webSocketEventType, logged: logged)
            }
            return stream(AppRouter.route(text), logged: logged, loggedIsText: exact)
        case .event(let effectID, let event):
            guard ConnectionInteractor.acceptsFrame(state.connection, effectID: effectID) else {
                return send(
                    .platform(.webSocket(.event(effectID: effectID, items: [.event(event)]))), logKind: .event,
                    logType: PlatformEvent.webSocketEventType, logged: logged)
            }
            guard case .one(.chatStream(let streamed)) = AppRouter.route(event) else { return run(event, logged: logged) }
            return stream(streamed, logged: logged)
        }
    }

    /// The frame's one event, for the current socket, run as what the frame
    /// becomes: the connection's frame delivery (which reaches no slice and
    /// leaves the snapshot) hands it on as the follow-up `.server(event)`,
    /// at depth 1. The same transition, without the frame built and routed.
    private mutating func run(_ event: ServerEvent, logged: LoggedInput) -> Transition {
        var effects: [(id: EffectID, effect: Effect)] = []
        var notes: [Note] = []
        var scrubs: [JSONPath] = []
        var followUps: [Input] = []
        beginCall()
        run(.server(event), effects: &effects, notes: &notes, scrubs: &scrubs, followUps: &followUps, depth: 1)
        return finishCall(
            effects: &effects, notes: notes, scrubs: scrubs, followUps: followUps, logKind: .event,
            logType: PlatformEvent.webSocketEventType, logged: logged)
    }

    /// The frame's one event, for the current socket, handed to the chat's stream.
    private mutating func stream(_ stream: ChatInteractor.Stream, logged: LoggedInput, loggedIsText: Bool = false) -> Transition {
        var effects: [(id: EffectID, effect: Effect)] = []
        var notes: [Note] = []
        var scrubs: [JSONPath] = []
        var followUps: [Input] = []
        beginCall()
        // What `run` does with the frame's one event (a follow-up of depth 1).
        reached = FeatureID.chat.bit
        let stream = secrets.isEmpty ? stream : masked(stream)
        let emission = ChatInteractor.stream(&state.chat, stream)
        if !emission.isNone {
            apply(emission, effects: &effects, notes: &notes, scrubs: &scrubs, followUps: &followUps, depth: 1)
        }
        // A stream writes the transcript (which journals its changes) and the
        // turn, nothing else (`AppRouter.Delivery.chatStream`): with the turn
        // as it was and nothing else reached, no compared section changed.
        let sectionsUnchanged = reached == FeatureID.chat.bit && state.chat.turn == shadow.chat.turn
        return finishCall(
            effects: &effects, notes: notes, scrubs: scrubs, followUps: followUps, logKind: .event,
            logType: PlatformEvent.webSocketEventType, logged: logged, sectionsUnchanged: sectionsUnchanged,
            loggedIsText: loggedIsText)
    }

    /// Forgets what the previous call collected.
    private mutating func beginCall() {
        callMayChangeSnapshot = false
        if !hapticsThisCall.isEmpty { hapticsThisCall.removeAll(keepingCapacity: true) }
        if !notificationsThisCall.isEmpty { notificationsThisCall.removeAll(keepingCapacity: true) }
        if !announced.isEmpty { announced.removeAll(keepingCapacity: true) }
        reached = 0
        maskedThisCall = false
    }

    /// After a call's inputs ran: the phase event, the snapshot, the change
    /// record and the revision, the log entry.
    private mutating func finishCall(
        effects: inout [(id: EffectID, effect: Effect)], notes: [Note], scrubs: [JSONPath], followUps: [Input],
        logKind: LogEntry.Kind, logType: String, logged: LoggedInput, sectionsUnchanged: Bool = false,
        loggedIsText: Bool = false
    ) -> Transition {
        if reached & Self.secretHolders != 0 { learnSecrets(reaching: reached) }
        var logged = logged
        if !secrets.isEmpty && (!loggedIsText || maskedThisCall) { logged = masked(logged) }
        if reached & FeatureID.connection.bit != 0 && shadow.connection.phase != state.connection.phase {
            announced.append(.connectionPhaseChanged(from: shadow.connection.phase, to: state.connection.phase))
        }
        let wroteSnapshot = callMayChangeSnapshot && persist(effects: &effects)

        let reset = state.chat.transcript.drainChanges(into: &drained)
        let (sections, encoded) = Self.compare(
            &state, with: &shadow, reaching: sectionsUnchanged ? 0 : reached, transcript: (drained, reset), into: &feed)
        assert(!sectionsUnchanged || state.changedSections(from: shadow, reaching: reached) == 0, "a stream changed a section")
        // The slices read by the sections that changed are now what the next
        // call compares with. (A slice that changed in nothing a section
        // shows stays as it was: the ledger's id counter, say, so its box is
        // not copied again by the next effect.)
        if sections != 0 { shadow.takeSlices(StateSection.features(of: sections) & reached, from: state) }
        let changed: Bool
        if case .nothing = encoded { changed = false } else { changed = true }
        if changed {
            state.revision &+= 1
            feed.record(revision: state.revision, encoded)
            if sectionsUnchanged && !reset { InPlaceChanges.extend(&inPlace, to: state.revision, drained) } else { inPlace = nil }
        }
        // Emptied for the next call, its storage kept (a delta's record keeps
        // the one change, not the array). One change, the common case, is
        // taken off the end: cheaper than the general removal.
        if drained.count == 1 { drained.removeLast() } else { drained.removeAll(keepingCapacity: true) }
        for path in scrubs { feed.scrub(path) }

        let revision = state.revision
        // The effects as the log keeps them, encoded once; without a secret
        // among them, the same bytes are what the host receives.
        // Past `TransitionLog.keptLimit`, the log keeps a summary of each large effect.
        var loggedEffects = LogEntry.noEffects
        var effectsJSON: [UInt8]? = loggedEffects
        if !effects.isEmpty {
            let (bytes, secret, logged) = encode(effects, wroteSnapshot: wroteSnapshot)
            loggedEffects = logged ?? bytes
            effectsJSON = secret ? nil : bytes
        }
        log.append(logged) { seq, payload in
            LogEntry(
                seq: seq, revision: revision, kind: logKind, type: logType, payload: payload,
                effectsJSON: loggedEffects, notes: notes.isEmpty ? [] : notes.map(\.text),
                followUps: followUps.isEmpty ? [] : followUps.map(\.name), errorCode: nil)
        }
        return Transition(
            revision: revision, changed: changed, effects: effects, notes: notes, followUps: followUps, events: announced,
            effectsJSON: effectsJSON)
    }

    /// The sections whose values changed from `shadow` to `state` among
    /// those of the `reached` features, and the change record: the two
    /// states read in place, by address (neither is copied).
    private static func compare(
        _ state: inout AppState, with shadow: inout AppState, reaching reached: UInt32,
        transcript: (changes: [TranscriptChange], reset: Bool), into feed: inout ChangeFeed
    ) -> (sections: UInt32, encoded: ChangeFeed.Encoded) {
        withUnsafeMutablePointer(to: &state) { after in
            withUnsafeMutablePointer(to: &shadow) { before in
                let sections = AppState.changedSections(after, from: before, reaching: reached)
                return (sections, feed.encode(before: before, after: after, transcript: transcript, sections: sections))
            }
        }
    }

    /// The effects as a JSON array with secrets replaced, and whether any
    /// held one. The snapshot's `storage_write` (the last effect, when the
    /// call wrote it) is written from the snapshot's kept members. When the
    /// array passes `TransitionLog.keptLimit` bytes, `logged` is what the log
    /// keeps instead: each effect over the limit as `{"effect_id","type","summary"}`.
    private func encode(
        _ effects: [(id: EffectID, effect: Effect)], wroteSnapshot: Bool
    ) -> (bytes: [UInt8], secret: Bool, logged: [UInt8]?) {
        // Where each effect starts in the array (its comma included), then where the last ends.
        withUnsafeTemporaryAllocation(of: Int.self, capacity: effects.count &+ 1) { starts in
            // Written on the stack (more moves to the heap), then kept as an array.
            withUnsafeTemporaryAllocation(byteCount: 1024, alignment: 1) { scratch in
                var w = JSONWriter(startingIn: scratch)
                var secret = false
                w.arrayStart()
                effects.withUnsafeBufferPointer { effects in
                    for i in effects.indices {
                        starts[i] = w.count
                        if wroteSnapshot && i == effects.count &- 1 {
                            // What `Effect.write` writes for it, from fixed pieces and the kept members.
                            w.beginFragment()
                            w.fragment(#"{"effect_id":"#)
                            w.fragment(integer: effects[i].id.rawValue)
                            w.fragment(#","type":"storage_write","key":"snapshot","value":"#)
                            w.valueFollows()
                            written.write(to: &w)
                            w.fragment("}")
                            w.endFragment()
                        } else if effects[i].effect.write(id: effects[i].id, redacted: true, to: &w) {
                            secret = true
                        }
                    }
                }
                starts[effects.count] = w.count
                w.arrayEnd()
                let bytes = w.bytes
                guard bytes.count > TransitionLog.keptLimit else { return (bytes, secret, nil) }
                return (bytes, secret, Self.summarised(effects, bytes, starts: starts))
            }
        }
    }

    /// The effects array `bytes` as the log keeps it: each effect whose JSON
    /// (from `starts[i]`, its comma excepted, to `starts[i + 1]`) passes
    /// `TransitionLog.keptLimit` bytes becomes `{"effect_id","type","summary"}`.
    private static func summarised(
        _ effects: [(id: EffectID, effect: Effect)], _ bytes: [UInt8], starts: UnsafeMutableBufferPointer<Int>
    ) -> [UInt8] {
        var w = JSONWriter(capacity: 256)
        w.arrayStart()
        for i in effects.indices {
            let from = starts[i] &+ (i == 0 ? 0 : 1)
            let length = starts[i &+ 1] &- from
            if length <= TransitionLog.keptLimit {
                w.raw(Array(bytes[from..<starts[i &+ 1]]))
            } else {
                w.objectStart()
                w.key("effect_id"); w.int(effects[i].id.rawValue)
                w.key("type"); w.string(effects[i].effect.type)
                w.key("summary"); w.string(TransitionLog.summary(bytes: length))
                w.objectEnd()
            }
        }
        w.arrayEnd()
        return w.bytes
    }

    /// Writes the snapshot when this call changed it: at most once per call,
    /// after everything the call led to. Reads again only what the call's
    /// features own (`reached`); true when it wrote.
    private mutating func persist(effects: inout [(id: EffectID, effect: Effect)]) -> Bool {
        guard persists, written.update(from: state, features: reached) else { return false }
        let effect = Effect.storage(.write(key: Snapshot.storageKey, value: written.json))
        effects.append((state.effects.issue(effect), effect))
        reached |= FeatureID.store.bit
        return true
    }

    /// Records an input the ABI rejected, so the log accounts for every call.
    public mutating func logRejected(kind: LogEntry.Kind, type: String, error: CoreError) {
        let revision = state.revision
        log.append { seq in
            LogEntry(
                seq: seq, revision: revision, kind: .rejected, type: type.isEmpty ? kind.rawValue : type, payload: nil,
                effectsJSON: LogEntry.noEffects, notes: [error.message], followUps: [], errorCode: error.code.rawValue)
        }
    }

    /// Logs what restoring a snapshot left out or changed (`app_new`,
    /// before any input): one entry of kind `restore`, a note per phrase.
    mutating func logRestore(_ problems: [String]) {
        let revision = state.revision
        log.append { seq in
            LogEntry(
                seq: seq, revision: revision, kind: .restore, type: "snapshot", payload: nil,
                effectsJSON: LogEntry.noEffects, notes: problems.map { "dropped from the snapshot: \($0)" }, followUps: [],
                errorCode: nil)
        }
    }

    private mutating func run(
        _ input: Input, effects: inout [(id: EffectID, effect: Effect)], notes: inout [Note], scrubs: inout [JSONPath],
        followUps: inout [Input], depth: Int
    ) {
        var input = input
        if !secrets.isEmpty, case .server(let event) = input { input = .server(masked(event)) }
        let route = AppRouter.route(input)
        if !callMayChangeSnapshot && route.mayChangeSnapshot { callMayChangeSnapshot = true }
        let emission = interactor.interact(&state, route: route, reaching: &reached)
        apply(emission, effects: &effects, notes: &notes, scrubs: &scrubs, followUps: &followUps, depth: depth)
    }

    private mutating func apply(
        _ emission: Emission, effects: inout [(id: EffectID, effect: Effect)], notes: inout [Note], scrubs: inout [JSONPath],
        followUps: inout [Input], depth: Int
    ) {
        switch emission.kind {
        case .none:
            break
        case .effect(var effect):
            if !secrets.isEmpty, let masked = secrets.masking(effect) {
                effect = masked
                maskedThisCall = true
            }
            if case .device(.haptic) = effect {
                if hapticsThisCall.contains(effect) { return }
                hapticsThisCall.append(effect)
            }
            if case .device(.showLocalNotification(_, _, let sessionID)) = effect {
                if let earlier = notificationsThisCall.first(where: { $0.sessionID == sessionID }) {
                    effects[earlier.index].effect = effect
                    notes.append(Note(kind: .info, text: "show_local_notification: replaces the one this call asked for earlier"))
                    return
                }
                notificationsThisCall.append((sessionID, effects.count))
            }
            let id = state.effects.issue(effect)
            effects.append((id, effect))
            reached |= FeatureID.store.bit
        case .note(var note):
            if !secrets.isEmpty, let masked = secrets.masking(note.text) { note.text = masked }
            notes.append(note)
        case .scrub(let path):
            scrubs.append(path)
        case .settle(let id):
            state.effects.settle(id)
            reached |= FeatureID.store.bit
        case .settleAll(let kind):
            state.effects.settleAll(kind)
            reached |= FeatureID.store.bit
        case .announce(let event):
            announced.append(event)
        case .input(let next):
            guard depth < Store.followUpDepthLimit else {
                notes.append(Note(kind: .dropped, text: "follow-ups nested too deep; dropped one"))
                return
            }
            if case .server = next {} else { followUps.append(next) }
            run(next, effects: &effects, notes: &notes, scrubs: &scrubs, followUps: &followUps, depth: depth &+ 1)
        case .merge(let list):
            for e in list { apply(e, effects: &effects, notes: &notes, scrubs: &scrubs, followUps: &followUps, depth: depth) }
        }
    }
}

// MARK: - Secrets by value

/// How far a streamed entry's field was scanned for secrets (`Store.maskStreamed`).
struct StreamedTail: Equatable, Sendable {
    var serial: Int
    var length: Int
    var generation: Int
}

extension Store {
    /// The features whose slices hold secrets (`learnSecrets`); `app` replaces the whole state.
    static let secretHolders = FeatureID.servers.bit | FeatureID.pairing.bit | FeatureID.app.bit

    /// Takes in the secrets the slices of `reached` hold: every token in
    /// memory, and the live pairing code (the one held for `http_pair`, or
    /// six digits typed into the form).
    fileprivate mutating func learnSecrets(reaching reached: UInt32) {
        if reached & (FeatureID.servers.bit | FeatureID.app.bit) != 0 {
            secrets.learnTokens(state.servers.credentials.all)
        }
        if reached & (FeatureID.pairing.bit | FeatureID.app.bit) != 0 {
            let form = state.pairing
            secrets.setPairingCode(form.heldCode ?? PairingForm.normalizedCode(form.code))
        }
    }

    /// A server event with its text masked; a streamed delta is masked
    /// against the text its entry holds too (`maskStreamed`).
    fileprivate mutating func masked(_ event: ServerEvent) -> ServerEvent {
        switch event {
        case .textDelta(let text): return .textDelta(maskStreamed(text, reasoning: false))
        case .reasoningDelta(let text): return .reasoningDelta(maskStreamed(text, reasoning: true))
        default:
            if case .textReplace = event { scannedText = nil }
            guard let masked = secrets.masking(event) else { return event }
            maskedThisCall = true
            return masked
        }
    }

    /// `masked(_:)` for the chat's stream.
    fileprivate mutating func masked(_ stream: ChatInteractor.Stream) -> ChatInteractor.Stream {
        switch stream {
        case .textDelta(let text): return .textDelta(maskStreamed(text, reasoning: false))
        case .reasoningDelta(let text): return .reasoningDelta(maskStreamed(text, reasoning: true))
        case .textReplace(let text):
            scannedText = nil
            guard let masked = secrets.masking(text) else { return stream }
            maskedThisCall = true
            return .textReplace(masked)
        case .toolInput(let delta):
            guard let masked = secrets.masking(delta) else { return stream }
            maskedThisCall = true
            return .toolInput(delta: masked)
        }
    }

    /// A streamed delta, with the secrets in it masked. A secret split
    /// across deltas is found at the join: the entry's field is then set
    /// whole, masked, and nothing is left to append ("" is returned).
    ///
    /// The cost when nothing matches is a scan of the delta alone: the
    /// field's tail was scanned with the deltas before it, and when no
    /// secret's first bytes ended it (`StreamedTail`), no secret can start
    /// there. Otherwise (a new entry, new secrets, a field changed
    /// otherwise) the last `longest - 1` bytes of the field are scanned
    /// again with the delta.
    fileprivate mutating func maskStreamed(_ text: String, reasoning: Bool) -> String {
        guard let index = state.chat.transcript.streamingIndex else {
            // The delta opens a new entry: nothing to join.
            if reasoning { scannedReasoning = nil } else { scannedText = nil }
            guard let masked = secrets.masking(text) else { return text }
            maskedThisCall = true
            return masked
        }
        // Read in place: a copy of the entry would retain its every field.
        let serial = state.chat.transcript.entries[index].serial
        let heldCount = reasoning
            ? state.chat.transcript.entries[index].reasoning.utf8.count : state.chat.transcript.entries[index].text.utf8.count
        let scanned = reasoning ? scannedReasoning : scannedText
        let tail = scanned == StreamedTail(serial: serial, length: heldCount, generation: secrets.generation)
            ? 0 : min(heldCount, secrets.longest &- 1)
        var text = text
        let (ranges, partial): ([Range<Int>], Bool) = text.withUTF8 { delta in
            guard tail > 0 else { return secrets.occurrences(in: delta) }
            var held = reasoning ? state.chat.transcript.entries[index].reasoning : state.chat.transcript.entries[index].text
            return held.withUTF8 { held in
                withUnsafeTemporaryAllocation(of: UInt8.self, capacity: tail &+ delta.count) { joined in
                    _ = joined.initialize(from: held[(held.count &- tail)...])
                    if delta.count > 0 { _ = UnsafeMutableBufferPointer(rebasing: joined[tail...]).initialize(from: delta) }
                    return secrets.occurrences(in: UnsafeBufferPointer(joined))
                }
            }
        }
        let next = partial ? nil : StreamedTail(serial: serial, length: heldCount &+ text.utf8.count, generation: secrets.generation)
        if reasoning { scannedReasoning = next } else { scannedText = next }
        guard !ranges.isEmpty else { return text }
        maskedThisCall = true
        if ranges.contains(where: { $0.lowerBound < tail }) {
            // A secret across the join: the field is set whole, masked.
            let held = reasoning ? state.chat.transcript.entries[index].reasoning : state.chat.transcript.entries[index].text
            let whole = secrets.mask(held + text)
            if reasoning {
                state.chat.transcript.setReasoning(whole, at: index)
                scannedReasoning = nil
            } else {
                state.chat.transcript.setText(whole, at: index)
                scannedText = nil
            }
            return ""
        }
        return text.withUTF8 { delta in
            SecretValues.replacing(ranges.map { ($0.lowerBound &- tail)..<($0.upperBound &- tail) }, in: delta)
        }
    }

    /// The input as the log keeps it, with the secrets in it masked.
    fileprivate func masked(_ logged: LoggedInput) -> LoggedInput {
        switch logged {
        case .bytes(let bytes):
            guard secrets.occurs(in: bytes), let value = try? JSONParser.parse(bytes), let masked = secrets.masking(value) else {
                return logged
            }
            return .payload(.json(masked))
        case .payload(.json(let value)?):
            return secrets.masking(value).map { .payload(.json($0)) } ?? logged
        case .payload(.raw(let bytes)?):
            let masked = bytes.withUnsafeBufferPointer { b -> JSONValue? in
                guard secrets.occurs(in: b), let value = try? JSONParser.parse(b) else { return nil }
                return secrets.masking(value)
            }
            return masked.map { .payload(.json($0)) } ?? logged
        case .payload(nil):
            return logged
        }
    }
}

/// Transcript entries that changed in place, and nothing else, from revision
/// `since` to revision `to`: no entry inserted, removed or requeued (which
/// renumbers the prompts), no other part of the state changed.
public struct InPlaceChanges: Equatable, Sendable {
    public var since: Int
    public var to: Int
    /// The entries' indices, each once.
    public var entries: [Int]
    /// Those of `entries` changed otherwise than by text appended to their
    /// `text` (the others' text is the text at `since` and more).
    public var changedOtherwise: [Int] = []

    /// Whether entry `index` changed, in the record, only by text appended to its text.
    public func onlyTextAppended(_ index: Int) -> Bool {
        entries.contains(index) && !changedOtherwise.contains(index)
    }

    /// Entries recorded at most: past them the record is dropped (the tree is then built whole).
    static let entryLimit = 8

    /// `record` extended by a call that made revision `to` with the
    /// transcript `changes` and nothing else (a new record from `to - 1`
    /// when `record` does not reach it); nil when a change is not in place.
    static func extending(_ record: InPlaceChanges?, to revision: Int, _ changes: [TranscriptChange]) -> InPlaceChanges? {
        var record = record
        extend(&record, to: revision, changes)
        return record
    }

    /// `extending`, in place (the record's arrays are not copied).
    static func extend(_ record: inout InPlaceChanges?, to revision: Int, _ changes: [TranscriptChange]) {
        if record?.to != revision &- 1 { record = InPlaceChanges(since: revision &- 1, to: revision, entries: []) }
        record!.to = revision
        for change in changes {
            let index: Int
            var appendsText = false
            switch change {
            case .insert, .remove, .set(_, .isQueued, _):
                record = nil
                return
            case .appendText(let i, let field, _):
                index = i
                appendsText = field == .text
            case .set(let i, _, _), .insertToolCall(let i, _, _), .setToolCall(let i, _, _), .appendToolInput(let i, _, _):
                index = i
            }
            if !record!.entries.contains(index) {
                guard record!.entries.count < entryLimit else {
                    record = nil
                    return
                }
                record!.entries.append(index)
            }
            if !appendsText && !record!.changedOtherwise.contains(index) { record!.changedOtherwise.append(index) }
        }
    }
}
