@testable import JcodeMobileSwift
import Observation
import Synchronization
import Testing
import JcodeMobileJSON

/// Counts observation callbacks by name (they may run on any thread).
final class Fired: Sendable {
    private let names = Mutex<[String]>([])
    func raise(_ name: String) { names.withLock { $0.append(name) } }
    var all: [String] { names.withLock { $0 } }
}

/// The view model keeps the tree by applying the core's changes: after every
/// step it equals the tree the core builds, and a change reaches only the
/// observers of what it changed.
@MainActor
@Suite struct ViewModelTreeTests {
    // MARK: - Helpers

    /// A server event as the platform event the socket delivers.
    static func server(_ event: String) throws -> PlatformEvent {
        try PlatformEvent.wire.decode(JSONParser.parse(#"{"type":"websocket_event","event":\#(event)}"#))
    }

    static func delta(_ text: String) throws -> PlatformEvent {
        try server(#"{"type":"text_delta","text":"\#(text)"}"#)
    }

    /// A history of `count` entries, user and assistant by turns.
    static func history(_ count: Int) throws -> PlatformEvent {
        var messages: [String] = []
        messages.reserveCapacity(count)
        for i in 0..<count {
            let role = i % 2 == 0 ? "user" : "assistant"
            messages.append(#"{"role":"\#(role)","content":"Message \#(i): \#(String(repeating: "words ", count: i % 23))"}"#)
        }
        return try server(#"{"type":"history","session_id":"s1","messages":[\#(messages.joined(separator: ","))]}"#)
    }

    static func model(_ scenario: Scenario) -> ViewModel {
        var options = AppOptions()
        options.scenario = scenario
        return ViewModel(options: options)
    }

    /// The view model's tree is the core's, and its parts are the tree's parts.
    /// `resyncs`: how many times the view model may have taken the whole tree
    /// (otherwise it got there by applying the core's changes only).
    static func expectMirrors(_ model: ViewModel, _ step: String, resyncs: Int = 0, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(model.resyncCount == resyncs, "after \(step)", sourceLocation: sourceLocation)
        let core = model.app.tree()
        #expect(model.tree == core, "after \(step)", sourceLocation: sourceLocation)
        var chrome = core
        var rows: [SemanticNode] = []
        if let k = core.children.firstIndex(where: { $0.id == "chat.messages" }) {
            rows = core.children[k].children
            chrome.children[k].children = []
            var list = core.children[k]
            list.children = []
            #expect(model.messageList == list, "after \(step)", sourceLocation: sourceLocation)
        } else {
            #expect(model.messageList == nil, "after \(step)", sourceLocation: sourceLocation)
        }
        #expect(model.chrome == chrome, "after \(step)", sourceLocation: sourceLocation)
        #expect(model.messages.map(\.id) == rows.map(\.id), "after \(step)", sourceLocation: sourceLocation)
        #expect(model.messages.map(\.node) == rows, "after \(step)", sourceLocation: sourceLocation)
    }

    /// Observes every row's `node` and `content`, the list, the chrome and
    /// the array of rows; returns what fired after `body`.
    static func fired(_ model: ViewModel, by body: () throws -> Void) rethrows -> [String] {
        let fired = Fired()
        for row in model.messages {
            let id = row.id
            withObservationTracking { _ = row.node } onChange: { fired.raise("node \(id)") }
            withObservationTracking { _ = row.content } onChange: { fired.raise("content \(id)") }
        }
        withObservationTracking { _ = model.messages } onChange: { fired.raise("messages") }
        withObservationTracking { _ = model.chrome } onChange: { fired.raise("chrome") }
        withObservationTracking { _ = model.messageList } onChange: { fired.raise("messageList") }
        withObservationTracking { _ = model.screen } onChange: { fired.raise("screen") }
        try body()
        return fired.all.sorted()
    }

    // MARK: - The tree equals the core's

    @Test func aStreamedReplyKeepsTheTreeEqualToTheCoresAtEveryStep() throws {
        let model = Self.model(.connectedChat)
        Self.expectMirrors(model, "loading")
        model.send(.sendMessage(text: "Explain the build"))
        Self.expectMirrors(model, "send")
        model.receive(try Self.server(#"{"type":"ack","id":3}"#))
        model.receive(try Self.server(#"{"type":"reasoning_delta","text":"Looking at the Makefile"}"#))
        Self.expectMirrors(model, "reasoning")
        model.receive(try Self.server(#"{"type":"reasoning_done","duration_secs":1.5}"#))
        Self.expectMirrors(model, "reasoning done")
        var reply = ""
        for k in 0..<60 {
            let text = k % 10 == 9 ? "and a longer piece of text that wraps onto the next line of the message " : "word\(k) "
            reply += text
            model.receive(try Self.delta(text))
            Self.expectMirrors(model, "delta \(k)")
        }
        model.receive(try Self.server(#"{"type":"text_replace","text":"Replaced."}"#))
        Self.expectMirrors(model, "text_replace")
        model.receive(try Self.server(#"{"type":"message_end"}"#))
        model.receive(try Self.delta("A second message"))
        Self.expectMirrors(model, "a second message")
        model.receive(try Self.server(#"{"type":"tokens","input":1200,"output":80}"#))
        Self.expectMirrors(model, "tokens")
        model.receive(try Self.server(#"{"type":"done","id":3}"#))
        Self.expectMirrors(model, "done")
        #expect(model.messages.last?.node.value == "A second message")
        #expect(model.state.chat.turn.isProcessing == false)
    }

    @Test func toolCallsKeepTheTreeEqualToTheCoresAtEveryStep() throws {
        let model = Self.model(.connectedEmptyChat)
        model.send(.sendMessage(text: "Run the tests"))
        let steps = [
            #"{"type":"ack","id":3}"#,
            #"{"type":"text_delta","text":"Running them. "}"#,
            #"{"type":"tool_start","id":"t1","name":"bash"}"#,
            #"{"type":"tool_input","delta":"{\"command\":"}"#,
            #"{"type":"tool_input","delta":"\"make test\"}"}"#,
            #"{"type":"tool_exec","id":"t1","name":"bash"}"#,
            #"{"type":"tool_done","id":"t1","name":"bash","output":"42 passed"}"#,
            #"{"type":"tool_start","id":"t2","name":"read"}"#,
            #"{"type":"tool_done","id":"t2","name":"read","output":"","error":"no such file"}"#,
            #"{"type":"message_end"}"#,
            #"{"type":"text_delta","text":"All 42 tests pass."}"#,
            #"{"type":"done","id":3}"#,
        ]
        for step in steps {
            model.receive(try Self.server(step))
            Self.expectMirrors(model, step)
        }
        let cards = model.messages.flatMap { $0.node.children.filter { $0.role == .toolCall } }
        #expect(cards.map(\.value) == ["Done", "Failed"])
        #expect(model.messages.last?.node.value == "All 42 tests pass.")
    }

    @Test func aLongHistoryScrolledToTheTopTheMiddleAndTheEndKeepsTheTreeEqualToTheCores() throws {
        let model = Self.model(.connectedEmptyChat)
        model.receive(try Self.history(2000))
        Self.expectMirrors(model, "history")
        #expect(model.messageList?.window?.total == 2000)
        #expect(model.messages.count < 100)
        #expect(model.messages.last?.id == "message.m2000")

        model.send(.scrollMessages(offset: 0))
        Self.expectMirrors(model, "top")
        #expect(model.messages.first?.id == "message.m1")
        #expect(model.messageList?.window?.start == 0)

        model.send(.scrollToMessage(index: 1000))
        Self.expectMirrors(model, "middle")
        #expect(model.messages.contains { $0.id == "message.m1001" })

        // A reply streams in while the person reads the middle.
        model.send(.sendMessage(text: "Summarise"))
        Self.expectMirrors(model, "send while in the middle")
        for k in 0..<20 {
            model.receive(try Self.delta("part \(k) of the summary, "))
            Self.expectMirrors(model, "delta \(k) in the middle")
        }
        for offset in [500, 5000, 50_000] {
            model.send(.scrollMessages(offset: offset))
            Self.expectMirrors(model, "offset \(offset)")
        }

        model.send(.scrollMessages(offset: Int.max))
        Self.expectMirrors(model, "end")
        #expect(model.messages.last?.id == "message.m2002")
        for k in 0..<20 {
            model.receive(try Self.delta("more \(k) "))
            Self.expectMirrors(model, "delta \(k) at the end")
        }
        model.receive(try Self.server(#"{"type":"done","id":3}"#))
        Self.expectMirrors(model, "done")
        #expect(model.messageList?.window?.total == 2002)
    }

    @Test func loadingEveryScenarioAndMovingBetweenScreensKeepsTheTreeEqualToTheCores() throws {
        let model = Self.model(.onboarding)
        for scenario in Scenario.allCases {
            model.send(.loadScenario(scenario.rawValue))
            Self.expectMirrors(model, "load \(scenario.rawValue)")
        }
        model.send(.loadScenario(Scenario.connectedChat.rawValue))
        let rows = model.messages.map(\.id)
        #expect(rows == ["message.m1", "message.m2", "message.m3"])
        for screen in [Screen.settings, .sessions, .chat, .modelPicker, .chat] {
            model.send(.navigate(screen))
            Self.expectMirrors(model, "navigate \(screen.rawValue)")
            #expect(model.screen == screen)
            #expect(model.messages.isEmpty == (screen != .chat))
        }
        #expect(model.messages.map(\.id) == rows)
    }

    // MARK: - Who is told

    @Test func aStreamedDeltaChangesExactlyOneRow() throws {
        let model = Self.model(.chatStreaming)
        let streaming = try #require(model.messages.last)
        #expect(streaming.id == "message.m5")
        let before = model.messages
        let text = try #require(streaming.node.value)

        let fired = try Self.fired(model) { model.receive(try Self.delta("!")) }

        #expect(fired == ["content message.m5", "node message.m5"])
        #expect(streaming.node.value == text + "!")
        #expect(model.messages.count == before.count)
        #expect(zip(model.messages, before).allSatisfy { $0 === $1 })
        Self.expectMirrors(model, "the delta")
    }

    /// A delta that adds lines grows the last row only: rows are in the
    /// list's content coordinates (library 0.6.0), so the rows above it do
    /// not move and are not told; the list is (its content grew, its scroll
    /// follows the end); the chrome is not touched.
    @Test func aDeltaThatAddsLinesMovesTheRowsWithoutChangingWhatTheyShow() throws {
        let model = Self.model(.connectedEmptyChat)
        model.receive(try Self.history(30))
        model.send(.sendMessage(text: "Go"))
        model.receive(try Self.delta("Start"))
        let streaming = try #require(model.messages.last)
        #expect(streaming.id == "message.m32")
        let ids = model.messages.map(\.id)
        #expect(ids == (1...32).map { "message.m\($0)" })  // the whole list: 32 rows are laid out exactly

        let fired = try Self.fired(model) {
            model.receive(try Self.delta(" and then a long paragraph that takes several lines of the screen to show in full"))
        }

        #expect(fired == ["content message.m32", "messageList", "node message.m32"])
        #expect(streaming === model.messages.last)
        Self.expectMirrors(model, "the long delta")
    }

    @Test func aNewMessageInsertsOneRowAndKeepsTheOthers() throws {
        let model = Self.model(.connectedChat)
        let before = model.messages

        let fired = Self.fired(model) { model.send(.sendMessage(text: "One more thing")) }

        #expect(fired.contains("messages"))
        #expect(!fired.contains { $0.hasPrefix("content ") })
        #expect(model.messages.count == before.count + 1)
        #expect(zip(model.messages, before).allSatisfy { $0 === $1 })
        #expect(model.messages.last?.node.value == "One more thing")
        Self.expectMirrors(model, "send")
    }

    @Test func aViewReadingTheWholeTreeIsToldOfADelta() throws {
        let model = Self.model(.chatStreaming)
        let told = Flag()
        withObservationTracking { _ = model.tree } onChange: { told.raise() }

        model.receive(try Self.delta("!"))

        #expect(told.isRaised)
    }

    @Test func editingTheDraftChangesTheChromeAndNoRow() throws {
        let model = Self.model(.connectedChat)

        let fired = Self.fired(model) { model.send(.setDraft("Hello")) }

        #expect(fired == ["chrome"])
        #expect(model.chrome.find("chat.draft")?.value == "Hello")
        Self.expectMirrors(model, "set_draft")
    }

    /// Opening a tool card (a tap, then `set_expanded`) is an `update` of its
    /// `expanded` and a splice of its children: the row holding the card is
    /// told its content changed, no other row is (they may only move).
    @Test func openingAToolCardChangesThatRowAndOnlyThatRow() throws {
        let model = Self.model(.codeEditReview)
        Self.expectMirrors(model, "loading")
        let row = try #require(model.messages.first { $0.node.find("tool.m5.call_read") != nil })
        #expect(row.node.find("tool.m5.call_read")?.expanded == false)
        #expect(row.node.find("tool.m5.call_read.output") == nil)
        let before = model.messages

        let opened = Self.fired(model) { model.send(.tapNode(id: "tool.m5.call_read")) }

        #expect(opened.filter { $0.hasPrefix("content ") } == ["content \(row.id)"])
        #expect(!opened.contains("messages"))
        #expect(row.content.find("tool.m5.call_read")?.expanded == true)
        #expect(row.content.find("tool.m5.call_read.output")?.value == "1\tpub fn connect() {\n2\t    retry(500);\n3\t}")
        #expect(model.messages.count == before.count)
        #expect(zip(model.messages, before).allSatisfy { $0 === $1 })
        #expect(model.state.navigation.expansions.last?.nodeID == "tool.m5.call_read")
        #expect(model.state.navigation.expansions.last?.expanded == true)
        Self.expectMirrors(model, "tap")

        let closed = Self.fired(model) { model.send(.setExpanded(nodeID: "tool.m5.call_read", expanded: false)) }

        #expect(closed.filter { $0.hasPrefix("content ") } == ["content \(row.id)"])
        #expect(row.content.find("tool.m5.call_read")?.expanded == false)
        #expect(row.content.find("tool.m5.call_read.output") == nil)
        Self.expectMirrors(model, "set_expanded false")
    }

    /// Reasoning closes once the answer comes; opening it again updates its
    /// `expanded` and `value` in its row only.
    @Test func openingReasoningUpdatesItsNodeInItsRow() throws {
        let model = Self.model(.connectedChat)
        model.send(.sendMessage(text: "Explain the build"))
        model.receive(try Self.server(#"{"type":"ack","id":3}"#))
        model.receive(try Self.server(#"{"type":"reasoning_delta","text":"Looking at the Makefile"}"#))
        model.receive(try Self.server(#"{"type":"reasoning_done","duration_secs":1.5}"#))
        model.receive(try Self.delta("It builds the library first."))
        let row = try #require(model.messages.last)
        let id = row.id + ".reasoning"
        #expect(row.node.find(id)?.expanded == false)
        #expect(row.node.find(id)?.value == nil)

        let fired = Self.fired(model) { model.send(.setExpanded(nodeID: id, expanded: true)) }

        #expect(fired.filter { $0.hasPrefix("content ") } == ["content \(row.id)"])
        #expect(row.content.find(id)?.expanded == true)
        #expect(row.content.find(id)?.value == "Looking at the Makefile")
        Self.expectMirrors(model, "set_expanded")
    }

    // MARK: - Resync

    /// When the core kept no way from the view model's revision (more than
    /// `TreeFeed.capacity` trees built since), the view model takes the whole
    /// tree: rows still there keep their identity and are not told.
    @Test func aViewModelTooFarBehindTakesTheWholeTreeAndKeepsItsRows() throws {
        let model = Self.model(.connectedChat)
        let rows = model.messages
        // Someone else drives the app and reads its tree at every revision:
        // the core's steps fill up past the view model's revision.
        for k in 0...TreeFeed.capacity {
            model.app.dispatch(.setDraft("draft \(k)"))
            _ = model.app.tree()
        }
        guard case .resync? = model.app.treeChanges(since: model.revision) else {
            Issue.record("expected the core to ask for a resync")
            return
        }

        let fired = try Self.fired(model) { model.receive(try Self.server(#"{"type":"tokens","input":10,"output":2}"#)) }

        #expect(fired == ["chrome", "messageList"])
        #expect(zip(model.messages, rows).allSatisfy { $0 === $1 })
        #expect(model.chrome.find("chat.draft")?.value == "draft \(TreeFeed.capacity)")
        Self.expectMirrors(model, "resync", resyncs: 1)

        // And the changes flow again from there.
        model.send(.sendMessage(text: "Hi"))
        Self.expectMirrors(model, "after the resync", resyncs: 1)
    }
}
