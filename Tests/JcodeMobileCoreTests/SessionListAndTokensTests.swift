import XCTest
@testable import JcodeMobileCore

/// The session list, session titles, reasoning efforts and token totals as
/// today's jcode gives them.
final class SessionListAndTokensTests: XCTestCase {
    static var turnRunning: Facts {
        var facts = Facts()
        facts.chat.isTurnRunning = true
        return facts
    }

    static func history(_ sessionID: String, sessions: [String]? = nil, total: TokenUsage? = nil) -> ServerEvent.History {
        var history = ServerEvent.History(sessionID: sessionID, messages: [], images: [])
        history.allSessions = sessions.map { $0.map { SessionSummary(id: $0, title: nil) } }
        history.totalTokens = total
        return history
    }

    // MARK: - Tokens (one `tokens` per API call: agent/turn_streaming_mpsc.rs)

    func testEachAPICallOfATurnAddsUpAndAHistoryTotalIsWhereTheSumEnds() {
        var counted = SessionState()
        counted.totalTokens = TokenUsage(input: 100, output: 10)
        var session = FeatureHarness(SessionInteractor(), counted, context: Self.turnRunning)
        session.receive(.tokens(TokenUsage(input: 30, output: 3))) { $0.turnTokens = TokenUsage(input: 30, output: 3) }
        session.receive(.tokens(TokenUsage(input: 20, output: 2, cacheRead: 15))) {
            $0.turnTokens = TokenUsage(input: 50, output: 5, cacheRead: 15)
        }
        // The server's persisted total already holds the calls so far: it replaces the running sum.
        session.receive(.history(Self.history("session-fox", total: TokenUsage(input: 150, output: 15)))) {
            $0.id = "session-fox"
            $0.totalTokens = TokenUsage(input: 150, output: 15)
            $0.turnTokens = nil
        }
        session.receive(.tokens(TokenUsage(input: 7, output: 1))) { $0.turnTokens = TokenUsage(input: 7, output: 1) }
        session.receive(.turnOver) {
            $0.totalTokens = TokenUsage(input: 157, output: 16)
            $0.turnTokens = nil
        }
    }

    func testTokensAfterTheTurnEndedJoinTheTotalAtOnce() {
        var store = SpecStore.turnRunning()
        store.finishTheTurn()
        store.server(#"{"type":"tokens","input":5,"output":1}"#, notes: ["tokens with no turn running: added to the total"]) {
            $0["/session/tokens"] = ["input": 5, "output": 1, "cache_read_input": nil, "cache_creation_input": nil]
            $0["/session/total_tokens"] = ["input": 48215, "output": 3121, "cache_read_input": nil, "cache_creation_input": nil]
        }
    }

    // MARK: - The session list

    func testAHistoryListingASessionTwiceListsItOnce() {
        var session = FeatureHarness(SessionInteractor(), SessionState(), context: Facts())
        session.receive(.history(Self.history("session-fox", sessions: ["session-fox", "session-owl", "session-fox"]))) {
            $0.id = "session-fox"
            $0.allSessions = [SessionSummary(id: "session-fox", title: nil), SessionSummary(id: "session-owl", title: nil)]
        }
    }

    func testAResumeListsEachSessionOnce() {
        var store = SpecStore(.connectedChat)
        store.resumeTheOwlSession()
        // jcode lists its live sessions, sorted (client_state.rs): the resumed one among them.
        store.server(#"{"type":"history","id":3,"session_id":"session-owl","messages":[],"all_sessions":["session-fox","session-owl"]}"#, notes: nil, followUps: nil) {
            $0["/session/history_loaded"] = true
            $0["/banners/status"] = nil
        }
        store.server(#"{"type":"done","id":3}"#, notes: nil)
        store.server(#"{"type":"session","session_id":"session-owl"}"#)
        XCTAssertEqual(
            store["/session/all_sessions"], [["id": "session-fox", "title": "Fix the flaky test"], ["id": "session-owl", "title": "Release notes"]])
    }

    func testTheCurrentSessionIsListedWhenTheServersListLeavesItOut() {
        var session = FeatureHarness(SessionInteractor(), SessionState(), context: Facts())
        session.receive(.history(Self.history("session-heron", sessions: ["session-fox"]))) {
            $0.id = "session-heron"
            $0.allSessions = [SessionSummary(id: "session-fox", title: nil), SessionSummary(id: "session-heron", title: nil)]
        }
    }

    // MARK: - Titles

    func testASessionTheServerGaveNoTitleIsNamedFromItsIdAsJcodeNamesIt() {
        XCTAssertEqual(SemanticText.sessionTitle("Deflake CI", id: "session_fox_1700000000000"), "Deflake CI")
        XCTAssertEqual(SemanticText.sessionTitle(nil, id: "session_fox_1700000000000_00ab"), "Fox")
        XCTAssertEqual(SemanticText.sessionTitle("", id: "session_fox_1700000000000"), "Fox")
        XCTAssertEqual(SemanticText.sessionTitle(nil, id: "s1"), "s1")
        XCTAssertEqual(SemanticText.sessionTitle(nil, id: "session_"), "session_")
        XCTAssertEqual(SemanticText.sessionTitle(nil, id: "session__x"), "session__x")
        XCTAssertEqual(SemanticText.sessionTitle(nil, id: nil), "New session")
    }

    func testAResumedSessionWithoutATitleShowsItsName() {
        var store = SpecStore(.connectedChat)
        store.server(#"{"type":"session","session_id":"session_heron_1700000000000"}"#) {
            $0["/session/id"] = "session_heron_1700000000000"
            $0["/session/title"] = nil
            $0.append("/session/all_sessions", ["id": "session_heron_1700000000000", "title": nil])
        }
        XCTAssertEqual(store.node("chat.header")?.label, "Heron")
        store.send(.navigate(.sessions)) { $0["/screen"] = "sessions" }
        XCTAssertEqual(store.node("session.session_heron_1700000000000")?.label, "Heron")
        XCTAssertEqual(store.node("session.session_heron_1700000000000")?.selected, true)
    }

    // MARK: - Reasoning effort

    func testTheEffortsOfferedAreTheProvidersWithTheCurrentOneMarked() {
        // connected_chat: anthropic, effort medium.
        var store = SpecStore(.connectedChat)
        store.send(.navigate(.modelPicker)) { $0["/screen"] = "model_picker" }
        let rows = store.node("effort.list")?.children ?? []
        XCTAssertEqual(rows.map(\.id), ["effort.none", "effort.low", "effort.medium", "effort.high", "effort.xhigh", "effort.max"])
        XCTAssertEqual(rows.map(\.selected), [false, false, true, false, false, false])
        XCTAssertEqual(rows.map(\.value), [nil, nil, nil, nil, nil, nil], "in use is said by selected, not in words")
        XCTAssertEqual(rows.map(\.label), ["None", "Low", "Medium", "High", "Xhigh", "Max"])
    }

    func testEachProviderFamilyOffersTheEffortsJcodeAcceptsForIt() {
        var s = SessionState()
        s.provider = "openai"
        XCTAssertEqual(s.reasoningEfforts, ["none", "minimal", "low", "medium", "high", "xhigh", "max"])
        s.provider = "DeepSeek"
        XCTAssertEqual(s.reasoningEfforts, ["none", "low", "medium", "high", "max"])
        s.provider = nil
        XCTAssertEqual(s.reasoningEfforts, ["none", "low", "medium", "high", "xhigh"])
        // An effort the server reports outside the list is offered too (so it shows as current).
        s.provider = "anthropic"
        s.reasoningEffort = "swarm"
        XCTAssertEqual(s.reasoningEfforts, ["none", "low", "medium", "high", "xhigh", "max", "swarm"])
    }
}
