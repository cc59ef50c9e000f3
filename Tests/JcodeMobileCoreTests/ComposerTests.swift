import XCTest
@testable import JcodeMobileCore

final class ComposerTests: XCTestCase {
    func testAttachingAnImageAsksForThePickerAndTheImageGoesWithTheMessage() {
        var store = SpecStore(.connectedChat)
        store.send(.tapNode(id: "chat.attach"), effects: [.device(.requestImagePicker)], followUps: ["attach_image"])
        // The media type is lowercased; the JSON carries the size (8 bytes), not the data.
        store.event(#"{"type":"image_attachment_selected","media_type":"image/PNG","data_base64":"iVBORw0KGgo="}"#) {
            $0["/attachments"] = [["id": "a1", "media_type": "image/png", "byte_count": 8]]
        }
        store.send(.setDraft("what is this?")) { $0["/draft"] = "what is this?" }
        store.send(.tapNode(id: "chat.send"), effects: [
            .webSocket(.send(#"{"id":3,"type":"message","content":"what is this?","images":[["image/png","iVBORw0KGgo="]]}"#)),
        ], followUps: ["send_message", "composer_sent", "send"]) {
            $0["/draft"] = ""
            $0["/attachments"] = []
            $0.append("/transcript", entryJSON("m4", "user", text: "what is this?", imageCount: 1))
            $0.append("/outbox", outboxJSON("o1", "what is this?", attachments: [["id": "a1", "media_type": "image/png", "byte_count": 8]], delivery: "awaiting_ack"))
            $0["/session/is_processing"] = true
        }
        XCTAssertEqual(store.node("message.m4.images")?.label, "1 image")
    }

    func testAnImageAloneCanBeSent() {
        var store = SpecStore(.connectedChat)
        store.event(#"{"type":"image_attachment_selected","media_type":"image/jpeg","data_base64":"AAAA"}"#) {
            $0["/attachments"] = [["id": "a1", "media_type": "image/jpeg", "byte_count": 3]]
        }
        store.send(.sendMessage(text: nil), effects: [.webSocket(.send(#"{"id":3,"type":"message","content":"","images":[["image/jpeg","AAAA"]]}"#))], followUps: ["composer_sent", "send"]) {
            $0["/attachments"] = []
            $0.append("/transcript", entryJSON("m4", "user", imageCount: 1))
            $0.append("/outbox", outboxJSON("o1", "", attachments: [["id": "a1", "media_type": "image/jpeg", "byte_count": 3]], delivery: "awaiting_ack"))
            $0["/session/is_processing"] = true
        }
    }

    func testRemovingAnAttachmentAndRejectingNonImages() {
        var store = SpecStore(.connectedChat)
        store.event(#"{"type":"image_attachment_selected","media_type":"image/png","data_base64":"AAAA"}"#) {
            $0["/attachments"] = [["id": "a1", "media_type": "image/png", "byte_count": 3]]
        }
        XCTAssertFalse(store.json.jsonString.contains("AAAA"), "image data is not part of the state JSON")
        store.send(.tapNode(id: "attachment.a1.remove"), followUps: ["remove_attachment"]) { $0["/attachments"] = [] }
        store.event(#"{"type":"image_attachment_selected","media_type":"application/pdf","data_base64":"AAAA"}"#, followUps: ["show_error"]) {
            let message = "Only images can be attached (this file is application/pdf)."
            $0["/banners/error"] = ["message": .string(message), "retry_after_secs": nil, "text": .string(message)]
        }
        XCTAssertFalse(store.json.jsonString.contains("AAAA"), "image data is not part of the state JSON")
    }

    func testDictationFillsTheDraftAndAFinalTranscriptCanBeSent() {
        var store = SpecStore(.connectedChat)
        store.send(.tapNode(id: "chat.voice"), effects: [.device(.requestSpeechTranscript)], followUps: ["start_voice_input"]) {
            $0["/voice/is_listening"] = true
        }
        XCTAssertEqual(store.node("chat.voice")?.enabled, false)
        store.event(#"{"type":"speech_transcript","text":"run the","is_final":false}"#) { $0["/draft"] = "run the" }
        store.event(#"{"type":"speech_transcript","text":"run the tests","is_final":true}"#) {
            $0["/draft"] = "run the tests"
            $0["/voice/is_listening"] = false
        }
        store.send(.tapNode(id: "chat.send"), effects: [.webSocket(.send(#"{"id":3,"type":"message","content":"run the tests"}"#))], followUps: ["send_message", "composer_sent", "send"]) {
            $0["/draft"] = ""
            $0.append("/transcript", entryJSON("m4", "user", text: "run the tests"))
            $0.append("/outbox", outboxJSON("o1", "run the tests", delivery: "awaiting_ack"))
            $0["/session/is_processing"] = true
        }
    }
}
