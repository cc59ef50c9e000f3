import XCTest
@testable import JcodeMobileCore

/// Steps the chat specifications share, each stated as facts.
extension SpecStore {
    /// The open socket closes while a turn runs: as `loseTheConnection()`
    /// (`keepalive.1` is cancelled, `reconnect.2` scheduled after 1 s), and
    /// the turn ends locally (`is_processing` goes false); the message on its
    /// way (`o1` of `turnRunning()`) becomes `unconfirmed`: the next history
    /// says whether it arrived. `turnEnds` states what else the ended turn
    /// changes (the streaming entry closing, for one).
    mutating func loseTheConnectionMidTurn(
        file: StaticString = #filePath, line: UInt = #line, _ turnEnds: (inout ExpectedState) -> Void = { _ in }
    ) {
        loseTheConnection(file: file, line: line) {
            $0["/session/is_processing"] = false
            $0["/outbox/0/delivery"] = "unconfirmed"
            turnEnds(&$0)
        }
    }
}
