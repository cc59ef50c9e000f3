import XCTest
@testable import JcodeMobileCore

final class SoftInterruptTests: XCTestCase {
    func testQueueingWhileATurnRunsShowsAQueuedBubbleAndSendsSoftInterrupt() {
        var store = SpecStore.turnRunning()
        store.send(.queueInterrupt(text: "also check the docs", urgent: true), effects: [
            .webSocket(.send(#"{"id":4,"type":"soft_interrupt","content":"also check the docs","urgent":true}"#)),
        ], followUps: ["send"]) {
            $0.append("/transcript", entryJSON("m5", "user", text: "also check the docs", isQueued: true))
            $0["/soft_interrupts"] = [["entry_id": "m5", "content": "also check the docs", "urgent": true]]
        }
        XCTAssertEqual(store.node("chat.queued")?.label, "1 message queued")
    }

    func testSendingWhileATurnRunsBecomesASoftInterrupt() {
        var store = SpecStore.turnRunning()
        store.send(.setDraft("wait")) { $0["/draft"] = "wait" }
        store.send(
            .sendMessage(text: nil), effects: [.webSocket(.send(#"{"id":4,"type":"soft_interrupt","content":"wait","urgent":false}"#))],
            followUps: ["composer_sent", "send"]
        ) {
            $0["/draft"] = ""
            $0.append("/transcript", entryJSON("m5", "user", text: "wait", isQueued: true))
            $0["/soft_interrupts"] = [["entry_id": "m5", "content": "wait", "urgent": false]]
        }
    }

    func testQueueingWithNoTurnRunningSendsAnOrdinaryMessage() {
        var store = SpecStore(.connectedChat)
        store.send(
            .queueInterrupt(text: "hi", urgent: false), effects: [.webSocket(.send(#"{"id":3,"type":"message","content":"hi"}"#))],
            followUps: ["send"]
        ) {
            $0.append("/transcript", entryJSON("m4", "user", text: "hi"))
            $0.append("/outbox", outboxJSON("o1", "hi", delivery: "awaiting_ack"))
            $0["/session/is_processing"] = true
        }
    }

    func testNewAssistantOutputGoesAboveTheQueuedBubble() {
        var store = SpecStore.turnRunning()
        store.queueTheFirstInterrupt("later")
        // The assistant entry goes in before the queued bubble, which stays last.
        store.server(#"{"type":"text_delta","text":"working"}"#) {
            $0.insert("/transcript/4", entryJSON("m6", "assistant", text: "working", isStreaming: true))
        }
    }

    func testInjectionUnqueuesTheMatchingBubbleAndTheReplyFollowsIt() {
        var store = SpecStore.turnRunning()
        store.startTheReply("before")
        store.send(.queueInterrupt(text: "stop that", urgent: false), effects: [.webSocket(.send(#"{"id":4,"type":"soft_interrupt","content":"stop that","urgent":false}"#))], followUps: ["send"]) {
            $0.append("/transcript", entryJSON("m6", "user", text: "stop that", isQueued: true))
            $0["/soft_interrupts"] = [["entry_id": "m6", "content": "stop that", "urgent": false]]
        }
        store.server(#"{"type":"soft_interrupt_injected","content":"stop that","point":"C","tools_skipped":1}"#) {
            $0["/transcript/4/is_streaming"] = false
            $0["/transcript/5/is_queued"] = false
            $0["/soft_interrupts"] = []
        }
        store.server(#"{"type":"text_delta","text":"after"}"#) {
            $0.append("/transcript", entryJSON("m7", "assistant", text: "after", isStreaming: true))
        }
    }

    func testAnInterruptFromAnotherClientIsAppended() {
        var store = SpecStore.turnRunning()
        store.server(#"{"type":"soft_interrupt_injected","content":"from the laptop","point":"A"}"#) {
            $0.append("/transcript", entryJSON("m5", "user", text: "from the laptop"))
        }
        store.server(#"{"type":"soft_interrupt_injected","content":"Budget reached","display_role":"system","point":"D"}"#) {
            $0.append("/transcript", entryJSON("m6", "system", text: "Budget reached"))
        }
    }

    /// jcode injects consecutive queued interrupts as one, their texts joined by a blank line
    /// (agent/interrupts.rs, inject_soft_interrupts): both bubbles become messages, none is added.
    func testTwoInterruptsInjectedAsOneMergedTextBecomeTwoMessagesAndNothingIsShownTwice() {
        var store = SpecStore.turnRunning()
        store.queueTheFirstInterrupt("use the staging db")
        store.send(.queueInterrupt(text: "and skip the slow tests", urgent: false), effects: [.webSocket(.send(#"{"id":5,"type":"soft_interrupt","content":"and skip the slow tests","urgent":false}"#))], followUps: ["send"]) {
            $0.append("/transcript", entryJSON("m6", "user", text: "and skip the slow tests", isQueued: true))
            $0.append("/soft_interrupts", ["entry_id": "m6", "content": "and skip the slow tests", "urgent": false])
        }
        store.server(#"{"type":"soft_interrupt_injected","content":"use the staging db\n\nand skip the slow tests","point":"D"}"#) {
            $0["/transcript/4/is_queued"] = false
            $0["/transcript/5/is_queued"] = false
            $0["/soft_interrupts"] = []
        }
        // The turn's end has nothing left to drain: still two messages, one each.
        store.finishTheTurn()
        XCTAssertEqual(store.state.chat.transcript.count, 6)
    }

    func testAFinishedTurnDrainsWhatIsStillQueued() {
        var store = SpecStore.turnRunning()
        store.queueTheFirstInterrupt("one")
        store.finishTheTurn {
            $0["/transcript/4/is_queued"] = false
            $0["/soft_interrupts"] = []
        }
    }

    func testAnInterruptedTurnDrainsToo() {
        var store = SpecStore.turnRunning()
        store.queueTheFirstInterrupt("one")
        store.server(#"{"type":"interrupted"}"#, followUps: ["notice", "turn_ended"]) {
            $0["/transcript/4/is_queued"] = false
            $0["/soft_interrupts"] = []
            $0["/session/is_processing"] = false
            $0["/outbox"] = []
            $0.append("/notices", ["id": "n1", "kind": "info", "text": "Interrupted"])
        }
    }

    func testCancellingRemovesTheQueuedBubblesAndSendsCancelSoftInterrupts() {
        var store = SpecStore.turnRunning()
        store.queueTheFirstInterrupt("one")
        store.send(.queueInterrupt(text: "two", urgent: false), effects: [.webSocket(.send(#"{"id":5,"type":"soft_interrupt","content":"two","urgent":false}"#))], followUps: ["send"]) {
            $0.append("/transcript", entryJSON("m6", "user", text: "two", isQueued: true))
            $0.append("/soft_interrupts", ["entry_id": "m6", "content": "two", "urgent": false])
        }
        XCTAssertEqual(store.node("chat.queued")?.label, "2 messages queued")
        store.send(
            .tapNode(id: "chat.cancel_queued"), effects: [.webSocket(.send(#"{"id":6,"type":"cancel_soft_interrupts"}"#))],
            followUps: ["cancel_queued_interrupts", "send"]
        ) {
            $0.remove("/transcript/5")
            $0.remove("/transcript/4")
            $0["/soft_interrupts"] = []
        }
    }

    func testQueueInterruptWithoutUrgentIsSentAsNotUrgent() {
        var store = SpecStore.turnRunning()
        store.dispatch(
            #"{"type":"queue_interrupt","text":"first"}"#,
            effects: [.webSocket(.send(#"{"id":4,"type":"soft_interrupt","content":"first","urgent":false}"#))], followUps: ["send"]
        ) {
            $0.append("/transcript", entryJSON("m5", "user", text: "first", isQueued: true))
            $0["/soft_interrupts"] = [["entry_id": "m5", "content": "first", "urgent": false]]
        }
    }

    func testInjectionsArrivingOutOfOrderUnqueueTheEntryWithTheSameContent() {
        var store = SpecStore.turnRunning()
        store.send(.queueInterrupt(text: "first", urgent: true), effects: [.webSocket(.send(#"{"id":4,"type":"soft_interrupt","content":"first","urgent":true}"#))], followUps: ["send"]) {
            $0.append("/transcript", entryJSON("m5", "user", text: "first", isQueued: true))
            $0["/soft_interrupts"] = [["entry_id": "m5", "content": "first", "urgent": true]]
        }
        store.send(.queueInterrupt(text: "second", urgent: false), effects: [.webSocket(.send(#"{"id":5,"type":"soft_interrupt","content":"second","urgent":false}"#))], followUps: ["send"]) {
            $0.append("/transcript", entryJSON("m6", "user", text: "second", isQueued: true))
            $0.append("/soft_interrupts", ["entry_id": "m6", "content": "second", "urgent": false])
        }
        // The second arrives first: it is delivered and goes above the bubble still queued.
        store.frame(#"{"type":"soft_interrupt_injected","content":"second","point":"after_tool"}"#) {
            $0.remove("/transcript/5")
            $0.insert("/transcript/4", entryJSON("m6", "user", text: "second"))
            $0["/soft_interrupts"] = [["entry_id": "m5", "content": "first", "urgent": true]]
        }
        XCTAssertEqual(store.node("chat.queued")?.label, "1 message queued")
        store.frame(#"{"type":"soft_interrupt_injected","content":"first","point":"after_tool"}"#) {
            $0["/transcript/5/is_queued"] = false
            $0["/soft_interrupts"] = []
        }
        // The reply follows both.
        store.server(#"{"type":"text_delta","text":"ok"}"#) {
            $0.append("/transcript", entryJSON("m7", "assistant", text: "ok", isStreaming: true))
        }
    }
}

/// Stopping the running turn.
final class InterruptTests: XCTestCase {
    func testTappingStopWhileATurnRunsSendsCancel() {
        var store = SpecStore.turnRunning()
        XCTAssertEqual(store.node("chat.interrupt")?.label, "Stop")
        XCTAssertEqual(store.node("chat.interrupt")?.visible, true)
        store.send(.tapNode(id: "chat.interrupt"), effects: [.webSocket(.send(#"{"id":4,"type":"cancel"}"#))], followUps: ["interrupt", "send"])
        // The turn runs until the server says it was interrupted.
        XCTAssertEqual(store["/session/is_processing"], true)
        store.server(#"{"type":"interrupted"}"#, followUps: ["notice", "turn_ended"]) {
            $0["/session/is_processing"] = false
            $0["/outbox"] = []
            $0.append("/notices", ["id": "n1", "kind": "info", "text": "Interrupted"])
        }
        XCTAssertEqual(store.node("chat.interrupt")?.visible, false)
        store.send(.tapNode(id: "chat.interrupt"), notes: ["tap_node: no tappable node \"chat.interrupt\" on this screen"])
    }
}
