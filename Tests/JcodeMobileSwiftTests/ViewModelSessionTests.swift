import JcodeMobileSwift
import JcodeMobileSwiftTesting
import Testing

/// A whole session through the Swift host API, with the harness standing in
/// for the platform: every effect the core requests is checked, and answered
/// the way iOS and the jcode gateway would answer it.
@MainActor
@Suite struct ViewModelSessionTests {
    static let token = "0123456789abcdef0123456789abcdef"

    /// A first launch with a known device identity.
    static func harness() -> ViewModelTestHarness {
        var options = AppOptions()
        options.deviceID = "test-device"
        return ViewModelTestHarness(options: options)
    }

    static func fillPairingForm(_ harness: ViewModelTestHarness) {
        harness.send(.setHost("127.0.0.1"))
        harness.send(.setPort("7643"))
        harness.send(.setPairCode("123456"))
        harness.send(.setDeviceName("Test phone"))
        harness.send(.setWorkingDir("/home/me/project", serverID: nil))
    }

    /// Pairs and connects; returns the socket's id (its websocket_connect's).
    static func pairAndConnect(_ harness: ViewModelTestHarness) throws -> EffectID {
        fillPairingForm(harness)
        harness.send(.tapNode(id: "pair.submit"))
        let pair = try harness.expectEffect(.httpPair)
        harness.answer(.http(.pairFinished(PairResult(effectID: pair.id, ok: true, token: token, serverName: "jcode"))))
        let socket = try harness.expectEffect(.websocketConnect)
        harness.answer(.webSocket(.opened(effectID: socket.id)))
        for line in [
            #"{"type":"ack","id":1}"#, #"{"type":"session","session_id":"s1"}"#, #"{"type":"done","id":1}"#,
            #"{"type":"ack","id":2}"#, #"{"type":"history","session_id":"s1","messages":[]}"#,
        ] {
            harness.answer(.webSocketFrame(line, socket: socket.id))
        }
        _ = harness.takeEffects()
        return socket.id
    }

    @Test func theFilledInPairingFormSendsThePairRequestWhenPairIsTapped() throws {
        let harness = Self.harness()
        Self.fillPairingForm(harness)
        try harness.expectScreen(.onboarding)
        try harness.expectScreenText(
            """
            # Connect to jcode
              ## Connect to jcode
              Run `jcode pair` on your computer, then scan its QR code or enter the details it shows.
              [Scan QR code]
              Host: 127.0.0.1
              Port: 7643
              Pairing code: 123456
              Device name: Test phone
              Working directory on the server: /home/me/project
              [Pair]
              [Check server]
            """)
        // The device name is part of what survives a restart; nothing else left the core.
        try harness.expectEffectKinds([.storageWrite])

        harness.send(.tapNode(id: "pair.submit"))

        try harness.expectEffects([
            .http(
                .pair(
                    host: "127.0.0.1", port: 7643, useTLS: false, code: "123456", deviceID: "test-device",
                    deviceName: "Test phone", apnsToken: nil))
        ])
        #expect(harness.state.connection.phase == .pairing)
        #expect(harness.node("pair.submit")?.label == "Pairing…")
        #expect(harness.node("pair.submit")?.enabled == false)
    }

    @Test func aSuccessfulPairKeepsTheTokenInTheKeychainAndOpensTheSocket() throws {
        let harness = Self.harness()
        Self.fillPairingForm(harness)
        harness.send(.tapNode(id: "pair.submit"))
        let pair = try harness.expectEffect(.httpPair)

        harness.answer(.http(.pairFinished(PairResult(effectID: pair.id, ok: true, token: Self.token, serverName: "jcode"))))

        let effects = try harness.expectEffectKinds([
            .secureStoreWrite, .websocketConnect, .haptic, .registerPushNotifications, .storageWrite,
        ])
        #expect(effects[0].effect == .secureStore(.write(key: "jcode.token.127.0.0.1:7643", value: Self.token)))
        #expect(effects[1].effect == .webSocket(.connect(url: "ws://127.0.0.1:7643/ws", authToken: Self.token)))
        #expect(harness.state.connection.phase == .connecting)

        harness.answer(.webSocket(.opened(effectID: effects[1].id)))

        try harness.expectEffects([
            .webSocket(.send(#"{"id":1,"type":"subscribe","working_dir":"/home/me/project","client_instance_id":"test-device"}"#)),
            .webSocket(.send(#"{"id":2,"type":"get_history"}"#)),
            .timer(.schedule(timerID: "keepalive.1", afterMS: 20000, purpose: "keepalive")),
        ])
        #expect(harness.screen == .chat)
    }

    @Test func aMessageIsSentAndTheStreamedReplyShowsOnTheChatScreen() throws {
        let harness = Self.harness()
        let socket = try Self.pairAndConnect(harness)
        #expect(harness.state.connection.phase == .connected)

        harness.send(.setDraft("Run the tests"))
        harness.send(.tapNode(id: "chat.send"))

        let sent = try harness.expectEffectKinds([.storageWrite, .websocketSend, .storageWrite])
        #expect(sent[1].effect == .webSocket(.send(#"{"id":3,"type":"message","content":"Run the tests"}"#)))
        #expect(harness.node("chat.interrupt")?.visible == true)

        for line in [
            #"{"type":"ack","id":3}"#, #"{"type":"text_delta","text":"All 42 "}"#,
            #"{"type":"text_delta","text":"tests pass."}"#, #"{"type":"message_end"}"#, #"{"type":"done","id":3}"#,
        ] {
            harness.answer(.webSocketFrame(line, socket: socket))
        }

        try harness.expectScreenText(
            """
            # s1
              s1 — jcode
                [Sessions]
                [Model]
                [Settings]
              You: Run the tests
              jcode
                All 42 tests pass.
              (Message jcode)
              [Attach image]
              [Dictate]
              [Send] (disabled)
            """)
        #expect(harness.state.chat.turn.isProcessing == false)
        #expect(harness.state.chat.transcript.entries.map(\.text) == ["Run the tests", "All 42 tests pass."])
    }

    @Test func aRefusedCodeShowsTheServersReasonAndOpensNoSocket() throws {
        let harness = Self.harness()
        Self.fillPairingForm(harness)
        harness.send(.tapNode(id: "pair.submit"))
        let pair = try harness.expectEffect(.httpPair)

        harness.answer(
            .http(.pairFinished(PairResult(effectID: pair.id, ok: false, status: 401, error: "Invalid or expired pairing code"))))

        #expect(harness.takeEffects().filter { $0.kind == .websocketConnect } == [])
        #expect(harness.state.connection.phase != .connecting)
        #expect(harness.state.notices.errorBanner != nil)
        #expect(harness.screen == .onboarding)
    }
}
