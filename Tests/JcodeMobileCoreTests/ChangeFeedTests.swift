import XCTest
@testable import JcodeMobileCore
@testable import JcodeMobileJSON
import JcodeMobileTestSupport

final class ChangeFeedTests: XCTestCase {
    /// A mirror kept only from the change feed must equal the state after every step.
    struct Mirror {
        var document: JSONValue
        var revision: Int
        var resyncs = 0
        var opBytes = 0

        init(_ app: JcodeMobileApp) {
            document = app.state.json
            revision = app.state.revision
        }

        mutating func update(from app: JcodeMobileApp, file: StaticString = #filePath, line: UInt = #line) {
            let answer = json(app.changesJSON(since: UInt64(revision)).string)
            if answer["resync"] == true {
                resyncs += 1
                document = answer["state"] ?? .null
            } else {
                for record in answer["changes"]?.arrayValue ?? [] {
                    let ops = (record["ops"]?.arrayValue ?? []).compactMap(Self.op)
                    opBytes += record.jsonString.utf8.count
                    XCTAssertTrue(JSONDiff.apply(ops, to: &document), "ops apply: \(record.jsonString)", file: file, line: line)
                    if case .object(var o) = document {
                        o["revision"] = record["revision"] ?? .null
                        document = .object(o)
                    }
                }
            }
            revision = Int(answer["revision"]?.int64Value ?? -1)
            XCTAssertEqual(revision, app.state.revision, file: file, line: line)
            if document != app.state.json {
                let actual = app.state.json
                for section in StateSection.all where document[section.name] != actual[section.name] {
                    XCTFail("mirror differs in \(section.name):\n mirror: \(document[section.name]?.jsonString ?? "nil")\n state:  \(actual[section.name]?.jsonString ?? "nil")", file: file, line: line)
                }
            }
        }

        static func op(_ value: JSONValue) -> JSONPatchOp? {
            guard let kind = value["op"]?.stringValue, let pathText = value["path"]?.stringValue else { return nil }
            let path = JSONPath(pathText.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map { part in
                let key = part.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
                return Int(key).map(JSONPath.Component.index) ?? .key(key)
            })
            switch kind {
            case "add": return .add(path: path, value: value["value"] ?? .null)
            case "remove": return .remove(path: path)
            case "replace": return .replace(path: path, value: value["value"] ?? .null)
            case "append": return .append(path: path, text: value["value"]?.stringValue ?? "")
            default: return nil
            }
        }
    }

    private func app(_ scenario: Scenario) -> JcodeMobileApp {
        var options = AppOptions()
        options.scenario = scenario
        return JcodeMobileApp(options: options)
    }

    private func server(_ app: JcodeMobileApp, _ event: String) {
        _ = app.platformEvent(json: #"{"type":"websocket_event","event":\#(event)}"#)
    }

    func testOneDeltaIsOneSmallAppend() {
        let app = app(.connectedChat)
        _ = app.dispatch(json: #"{"type":"send_message","text":"go"}"#)
        server(app, #"{"type":"text_delta","text":"Hello "}"#)
        let revision = app.state.revision
        server(app, #"{"type":"text_delta","text":"world!"}"#)
        let answer = app.changesJSON(since: UInt64(revision)).string
        XCTAssertEqual(answer, #"{"ok":true,"revision":\#(revision + 1),"since":\#(revision),"changes":[{"revision":\#(revision + 1),"ops":[{"op":"append","path":"/transcript/4/text","value":"world!"}]}]}"#)
    }

    func testAnAPICallsTokensChangeOnlyTheSessionMembersTheyMove() {
        let app = app(.connectedChat)
        _ = app.dispatch(json: #"{"type":"send_message","text":"go"}"#)
        server(app, #"{"type":"tokens","input":100,"output":7}"#)
        let revision = app.state.revision
        server(app, #"{"type":"tokens","input":120,"output":7}"#)
        let answer = app.changesJSON(since: UInt64(revision)).string
        XCTAssertEqual(answer, #"{"ok":true,"revision":\#(revision + 1),"since":\#(revision),"changes":[{"revision":\#(revision + 1),"ops":[{"op":"replace","path":"/session/tokens/input","value":220},{"op":"replace","path":"/session/tokens/output","value":14},{"op":"replace","path":"/session/total_tokens/input","value":48430},{"op":"replace","path":"/session/total_tokens/output","value":3134}]}]}"#)
    }

    func testAnswersForTheCurrentAFutureAndATooOldRevision() {
        let app = app(.connectedChat)
        XCTAssertEqual(json(app.changesJSON(since: 0).string)["changes"], [])
        XCTAssertEqual(json(app.changesJSON(since: 7).string)["resync"], true, "a revision the app never had")
        XCTAssertEqual(json(app.changesJSON(since: UInt64.max).string)["resync"], true)
        _ = app.dispatch(json: #"{"type":"set_draft","value":"a"}"#)
        XCTAssertEqual(json(app.changesJSON(since: 0).string)["changes"]?.arrayValue?.count, 1)
    }

    func testTheFeedIsBoundedAndOldRevisionsResync() {
        var options = AppOptions()
        options.scenario = .connectedChat
        let app = JcodeMobileApp(options: options)
        for i in 0..<(ChangeFeed.defaultCapacity + 10) { _ = app.dispatch(json: #"{"type":"set_draft","value":"\#(i)"}"#) }
        XCTAssertEqual(json(app.changesJSON(since: 1).string)["resync"], true)
        let recent = UInt64(app.state.revision - 5)
        XCTAssertEqual(json(app.changesJSON(since: recent).string)["changes"]?.arrayValue?.count, 5)
    }

    func testAMirrorFollowsALongSessionStepByStep() {
        let app = app(.onboarding)
        var mirror = Mirror(app)
        var rng = SplitMix(seed: 42)
        func step(_ body: () -> Void, file: StaticString = #filePath, line: UInt = #line) {
            body()
            mirror.update(from: app, file: file, line: line)
        }
        // Pair and connect.
        step { _ = app.dispatch(json: #"{"type":"set_host","value":"devbox.local"}"#) }
        step { _ = app.dispatch(json: #"{"type":"set_pair_code","value":"123456"}"#) }
        step { _ = app.dispatch(json: #"{"type":"set_device_name","value":"Phone"}"#) }
        step { _ = app.dispatch(json: #"{"type":"set_working_dir","value":"/home/me/app"}"#) }
        step { _ = app.dispatch(json: #"{"type":"submit_pairing"}"#) }
        let pair = app.state.effects.pending.last!.id.rawValue
        step { _ = app.platformEvent(json: #"{"type":"pair_finished","effect_id":\#(pair),"ok":true,"token":"t"}"#) }
        let socket = app.state.effects.pending.last { $0.kind == .websocketConnect }!.id.rawValue
        step { _ = app.platformEvent(json: #"{"type":"websocket_opened","effect_id":\#(socket)}"#) }
        step { self.server(app, #"{"type":"history","session_id":"s1","messages":[{"role":"user","content":"old"}],"all_sessions":["s1","s2"]}"#) }
        // Many turns with everything a turn can hold.
        var request = 3
        for turn in 0..<60 {
            step { _ = app.dispatch(json: #"{"type":"set_draft","value":"question \#(turn)"}"#) }
            step { _ = app.dispatch(json: #"{"type":"send_message"}"#) }
            let id = request
            request += 1
            for _ in 0..<rng.next(upTo: 4) { step { self.server(app, #"{"type":"reasoning_delta","text":"hm \#(rng.next(upTo: 100))"}"#) } }
            step { self.server(app, #"{"type":"reasoning_done","duration_secs":1.5}"#) }
            for k in 0..<rng.next(upTo: 8) { step { self.server(app, #"{"type":"text_delta","text":"w\#(k) é😀 "}"#) } }
            if rng.next(upTo: 2) == 0 {
                let tool = "t\(turn)"
                step { self.server(app, #"{"type":"tool_start","id":"\#(tool)","name":"bash"}"#) }
                step { self.server(app, #"{"type":"tool_input","delta":"{\"cmd\":"}"#) }
                step { self.server(app, #"{"type":"message_end"}"#) }
                step { self.server(app, #"{"type":"tool_exec","id":"\#(tool)","name":"bash"}"#) }
                step { self.server(app, #"{"type":"tool_done","id":"\#(tool)","name":"bash","output":"ok","error":\#(rng.next(upTo: 2) == 0 ? "null" : "\"boom\"")}"#) }
            }
            if rng.next(upTo: 3) == 0 {
                step { _ = app.dispatch(json: #"{"type":"queue_interrupt","text":"also \#(turn)"}"#) }
                request += 1
                if rng.next(upTo: 2) == 0 { step { self.server(app, #"{"type":"soft_interrupt_injected","content":"also \#(turn)","point":"C"}"#) } }
            }
            if rng.next(upTo: 5) == 0 { step { self.server(app, #"{"type":"retry_rollback","attempt":1,"max":3}"#) } }
            step { self.server(app, #"{"type":"tokens","input":\#(turn * 10),"output":\#(turn)}"#) }
            step { self.server(app, #"{"type":"status_detail","detail":"step \#(turn)"}"#) }
            if rng.next(upTo: 6) == 0 { step { self.server(app, #"{"type":"notification","from_name":"ci","message":"build \#(turn)"}"#) } }
            if rng.next(upTo: 7) == 0 { step { self.server(app, #"{"type":"permission_request","request_id":"p\#(turn)","action":"bash","detail":"ls","tier":"low"}"#) } }
            if rng.next(upTo: 9) == 0 { step { _ = app.dispatch(json: #"{"type":"dismiss_notice","notice_id":"n1"}"#) } }
            step { self.server(app, rng.next(upTo: 8) == 0 ? #"{"type":"interrupted"}"# : #"{"type":"done","id":\#(id)}"#) }
            if rng.next(upTo: 10) == 0 { step { self.server(app, #"{"type":"session_renamed","session_id":"s1","display_title":"Title \#(turn)"}"#) } }
            if rng.next(upTo: 15) == 0 {
                let socketID = app.state.connection.socketEffectID!.rawValue
                step { _ = app.platformEvent(json: #"{"type":"websocket_closed","effect_id":\#(socketID)}"#) }
                step { _ = app.dispatch(json: #"{"type":"send_message","text":"offline \#(turn)"}"#) }
                let timer = app.state.connection.reconnectTimerID!
                step { _ = app.platformEvent(json: #"{"type":"timer_fired","timer_id":"\#(timer)"}"#) }
                let next = app.state.effects.pending.last { $0.kind == .websocketConnect }!.id.rawValue
                step { _ = app.platformEvent(json: #"{"type":"websocket_opened","effect_id":\#(next)}"#) }
                step { self.server(app, #"{"type":"history","session_id":"s1","messages":[{"role":"user","content":"reloaded"}]}"#) }
                request = 3 + (app.state.chat.turn.isProcessing ? 1 : 0)
                if app.state.chat.turn.isProcessing { step { self.server(app, #"{"type":"done","id":3}"#) } }
                request = app.state.connection.nextRequestID
            }
        }
        XCTAssertGreaterThan(app.state.revision, 500)
        XCTAssertLessThan(mirror.resyncs, 5, "history reloads are the only resyncs")
    }

    func testAUsedPairingCodeLeavesTheFeedAndHostsBehindItResync() {
        let app = app(.onboarding)
        _ = app.dispatch(json: #"{"type":"set_host","value":"devbox.local"}"#)
        _ = app.dispatch(json: #"{"type":"set_pair_code","value":"731904"}"#)
        _ = app.dispatch(json: #"{"type":"set_device_name","value":"Phone"}"#)
        _ = app.dispatch(json: #"{"type":"set_working_dir","value":"/home/me/app"}"#)
        XCTAssertTrue(app.changesJSON(since: 0).string.contains("731904"), "while typed, the mirror shows it")
        let beforeSubmit = app.state.revision
        _ = app.dispatch(json: #"{"type":"submit_pairing"}"#)
        XCTAssertFalse(app.changesJSON(since: 0).string.contains("731904"))
        XCTAssertEqual(json(app.changesJSON(since: 0).string)["resync"], true)
        XCTAssertEqual(json(app.changesJSON(since: UInt64(beforeSubmit)).string)["changes"]?.arrayValue?.count, 1, "later hosts are unaffected")
    }

    /// A host that reads `changes` after every keystroke following a history
    /// larger than the feed's byte budget (8 MiB) is told each keystroke as
    /// one small operation and ends with the state's draft; a host still
    /// behind the history, whose record the budget dropped, is told to
    /// resync (issue 36: it answered `"changes":[]` from the third keystroke
    /// on, and the host kept "he").
    private func assertKeystrokesAfterHistoryAreFollowed(_ history: String, file: StaticString = #filePath, line: UInt = #line) {
        let app = app(.connectedChat)
        var mirror = Mirror(app)
        let beforeHistory = mirror.revision
        server(app, history)
        mirror.update(from: app, file: file, line: line)
        let afterHistory = mirror.revision
        XCTAssertEqual(afterHistory, beforeHistory + 1, file: file, line: line)
        var answers: [String] = []
        for letter in ["h", "e", "l", "l", "o"] {
            let before = mirror.revision
            _ = app.dispatch(json: #"{"type":"set_draft","value":"\#(app.state.composer.draft + letter)"}"#)
            let answer = app.changesJSON(since: UInt64(before)).string
            answers.append(answer)
            mirror.update(from: app, file: file, line: line)
            XCTAssertEqual(mirror.document["draft"], .string(app.state.composer.draft), file: file, line: line)
            XCTAssertEqual(json(app.changesJSON(since: UInt64(beforeHistory)).string)["resync"], true,
                           "the history's record is past the budget: a host behind it resyncs", file: file, line: line)
        }
        let r = afterHistory
        XCTAssertEqual(answers, [
            #"{"ok":true,"revision":\#(r + 1),"since":\#(r),"changes":[{"revision":\#(r + 1),"ops":[{"op":"replace","path":"/draft","value":"h"}]}]}"#,
            #"{"ok":true,"revision":\#(r + 2),"since":\#(r + 1),"changes":[{"revision":\#(r + 2),"ops":[{"op":"append","path":"/draft","value":"e"}]}]}"#,
            #"{"ok":true,"revision":\#(r + 3),"since":\#(r + 2),"changes":[{"revision":\#(r + 3),"ops":[{"op":"append","path":"/draft","value":"l"}]}]}"#,
            #"{"ok":true,"revision":\#(r + 4),"since":\#(r + 3),"changes":[{"revision":\#(r + 4),"ops":[{"op":"append","path":"/draft","value":"l"}]}]}"#,
            #"{"ok":true,"revision":\#(r + 5),"since":\#(r + 4),"changes":[{"revision":\#(r + 5),"ops":[{"op":"append","path":"/draft","value":"o"}]}]}"#,
        ], file: file, line: line)
        XCTAssertEqual(mirror.document["draft"], "hello", file: file, line: line)
        XCTAssertEqual(mirror.resyncs, 0, file: file, line: line)
        // A host that took the history's record and nothing since is told the five keystrokes.
        let sinceHistory = json(app.changesJSON(since: UInt64(afterHistory)).string)
        XCTAssertEqual(sinceHistory["changes"]?.arrayValue?.compactMap { $0["revision"]?.int64Value }, [r + 1, r + 2, r + 3, r + 4, r + 5].map(Int64.init),
                       file: file, line: line)
    }

    func testKeystrokesAfterANineMegabyteImageHistoryAreDescribed() {
        let image = String(repeating: "A", count: 9_000_000)
        assertKeystrokesAfterHistoryAreFollowed(
            #"{"type":"history","session_id":"s1","messages":[{"role":"user","content":"look"}],"images":[{"media_type":"image/png","data":"\#(image)","anchor":{"kind":"user_prompt","ordinal":0}}]}"#)
    }

    func testKeystrokesAfterTenMegabytesOfTextHistoryAreDescribed() {
        let row = String(repeating: "x", count: 999_000)
        let messages = (0..<10).map { #"{"role":"\#($0 % 2 == 0 ? "user" : "assistant")","content":"\#(row)"}"# }.joined(separator: ",")
        assertKeystrokesAfterHistoryAreFollowed(#"{"type":"history","session_id":"s1","messages":[\#(messages)]}"#)
    }

    /// The ring keeps its records oldest first while the byte budget drops
    /// some as it grows: after every record, the newest revision is answered
    /// with its own operations, and every kept revision with the records
    /// after it, in order; a revision before the kept ones resyncs.
    func testTheRingStaysInOrderWhileTheByteBudgetDropsRecordsAsItGrows() {
        let state = Scenario.connectedChat.state()
        var feed = ChangeFeed(state: state, capacity: 8, byteBudget: 1000)
        // 64 bytes of overhead per record: sizes that make the budget drop 0, 1 or 2 records.
        let sizes = [900, 10, 10, 10, 700, 10, 10, 10, 10, 10, 10, 10, 10, 400, 400, 10, 10]
        var current = state.revision
        for size in sizes {
            current += 1
            feed.record(revision: current, .ops(Array(repeating: UInt8(ascii: "x"), count: size)))
            guard case .changes(let newest) = feed.changes(since: current - 1, current: current) else {
                return XCTFail("revision \(current): resync for the newest record")
            }
            XCTAssertEqual(newest.map(\.revision), [current])
            XCTAssertEqual(newest.first?.ops?.count, size)
            XCTAssertEqual(feed.newest(ofRevision: current)?.ops?.count, size)
            for since in feed.baseRevision..<current {
                guard case .changes(let records) = feed.changes(since: since, current: current) else {
                    return XCTFail("revision \(current): resync since \(since), a kept revision")
                }
                XCTAssertEqual(records.map(\.revision), Array((since + 1)...current), "since \(since) at \(current)")
            }
            if feed.baseRevision > state.revision {
                guard case .resync = feed.changes(since: feed.baseRevision - 1, current: current) else {
                    return XCTFail("revision \(current): no resync before the kept records")
                }
            }
        }
        XCTAssertEqual(current, state.revision + 17)
        XCTAssertEqual(feed.baseRevision, state.revision + 14, "the newest three (400, 10, 10: 612 bytes with their overhead) fit in 1000 bytes")
    }

    func testJSONDiffProducesMinimalOps() {
        XCTAssertEqual(JSONDiff.ops(from: ["a": "hi", "b": 1], to: ["a": "hi there", "b": 1]), [.append(path: JSONPath([.key("a")]), text: " there")])
        XCTAssertEqual(JSONDiff.ops(from: [1, 2], to: [1, 2, 3]), [.add(path: JSONPath([.index(2)]), value: 3)])
        XCTAssertEqual(JSONDiff.ops(from: [1, 2, 3], to: [2, 3]), [.remove(path: JSONPath([.index(0)]))])
        XCTAssertEqual(JSONDiff.ops(from: ["a": 1], to: ["b": 1]), [.replace(path: JSONPath(), value: ["b": 1])])
        XCTAssertEqual(
            JSONDiff.ops(from: ["a": ["x": 1, "y": [1]], "b": "same"], to: ["a": ["x": 2, "y": [1, 5]], "b": "same"], at: JSONPath([.key("s")])),
            [.replace(path: JSONPath([.key("s"), .key("a"), .key("x")]), value: 2), .add(path: JSONPath([.key("s"), .key("a"), .key("y"), .index(1)]), value: 5)])
        XCTAssertEqual(JSONDiff.ops(from: ["a": [1, 2, 3, 4]], to: ["a": [1]]), [.replace(path: JSONPath([.key("a")]), value: [1])])
        XCTAssertEqual(JSONDiff.ops(from: ["a": "same", "b": nil], to: ["a": "same", "b": nil]), [])
        XCTAssertEqual(JSONPath([.key("a/b~c"), .index(3)]).description, "/a~1b~0c/3")
    }
}

final class SectionOrderTests: XCTestCase {
    func testSectionOrdinalsMatchTheirOrder() {
        for (i, section) in StateSection.all.enumerated() {
            XCTAssertEqual(section.index, i, section.name)
        }
    }
}

final class MemoryLayoutTests: XCTestCase {
    func testATranscriptEntryPacksIntoSixtyFourBytes() {
        XCTAssertLessThanOrEqual(MemoryLayout<TranscriptEntry>.stride, 64)
    }

    func testANodeAndATreeOperationStaySmallForTheyAreCopiedOften() {
        // A node's rare fields and detail are out of line; an update operation holds its node in a box.
        XCTAssertLessThanOrEqual(MemoryLayout<SemanticNode>.size, 160)
        XCTAssertLessThanOrEqual(MemoryLayout<TreeChange>.size, 48)
    }
}
