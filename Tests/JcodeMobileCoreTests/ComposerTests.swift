import XCTest
@testable import JcodeMobileCore

final class ComposerTests: XCTestCase {
    func testAttachingAnImageAsksForThePickerAndTheImageGoesWithTheMessage() {
        var store = TestStore(.connectedChat)
        store.send(.tapNode(id: "chat.attach"), effects: [.device(.requestImagePicker)])
        store.event(#"{"type":"image_attachment_selected","media_type":"image/PNG","data_base64":"iVBORw0KGgo="}"#) {
            $0.attachments = [Attachment(id: "a1", mediaType: "image/png", dataBase64: "iVBORw0KGgo=")]
            $0.nextAttachmentID = 2
        }
        XCTAssertEqual(store.state.attachments[0].byteCount, 8)
        store.send(.setDraft("what is this?")) { $0.draft = "what is this?" }
        store.send(.tapNode(id: "chat.send"), effects: [
            .webSocket(.send(#"{"id":3,"type":"message","content":"what is this?","images":[["image/png","iVBORw0KGgo="]]}"#)),
        ]) {
            $0.draft = ""
            $0.attachments = []
            $0.transcript.append(role: .user, text: "what is this?", imageCount: 1)
            $0.session.isProcessing = true
            $0.connection.nextRequestID = 4
            $0.nextOutboxID += 1
        }
        XCTAssertEqual(SemanticTree.build(store.state).find("message.\(store.state.transcript.entries.last!.id).images")?.label, "1 image")
    }

    func testAnImageAloneCanBeSent() {
        var store = TestStore(.connectedChat)
        store.event(#"{"type":"image_attachment_selected","media_type":"image/jpeg","data_base64":"AAAA"}"#) {
            $0.attachments = [Attachment(id: "a1", mediaType: "image/jpeg", dataBase64: "AAAA")]
            $0.nextAttachmentID = 2
        }
        store.send(.sendMessage(text: nil), effects: [.webSocket(.send(#"{"id":3,"type":"message","content":"","images":[["image/jpeg","AAAA"]]}"#))]) {
            $0.attachments = []
            $0.transcript.append(role: .user, text: "", imageCount: 1)
            $0.session.isProcessing = true
            $0.connection.nextRequestID = 4
            $0.nextOutboxID += 1
        }
    }

    func testRemovingAnAttachmentAndRejectingNonImages() {
        var store = TestStore(.connectedChat)
        store.event(#"{"type":"image_attachment_selected","media_type":"image/png","data_base64":"AAAA"}"#) {
            $0.attachments = [Attachment(id: "a1", mediaType: "image/png", dataBase64: "AAAA")]
            $0.nextAttachmentID = 2
        }
        store.send(.tapNode(id: "attachment.a1.remove")) { $0.attachments = [] }
        store.event(#"{"type":"image_attachment_selected","media_type":"application/pdf","data_base64":"AAAA"}"#) {
            $0.errorBanner = ErrorBanner(message: "Only images can be attached (this file is application/pdf).")
        }
        XCTAssertFalse(store.state.json.jsonString.contains("AAAA"), "image data is not part of the state JSON")
    }

    func testDictationFillsTheDraftAndAFinalTranscriptCanBeSent() {
        var store = TestStore(.connectedChat)
        store.send(.tapNode(id: "chat.voice"), effects: [.device(.requestSpeechTranscript)]) { $0.voice.isListening = true }
        XCTAssertEqual(SemanticTree.build(store.state).find("chat.voice")?.enabled, false)
        store.event(#"{"type":"speech_transcript","text":"run the","is_final":false}"#) { $0.draft = "run the" }
        store.event(#"{"type":"speech_transcript","text":"run the tests","is_final":true}"#) {
            $0.draft = "run the tests"
            $0.voice.isListening = false
        }
        store.send(.tapNode(id: "chat.send"), effects: [.webSocket(.send(#"{"id":3,"type":"message","content":"run the tests"}"#))]) {
            $0.draft = ""
            $0.transcript.append(role: .user, text: "run the tests")
            $0.session.isProcessing = true
            $0.connection.nextRequestID = 4
            $0.nextOutboxID += 1
        }
    }
}
