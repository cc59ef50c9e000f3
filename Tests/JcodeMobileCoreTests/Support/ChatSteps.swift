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
        // The open socket is the effect that connected it.
        let socket = pendingID("websocket_connect", file: file, line: line)
        event(
            #"{"type":"websocket_closed","effect_id":\#(socket)}"#,
            effects: [.timer(.cancel(timerID: "keepalive.1")), .timer(.schedule(timerID: "reconnect.2", afterMS: 1000, purpose: "reconnect"))],
            followUps: ["connection_lost"], file: file, line: line
        ) {
            $0["/connection/phase"] = "reconnecting"
            $0["/connection/attempt"] = 1
            $0["/connection/reason"] = "Connection closed"
            $0["/connection/socket_open"] = false
            $0["/connection/reconnect_delay_ms"] = 1000
            $0["/banners/status"] = "Connection lost, retrying in 1 s (attempt 1)"
            $0["/session/is_processing"] = false
            $0["/outbox/0/delivery"] = "unconfirmed"
            turnEnds(&$0)
        }
    }
}
