import XCTest
@testable import JcodeMobileCore
@testable import JcodeMobileJSON

/// What the event stream tells a subscriber (`jcode_mobile_subscribe`): the
/// core side, before the FFI queues it. An app records events only while the
/// FFI asks it to (it has subscribers).
final class EventStreamTests: XCTestCase {
    /// A world whose app records stream events from its first call.
    private func recordingWorld() -> SimulatedWorld {
        let world = SimulatedWorld()
        world.driver.app.collectsEvents = true
        return world
    }

    private func events(_ world: SimulatedWorld) -> [JSONValue] {
        world.driver.app.takeEvents().map { event in
            guard let value = try? event.bytes.withUnsafeBufferPointer({ b throws(CoreError) in try JSONParser.parse(b) }) else {
                XCTFail("an event is not JSON: \(String(decoding: event.bytes, as: UTF8.self))")
                return .null
            }
            return value
        }
    }

    /// The events that are not `state_changed` / `effects_requested`, as "type field=value…".
    private func appEvents(_ list: [JSONValue]) -> [String] {
        list.compactMap { event -> String? in
            guard let type = event["type"]?.stringValue, type != "state_changed", type != "effects_requested",
                  case .object(let o) = event
            else { return nil }
            let fields = o.entries.filter { !["type", "seq", "revision"].contains($0.key) }
                .map { "\($0.key)=\($0.value.stringValue ?? $0.value.jsonString)" }
            return ([type] + fields).joined(separator: " ")
        }
    }

    func testAnAppWithoutSubscribersRecordsNothing() {
        let world = SimulatedWorld()
        world.pair()
        XCTAssertEqual(world.driver.app.takeEvents().count, 0)
        XCTAssertEqual(world.driver.app.nextEventSeq, 1)
    }

    func testPairingAnnouncesThePairedServerAndEveryPhaseOfTheConnection() {
        let world = recordingWorld()
        world.pair()
        XCTAssertEqual(appEvents(events(world)), [
            "connection_phase_changed from=disconnected to=pairing",
            "server_paired server_id=devbox.local:7643 server_name=devbox",
            "connection_phase_changed from=pairing to=connecting",
            "connection_phase_changed from=connecting to=connected",
            "history_synced session_id=ses_1 entries=0 shown=0",
        ])
    }

    func testEverySeqIsOneMoreThanTheLastAndStateChangedCarriesTheReportsRevision() {
        let world = recordingWorld()
        world.pair()
        world.dispatch(#"{"type":"send_message","text":"hello"}"#)
        let list = events(world)
        XCTAssertEqual(list.compactMap { $0["seq"]?.int64Value }, Array(1...Int64(list.count)))
        let revisions = list.filter { $0["type"] == "state_changed" }.compactMap { $0["revision"]?.int64Value }
        XCTAssertEqual(revisions.last, Int64(world.driver.app.state.revision))
        XCTAssertEqual(revisions, revisions.sorted(), "revisions never go back")
        XCTAssertEqual(Set(revisions).count, revisions.count, "one state_changed per revision")
    }

    func testWithinOneCallStateChangedComesFirstThenAppEventsThenEffects() {
        let world = recordingWorld()
        world.pair()
        _ = events(world)
        // One platform event: the server's answer that ends a turn.
        world.driver.app.collectsEvents = true
        world.holdsReplies = true
        world.dispatch(#"{"type":"send_message","text":"one"}"#)
        _ = events(world)
        world.holdsReplies = false
        world.flushHeld()
        let types = events(world).map { $0["type"]?.stringValue ?? "?" }
        let turn = types.firstIndex(of: "turn_finished")
        XCTAssertNotNil(turn)
        if let turn {
            XCTAssertEqual(types[turn - 1], "state_changed", "the turn's state is told first: \(types)")
        }
    }

    func testATurnAnnouncesHowItFinished() {
        let world = recordingWorld()
        world.pair()
        world.dispatch(#"{"type":"send_message","text":"hello"}"#)
        XCTAssertEqual(appEvents(events(world)).filter { $0.hasPrefix("turn_finished") }, ["turn_finished outcome=done"])

        let driver = AppDriver(#"{"scenario":"chat_streaming"}"#)
        driver.app.collectsEvents = true
        _ = driver.server(#"{"type":"interrupted"}"#)
        _ = driver.server(#"{"type":"error","message":"overloaded"}"#)
        let list = driver.app.takeEvents().map { String(decoding: $0.bytes, as: UTF8.self) }
        XCTAssertTrue(list.contains { $0.contains(#""type":"turn_finished","revision":"#) && $0.hasSuffix(#""outcome":"interrupted"}"#) }, "\(list)")
    }

    func testARefusedCodeAnnouncesThePairingFailureInTheWordsShown() {
        let driver = AppDriver()
        driver.app.collectsEvents = true
        _ = driver.dispatch(#"{"type":"set_host","value":"devbox.local"}"#)
        _ = driver.dispatch(#"{"type":"set_pair_code","value":"123456"}"#)
        _ = driver.dispatch(#"{"type":"set_working_dir","value":"/home/ana/project"}"#)
        _ = driver.dispatch(#"{"type":"set_device_name","value":"Ana's phone"}"#)
        _ = driver.dispatch(#"{"type":"submit_pairing"}"#)
        let created = driver.effectID("create_device_id")
        _ = driver.event(#"{"type":"device_id_created","effect_id":\#(created),"device_id":"install-7f3a"}"#)
        let pair = driver.effectID("http_pair")
        _ = driver.event(#"{"type":"pair_finished","effect_id":\#(pair),"ok":false,"status":401,"error":"invalid code"}"#)
        let failures = driver.app.takeEvents().map { String(decoding: $0.bytes, as: UTF8.self) }.filter { $0.contains("pairing_failed") }
        XCTAssertEqual(failures.count, 1)
        XCTAssertTrue(failures.first?.hasSuffix(#""message":"Invalid or expired pairing code"}"#) ?? false, "\(failures)")
    }

    func testAHistoryAnnouncesHowManyRowsArrived() {
        let world = recordingWorld()
        world.pair()
        world.dispatch(#"{"type":"send_message","text":"one"}"#)
        world.dispatch(#"{"type":"send_message","text":"two"}"#)
        _ = events(world)
        world.dropLink()
        world.fire("reconnect")
        // The resuming subscribe answers with the session's history; nothing asks for it again.
        XCTAssertEqual(appEvents(events(world)).filter { $0.hasPrefix("history_synced") }, [
            "history_synced session_id=ses_1 entries=4 shown=4",
        ])
    }

    func testEffectsRequestedHoldTheSameEffectsAsTheReport() {
        let driver = AppDriver(#"{"scenario":"connected_empty_chat"}"#)
        driver.app.collectsEvents = true
        let effects = driver.dispatch(#"{"type":"send_message","text":"hello"}"#)
        let requested = driver.app.takeEvents().map { String(decoding: $0.bytes, as: UTF8.self) }.filter { $0.contains("effects_requested") }
        XCTAssertEqual(requested.count, 1)
        XCTAssertTrue(requested.first?.contains(JSONValue.array(effects).jsonString) ?? false)
        XCTAssertTrue(effects.contains { $0["type"] == "websocket_send" }, "sending a message asks for a websocket_send")
    }

    func testStateChangedOpsKeepAMirrorEqualToTheState() {
        let world = recordingWorld()
        var mirror = world.driver.app.state.json
        world.pair()
        world.dispatch(#"{"type":"send_message","text":"hello"}"#)
        for event in events(world) where event["type"] == "state_changed" {
            guard let ops = event["ops"]?.arrayValue else {
                mirror = world.driver.app.state.json  // resync
                continue
            }
            XCTAssertTrue(JSONDiff.apply(ops.compactMap(ChangeFeedTests.Mirror.op), to: &mirror), event.jsonString)
            if case .object(var o) = mirror {
                o["revision"] = event["revision"] ?? .null
                mirror = .object(o)
            }
        }
        XCTAssertEqual(mirror, world.driver.app.state.json)
    }

    func testTurningCollectionOffDropsWhatWasNotTaken() {
        let driver = AppDriver(#"{"scenario":"connected_empty_chat"}"#)
        driver.app.collectsEvents = true
        _ = driver.dispatch(#"{"type":"set_draft","value":"a"}"#)
        driver.app.collectsEvents = false
        XCTAssertEqual(driver.app.takeEvents().count, 0)
        _ = driver.dispatch(#"{"type":"set_draft","value":"ab"}"#)
        XCTAssertEqual(driver.app.takeEvents().count, 0)
        XCTAssertEqual(driver.app.nextEventSeq, 3, "seqs 1 and 2 went to the first call's state_changed and effects_requested (its snapshot write)")
    }
}
