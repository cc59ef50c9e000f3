import XCTest
@testable import JcodeMobileCore

/// The app's life around the link: keep-alive, background and foreground,
/// and the secure store failing (docs/LIFECYCLE.md).
final class LifecycleTests: XCTestCase {
    func testWhileConnectedAPingGoesOutEveryTwentySecondsAndAMissingPongCountsAsADrop() {
        let world = SimulatedWorld.connected()
        XCTAssertEqual(world.timers.values.sorted(), ["keepalive"])
        world.fire("keepalive")
        XCTAssertEqual(world.driver.sentTypes.last, "ping")
        XCTAssertEqual(world.timers.values.sorted(), ["keepalive"], "the next tick is scheduled")
        XCTAssertEqual(world.driver.state.at("/connection/phase"), "connected", "the pong came")

        world.answersPings = false
        world.fire("keepalive")  // ping, no pong
        world.fire("keepalive")  // the pong is still missing
        XCTAssertEqual(world.lastTypes, ["websocket_close", "schedule_timer"])
        XCTAssertEqual(world.driver.state.at("/connection/phase"), "reconnecting")
        XCTAssertEqual(world.driver.state.at("/connection/reason"), "The server stopped answering")
        XCTAssertEqual(world.timers.values.sorted(), ["reconnect"])
        world.answersPings = true
        world.fire("reconnect")
        XCTAssertEqual(world.driver.state.at("/connection/phase"), "connected")
    }

    func testTheBackgroundStopsTimersAndTheForegroundReconnectsAtOnce() {
        let world = SimulatedWorld.connected()
        world.serverUp = false
        world.dropLink()
        XCTAssertEqual(world.timers.values.sorted(), ["reconnect"])
        world.event(#"{"type":"app_background"}"#)
        XCTAssertEqual(world.lastTypes, ["cancel_timer"])
        XCTAssertEqual(world.timers, [:], "no timer runs in the background")
        XCTAssertEqual(world.driver.state.at("/connection/phase"), "reconnecting")
        world.serverUp = true
        world.event(#"{"type":"app_foreground"}"#)
        XCTAssertEqual(world.lastTypes, ["websocket_connect"], "at once, without waiting out the backoff")
        XCTAssertEqual(world.driver.state.at("/connection/phase"), "connected")
        XCTAssertEqual(world.timers.values.sorted(), ["keepalive"])
    }

    func testALinkThatDropsInTheBackgroundIsRetriedWhenTheAppIsInFrontAgain() {
        let world = SimulatedWorld.connected()
        world.event(#"{"type":"app_background"}"#)
        XCTAssertEqual(world.lastTypes, ["cancel_timer"], "the keep-alive stops; the socket stays open")
        XCTAssertEqual(world.driver.state.at("/connection/phase"), "connected")
        world.dropLink()  // the OS suspended the app and the socket died
        XCTAssertEqual(world.lastTypes, [], "no reconnect timer in the background")
        XCTAssertEqual(world.driver.state.at("/connection/phase"), "reconnecting")
        world.event(#"{"type":"app_foreground"}"#)
        XCTAssertEqual(world.lastTypes, ["websocket_connect"])
        XCTAssertEqual(world.driver.state.at("/connection/phase"), "connected")
    }

    func testBackInFrontWhileConnectedThePingGoesOutAtOnce() {
        let world = SimulatedWorld.connected()
        world.event(#"{"type":"app_background"}"#)
        world.event(#"{"type":"app_foreground"}"#)
        XCTAssertEqual(world.lastTypes, ["websocket_send", "schedule_timer"])
        XCTAssertEqual(world.driver.sentTypes.last, "ping")
        world.event(#"{"type":"app_foreground"}"#)
        XCTAssertEqual(world.lastTypes, [], "already running: nothing more")
    }

    func testAForegroundAfterTheSessionWasClosedByTheServerDoesNotReconnect() {
        let world = SimulatedWorld.connected()
        world.driver.server(#"{"type":"session_close_requested","reason":"Another device took over"}"#)
        world.event(#"{"type":"app_background"}"#)
        world.event(#"{"type":"app_foreground"}"#)
        XCTAssertEqual(world.lastTypes, [])
        XCTAssertEqual(world.driver.state.at("/connection/phase"), "failed")
    }

    func testASecureStoreThatCannotBeReadLeadsToPairAgainNotALoop() {
        let world = SimulatedWorld.connected()
        world.restart()
        world.secureStoreFails = true
        world.event(#"{"type":"app_foreground"}"#)
        XCTAssertEqual(world.effectTypes, ["secure_store_read"])
        XCTAssertEqual(world.driver.state.at("/connection/phase"), "failed")
        XCTAssertEqual(world.driver.app.tree().find("connection.repair")?.visible, true)
        XCTAssertEqual(world.driver.app.tree().find("connection.retry")?.visible, false)
        world.event(#"{"type":"app_background"}"#)
        world.event(#"{"type":"app_foreground"}"#)
        XCTAssertEqual(world.effectTypes, ["secure_store_read"], "asked once; the person decides what next")
    }

    func testARefusedTokenIsDeletedFromTheSecureStoreAndThePersonIsAskedToPairAgain() {
        let world = SimulatedWorld.connected()
        world.refusesToken = true
        world.dropLink()
        world.fire("reconnect")
        XCTAssertEqual(world.driver.state.at("/connection/phase"), "failed")
        XCTAssertEqual(world.secureStore, [:])
        XCTAssertEqual(world.driver.app.tree().find("connection.repair")?.visible, true)
        XCTAssertEqual(world.timers, [:])
    }
}
