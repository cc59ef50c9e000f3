import JcodeMobileSwift

/// Drives a `ViewModel` the way a host's tests want to: the harness is the
/// view model's `PlatformAdapter`, so every effect the core requests is
/// recorded here instead of carried out, and the test answers it with the
/// platform event it chooses. In the spirit of Lattice's
/// `InteractorTestHarness`: send, then assert what came out.
///
///     let harness = ViewModelTestHarness(options: options)
///     harness.send(.tapNode(id: "pair.submit"))
///     let pair = try harness.expectEffect(.httpPair)
///     harness.answer(.http(.pairFinished(PairResult(effectID: pair.id, ok: true, token: "t"))))
///     try harness.expectEffects([.webSocket(.connect(url: "ws://127.0.0.1:7643/ws", authToken: "t"))])
///     try harness.expectScreen(.chat)
///
/// The `expect…` methods throw a `HarnessFailure` that says what was expected
/// and what happened, so they work in XCTest and in Swift Testing alike.
@available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, *)
@MainActor
public final class ViewModelTestHarness {
    public let viewModel: ViewModel
    /// Every effect the core requested, in order.
    public private(set) var requested: [RequestedEffect] = []
    /// How many of `requested` the `expect…`/`takeEffects` calls have consumed.
    private var consumed = 0
    /// Answers given automatically, by effect kind (`answerAutomatically`).
    private var automatic: [EffectKind: (RequestedEffect) -> PlatformEvent?] = [:]

    public init(app: JcodeMobileApp) {
        viewModel = ViewModel(app: app)
        let recorder = Recorder()
        recorder.harness = self
        viewModel.adapter = recorder
    }

    public convenience init(options: AppOptions = AppOptions()) {
        self.init(app: JcodeMobileApp(options: options))
    }

    /// A harness on a named fixture (`.pairingReady`, `.connectedChat` …).
    public convenience init(scenario: Scenario) {
        var options = AppOptions()
        options.scenario = scenario
        self.init(options: options)
    }

    // MARK: - Driving

    /// The person does `action`.
    @discardableResult
    public func send(_ action: Action) -> DispatchReport {
        viewModel.send(action)
    }

    /// The platform reports `event` (the answer to an effect, or a happening).
    public func answer(_ event: PlatformEvent) {
        viewModel.receive(event)
    }

    /// From now on, effects of `kind` are answered at once with what `answer`
    /// returns (nil: left unanswered); they are still recorded.
    ///
    ///     harness.answerAutomatically(.secureStoreWrite) { request in
    ///         guard case .secureStore(.write(let key, _)) = request.effect else { return nil }
    ///         return .secureStore(.writeFinished(effectID: request.id, key: key, ok: true))
    ///     }
    public func answerAutomatically(_ kind: EffectKind, with answer: @escaping (RequestedEffect) -> PlatformEvent?) {
        automatic[kind] = answer
    }

    /// The view model's adapter: records, and answers what is answered automatically.
    private final class Recorder: PlatformAdapter {
        weak var harness: ViewModelTestHarness?

        func perform(_ request: RequestedEffect, events: PlatformEventSink) {
            guard let harness else { return }
            harness.requested.append(request)
            if let answer = harness.automatic[request.kind]?(request) {
                events.send(answer)  // queued by the view model behind the effects before it
            }
        }
    }

    // MARK: - Reading

    public var state: AppState { viewModel.state }
    public var tree: SemanticNode { viewModel.tree }
    public var revision: Int { viewModel.revision }
    public var screen: Screen { viewModel.screen }

    /// The node `id` of the current tree, if it is there.
    public func node(_ id: String) -> SemanticNode? { viewModel.tree.find(id) }

    /// The current screen as text (`ScreenText`).
    public var screenText: String { ScreenText.render(viewModel.tree) }

    /// The effects requested since the last `takeEffects` or `expect…` call.
    public func takeEffects() -> [RequestedEffect] {
        defer { consumed = requested.count }
        return Array(requested[consumed...])
    }

    // MARK: - Expectations

    /// Exactly these effects were requested since the last look, in this order.
    @discardableResult
    public func expectEffects(_ expected: [Effect]) throws -> [RequestedEffect] {
        let effects = takeEffects()
        guard effects.map(\.effect) == expected else {
            throw HarnessFailure(
                "expected the effects \(expected.map(\.type)), got \(effects.map(\.effect.type))"
                    + Self.firstDifference(expected, effects.map(\.effect)))
        }
        return effects
    }

    /// Exactly these kinds of effect were requested since the last look, in this order.
    @discardableResult
    public func expectEffectKinds(_ expected: [EffectKind]) throws -> [RequestedEffect] {
        let effects = takeEffects()
        guard effects.map(\.kind) == expected else {
            throw HarnessFailure("expected effects \(expected.map(\.rawValue)), got \(effects.map(\.effect.type))")
        }
        return effects
    }

    /// The one effect of `kind` requested since the last look (others of
    /// other kinds are consumed too); fails when there is none or several.
    public func expectEffect(_ kind: EffectKind) throws -> RequestedEffect {
        let effects = takeEffects()
        let matching = effects.filter { $0.kind == kind }
        guard matching.count == 1 else {
            throw HarnessFailure("expected one \(kind.rawValue) effect, got \(effects.map(\.effect.type))")
        }
        return matching[0]
    }

    /// No effect was requested since the last look.
    public func expectNoEffects() throws {
        let effects = takeEffects()
        guard effects.isEmpty else { throw HarnessFailure("expected no effects, got \(effects.map(\.effect.type))") }
    }

    public func expectScreen(_ screen: Screen) throws {
        guard viewModel.screen == screen else {
            throw HarnessFailure("expected the \(screen.rawValue) screen, showing \(viewModel.screen.rawValue):\n\(screenText)")
        }
    }

    /// The current screen renders exactly as `text` (`ScreenText`).
    public func expectScreenText(_ text: String) throws {
        let actual = screenText
        guard actual == text else {
            throw HarnessFailure("the screen reads:\n\(actual)\nexpected:\n\(text)")
        }
    }

    /// The node `id` is in the current tree (visible or not); returns it.
    @discardableResult
    public func expectNode(_ id: String) throws -> SemanticNode {
        guard let node = node(id) else {
            throw HarnessFailure("no node \(id) on the \(viewModel.screen.rawValue) screen:\n\(screenText)")
        }
        return node
    }

    private static func firstDifference(_ expected: [Effect], _ actual: [Effect]) -> String {
        for (i, pair) in zip(expected, actual).enumerated() where pair.0 != pair.1 {
            let expected = JSONValue.object(pair.0.fields(redacted: false)).jsonString
            let actual = JSONValue.object(pair.1.fields(redacted: false)).jsonString
            return "; effect \(i) differs: expected \(pair.0.type) \(expected), got \(pair.1.type) \(actual)"
        }
        return ""
    }
}

/// An expectation of the harness that did not hold.
public struct HarnessFailure: Error, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}
