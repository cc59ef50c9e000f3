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
    public private(set) var persisted: Snapshot?
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
        self.persisted = persists ? Snapshot(of: state) : nil
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
        // Keep a copy of everything but the transcript (which records its own
        // changes), so streaming into a long transcript never copies it.
        var before = state
        before.chat.transcript = Transcript()

        var effects: [(id: EffectID, effect: Effect)] = []
        var notes: [Note] = []
        var scrubs: [JSONPath] = []
        var followUps: [Input] = []
        callMayChangeSnapshot = false
        hapticsThisCall.removeAll(keepingCapacity: true)
        notificationsThisCall.removeAll(keepingCapacity: true)
        announced.removeAll(keepingCapacity: true)
        reached = 0
        run(input, effects: &effects, notes: &notes, scrubs: &scrubs, followUps: &followUps, depth: 0)
        if before.connection.phase != state.connection.phase {
            announced.append(.connectionPhaseChanged(from: before.connection.phase, to: state.connection.phase))
        }
        if callMayChangeSnapshot { persist(effects: &effects) }

        let transcriptChanges = state.chat.transcript.drainChanges()
        let encoded = feed.encode(before: before, after: state, transcript: transcriptChanges, reaching: reached)
        let changed: Bool
        if case .nothing = encoded { changed = false } else { changed = true }
        if changed {
            state.revision &+= 1
            feed.record(revision: state.revision, encoded)
        }
        for path in scrubs { feed.scrub(path) }

        let revision = state.revision
        log.append { seq in
            LogEntry(
                seq: seq, revision: revision, kind: logKind, type: logType, payload: logPayload,
                effects: effects.map { LogEntry.EffectRecord(id: $0.id, effect: $0.effect) }, notes: notes.map(\.text),
                followUps: followUps.map(\.name), errorCode: nil)
        }
        return Transition(
            revision: revision, changed: changed, effects: effects, notes: notes, followUps: followUps, events: announced)
    }

    /// Writes the snapshot when this call changed it: at most once per call,
    /// after everything the call led to.
    private mutating func persist(effects: inout [(id: EffectID, effect: Effect)]) {
        guard let last = persisted else { return }
        let now = Snapshot(of: state)
        guard now != last else { return }
        persisted = now
        let effect = Effect.storage(.write(key: Snapshot.storageKey, value: now.json))
        effects.append((state.effects.issue(effect), effect))
        reached |= FeatureID.store.bit
    }

    /// Records an input the ABI rejected, so the log accounts for every call.
    public mutating func logRejected(kind: LogEntry.Kind, type: String, error: CoreError) {
        let revision = state.revision
        log.append { seq in
            LogEntry(
                seq: seq, revision: revision, kind: .rejected, type: type.isEmpty ? kind.rawValue : type, payload: nil,
                effects: [], notes: [error.message], followUps: [], errorCode: error.code.rawValue)
        }
    }

    private mutating func run(
        _ input: Input, effects: inout [(id: EffectID, effect: Effect)], notes: inout [Note], scrubs: inout [JSONPath],
        followUps: inout [Input], depth: Int
    ) {
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
        case .effect(let effect):
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
        case .note(let note):
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
