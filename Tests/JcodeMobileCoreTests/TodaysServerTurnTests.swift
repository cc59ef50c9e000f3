import XCTest
@testable import JcodeMobileCore

/// Specifications of the turn bookkeeping against today's jcode server:
/// which `error` and `done` end the local turn, soft interrupts that outlive
/// their turn or carry images, and frames with lines that break the protocol.
final class TodaysServerTurnTests: XCTestCase {
    // MARK: - Errors

    func testAnErrorWithID0ShowsABannerAndTheTurnKeepsStreaming() {
        var store = SpecStore.turnRunning()
        store.startTheReply("Hel")
        // The server could not read some request; the turn is not what failed.
        store.server(#"{"type":"error","id":0,"message":"Invalid request: unknown variant `ping`"}"#, followUps: ["show_error"]) {
            $0["/banners/error"] = [
                "message": "Invalid request: unknown variant `ping`", "retry_after_secs": nil, "text": "Invalid request: unknown variant `ping`",
            ]
        }
        XCTAssertEqual(store.node("message.m5")?.variant, "typing")
        store.server(#"{"type":"text_delta","text":"lo"}"#) { $0["/transcript/4/text"] = "Hello" }
        store.finishTheTurn { $0["/transcript/4/is_streaming"] = false }
    }

    func testAnErrorAnsweringTheLatestMessageEndsTheTurn() {
        var store = SpecStore.turnRunning()
        store.startTheReply("Hel")
        store.server(#"{"type":"error","id":3,"message":"Provider error: overloaded","retry_after_secs":15}"#, followUps: ["show_error", "turn_ended"]) {
            $0["/session/is_processing"] = false
            $0["/outbox"] = []
            $0["/transcript/4/is_streaming"] = false
            $0["/banners/error"] = ["message": "Provider error: overloaded", "retry_after_secs": 15, "text": "Provider error: overloaded (retry in 15 s)"]
        }
    }

    func testAnErrorWithoutAnIDEndsTheTurn() {
        var store = SpecStore.turnRunning()
        store.server(#"{"type":"error","message":"Provider error: overloaded"}"#, followUps: ["show_error", "turn_ended"]) {
            $0["/session/is_processing"] = false
            $0["/outbox"] = []
            $0["/banners/error"] = ["message": "Provider error: overloaded", "retry_after_secs": nil, "text": "Provider error: overloaded"]
        }
    }

    func testAnErrorAnsweringAnotherRequestOrAnEarlierMessageLeavesTheTurnRunning() {
        var store = SpecStore.turnRunning()
        store.finishTheTurn()
        store.sendTheNextMessage("next")
        store.send(.setModel("gpt-5"), effects: [.webSocket(.send(#"{"id":5,"type":"set_model","model":"gpt-5"}"#))], followUps: ["send"]) {
            $0["/session/pending_model"] = "gpt-5"
        }
        store.server(#"{"type":"error","id":5,"message":"unknown model"}"#, followUps: ["show_error"]) {
            $0["/banners/error"] = ["message": "unknown model", "retry_after_secs": nil, "text": "unknown model"]
        }
        store.server(#"{"type":"error","id":3,"message":"late answer to the first message"}"#, followUps: ["show_error"]) {
            $0["/banners/error"] = ["message": "late answer to the first message", "retry_after_secs": nil, "text": "late answer to the first message"]
        }
        XCTAssertEqual(store["/session/is_processing"], true)
        XCTAssertEqual(store["/outbox"], [outboxJSON("o2", "next", delivery: "awaiting_ack")], "neither error acknowledges the message on its way")
    }

    // MARK: - done

    func testDoneAnsweringSubscribeOrClearEndsNoTurn() {
        var store = SpecStore.clearingWithAMessageWaiting()
        // The clear's done empties the chat and lets the message go: it starts a turn, it ends none.
        store.server(
            #"{"type":"done","id":3}"#, effects: [.webSocket(.send(#"{"id":4,"type":"message","content":"go"}"#))],
            notes: ["done for clear"], followUps: ["clear_answered", "send"]
        ) {
            $0["/transcript"] = [entryJSON("m4", "user", text: "go")]
            $0["/outbox/0/delivery"] = "awaiting_ack"
            $0["/session/is_processing"] = true
            $0["/session/is_clearing"] = false
            $0["/session/total_tokens"] = nil
        }
        // A `done` carrying the id of this socket's subscribe, answered long ago (request 1), is
        // another client's turn ending: the message in flight is not touched.
        store.server(#"{"type":"done","id":1}"#, notes: ["done 1 while message o1 is in flight; ignored"])
        XCTAssertEqual(store["/session/is_processing"], true)
        store.server(#"{"type":"done","id":4}"#, followUps: ["turn_ended"]) {
            $0["/session/is_processing"] = false
            $0["/outbox"] = []
        }
    }

    func testDoneAnsweringResumeSessionEndsNoTurn() {
        var store = SpecStore(.connectedChat)
        store.resumeTheOwlSession()
        store.server(#"{"type":"history","id":3,"session_id":"session-owl","messages":[]}"#) {
            $0["/session/history_loaded"] = true
            $0["/banners/status"] = nil
        }
        store.send(.sendMessage(text: "go"), effects: [.webSocket(.send(#"{"id":5,"type":"message","content":"go"}"#))], followUps: ["send"]) {
            $0["/transcript"] = [entryJSON("m4", "user", text: "go")]
            $0.append("/outbox", outboxJSON("o1", "go", delivery: "awaiting_ack"))
            $0["/session/is_processing"] = true
        }
        store.server(#"{"type":"done","id":3}"#, notes: ["done for resume_session"])
        store.server(#"{"type":"done","id":5}"#, followUps: ["turn_ended"]) {
            $0["/session/is_processing"] = false
            $0["/outbox"] = []
        }
    }

    // MARK: - Soft interrupts

    func testASoftInterruptThatOutlivesItsTurnShowsAsSentAndItsInjectionAddsNothing() {
        var store = SpecStore.turnRunning()
        store.queueTheFirstInterrupt("also run the linter")
        store.finishTheTurn {
            $0["/transcript/4/is_queued"] = false
            $0["/soft_interrupts"] = []
        }
        XCTAssertEqual(store.node("message.m5")?.label, "You")
        // The server injects it into its next turn: it is already shown.
        store.server(#"{"type":"soft_interrupt_injected","content":"also run the linter","point":"A"}"#)
        // The same words injected again come from elsewhere: they are shown.
        store.server(#"{"type":"soft_interrupt_injected","content":"also run the linter","point":"A"}"#) {
            $0.append("/transcript", entryJSON("m6", "user", text: "also run the linter"))
        }
    }

    func testImagesSentWhileATurnRunsGoWithTheSoftInterrupt() {
        var store = SpecStore.turnRunning()
        store.event(#"{"type":"image_attachment_selected","media_type":"image/png","data_base64":"iVBORw0KGgo="}"#) {
            $0["/attachments"] = [["id": "a1", "media_type": "image/png", "byte_count": 8]]
        }
        store.send(.setDraft("and this screen")) { $0["/draft"] = "and this screen" }
        store.send(.sendMessage(text: nil), effects: [
            .webSocket(.send(#"{"id":4,"type":"soft_interrupt","content":"and this screen","images":[["image/png","iVBORw0KGgo="]],"urgent":false}"#)),
        ], followUps: ["composer_sent", "send"]) {
            $0["/draft"] = ""
            $0["/attachments"] = []
            $0.append("/transcript", entryJSON("m5", "user", text: "and this screen", isQueued: true, imageCount: 1))
            $0["/soft_interrupts"] = [["entry_id": "m5", "content": "and this screen", "urgent": false]]
        }
        XCTAssertEqual(store.node("message.m5.images")?.label, "1 image")
        // An image alone goes too.
        store.event(#"{"type":"image_attachment_selected","media_type":"image/jpeg","data_base64":"AAAA"}"#) {
            $0["/attachments"] = [["id": "a2", "media_type": "image/jpeg", "byte_count": 3]]
        }
        store.send(.sendMessage(text: nil), effects: [
            .webSocket(.send(#"{"id":5,"type":"soft_interrupt","content":"","images":[["image/jpeg","AAAA"]],"urgent":false}"#)),
        ], followUps: ["composer_sent", "send"]) {
            $0["/attachments"] = []
            $0.append("/transcript", entryJSON("m6", "user", isQueued: true, imageCount: 1))
            $0.append("/soft_interrupts", ["entry_id": "m6", "content": "", "urgent": false])
        }
    }

    // MARK: - Bad input

    func testALineThatBreaksTheProtocolIsDroppedAndTheRestOfTheFrameApplies() {
        var store = SpecStore.turnRunning()
        store.frame(
            #"{"type":"text_delta","text":"Hel"}"#,
            #"{"type":"text_delta","text":42}"#,
            #"{"type":"tool_start","id":"call_x"}"#,
            #"{"type":"text_delta","text":"lo"}"#,
            notes: [
                #"malformed server event dropped: field "text" must be a string, got integer"#,
                #"malformed server event dropped: missing required field "name""#,
            ]
        ) {
            $0.append("/transcript", entryJSON("m5", "assistant", text: "Hello", isStreaming: true))
        }
        XCTAssertEqual(store["/connection/socket_open"], true)
    }

    func testAHistoryRowOfAnUnknownRoleInAFrameLeavesTheRestOfTheFrameApplied() {
        var store = SpecStore(.connectedEmptyChat)
        store.frame(
            #"{"type":"history","id":2,"session_id":"session-fox","messages":[{"role":"user","content":"hi"},{"role":"mystery","content":"?"}]}"#,
            #"{"type":"connection_type","connection":"https/sse"}"#,
            notes: ["history rows with unknown roles skipped: mystery"]
        ) {
            $0["/transcript"] = [entryJSON("m1", "user", text: "hi")]
            $0["/session/connection_type"] = "https/sse"
        }
        XCTAssertEqual(store["/connection/phase"], "connected")
    }
}
