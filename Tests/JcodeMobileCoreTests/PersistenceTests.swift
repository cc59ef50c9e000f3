import XCTest
@testable import JcodeMobileCore

/// Nothing lost across restarts: the snapshot (what it holds, when it is
/// written, how it is restored and refused) and the device identity.
final class PersistenceTests: XCTestCase {
    /// The issue's "done when": pair → chat → free the app → app_new with the
    /// last snapshot → connected to the same server and session, with the
    /// draft and the outbox intact, without pairing again.
    func testARestartedAppReconnectsToTheSameServerAndSessionWithItsDraftAndOutbox() {
        let world = SimulatedWorld()
        world.pair()
        XCTAssertEqual(world.driver.state["connection"]?["phase"], "connected")
        world.dispatch(#"{"type":"send_message","text":"first"}"#)
        XCTAssertEqual(world.received, ["first"])
        world.dispatch(#"{"type":"set_draft","value":"half a thought"}"#)
        world.serverUp = false
        world.dropLink()
        world.dispatch(#"{"type":"send_message","text":"typed offline 1"}"#)
        world.dispatch(#"{"type":"send_message","text":"typed offline 2"}"#)
        XCTAssertEqual(world.driver.state["outbox"]?.arrayValue?.count, 2)

        world.restart()  // killed; launched again from the stored snapshot
        let restored = world.driver.state
        XCTAssertEqual(restored["screen"], "chat")
        XCTAssertEqual(restored["connection"]?["phase"], "connecting")
        XCTAssertEqual(restored["draft"], "half a thought")
        XCTAssertEqual(restored["lifecycle"]?["device_id"], "install-7f3a")
        XCTAssertEqual(restored["selected_server_id"], "devbox.local:7643")
        XCTAssertEqual(world.driver.shownUserTexts, ["typed offline 1", "typed offline 2"], "the outbox shows before history")

        world.serverUp = true
        world.event(#"{"type":"app_foreground"}"#)
        XCTAssertEqual(
            Array(world.effectTypes.prefix(3)), ["secure_store_read", "websocket_connect", "websocket_send"],
            "the token from the secure store, then the socket")
        XCTAssertFalse(world.effectTypes.contains("http_pair"), "no pairing again")
        XCTAssertFalse(world.effectTypes.contains("create_device_id"), "the identity is the same")
        let subscribe = json(world.driver.sentLines[0])
        XCTAssertEqual(subscribe["type"], "subscribe")
        XCTAssertEqual(subscribe["target_session_id"], "ses_1", "the same session")
        XCTAssertEqual(subscribe["working_dir"], "/home/ana/project")
        XCTAssertEqual(subscribe["client_instance_id"], "install-7f3a")
        XCTAssertEqual(world.driver.state["connection"]?["phase"], "connected")
        XCTAssertEqual(world.driver.state["session"]?["id"], "ses_1")
        XCTAssertEqual(world.received, ["first", "typed offline 1", "typed offline 2"], "each message reached the server once, in order")
        XCTAssertEqual(world.driver.userTexts, ["first", "typed offline 1", "typed offline 2"])
        XCTAssertEqual(world.driver.state["outbox"], [])
        XCTAssertEqual(world.driver.state["draft"], "half a thought")
    }

    func testTheSnapshotIsWrittenOnlyWhenItChangesAtMostOncePerCallAndNeverHoldsASecret() {
        let world = SimulatedWorld()
        world.pair()
        XCTAssertEqual(world.effectTypes.filter { $0 == "http_pair" }.count, 1)
        let written = world.storedSnapshot
        XCTAssertEqual(written, world.driver.snapshot, "storage_write carries what jcode_mobile_snapshot returns")
        XCTAssertEqual(written?["version"], 1)
        XCTAssertEqual(written?.at("/servers/0/id"), "devbox.local:7643")
        XCTAssertEqual(written?.at("/servers/0/working_dir"), "/home/ana/project")
        XCTAssertEqual(written?.at("/servers/0/last_session_id"), "ses_1")
        let text = written?.jsonString ?? ""
        XCTAssertFalse(text.contains("tok-secret-1"), "no token")
        XCTAssertFalse(text.contains("123456"), "no pairing code")
        XCTAssertEqual(world.secureStore, ["jcode.token.devbox.local:7643": "tok-secret-1"], "the token is in the secure store only")

        // A streamed delta changes nothing persisted: no write.
        world.dispatch(#"{"type":"send_message","text":"go"}"#)
        world.driver.server(#"{"type":"text_delta","text":"more"}"#)
        XCTAssertEqual(world.driver.effectTypes, [])
        // One keystroke: one write, whatever else the call did.
        world.driver.dispatch(#"{"type":"set_draft","value":"h"}"#)
        XCTAssertEqual(world.driver.effectTypes, ["storage_write"])
        XCTAssertEqual(world.driver.effect("storage_write")?["key"], "snapshot")
        XCTAssertEqual(world.driver.effect("storage_write")?["value"]?["composer"]?["draft"], "h")
        // The same value again: nothing changed, nothing written.
        world.driver.dispatch(#"{"type":"set_draft","value":"h"}"#)
        XCTAssertEqual(world.driver.effectTypes, [])
    }

    func testSnapshotsThisLibraryCannotReadAreRefusedWithClearCodes() {
        XCTAssertEqual(AppDriver.refusal(#"{"snapshot":[1]}"#)?.code, .invalidSnapshot)
        XCTAssertEqual(AppDriver.refusal(#"{"snapshot":{}}"#)?.code, .invalidSnapshot)
        XCTAssertEqual(AppDriver.refusal(#"{"snapshot":{"version":"1"}}"#)?.field, "snapshot.version")
        let newer = AppDriver.refusal(#"{"snapshot":{"version":2,"outbox":{"messages":[]}}}"#)
        XCTAssertEqual(newer?.code, .unsupportedSnapshot)
        XCTAssertEqual(newer?.message, "snapshot version 2 is newer than this library, which reads version 1")
        XCTAssertEqual(AppDriver.refusal(#"{"snapshot":{"version":0}}"#)?.code, .unsupportedSnapshot)
        XCTAssertEqual(AppDriver.refusal(#"{"scenario":"connected_chat","snapshot":{"version":1}}"#)?.code, .invalidScenario)
        XCTAssertEqual(AppDriver.refusal(#"{"device_id":""}"#)?.code, .invalidField)
        XCTAssertEqual(AppDriver.refusal(#"{"device_id":"two words"}"#)?.code, .invalidField)
        XCTAssertNil(AppDriver.refusal(#"{"snapshot":{"version":1}}"#), "an empty snapshot of this version is a first launch")
    }

    func testADamagedSnapshotIsRestoredAsFarAsItCanBeAndSaysWhatItLeftOut() {
        let driver = AppDriver(
            #"""
            {"snapshot":{"version":1,"future_member":{"x":1},
             "device":{"device_id":"install-1","device_name":"Ana's phone"},
             "servers":[{"id":"a:7643","name":"a","host":"a","port":7643,"use_tls":false,"working_dir":"/w"},
                        {"name":"broken","host":"b","use_tls":false}],
             "selected_server_id":"a:7643",
             "composer":{"draft":17},
             "outbox":{"messages":[{"id":"o5","text":"keep me","attachments":[],"delivery":"waiting"},{"id":"o6"}],"next_id":2}}}
            """#)
        let state = driver.state
        XCTAssertEqual(state["servers"]?.arrayValue?.count, 1)
        XCTAssertEqual(state["selected_server_id"], "a:7643")
        XCTAssertEqual(state["draft"], "")
        XCTAssertEqual(state["outbox"]?.at("/0/text"), "keep me")
        XCTAssertEqual(state["outbox"]?.arrayValue?.count, 1)
        XCTAssertEqual(
            state["notices"]?.at("/0/text"), "Some saved data could not be restored: 1 saved server, the draft, 1 unsent message.")
        XCTAssertEqual(state["notices"]?.at("/0/kind"), "warning")
        // Ids never repeat: the next message is o6, after the kept o5, although the snapshot said 2.
        driver.dispatch(#"{"type":"send_message","text":"next"}"#)
        XCTAssertEqual(driver.state["outbox"]?.at("/1/id"), "o6")
    }

    func testAnUnconfirmedMessageSurvivesARestartAndIsNotSentTwiceWhenTheServerHasIt() {
        let world = SimulatedWorld()
        world.pair()
        world.dropAfterNextMessage = true
        world.serverUp = false
        world.dispatch(#"{"type":"send_message","text":"did it arrive?"}"#)
        XCTAssertEqual(world.driver.state["outbox"]?.at("/0/delivery"), "unconfirmed")
        XCTAssertEqual(world.timesShown("did it arrive?"), 1)
        XCTAssertEqual(world.storedSnapshot?.at("/outbox/messages/0/delivery"), "unconfirmed")

        world.restart()
        XCTAssertEqual(world.timesShown("did it arrive?"), 1, "shown as not confirmed yet")
        world.serverUp = true
        world.event(#"{"type":"app_foreground"}"#)
        XCTAssertEqual(world.received, ["did it arrive?"], "the history had it: not sent again")
        XCTAssertEqual(world.driver.state["outbox"], [])
        XCTAssertEqual(world.timesShown("did it arrive?"), 1)
    }

    func testForgettingAServerDeletesItsTokenAndItsSnapshotEntry() {
        let world = SimulatedWorld()
        world.pair()
        world.dispatch(#"{"type":"forget_server","server_id":"devbox.local:7643"}"#)
        XCTAssertEqual(world.secureStore, [:])
        XCTAssertEqual(world.storedSnapshot?["servers"], [])
        XCTAssertEqual(world.storedSnapshot?["selected_server_id"], .null)
        XCTAssertEqual(world.storedSnapshot?.at("/device/device_id"), "install-7f3a", "the install keeps its identity")
    }

    func testAFreshInstallAsksTheHostForItsIdentityOnceAndPairingWaitsForIt() {
        let driver = AppDriver()
        XCTAssertEqual(driver.state["lifecycle"]?["device_id"], .null, "no shared default")
        for action in [
            #"{"type":"set_host","value":"devbox.local"}"#, #"{"type":"set_pair_code","value":"123456"}"#,
            #"{"type":"set_device_name","value":"Ana's phone"}"#, #"{"type":"set_working_dir","value":"/home/ana/project"}"#,
        ] { driver.dispatch(action) }
        driver.dispatch(#"{"type":"submit_pairing"}"#)
        XCTAssertEqual(driver.effectTypes, ["create_device_id"])
        XCTAssertEqual(driver.state["pairing"]?["awaiting_identity"], true)
        let ask = driver.effectID("create_device_id")
        driver.dispatch(#"{"type":"submit_pairing"}"#)
        XCTAssertEqual(driver.effectTypes, [], "a second tap does not ask again")
        driver.event(#"{"type":"device_id_created","effect_id":\#(ask),"device_id":"install-9"}"#)
        XCTAssertEqual(driver.effectTypes, ["http_pair", "storage_write"])
        XCTAssertEqual(driver.effect("http_pair")?["device_id"], "install-9")
        XCTAssertEqual(driver.effect("storage_write")?["value"]?["device"]?["device_id"], "install-9")
        XCTAssertEqual(driver.state["pairing"]?["awaiting_identity"], false)
    }

    func testAnUnusableIdentityEndsThePairingAttemptWithABanner() {
        let driver = AppDriver()
        for action in [
            #"{"type":"set_host","value":"devbox.local"}"#, #"{"type":"set_pair_code","value":"123456"}"#,
            #"{"type":"set_device_name","value":"Ana's phone"}"#, #"{"type":"set_working_dir","value":"/home/ana/project"}"#,
            #"{"type":"submit_pairing"}"#,
        ] { driver.dispatch(action) }
        let ask = driver.effectID("create_device_id")
        driver.event(#"{"type":"device_id_created","effect_id":\#(ask),"device_id":""}"#)
        XCTAssertEqual(driver.effectTypes, [])
        XCTAssertEqual(driver.state["lifecycle"]?["device_id"], .null)
        XCTAssertEqual(driver.state["pairing"]?["is_submitting"], false)
        XCTAssertEqual(driver.state.at("/banners/error/message"), "This device could not create its identity for pairing. Try again.")
    }
}
