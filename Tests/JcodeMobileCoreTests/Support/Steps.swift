import XCTest
@testable import JcodeMobileCore

/// Steps several specifications share, each stated as facts.
extension SpecStore {
    /// `connected_chat` with "go" sent: a turn is running (the message went
    /// out as request 3; the user entry is `m4`; it stays in the outbox as
    /// `o1`, awaiting its ack, until the server acknowledges it).
    static func turnRunning(file: StaticString = #filePath, line: UInt = #line) -> SpecStore {
        var store = SpecStore(.connectedChat, file: file, line: line)
        store.send(.sendMessage(text: "go"), effects: [.webSocket(.send(#"{"id":3,"type":"message","content":"go"}"#))], followUps: ["send"], file: file, line: line) {
            $0.append("/transcript", entryJSON("m4", "user", text: "go"))
            $0.append("/outbox", outboxJSON("o1", "go", delivery: "awaiting_ack"))
            $0["/session/is_processing"] = true
        }
        return store
    }

    /// From `pairing_ready`: submits the form; the code leaves the state and
    /// `http_pair` carries it.
    mutating func submitTheReadyForm(file: StaticString = #filePath, line: UInt = #line) {
        send(
            .submitPairing,
            effects: [
                .http(.pair(host: "devbox.local", port: 7643, useTLS: false, code: "123456", deviceID: "fixture-device", deviceName: "Test iPhone", apnsToken: nil))
            ], followUps: ["pairing_started"], file: file, line: line
        ) {
            $0["/pairing/is_submitting"] = true
            $0["/pairing/pair_code"] = ""
            $0["/pairing/has_held_code"] = true
            $0["/pairing/can_submit"] = false
            $0["/connection/phase"] = "pairing"
            $0["/banners/status"] = "Pairing with devbox.local…"
        }
    }

    /// The open socket of `connected_chat` closes: its keep-alive timer
    /// (`keepalive.1`, from when it opened) is cancelled and a reconnect is
    /// scheduled after 1 s (`reconnect.2`: timer ids share one counter).
    /// A socket opened later names its own `keepalive` and the `reconnect`
    /// timer that follows it; the backoff is at its start (attempt 1, 1 s).
    mutating func loseTheConnection(
        keepalive: String = "keepalive.1", reconnect: String = "reconnect.2", file: StaticString = #filePath, line: UInt = #line
    ) {
        guard let socket = state.connection.socketEffectID?.rawValue else { return XCTFail("no open socket", file: file, line: line) }
        event(
            #"{"type":"websocket_closed","effect_id":\#(socket)}"#,
            effects: [.timer(.cancel(timerID: keepalive)), .timer(.schedule(timerID: reconnect, afterMS: 1000, purpose: "reconnect"))],
            followUps: ["connection_lost"], file: file, line: line
        ) {
            $0["/connection/phase"] = "reconnecting"
            $0["/connection/attempt"] = 1
            $0["/connection/reason"] = "Connection closed"
            $0["/connection/socket_open"] = false
            $0["/connection/reconnect_delay_ms"] = 1000
            $0["/banners/status"] = "Connection lost, retrying in 1 s (attempt 1)"
        }
    }
}
