import Observation

/// The jcode mobile core for a SwiftUI (or any Swift) host: observable view
/// state, `send` for what the person does, and a `PlatformAdapter` that
/// carries out the effects the core requests.
///
///     @State private var model = ViewModel(options: options, adapter: PhoneAdapter())
///
///     var body: some View {
///         ScreenView(node: model.tree)                       // redrawn when the tree changes
///         Button("Pair") { model.send(.tapNode(id: "pair.submit")) }
///     }
///
/// What it publishes (`@Observable`): `state` (the domain state), `tree` (the
/// semantic UI tree of the current screen: every label, value, enabled flag
/// and accessibility text, decided by the core) and `revision`. They change
/// together, once per call into the core that changed the state, and never
/// when a call changed nothing.
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
    /// The domain state after the last change.
    public private(set) var state: AppState
    /// The semantic tree of the current screen after the last change.
    public private(set) var tree: SemanticNode
    /// Increases by one on every change of `state`.
    public private(set) var revision: Int

    /// The screen the tree shows.
    public var screen: Screen { state.navigation.screen }

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

    /// A view model over `app` (a restored or scenario app), driving `adapter`.
    public init(app: JcodeMobileApp, adapter: (any PlatformAdapter)? = nil) {
        self.app = app
        self.adapter = adapter
        self.state = app.state
        self.tree = app.tree()
        self.revision = app.state.revision
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
        Screenshot.svg(tree)
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
            state = app.state
            tree = app.tree()
            revision = transition.revision
        }
        effectQueue.append(contentsOf: effects)
        return DispatchReport(revision: transition.revision, changed: transition.changed, effects: effects)
    }
}
