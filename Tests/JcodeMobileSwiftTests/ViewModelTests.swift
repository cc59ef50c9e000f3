import JcodeMobileSwift
import JcodeMobileSwiftTesting
import Observation
import Synchronization
import Testing
import JcodeMobileJSON

/// Set from observation callbacks (which may run on any thread).
final class Flag: Sendable {
    private let raised = Mutex(false)
    func raise() { raised.withLock { $0 = true } }
    var isRaised: Bool { raised.withLock { $0 } }
}

/// The view model's contract with a view and with an adapter.
@MainActor
@Suite struct ViewModelTests {
    /// An adapter that records what it was asked and answers some effects at once.
    final class RecordingAdapter: PlatformAdapter {
        var performed: [RequestedEffect] = []
        var answer: (RequestedEffect) -> PlatformEvent? = { _ in nil }
        var sink: PlatformEventSink?

        func perform(_ request: RequestedEffect, events: PlatformEventSink) {
            performed.append(request)
            sink = events
            if let event = answer(request) { events.send(event) }
        }
    }

    static func pairingReady() -> AppOptions {
        var options = AppOptions()
        options.scenario = .pairingReady
        return options
    }

    @Test func aViewReadingTheTreeIsToldWhenAnActionChangesIt() {
        let model = ViewModel(options: AppOptions())
        let told = Flag()
        withObservationTracking { _ = model.tree } onChange: { told.raise() }

        model.send(.setHost("devbox.local"))

        #expect(told.isRaised)
        #expect(model.tree.find("pair.host")?.value == "devbox.local")
        #expect(model.state.pairing.host == "devbox.local")
    }

    @Test func aViewIsNotToldWhenAnActionChangesNothing() {
        let model = ViewModel(options: AppOptions())
        model.send(.setHost("devbox.local"))
        let revision = model.revision
        let told = Flag()
        withObservationTracking {
            _ = model.tree
            _ = model.state
            _ = model.revision
        } onChange: { told.raise() }

        let report = model.send(.setHost("devbox.local"))  // the same text again

        #expect(!told.isRaised)
        #expect(report == DispatchReport(revision: revision, changed: false, effects: []))
    }

    @Test func theRevisionMovesByOneForEachChange() {
        let model = ViewModel(options: AppOptions())
        #expect(model.revision == 0)
        model.send(.setHost("a"))
        model.send(.setHost("ab"))
        #expect(model.revision == 2)
        #expect(model.state.revision == 2)
    }

    @Test func effectsAreHandedToTheAdapterWithTheirIdsInOrder() {
        let adapter = RecordingAdapter()
        let model = ViewModel(options: Self.pairingReady(), adapter: adapter)

        let report = model.send(.submitPairing)

        #expect(adapter.performed.map(\.kind) == [.httpPair])
        #expect(report.effects == adapter.performed)
        #expect(report.changed)
    }

    /// An adapter that answers inside `perform` does not cut into the batch:
    /// the socket's requests come after every effect of the pairing answer.
    @Test func anAnswerGivenInsidePerformWaitsForTheRestOfTheBatch() throws {
        let adapter = RecordingAdapter()
        adapter.answer = { request in
            if case .webSocket(.connect) = request.effect { return .webSocket(.opened(effectID: request.id)) }
            return nil
        }
        let model = ViewModel(options: Self.pairingReady(), adapter: adapter)
        model.send(.submitPairing)
        let pair = try #require(adapter.performed.first)

        model.receive(.http(.pairFinished(PairResult(effectID: pair.id, ok: true, token: "t0k3n", serverName: "jcode"))))

        #expect(
            adapter.performed.map(\.effect.type) == [
                "http_pair", "secure_store_write", "websocket_connect", "haptic", "register_push_notifications",
                "storage_write", "websocket_send", "websocket_send", "schedule_timer",
            ])
        #expect(model.state.connection.isSocketOpen)
    }

    @Test func anAdapterMayAnswerLaterThroughTheSinkItWasGiven() throws {
        let adapter = RecordingAdapter()
        let model = ViewModel(options: Self.pairingReady(), adapter: adapter)
        model.send(.submitPairing)
        let pair = try #require(adapter.performed.first)
        let sink = try #require(adapter.sink)
        #expect(model.state.connection.phase == .pairing)

        sink(.http(.pairFinished(PairResult(effectID: pair.id, ok: false, error: "connection refused"))))

        #expect(model.state.connection.phase != .pairing)
        #expect(model.state.notices.errorBanner != nil)
    }

    /// The sink holds the view model weakly: an adapter keeping it (a socket
    /// reader does) does not keep a closed screen's view model alive.
    @Test func theSinkDoesNotKeepTheViewModelAlive() {
        let adapter = RecordingAdapter()
        weak var gone: ViewModel?
        do {
            let model = ViewModel(options: Self.pairingReady(), adapter: adapter)
            model.send(.submitPairing)
            gone = model
        }
        #expect(gone == nil)
        #expect(adapter.sink != nil)
        adapter.sink?.send(.lifecycle(.foreground))  // dropped: nobody to tell
    }

    /// The Swift API runs the same transitions as the JSON ABI.
    @Test func sendingValuesAndSendingJSONLeadToTheSameStateAndTree() {
        let model = ViewModel(options: AppOptions())
        let json = JcodeMobileApp(options: AppOptions())
        model.send(.setHost("devbox.local"))
        _ = json.dispatch(json: #"{"type":"set_host","value":"devbox.local"}"#)
        model.send(.setPairCode("123 456"))
        _ = json.dispatch(json: #"{"type":"set_pair_code","value":"123 456"}"#)
        model.send(.submitPairing)
        _ = json.dispatch(json: #"{"type":"submit_pairing"}"#)

        #expect(model.state == json.state)
        #expect(model.tree == json.tree())
        #expect(model.app.stateJSON() == json.stateJSON())
    }

    /// What a Swift host sends is logged by type only: a pairing code sent
    /// as a value never reaches the log.
    @Test func theLogNamesValueInputsWithoutTheirFields() {
        let model = ViewModel(options: AppOptions())
        model.send(.setPairCode("987654"))
        model.receive(.lifecycle(.networkReachabilityChanged(reachable: false)))

        let log = String(decoding: model.app.logsJSON(limit: 2), as: UTF8.self)

        #expect(log.contains(#""kind":"action","type":"set_pair_code","payload":null"#))
        #expect(log.contains(#""kind":"event","type":"network_reachability_changed","payload":null"#))
        #expect(!log.contains("987654"))
    }

    @Test func aFrameOfSeveralLinesIsTheSameEventAsTheJSONForm() throws {
        let frame = #"{"type":"text_delta","text":"Hel"}"# + "\n" + "not json" + "\n" + #"{"type":"text_delta","text":"lo"}"#

        let value = PlatformEvent.webSocketFrame(frame, socket: EffectID(4))

        var object = JSONObject()
        object.append("type", "websocket_event")
        object.append("effect_id", 4)
        object.append("line", .string(frame))
        #expect(value == (try PlatformEvent.wire.decode(.object(object))))
        guard case .webSocket(.event(let id, let items)) = value else {
            Issue.record("not a websocket_event: \(value)")
            return
        }
        #expect(id == EffectID(4))
        #expect(items.count == 3)
        #expect(items[0] == .event(.textDelta("Hel")))
    }
}
