import XCTest
@testable import JcodeMobileCore

/// Every message the person sends reaches the server exactly once and
/// appears exactly once, whatever happens to the link: one specification
/// per fault, each ending with the same two checks.
final class NothingLostTests: XCTestCase {
    /// Each message: received once by the server, shown once, in order; the outbox empty.
    private func assertExactlyOnce(_ world: SimulatedWorld, _ messages: [String], file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(world.received, messages, "what the server received", file: file, line: line)
        for text in messages {
            XCTAssertEqual(world.timesShown(text), 1, "\"\(text)\" shown once", file: file, line: line)
        }
        XCTAssertEqual(world.driver.state["outbox"], [], "nothing left waiting", file: file, line: line)
    }

    func testAMessageLeavesTheOutboxOnlyWhenTheServerAcknowledgesIt() {
        let world = SimulatedWorld.connected()
        world.holdsReplies = true
        world.dispatch(#"{"type":"send_message","text":"one"}"#)
        XCTAssertEqual(world.driver.state.at("/outbox/0/delivery"), "awaiting_ack")
        XCTAssertEqual(world.driver.shownMessages.map(\.label), ["You"], "shown once, as the transcript entry")
        world.holdsReplies = false
        world.flushHeld()
        assertExactlyOnce(world, ["one"])
    }

    func testADropMidStreamKeepsTheMessageOnceAndTheHistoryReplacesThePartialReply() {
        let world = SimulatedWorld.connected()
        world.dropMidStreamOnNextMessage = true
        world.dispatch(#"{"type":"send_message","text":"stream please"}"#)
        // Received (ack) before the drop, but its turn was not seen ending: the history decides.
        XCTAssertEqual(world.driver.state.at("/outbox/0/delivery"), "unconfirmed")
        world.fire("reconnect")
        assertExactlyOnce(world, ["stream please"])
        world.dispatch(#"{"type":"send_message","text":"and again"}"#)
        assertExactlyOnce(world, ["stream please", "and again"])
    }

    func testADropBeforeTheAckDoesNotSendTheMessageTwiceWhenTheServerGotIt() {
        let world = SimulatedWorld.connected()
        world.dropAfterNextMessage = true
        world.dispatch(#"{"type":"send_message","text":"arrived, unacknowledged"}"#)
        XCTAssertEqual(world.driver.state.at("/outbox/0/delivery"), "unconfirmed")
        world.fire("reconnect")
        assertExactlyOnce(world, ["arrived, unacknowledged"])
    }

    func testADropBeforeTheServerGotTheMessageSendsItAgainOnce() {
        let world = SimulatedWorld.connected()
        world.holdsReplies = true
        world.dispatch(#"{"type":"send_message","text":"lost on the way"}"#)
        // The line never reached the server: it forgets it, the link drops.
        XCTAssertEqual(world.received, ["lost on the way"])
        world.forgetLastReceived()
        world.holdsReplies = false
        world.dropLink()
        world.fire("reconnect")
        assertExactlyOnce(world, ["lost on the way"])
    }

    func testAReloadKeepsEveryMessageOnce() {
        let world = SimulatedWorld.connected()
        world.dispatch(#"{"type":"send_message","text":"before reload"}"#)
        world.driver.server(#"{"type":"reloading"}"#)
        world.dropLink()
        XCTAssertEqual(world.timers.values.sorted(), ["reconnect"])
        world.dispatch(#"{"type":"send_message","text":"during reload"}"#)
        world.fire("reconnect")
        assertExactlyOnce(world, ["before reload", "during reload"])
    }

    func testARevokedTokenKeepsUnsentMessagesAndSendsNothing() {
        let world = SimulatedWorld.connected()
        world.refusesToken = true
        world.dropLink()
        world.dispatch(#"{"type":"send_message","text":"after revoke"}"#)
        world.fire("reconnect")
        XCTAssertEqual(world.driver.state.at("/connection/phase"), "failed")
        XCTAssertEqual(world.received, [])
        XCTAssertEqual(world.timesShown("after revoke"), 1)
        XCTAssertEqual(world.driver.state.at("/outbox/0/text"), "after revoke", "kept for after pairing again")
    }

    func testACloseRequestedByTheServerKeepsMessagesUntilThePersonReconnects() {
        let world = SimulatedWorld.connected()
        world.driver.server(#"{"type":"session_close_requested","reason":"Another client took over"}"#)
        world.dispatch(#"{"type":"send_message","text":"after close"}"#)
        XCTAssertEqual(world.received, [])
        world.dispatch(#"{"type":"retry_connection"}"#)
        assertExactlyOnce(world, ["after close"])
    }

    func testAGarbledLineIsDroppedAndTheTurnGoesOn() {
        let world = SimulatedWorld.connected()
        world.holdsReplies = true
        world.dispatch(#"{"type":"send_message","text":"garbled"}"#)
        let socket = world.driver.app.state.connection.socketEffectID!.rawValue
        world.event(#"{"type":"websocket_event","effect_id":\#(socket),"line":"{\"type\":\"text_delta\",\"te"}"#)
        world.holdsReplies = false
        world.flushHeld()
        assertExactlyOnce(world, ["garbled"])
    }

    func testDuplicatedEventsSendAndShowEachMessageOnce() {
        let world = SimulatedWorld.connected()
        world.duplicatesEvents = true
        world.dispatch(#"{"type":"send_message","text":"dup 1"}"#)
        world.dispatch(#"{"type":"send_message","text":"dup 2"}"#)
        assertExactlyOnce(world, ["dup 1", "dup 2"])
    }

    func testARepeatedDoneOfAnEarlierMessageDoesNotEndTheNextTurnEarly() {
        let world = SimulatedWorld.connected()
        world.dispatch(#"{"type":"send_message","text":"first"}"#)
        let firstID = world.driver.requestID("message")
        world.holdsReplies = true
        world.dispatch(#"{"type":"send_message","text":"second"}"#)
        world.driver.server(#"{"type":"done","id":\#(firstID)}"#)  // out of order, late
        XCTAssertEqual(world.driver.state.at("/session/is_processing"), true, "the second message's turn goes on")
        XCTAssertEqual(world.driver.state.at("/outbox/0/text"), "second", "not acknowledged by another message's done")
        world.holdsReplies = false
        world.flushHeld()
        world.dispatch(#"{"type":"send_message","text":"third"}"#)
        assertExactlyOnce(world, ["first", "second", "third"])
    }

    func testReachabilityFlappingSendsEachMessageOnce() {
        let world = SimulatedWorld.connected()
        for n in 1...3 {
            world.dropLink()  // the network goes, and the socket with it
            world.event(#"{"type":"network_reachability_changed","reachable":false}"#)
            XCTAssertEqual(world.driver.state.at("/connection/phase"), "offline")
            world.dispatch(#"{"type":"send_message","text":"flap \#(n)"}"#)
            world.event(#"{"type":"network_reachability_changed","reachable":true}"#)
            world.event(#"{"type":"network_reachability_changed","reachable":false}"#)
            world.event(#"{"type":"network_reachability_changed","reachable":true}"#)
        }
        XCTAssertEqual(world.driver.state.at("/connection/phase"), "connected")
        assertExactlyOnce(world, ["flap 1", "flap 2", "flap 3"])
    }

    func testBackgroundAndForegroundMidTurnLoseNothing() {
        let world = SimulatedWorld.connected()
        world.holdsReplies = true
        world.dispatch(#"{"type":"send_message","text":"long task"}"#)
        world.event(#"{"type":"app_background"}"#)
        world.holdsReplies = false
        world.dropLink()  // suspended: the socket died before the ack was written
        world.dispatch(#"{"type":"send_message","text":"typed in the background"}"#)
        XCTAssertEqual(world.timers, [:], "nothing retries in the background")
        world.event(#"{"type":"app_foreground"}"#)
        assertExactlyOnce(world, ["long task", "typed in the background"])
    }

    func testAnAppKilledWithAFullOutboxSendsItOnceAfterRestarting() {
        let world = SimulatedWorld.connected()
        world.serverUp = false
        world.dropLink()
        world.dispatch(#"{"type":"send_message","text":"k1"}"#)
        world.dispatch(#"{"type":"send_message","text":"k2"}"#)
        world.restart()
        world.serverUp = true
        world.event(#"{"type":"app_foreground"}"#)
        assertExactlyOnce(world, ["k1", "k2"])
    }

    func testAReconnectThatResumesTheSessionSendsTheOutboxAfterItsHistory() {
        // The server answers `subscribe` (resuming the session) with its history; the
        // outbox goes after it, and nothing asks for the history again.
        let world = SimulatedWorld.connected()
        world.dropLink()
        world.dispatch(#"{"type":"send_message","text":"typed while down"}"#)
        world.fire("reconnect")
        assertExactlyOnce(world, ["typed while down"])
        XCTAssertEqual(world.driver.shownMessages.map(\.label), ["You", "jcode"])
    }

    func testAHistoryThatMissesTheMessageOnItsWayStillShowsItOnce() {
        let world = SimulatedWorld.connected()
        world.holdsReplies = true
        world.dispatch(#"{"type":"send_message","text":"in flight"}"#)
        // A history the server made before it read the message (an older server names no request).
        world.driver.server(#"{"type":"history","session_id":"ses_1","messages":[]}"#)
        XCTAssertEqual(world.timesShown("in flight"), 1)
        XCTAssertEqual(world.driver.state.at("/outbox/0/delivery"), "awaiting_ack")
        XCTAssertEqual(world.driver.state.at("/session/is_processing"), true, "its turn still runs")
        world.holdsReplies = false
        world.flushHeld()
        assertExactlyOnce(world, ["in flight"])
    }

    func testAHistoryThatAlreadyHoldsTheMessageOnItsWayShowsItOnceAndCountsItOnce() {
        let world = SimulatedWorld.connected()
        world.holdsReplies = true
        world.dispatch(#"{"type":"send_message","text":"first"}"#)
        world.driver.server(#"{"type":"history","session_id":"ses_1","messages":[{"role":"user","content":"first"}]}"#)
        XCTAssertEqual(world.timesShown("first"), 1)
        world.holdsReplies = false
        world.flushHeld()
        // The next message is reconciled against the right row count: a drop before
        // its ack, with the server holding it, must not send it again.
        world.dropAfterNextMessage = true
        world.dispatch(#"{"type":"send_message","text":"first"}"#)
        world.fire("reconnect")
        XCTAssertEqual(world.received, ["first", "first"])
        XCTAssertEqual(world.timesShown("first"), 2)
        XCTAssertEqual(world.driver.state["outbox"], [])
    }
}
