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
    /// `also` states what else the lost connection changes.
    mutating func loseTheConnection(
        keepalive: String = "keepalive.1", reconnect: String = "reconnect.2", notes: [String] = [], file: StaticString = #filePath,
        line: UInt = #line, also: (inout ExpectedState) -> Void = { _ in }
    ) {
        closeTheSocket(keepalive: keepalive, reconnect: reconnect, afterMS: 1000, shown: "1 s", notes: notes, file: file, line: line, also)
    }

    /// The open socket closes (the host reports `websocket_closed` without a
    /// code): `keepalive` is cancelled and `reconnect` scheduled after
    /// `afterMS` (`shown` as the banner writes it), attempt 1.
    mutating func closeTheSocket(
        keepalive: String, reconnect: String, afterMS: Int, shown: String, notes: [String] = [], file: StaticString, line: UInt,
        _ also: (inout ExpectedState) -> Void
    ) {
        guard let socket = state.connection.socketEffectID?.rawValue else { return XCTFail("no open socket", file: file, line: line) }
        event(
            #"{"type":"websocket_closed","effect_id":\#(socket)}"#,
            effects: [.timer(.cancel(timerID: keepalive)), .timer(.schedule(timerID: reconnect, afterMS: afterMS, purpose: "reconnect"))],
            notes: notes, followUps: ["connection_lost"], file: file, line: line
        ) {
            $0["/connection/phase"] = "reconnecting"
            $0["/connection/attempt"] = 1
            $0["/connection/reason"] = "Connection closed"
            $0["/connection/socket_open"] = false
            $0["/connection/reconnect_delay_ms"] = .int(Int64(afterMS))
            $0["/banners/status"] = .string("Connection lost, retrying in \(shown) (attempt 1)")
            also(&$0)
        }
    }
}
