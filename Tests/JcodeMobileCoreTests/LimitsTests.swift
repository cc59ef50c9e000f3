import XCTest
@testable import JcodeMobileCore
@testable import JcodeMobileJSON

/// Lists a server or a host can grow without end have caps: what goes past
/// one is dropped or refused, logged, and said once; nothing the person
/// wrote is lost, and one frame buzzes the phone once.
final class LimitsTests: XCTestCase {
    private func connected() -> AppDriver { AppDriver(#"{"scenario":"connected_empty_chat"}"#) }

    /// One raw frame of `n` events made by `event`.
    private func frame(_ n: Int, _ event: (Int) -> String) -> String {
        let lines = (0..<n).map(event).joined(separator: "\n")
        return #"{"type":"websocket_event","line":\#(JSONValue.string(lines).jsonString)}"#
    }

    private func notices(_ driver: AppDriver) -> [String] {
        driver.state["notices"]?.arrayValue?.compactMap { $0["text"]?.stringValue } ?? []
    }

    private func banner(_ driver: AppDriver) -> String? {
        driver.app.state.notices.errorBanner.map { SemanticText.message(of: $0) }
    }

    func testAFrameOfTwoHundredPermissionRequestsKeepsSixtyFourBuzzesOnceAndSaysSoOnce() {
        let driver = connected()
        let effects = driver.event(frame(200) { #"{"type":"permission_request","request_id":"p\#($0)","action":"bash","detail":"step \#($0)"}"# })
        XCTAssertEqual(driver.state["permission_requests"]?.arrayValue?.count, 64)
        XCTAssertEqual(driver.state.at("/permission_requests/63/request_id"), "p63")
        XCTAssertEqual(effects.filter { $0["type"]?.stringValue == "haptic" }.count, 1)
        XCTAssertEqual(
            notices(driver).filter { $0.hasPrefix("The agent asked for more than 64 answers") },
            ["The agent asked for more than 64 answers at once; later requests were dropped."])
    }

    func testARepeatedPermissionRequestIsRefreshedEvenWhenTheListIsFull() {
        let driver = connected()
        driver.event(frame(64) { #"{"type":"permission_request","request_id":"p\#($0)","action":"bash","detail":"step \#($0)"}"# })
        driver.server(#"{"type":"permission_request","request_id":"p5","action":"bash","detail":"step five, again"}"#)
        XCTAssertEqual(driver.state.at("/permission_requests/5/detail"), "step five, again")
        XCTAssertEqual(notices(driver).filter { $0.hasPrefix("The agent asked") }, [])
    }

    func testAFrameOfManyStdinRequestsKeepsSixtyFour() {
        let driver = connected()
        driver.event(frame(100) { #"{"type":"stdin_request","request_id":"s\#($0)","prompt":"value \#($0)?"}"# })
        XCTAssertEqual(driver.state["stdin_requests"]?.arrayValue?.count, 64)
        XCTAssertEqual(notices(driver).filter { $0.hasPrefix("The agent asked") }.count, 1)
    }

    func testRenamesOfSixHundredNewSessionsListFiveHundredTwelveAndRenamingAListedOneStillWorks() {
        let driver = connected()
        let listed = driver.state.at("/session/all_sessions")?.arrayValue?.count ?? 0
        driver.event(frame(600) { #"{"type":"session_renamed","session_id":"ses-\#($0)","display_title":"Session \#($0)"}"# })
        XCTAssertEqual(driver.state.at("/session/all_sessions")?.arrayValue?.count, 512)
        XCTAssertEqual(
            notices(driver).filter { $0.contains("sessions") },
            ["The server has more than 512 sessions; only the first 512 are listed."])
        let firstNew = 0
        XCTAssertLessThan(listed, 512)
        driver.server(#"{"type":"session_renamed","session_id":"ses-\#(firstNew)","display_title":"Renamed"}"#)
        let titles = driver.state.at("/session/all_sessions")?.arrayValue?.compactMap { $0["title"]?.stringValue } ?? []
        XCTAssertEqual(titles.filter { $0 == "Renamed" }.count, 1)
    }

    func testAHistoryListingSixHundredSessionsKeepsTheFirstFiveHundredTwelve() {
        let driver = connected()
        let sessions = (0..<600).map { #""ses-\#($0)""# }.joined(separator: ",")
        driver.server(#"{"type":"history","session_id":"ses-0","messages":[],"all_sessions":[\#(sessions)]}"#)
        XCTAssertEqual(driver.state.at("/session/all_sessions")?.arrayValue?.count, 512)
        XCTAssertEqual(driver.state.at("/session/all_sessions/511/id"), "ses-511")
        XCTAssertEqual(notices(driver).filter { $0.contains("512 sessions") }.count, 1)
    }

    func testTheHundredAndFirstOfflineMessageStaysInTheComposer() {
        let driver = connected()
        driver.dispatch(#"{"type":"disconnect"}"#)
        for n in 1...100 { driver.dispatch(#"{"type":"send_message","text":"offline \#(n)"}"#) }
        XCTAssertEqual(driver.state["outbox"]?.arrayValue?.count, 100)
        driver.dispatch(#"{"type":"set_draft","value":"typed one"}"#)
        driver.dispatch(#"{"type":"send_message"}"#)
        XCTAssertEqual(driver.state["draft"], "typed one")
        XCTAssertEqual(banner(driver), "100 messages are already waiting to be sent. This one stays in the composer until they have gone.")
        driver.dispatch(#"{"type":"send_message","text":"from a notification"}"#)
        XCTAssertEqual(driver.state["draft"], "typed one\nfrom a notification")
        XCTAssertEqual(driver.state["outbox"]?.arrayValue?.count, 100)
        XCTAssertEqual(driver.state.at("/outbox/99/text"), "offline 100")
    }

    func testTheThirtyThirdQueuedInterruptGoesIntoTheDraft() {
        let driver = connected()
        driver.dispatch(#"{"type":"send_message","text":"go"}"#)
        for n in 1...32 { driver.dispatch(#"{"type":"queue_interrupt","text":"also \#(n)","urgent":false}"#) }
        XCTAssertEqual(driver.state["soft_interrupts"]?.arrayValue?.count, 32)
        let effects = driver.dispatch(#"{"type":"queue_interrupt","text":"one more","urgent":false}"#)
        XCTAssertEqual(effects.filter { $0["type"]?.stringValue == "websocket_send" }.count, 0)
        XCTAssertEqual(driver.state["draft"], "one more")
        XCTAssertEqual(banner(driver), "32 messages are already queued for the agent. This one stays in the composer until the turn ends.")
    }

    func testAReplyPastOneMebibyteIsCutAtACharacterWithAMarkAndWhatFollowsIsDropped() {
        let driver = connected()
        driver.dispatch(#"{"type":"send_message","text":"go"}"#)
        // 1 048 575 bytes (524 287 two-byte characters and an "a"): one byte of room, where no "é" fits.
        driver.server(#"{"type":"text_delta","text":"\#(String(repeating: "é", count: 524_287))a"}"#)
        driver.server(#"{"type":"text_delta","text":"éé"}"#)
        driver.server(#"{"type":"text_delta","text":"and more"}"#)
        let text = driver.app.state.chat.transcript.entries.last?.text ?? ""
        XCTAssertEqual(text, String(repeating: "é", count: 524_287) + "a\n[… cut: the rest passed the 1 MiB one entry keeps]")
        let notes = driver.app.store.log.recent(2).flatMap(\.notes)
        XCTAssertEqual(
            notes.filter { $0.hasPrefix("text_delta cut") },
            ["text_delta cut: the entry keeps 1048576 bytes per field (4 bytes arrived)",
             "text_delta cut: the entry keeps 1048576 bytes per field (8 bytes arrived)"])
    }

    func testAToolOutputPastOneMebibyteIsCutWithAMark() {
        let driver = connected()
        driver.dispatch(#"{"type":"send_message","text":"go"}"#)
        driver.server(#"{"type":"tool_start","id":"c1","name":"bash"}"#)
        driver.server(#"{"type":"tool_done","id":"c1","name":"bash","output":"\#(String(repeating: "x", count: 1_100_000))"}"#)
        let output = driver.app.state.chat.transcript.entries.last?.toolCalls.first?.output ?? ""
        XCTAssertEqual(output, String(repeating: "x", count: 1_048_576) + "\n[… cut: the rest passed the 1 MiB one entry keeps]")
    }

    func testThe257thToolCallOfOneReplyStartsANewEntryAndNoneIsLost() {
        let driver = connected()
        driver.dispatch(#"{"type":"send_message","text":"go"}"#)
        driver.event(frame(300) { #"{"type":"tool_start","id":"c\#($0)","name":"bash"}"# })
        driver.server(#"{"type":"tool_done","id":"c3","name":"bash","output":"three"}"#)
        let entries = driver.app.state.chat.transcript.entries.filter { $0.role == .assistant }
        XCTAssertEqual(entries.map(\.toolCalls.count), [256, 44])
        XCTAssertEqual(entries[1].toolCalls.first?.id, "c256")
        XCTAssertEqual(entries[0].toolCalls[3].output, "three")
    }

    func testPastItsBudgetTheTranscriptDropsItsOldestEntriesAtOnceAndSaysHowMany() {
        // Each entry counts its text and 128 bytes: 9 entries of 100 bytes count 2 052.
        var transcript = Transcript(textBudget: 2500)
        for n in 0..<9 { transcript.append(role: n % 2 == 0 ? .user : .assistant, text: String(repeating: "a", count: 100)) }
        XCTAssertEqual([transcript.textBytes, transcript.count, transcript.trimmedEntries], [2052, 9, 0])
        let streaming = transcript.streamingEntryCreatingIfNeeded()  // 2 180
        transcript.appendText(String(repeating: "b", count: 400), at: streaming)
        // 2 580: the oldest go until at most 1 875 are left (a quarter free): 4 of them (912), and a marker comes first.
        let marker = "[4 earlier entries are not kept: the transcript keeps 0 MiB of text]"
        XCTAssertEqual(transcript.entries.first?.text, marker)
        XCTAssertEqual(transcript.entries.first?.role, .system)
        XCTAssertEqual(transcript.trimmedEntries, 4)
        XCTAssertEqual(transcript.count, 7)
        XCTAssertEqual(transcript.textBytes, 2580 - 912 + 128 + marker.utf8.count)
        XCTAssertEqual(transcript.streamingIndex, 6)
        XCTAssertTrue(transcript.wasReset)
        // streaming goes on into the same entry
        transcript.appendText("c", at: transcript.streamingIndex!)
        XCTAssertEqual(transcript.entries.last?.text, String(repeating: "b", count: 400) + "c")
    }

    func testASecondTrimUpdatesTheMarkerInsteadOfAddingOne() {
        var transcript = Transcript(textBudget: 2500)
        for _ in 0..<30 { transcript.append(role: .user, text: String(repeating: "a", count: 100)) }
        XCTAssertEqual(transcript.entries.filter { $0.role == .system }.count, 1)
        XCTAssertEqual(transcript.entries.first?.text, "[\(transcript.trimmedEntries) earlier entries are not kept: the transcript keeps 0 MiB of text]")
        XCTAssertLessThanOrEqual(transcript.textBytes, 2500)
        XCTAssertEqual(transcript.trimmedEntries + transcript.count - 1, 30)
    }

    func testTenThousandEmptyRowsCountAgainstTheBudgetToo() {
        var transcript = Transcript(textBudget: 128 * 1000)
        for _ in 0..<10_000 { transcript.append(role: .user, text: "") }
        XCTAssertLessThanOrEqual(transcript.count, 1000)
        XCTAssertGreaterThan(transcript.trimmedEntries, 9000)
    }

    // MARK: - The log

    private func app(_ options: String) -> JcodeMobileApp {
        var text = options
        return text.withUTF8 { bytes in
            do throws(CoreError) {
                return try JcodeMobileApp(optionsJSON: bytes)
            } catch {
                XCTFail(error.message)
                return JcodeMobileApp(options: AppOptions())
            }
        }
    }

    /// A `set_draft` of `bytes` letters `letter`, as the host sends it.
    private func draft(_ letter: Character, _ bytes: Int) -> String {
        #"{"type":"set_draft","value":""# + String(repeating: letter, count: bytes) + #""}"#
    }

    func testTheSnapshotWriteOfAOneMebibyteDraftIsLoggedAsASummaryAndReportedWhole() throws {
        let app = app(#"{"scenario":"connected_empty_chat"}"#)
        let report = json(String(decoding: app.dispatch(json: draft("x", 1 << 20)), as: UTF8.self))
        let reported = try XCTUnwrap(report["effects"]?.arrayValue?.last)
        XCTAssertEqual(reported["type"], "storage_write")
        XCTAssertEqual(reported["value"]?["composer"]?["draft"]?.stringValue?.utf8.count, 1 << 20, "the host gets the whole snapshot")
        let entry = try XCTUnwrap(json(app.logsJSON(limit: 1).string)["entries"]?.arrayValue?.first)
        let logged = try XCTUnwrap(entry["effects"]?.arrayValue)
        XCTAssertEqual(logged.count, 1)
        XCTAssertEqual(logged.first?.objectValue?.keys, ["effect_id", "type", "summary"])
        XCTAssertEqual(logged.first?["effect_id"]?.int64Value, reported["effect_id"]?.int64Value)
        XCTAssertEqual(logged.first?["type"], "storage_write")
        let size = JSONValue.array([reported]).jsonString.utf8.count - 2
        XCTAssertEqual(logged.first?["summary"]?.stringValue, "\(size) bytes, not kept in the log")
    }

    func testSixtyEditsOfAOneMebibyteDraftKeepLessThanHalfAMebibyteInALogOfSixtyFour() throws {
        let app = app(#"{"scenario":"connected_empty_chat","log_capacity":64}"#)
        for i in 0..<60 { _ = app.dispatch(json: draft(Character(UnicodeScalar(UInt8(97 + i % 26))), 1 << 20)) }
        XCTAssertEqual(app.store.log.count, 60)
        // Each entry: its summarised input and effect, 256 for itself, 4 KiB for a JSON payload.
        XCTAssertLessThan(app.store.log.bytes, 512 << 10, "60 MiB of drafts, not 120 MiB of log")
    }

    func testAMessageOfEightThousandLettersIsLoggedAsSummariesAndTheLogHoldsNoneOfIt() throws {
        let app = app(#"{"scenario":"connected_chat"}"#)
        _ = app.dispatch(json: draft("y", 8000))
        _ = app.dispatch(json: #"{"type":"send_message"}"#)
        let logs = app.logsJSON(limit: 2).string
        XCTAssertFalse(logs.contains("yyyyyyyy"), "neither the input nor its effects are kept")
        let entry = try XCTUnwrap(json(logs)["entries"]?.arrayValue?.last)
        XCTAssertEqual(entry["type"], "send_message")
        let logged = try XCTUnwrap(entry["effects"]?.arrayValue)
        XCTAssertEqual(logged.map { $0["type"]?.stringValue ?? "" }, ["websocket_send", "storage_write"])
        XCTAssertEqual(logged.map { $0.objectValue?.keys ?? [] }, [["effect_id", "type", "summary"], ["effect_id", "type", "summary"]])
    }

    func testPastItsByteBudgetTheLogDropsItsOldestEntriesAndKeepsTheNewestEvenAlone() {
        func entry(_ seq: Int, noteBytes: Int) -> LogEntry {
            LogEntry(
                seq: seq, revision: 0, kind: .action, type: "t", payload: nil, effectsJSON: LogEntry.noEffects,
                notes: [String(repeating: "n", count: noteBytes)], followUps: [], errorCode: nil)
        }
        var log = TransitionLog(capacity: 10, byteBudget: 4000)
        for _ in 0..<5 { log.append { entry($0, noteBytes: 1000) } }
        // Each entry costs 256 + 2 ("[]") + 1 ("t") + 64 + 1000 = 1 323: three fit in 4 000.
        XCTAssertEqual(log.recent(10).map(\.seq), [3, 4, 5])
        XCTAssertEqual(log.bytes, 3 * 1323)
        log.append { entry($0, noteBytes: 10_000) }
        XCTAssertEqual(log.recent(10).map(\.seq), [6], "the newest stays, alone, over the budget")
        for _ in 0..<12 { log.append { entry($0, noteBytes: 10) } }
        XCTAssertEqual(log.recent(20).map(\.seq), Array(9...18), "then the capacity bounds it again")
        XCTAssertEqual(log.bytes, 10 * 333)
    }
}
