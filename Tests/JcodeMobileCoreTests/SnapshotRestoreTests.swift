import XCTest
@testable import JcodeMobileCore
@testable import JcodeMobileJSON

/// A snapshot is read back through the checks the actions apply: a host as
/// pairing saves it, an absolute working directory, images only and at most
/// 10 on a message, at most 100 messages waiting, at most 64 saved servers.
/// Whatever restoring leaves out or changes is named in the restore notice
/// and logged; nothing is dropped silently. (Issue 27, items 4 and 7.)
final class SnapshotRestoreTests: XCTestCase {
    private func server(_ host: String, port: Int = 7643, workingDir: String = "\"/w\"", lastSession: String = "null") -> String {
        #"{"name":"n","host":\#(JSONValue.string(host).jsonString),"port":\#(port),"use_tls":false,"working_dir":\#(workingDir),"last_session_id":\#(lastSession)}"#
    }

    private func notice(_ driver: AppDriver) -> String? { driver.state["notices"]?.at("/0/text")?.stringValue }

    /// The notes of the log's `restore` entry (nil when there is none).
    private func restoreNotes(_ driver: AppDriver) -> [String]? {
        let entries = json(driver.app.logsJSON(limit: 0).string)["entries"]?.arrayValue ?? []
        guard let entry = entries.first(where: { $0["kind"] == "restore" }) else { return nil }
        return entry["notes"]?.arrayValue?.compactMap(\.stringValue)
    }

    func testAHostThatPairingWouldRefuseNeverReachesWebsocketConnect() {
        let injected = "a b\r\nX-Injected: 1"
        let driver = AppDriver(
            #"{"snapshot":{"version":1,"servers":[\#(server(injected))],"selected_server_id":"a b\r\nX-Injected: 1:7643"}}"#)
        XCTAssertEqual(driver.state["servers"], [])
        XCTAssertEqual(driver.state["selected_server_id"], .null)
        XCTAssertEqual(notice(driver), "Some saved data could not be restored: 1 saved server, the server in use.")
        driver.event(#"{"type":"app_foreground"}"#)
        XCTAssertFalse(driver.effectTypes.contains("websocket_connect"), "nothing connects to the injected host")
        XCTAssertFalse(driver.app.logsJSON(limit: 0).string.contains("X-Injected"), "the log's notes count it, never repeat it")
    }

    func testOnlyHostsAsPairingSavesThemAreRestored() {
        let hosts = ["devbox.local", "[::1]", "10.0.0.2", "Devbox.local", "http://evil", "evil/path", "ana@evil", "evil:80", " evil", ""]
        let driver = AppDriver(#"{"snapshot":{"version":1,"servers":[\#(hosts.map { server($0) }.joined(separator: ","))]}}"#)
        XCTAssertEqual(driver.state["servers"]?.arrayValue?.compactMap { $0["id"]?.stringValue }, ["devbox.local:7643", "[::1]:7643", "10.0.0.2:7643"])
        XCTAssertEqual(notice(driver), "Some saved data could not be restored: 7 saved servers.")
    }

    func testARelativeWorkingDirectoryAndANumericLastSessionAreNamedNotDroppedSilently() {
        let driver = AppDriver(
            #"{"snapshot":{"version":1,"servers":[\#(server("a", workingDir: "\"project\"", lastSession: "42")),\#(server("b", workingDir: "\"\""))],"selected_server_id":"a:7643"}}"#)
        XCTAssertEqual(driver.state["servers"]?.at("/0/working_dir"), "")
        XCTAssertEqual(driver.state["servers"]?.at("/0/last_session_id"), .null)
        XCTAssertEqual(driver.state["servers"]?.at("/1/working_dir"), "", "an empty directory was never set: nothing to name")
        XCTAssertEqual(
            notice(driver),
            "Some saved data could not be restored: the working directory of 1 saved server (not an absolute path), the last session of 1 saved server.")
        XCTAssertEqual(
            restoreNotes(driver),
            ["dropped from the snapshot: the working directory of 1 saved server (not an absolute path)",
             "dropped from the snapshot: the last session of 1 saved server"])
    }

    func testARestoredOutboxHoldsAtMostOneHundredMessagesOfAtMostTenImagesEach() {
        let twelveImages = (1...12).map { #"{"id":"i\#($0)","media_type":"image/PNG","data_base64":"iVBO"}"# }.joined(separator: ",")
        let notAnImage = #"{"id":"p1","media_type":"application/pdf","data_base64":"JVBE"}"#
        var messages = [
            #"{"id":"o1","text":"twelve images","attachments":[\#(twelveImages)],"delivery":"waiting"}"#,
            #"{"id":"o2","text":"a pdf","attachments":[\#(notAnImage)],"delivery":"waiting"}"#,
        ]
        messages += (3...150).map { #"{"id":"o\#($0)","text":"m\#($0)","attachments":[],"delivery":"waiting"}"# }
        let driver = AppDriver(
            #"{"snapshot":{"version":1,"composer":{"draft":"","attachments":[\#(notAnImage)],"next_attachment_id":1},"outbox":{"messages":[\#(messages.joined(separator: ","))],"next_id":151}}}"#)
        let outbox = driver.state["outbox"]?.arrayValue ?? []
        XCTAssertEqual(outbox.count, 100)
        XCTAssertEqual(outbox.first?["id"], "o1")
        XCTAssertEqual(outbox.last?["id"], "o100", "the oldest wait; the newest past the limit go")
        XCTAssertEqual(outbox.first?["attachments"]?.arrayValue?.count, 10)
        XCTAssertEqual(outbox.first?.at("/attachments/0/media_type"), "image/png", "lowercased, as a picked image is")
        XCTAssertEqual(outbox[1]["attachments"], [])
        XCTAssertEqual(driver.state["attachments"], [])
        XCTAssertEqual(
            notice(driver),
            "Some saved data could not be restored: some attachments of the draft, some images of 2 unsent messages, "
                + "the 50 newest unsent messages (at most 100 wait to be sent).")
        XCTAssertEqual(restoreNotes(driver)?.count, 3)
    }

    func testTenThousandSavedServersAndMessagesRestoreToTheLimitsKeepingTheServerInUse() {
        let servers = (0..<10_000).map { server("h\($0)") }.joined(separator: ",")
        let messages = (1...10_000).map { #"{"id":"o\#($0)","text":"m\#($0)","attachments":[],"delivery":"waiting"}"# }
            .joined(separator: ",")
        let driver = AppDriver(
            #"{"snapshot":{"version":1,"servers":[\#(servers)],"selected_server_id":"h5:7643","outbox":{"messages":[\#(messages)],"next_id":1}}}"#)
        let ids = driver.state["servers"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
        XCTAssertEqual(ids.count, 64)
        XCTAssertEqual(ids.first, "h5:7643", "the server in use stays, however old")
        XCTAssertEqual(Array(ids.dropFirst()), (9937..<10_000).map { "h\($0):7643" }, "then the newest")
        XCTAssertEqual(driver.state["selected_server_id"], "h5:7643")
        XCTAssertEqual(driver.state["outbox"]?.arrayValue?.count, 100)
        XCTAssertEqual(
            notice(driver),
            "Some saved data could not be restored: the 9900 newest unsent messages (at most 100 wait to be sent), "
                + "the 9936 oldest saved servers (this device keeps 64).")
        XCTAssertEqual(
            restoreNotes(driver),
            ["dropped from the snapshot: the 9900 newest unsent messages (at most 100 wait to be sent)",
             "dropped from the snapshot: the 9936 oldest saved servers (this device keeps 64)"])
        XCTAssertEqual(driver.snapshot["servers"]?.arrayValue?.count, 64, "what is written back is within the limits")
    }

    func testPairingASixtyFifthServerForgetsTheOldestNotInUseWithItsToken() {
        let servers = (0..<64).map { server("h\($0)") }.joined(separator: ",")
        let world = SimulatedWorld(
            #"{"snapshot":{"version":1,"servers":[\#(servers)]}}"#, secureStore: ["jcode.token.h0:7643": "old", "jcode.token.h1:7643": "old"])
        XCTAssertNil(restoreNotes(world.driver), "64 servers are within the limit: nothing to name")
        world.pair()
        let ids = world.driver.state["servers"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
        XCTAssertEqual(ids.count, 64)
        XCTAssertEqual(ids.first, "h1:7643")
        XCTAssertEqual(ids.last, "devbox.local:7643")
        XCTAssertEqual(world.secureStore["jcode.token.h0:7643"], nil, "its token is deleted, as forget_server deletes it")
        XCTAssertEqual(world.secureStore["jcode.token.h1:7643"], "old")
        XCTAssertTrue(
            (world.driver.state["notices"]?.arrayValue ?? []).contains {
                $0["text"] == "This device keeps at most 64 servers: it forgot the oldest, n (h0). Pair with it again to use it."
            })
    }
}
