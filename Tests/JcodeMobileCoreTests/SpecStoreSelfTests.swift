import XCTest
@testable import JcodeMobileCore

final class SpecStoreSelfTests: XCTestCase {
    func testASpecStepStatesTheDraftAsAJSONFact() {
        var store = SpecStore(.connectedChat)
        store.send(.setDraft("hi")) { $0["/draft"] = "hi" }
        store.send(.sendMessage(text: nil), effects: [.webSocket(.send(#"{"id":3,"type":"message","content":"hi"}"#))]) {
            $0["/draft"] = ""
            $0.append("/transcript", entryJSON("m4", "user", text: "hi"))
            $0["/session/is_processing"] = true
        }
        store.server(#"{"type":"text_delta","text":"Hel"}"#) {
            $0.append("/transcript", entryJSON("m5", "assistant", text: "Hel", isStreaming: true))
        }
        XCTAssertEqual(store["/transcript/4/text"], "Hel")
    }
}
