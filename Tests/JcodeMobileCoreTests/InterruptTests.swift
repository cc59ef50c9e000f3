import XCTest
@testable import JcodeMobileCore

final class SoftInterruptTests: XCTestCase {
    func testQueueingWhileATurnRunsShowsAQueuedBubbleAndSendsSoftInterrupt() {
        var store = TestStore.turnRunning()
        store.send(.queueInterrupt(text: "also check the docs", urgent: true), effects: [
            .webSocket(.send(#"{"id":4,"type":"soft_interrupt","content":"also check the docs","urgent":true}"#)),
        ]) {
            let serial = $0.transcript.appendQueued(text: "also check the docs")
            $0.softInterrupts = [SoftInterrupt(entrySerial: serial, content: "also check the docs", urgent: true)]
            $0.connection.nextRequestID = 5
        }
        XCTAssertEqual(SemanticTree.build(store.state).find("chat.queued")?.label, "1 message queued")
    }

    func testSendingWhileATurnRunsBecomesASoftInterrupt() {
        var store = TestStore.turnRunning()
        store.send(.setDraft("wait")) { $0.draft = "wait" }
        store.send(.sendMessage(text: nil), effects: [.webSocket(.send(#"{"id":4,"type":"soft_interrupt","content":"wait","urgent":false}"#))]) {
            $0.draft = ""
            let serial = $0.transcript.appendQueued(text: "wait")
            $0.softInterrupts = [SoftInterrupt(entrySerial: serial, content: "wait", urgent: false)]
            $0.connection.nextRequestID = 5
        }
    }

    func testQueueingWithNoTurnRunningSendsAnOrdinaryMessage() {
        var store = TestStore(.connectedChat)
        store.send(.queueInterrupt(text: "hi", urgent: false), effects: [.webSocket(.send(#"{"id":3,"type":"message","content":"hi"}"#))]) {
            $0.transcript.append(role: .user, text: "hi")
            $0.session.isProcessing = true
            $0.connection.nextRequestID = 4
            $0.nextOutboxID += 1
        }
    }

    func testNewAssistantOutputGoesAboveTheQueuedBubble() {
        var store = TestStore.turnRunning()
        store.send(.queueInterrupt(text: "later", urgent: false), effects: [.webSocket(.send(#"{"id":4,"type":"soft_interrupt","content":"later","urgent":false}"#))]) {
            let serial = $0.transcript.appendQueued(text: "later")
            $0.softInterrupts = [SoftInterrupt(entrySerial: serial, content: "later", urgent: false)]
            $0.connection.nextRequestID = 5
        }
        store.server(#"{"type":"text_delta","text":"working"}"#) { $0.transcript.appendText("working", at: $0.transcript.streamingAssistant()) }
        XCTAssertEqual(store.state.transcript.entries.suffix(2).map(\.text), ["working", "later"])
        XCTAssertEqual(store.state.transcript.entries.last?.isQueued, true)
    }

    func testInjectionUnqueuesTheMatchingBubbleAndTheReplyFollowsIt() {
        var store = TestStore.turnRunning()
        store.server(#"{"type":"text_delta","text":"before"}"#) { $0.transcript.appendText("before", at: $0.transcript.streamingAssistant()) }
        store.send(.queueInterrupt(text: "stop that", urgent: false), effects: [.webSocket(.send(#"{"id":4,"type":"soft_interrupt","content":"stop that","urgent":false}"#))]) {
            let serial = $0.transcript.appendQueued(text: "stop that")
            $0.softInterrupts = [SoftInterrupt(entrySerial: serial, content: "stop that", urgent: false)]
            $0.connection.nextRequestID = 5
        }
        let serial = store.state.softInterrupts[0].entrySerial
        store.server(#"{"type":"soft_interrupt_injected","content":"stop that","point":"C","tools_skipped":1}"#) {
            $0.transcript.finishStreaming()
            $0.transcript.unqueue(serial: serial)
            $0.softInterrupts = []
        }
        store.server(#"{"type":"text_delta","text":"after"}"#) { $0.transcript.appendText("after", at: $0.transcript.streamingAssistant()) }
        XCTAssertEqual(store.state.transcript.entries.suffix(3).map(\.text), ["before", "stop that", "after"])
        XCTAssertEqual(store.state.transcript.entries.suffix(3).map(\.isQueued), [false, false, false])
    }

    func testAnInterruptFromAnotherClientIsAppended() {
        var store = TestStore.turnRunning()
        store.server(#"{"type":"soft_interrupt_injected","content":"from the laptop","point":"A"}"#) {
            $0.transcript.append(role: .user, text: "from the laptop")
        }
        store.server(#"{"type":"soft_interrupt_injected","content":"Budget reached","display_role":"system","point":"D"}"#) {
            $0.transcript.append(role: .system, text: "Budget reached")
        }
    }

    func testAFinishedTurnDrainsWhatIsStillQueued() {
        var store = TestStore.turnRunning()
        store.send(.queueInterrupt(text: "one", urgent: false), effects: [.webSocket(.send(#"{"id":4,"type":"soft_interrupt","content":"one","urgent":false}"#))]) {
            let serial = $0.transcript.appendQueued(text: "one")
            $0.softInterrupts = [SoftInterrupt(entrySerial: serial, content: "one", urgent: false)]
            $0.connection.nextRequestID = 5
        }
        store.server(#"{"type":"done","id":3}"#) {
            $0.transcript.unqueueAll()
            $0.softInterrupts = []
            $0.session.isProcessing = false
        }
        XCTAssertEqual(store.state.transcript.entries.last?.text, "one")
        XCTAssertEqual(store.state.transcript.entries.last?.isQueued, false)
    }

    func testAnInterruptedTurnDrainsToo() {
        var store = TestStore.turnRunning()
        store.send(.queueInterrupt(text: "one", urgent: false), effects: [.webSocket(.send(#"{"id":4,"type":"soft_interrupt","content":"one","urgent":false}"#))]) {
            let serial = $0.transcript.appendQueued(text: "one")
            $0.softInterrupts = [SoftInterrupt(entrySerial: serial, content: "one", urgent: false)]
            $0.connection.nextRequestID = 5
        }
        store.server(#"{"type":"interrupted"}"#) {
            $0.transcript.unqueueAll()
            $0.softInterrupts = []
            $0.session.isProcessing = false
            $0.addNotice(.info, "Interrupted")
        }
    }

    func testCancellingRemovesTheQueuedBubblesAndSendsCancelSoftInterrupts() {
        var store = TestStore.turnRunning()
        store.send(.queueInterrupt(text: "one", urgent: false), effects: [.webSocket(.send(#"{"id":4,"type":"soft_interrupt","content":"one","urgent":false}"#))]) {
            let serial = $0.transcript.appendQueued(text: "one")
            $0.softInterrupts = [SoftInterrupt(entrySerial: serial, content: "one", urgent: false)]
            $0.connection.nextRequestID = 5
        }
        store.send(.queueInterrupt(text: "two", urgent: false), effects: [.webSocket(.send(#"{"id":5,"type":"soft_interrupt","content":"two","urgent":false}"#))]) {
            let serial = $0.transcript.appendQueued(text: "two")
            $0.softInterrupts.append(SoftInterrupt(entrySerial: serial, content: "two", urgent: false))
            $0.connection.nextRequestID = 6
        }
        XCTAssertEqual(SemanticTree.build(store.state).find("chat.queued")?.label, "2 messages queued")
        store.send(.tapNode(id: "chat.cancel_queued"), effects: [.webSocket(.send(#"{"id":6,"type":"cancel_soft_interrupts"}"#))]) {
            $0.transcript.removeQueued()
            $0.softInterrupts = []
            $0.connection.nextRequestID = 7
        }
        XCTAssertFalse(store.state.transcript.entries.contains(where: \.isQueued))
    }
}
