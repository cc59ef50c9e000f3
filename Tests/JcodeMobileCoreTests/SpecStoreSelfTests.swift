import XCTest
@testable import JcodeMobileCore

final class SharedStepsTests: XCTestCase {
    func testTheSharedStepsHoldAsWritten() {
        var chat = SpecStore.turnRunning()
        chat.server(#"{"type":"text_delta","text":"Hel"}"#) {
            $0.append("/transcript", entryJSON("m5", "assistant", text: "Hel", isStreaming: true))
        }
        XCTAssertEqual(chat["/transcript/4/text"], "Hel")
        var pairing = SpecStore(.pairingReady)
        pairing.submitTheReadyForm()
        var connected = SpecStore(.connectedChat)
        connected.loseTheConnection()
    }
}
