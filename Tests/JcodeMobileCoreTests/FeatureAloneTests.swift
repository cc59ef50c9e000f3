import XCTest
@testable import JcodeMobileCore
@testable import JcodeMobileJSON

/// Each feature on its own (`FeatureHarness`): a literal slice and literal
/// facts, one of its own inputs, and everything it does in return.

final class ComposerAloneTests: XCTestCase {
    func testAPickedImageIsKeptWithItsMediaTypeLowercasedAndAnythingElseIsRefused() {
        var composer = FeatureHarness(ComposerInteractor(), ComposerState())
        composer.receive(.attachImage, effects: [.device(.requestImagePicker)])
        composer.receive(.imageAttachmentSelected(mediaType: "image/PNG", dataBase64: "AAAA")) {
            $0.attachments = [Attachment(id: "a1", mediaType: "image/png", dataBase64: "AAAA")]
            $0.nextAttachmentID = 2
        }
        composer.receive(
            .imageAttachmentSelected(mediaType: "application/pdf", dataBase64: "AAAA"),
            tells: [.showError(ErrorBanner(message: "Only images can be attached (this file is application/pdf)."))])
        composer.receive(.imageAttachmentSelected(mediaType: "image/jpeg", dataBase64: ""),
                         tells: [.showError(ErrorBanner(message: "The image could not be read. Try another one."))])
        composer.receive(.removeAttachment(id: "a9"), notes: ["remove_attachment: no attachment a9"])
        composer.receive(.removeAttachment(id: "a1")) { $0.attachments = [] }
    }

    func testTheTenthImageIsTheLastOneOfAMessage() {
        var full = ComposerState()
        full.attachments = (1...10).map { Attachment(id: "a\($0)", mediaType: "image/png", dataBase64: "AAAA") }
        full.nextAttachmentID = 11
        var composer = FeatureHarness(ComposerInteractor(), full)
        composer.receive(.attachImage, tells: [.showError(ErrorBanner(message: "You can attach at most 10 images to one message."))])
    }

    func testAMessageThatFoundNoRoomJoinsTheDraftOnItsOwnLine() {
        var draft = ComposerState()
        draft.draft = "first thought"
        var composer = FeatureHarness(ComposerInteractor(), draft)
        composer.receive(.keepInDraft(text: "second thought")) { $0.draft = "first thought\nsecond thought" }
        composer.receive(.composerSent(clearDraft: true, clearAttachments: false)) { $0.draft = "" }
    }

    func testDictationFillsTheDraftUntilTheFinalTranscript() {
        var composer = FeatureHarness(ComposerInteractor(), ComposerState())
        composer.receive(.startVoiceInput, effects: [.device(.requestSpeechTranscript)]) { $0.voice.isListening = true }
        composer.receive(.startVoiceInput, notes: ["already listening"])
        composer.receive(.speechTranscript(text: "run the", isFinal: false)) { $0.draft = "run the" }
        composer.receive(.speechTranscript(text: "run the tests", isFinal: true)) {
            $0.draft = "run the tests"
            $0.voice.isListening = false
        }
    }
}

final class NoticesAloneTests: XCTestCase {
    func testAFreshAttemptClearsTheErrorButKeepsTheNotices() {
        var notices = FeatureHarness(NoticesInteractor(), NoticesState())
        notices.receive(.notice(.info, "Interrupted")) {
            $0.notices = [Notice(id: "n1", kind: .info, text: "Interrupted")]
            $0.nextNoticeID = 2
        }
        notices.receive(.showError(ErrorBanner(message: "Couldn't switch model: busy"))) {
            $0.errorBanner = ErrorBanner(message: "Couldn't switch model: busy")
        }
        notices.receive(.freshAttempt) { $0.errorBanner = nil }
        notices.receive(.dismissError, notes: ["no error banner to dismiss"])
        notices.receive(.dismissNotice(id: "n7"), notes: ["dismiss_notice: no notice n7"])
        notices.receive(.dismissNotice(id: "n1")) { $0.notices = [] }
    }
}

final class NavigationAloneTests: XCTestCase {
    static let devbox = SavedServer(address: ServerAddress(host: "devbox.local", port: 7643, useTLS: false), name: "devbox", workingDir: "/src")

    func testOnlyAPairedAppLeavesOnboarding() {
        var navigation = FeatureHarness(NavigationInteractor(), NavigationState(), context: Facts())
        navigation.receive(.navigate(.sessions), notes: ["navigate: sessions needs a paired server"])
        navigation.context = .with {
            $0.servers.list = [Self.devbox]
            $0.servers.selectedID = "devbox.local:7643"
        }
        navigation.receive(.navigate(.sessions)) { $0.screen = .sessions }
        navigation.receive(.serverChanged(nil)) { $0.screen = .onboarding }
    }

    func testTheListFollowsTheNewestMessageAgainAfterASendOrASwitch() {
        var navigation = FeatureHarness(NavigationInteractor(), NavigationState(), context: Facts())
        navigation.receive(.scrollMessages(offset: 120)) { $0.messagesScroll = 120 }
        navigation.receive(.followNewest) { $0.messagesScroll = nil }
        navigation.receive(.focus(nodeID: "chat.draft")) { $0.focusedNodeID = "chat.draft" }
        navigation.receive(.socketOpened) { $0.screen = .chat }
    }
}

final class ApprovalsAloneTests: XCTestCase {
    static let bash = PermissionRequest(requestID: "perm-1", sessionID: "session-fox", action: "bash", detail: "cargo test", tier: "medium")

    func testAnswersToUnknownRequestsAreIgnoredAndAnswersWhileOfflineWait() {
        var pending = ApprovalsState()
        pending.permissionRequests = [Self.bash]
        pending.askedOnThisSocket = ["perm-1"]
        var approvals = FeatureHarness(ApprovalsInteractor(), pending, context: Facts())
        approvals.receive(.respondPermission(requestID: "nope", approved: true, remember: false), notes: ["respond_permission: no pending request nope"])
        // Offline: nothing the person decided is lost, perm-1 stays pending.
        approvals.receive(
            .respondPermission(requestID: "perm-1", approved: true, remember: false),
            tells: [.showError(ErrorBanner(message: "Not connected: your answer was not sent. It will be waiting when the connection is back."))])
        approvals.context = .with { $0.connection.canSend = true }
        approvals.receive(
            .respondPermission(requestID: "perm-1", approved: true, remember: false),
            tells: [.send(.permissionResponse(requestID: "perm-1", approved: true, remember: false))]
        ) { $0.permissionRequests = [] }
    }

    func testARequestAskedOnAnEarlierConnectionExpiresWhenAnswered() {
        var pending = ApprovalsState()
        pending.permissionRequests = [Self.bash]
        var approvals = FeatureHarness(ApprovalsInteractor(), pending, context: .with { $0.connection.canSend = true })
        approvals.receive(
            .respondPermission(requestID: "perm-1", approved: true, remember: false),
            tells: [.showError(ErrorBanner(message: "That approval request ended with the previous connection; the agent will ask again if it still needs it."))],
            notes: ["permission_response not sent: no permission_request arrived on this connection"]
        ) { $0.permissionRequests = [] }
    }

    func testARequestAsksForAttentionOnceAndEndsWithTheTurn() {
        var approvals = FeatureHarness(ApprovalsInteractor(), ApprovalsState(), context: Facts())
        approvals.receive(
            .permissionRequest(Self.bash), effects: [.device(.haptic(style: .warning))],
            tells: [.approvals(.permissionAsked(action: "bash", sessionID: "session-fox"))]
        ) {
            $0.permissionRequests = [Self.bash]
            $0.askedOnThisSocket = ["perm-1"]
        }
        // Sent again (a reconnect replays it): refreshed, no second buzz.
        approvals.receive(.permissionRequest(Self.bash))
        approvals.receive(.nothingWaits) { $0.permissionRequests = [] }
    }
}

final class SessionAloneTests: XCTestCase {
    func testATurnsTokensJoinTheTotalWhenTheTurnIsOver() {
        var counted = SessionState()
        counted.totalTokens = TokenUsage(input: 100, output: 10)
        var turnRunning = Facts()
        turnRunning.chat.isTurnRunning = true
        var session = FeatureHarness(SessionInteractor(), counted, context: turnRunning)
        session.receive(.tokens(TokenUsage(input: 30, output: 3))) { $0.turnTokens = TokenUsage(input: 30, output: 3) }
        session.receive(.turnOver) {
            $0.totalTokens = TokenUsage(input: 130, output: 13)
            $0.turnTokens = nil
        }
    }

    func testWhatNeedsTheServerAsksToConnectFirst() {
        var session = FeatureHarness(SessionInteractor(), SessionState(), context: Facts())
        session.receive(.compact, tells: [.showError(ErrorBanner(message: "Connect to the server to compact the conversation."))])
        session.context = .with { $0.connection.canSend = true }
        session.receive(.compact, tells: [.send(.compact)]) { $0.isCompacting = true }
        session.receive(.compact, notes: ["compaction already requested"])
        // The notice belongs to this session: it goes when the chat shows another.
        session.receive(.compactResult(message: "", success: true), tells: [.notice(.info, "Conversation compacted", passes: .sessionChange)]) {
            $0.isCompacting = false
        }
    }
}

final class ChatAloneTests: XCTestCase {
    func testAReplyStreamsIntoOneEntryAndTheTurnShowsWhatItDoes() {
        var chat = FeatureHarness(ChatInteractor(), ChatState(), context: Facts())
        // A first delta with no turn known: the turn is adopted and writing.
        chat.stream(.textDelta("Hel"), transcript: [entryJSON("m1", "assistant", text: "Hel", isStreaming: true)]) {
            $0.turn.isProcessing = true
            $0.turn.isAdopted = true
            $0.turn.isWriting = true
        }
        chat.stream(.textDelta("lo"), transcript: [entryJSON("m1", "assistant", text: "Hello", isStreaming: true)])
        chat.stream(.reasoningDelta("Checking"), transcript: [entryJSON("m1", "assistant", text: "Hello", reasoning: "Checking", isStreaming: true)]) {
            $0.turn.isReasoning = true
            $0.turn.isWriting = false
        }
        chat.stream(.textReplace("Hi"), transcript: [entryJSON("m1", "assistant", text: "Hi", reasoning: "Checking", isStreaming: true)])
    }

    func testAToolInputWithNoToolCallIsIgnored() {
        var chat = FeatureHarness(ChatInteractor(), ChatState(), context: Facts())
        chat.stream(.toolInput(delta: #"{"command":"ls"}"#), notes: ["tool_input with no tool call; ignored"], transcript: [])
    }

    func testAQueuedInterruptWithNoTurnRunningIsAnOrdinaryMessage() {
        var chat = FeatureHarness(ChatInteractor(), ChatState(), context: Facts())
        chat.receive(
            .queueInterrupt(text: " hi ", urgent: false),
            tells: [.showError(ErrorBanner(message: "Pair with a jcode server before sending messages."))], transcript: [])
        // Paired but offline: no turn to interrupt, so it waits in the outbox like any message.
        chat.context = .with {
            $0.servers.list = [NavigationAloneTests.devbox]
            $0.servers.selectedID = "devbox.local:7643"
        }
        chat.receive(.queueInterrupt(text: " hi ", urgent: false), notes: ["message queued in the outbox"], transcript: []) {
            $0.outbox = [OutboxMessage(id: "o1", text: "hi", attachments: [])]
            $0.nextOutboxID = 2
        }
    }
}

final class ServersAloneTests: XCTestCase {
    static let selected: ServersState = {
        var servers = ServersState()
        servers.list = [NavigationAloneTests.devbox]
        servers.selectedID = "devbox.local:7643"
        return servers
    }()

    func testTheSelectedServersTokenIsReadWhenTheConnectionNeedsIt() {
        var servers = FeatureHarness(ServersInteractor(), ServersState(), context: Facts())
        // Nothing selected: nothing to read.
        servers.receive(.credentialsNeeded)
        servers = FeatureHarness(ServersInteractor(), Self.selected, context: Facts())
        servers.receive(.credentialsNeeded, effects: [.secureStore(.read(key: "jcode.token.devbox.local:7643"))])
    }

    func testARejectedTokenIsForgottenAndDeletedFromTheSecureStore() {
        var known = Self.selected
        known.credentials["devbox.local:7643"] = "old-token"
        var servers = FeatureHarness(ServersInteractor(), known, context: Facts())
        servers.receive(.credentialsRejected(serverID: "devbox.local:7643"), effects: [.secureStore(.delete(key: "jcode.token.devbox.local:7643"))]) {
            $0.credentials["devbox.local:7643"] = nil
        }
        // A server no longer saved: nothing left to delete.
        servers.receive(.credentialsRejected(serverID: "gone.local:7643"))
    }

    func testTheServersVersionIsKeptUntilAnotherIsSeen() {
        var servers = FeatureHarness(ServersInteractor(), Self.selected, context: Facts())
        servers.receive(.serverVersionSeen(serverID: "devbox.local:7643", version: "0.9.1")) { $0.list[0].serverVersion = "0.9.1" }
        servers.receive(.serverVersionSeen(serverID: "devbox.local:7643", version: nil))
        servers.receive(.serverVersionSeen(serverID: "other.local:7643", version: "1.0.0"))
    }
}

final class PairingAloneTests: XCTestCase {
    func testAScannedLinkFillsTheFormAndWaitsForWhatOnlyThePersonCanGive() {
        var pairing = FeatureHarness(PairingInteractor(), PairingForm(), context: Facts())
        // No device name or working directory yet: the form shows what is missing instead of pairing.
        pairing.receive(.qrPayloadScanned(payload: "jcode://pair?host=devbox.local&code=654321"), tells: [.pairing(.pairingLinkScanned)]) {
            $0.host = "devbox.local"
            $0.port = "7643"
            $0.code = "654321"
            $0.showAllErrors = true
        }
        pairing.receive(.submitPairing, notes: ["pairing form is incomplete: device_name, working_dir"])
    }

    func testALinkThatIsNotAPairingLinkChangesNothing() {
        var pairing = FeatureHarness(PairingInteractor(), PairingForm(), context: Facts())
        pairing.receive(
            .qrPayloadScanned(payload: "https://example.com"), effects: [.device(.haptic(style: .error))],
            tells: [.showError(ErrorBanner(message: "That QR code is not a jcode pairing code. Run `jcode pair` on your computer and scan the code it shows."))])
    }
}

final class ConnectionAloneTests: XCTestCase {
    func testRequestsGoOutNumberedOnlyWhileConnected() {
        var connection = FeatureHarness(ConnectionInteractor(), ConnectionState(), context: Facts())
        connection.receive(.send(.cancel), notes: ["not connected: cancel not sent"])
        var open = ConnectionState()
        open.phase = .connected
        open.isSocketOpen = true
        connection = FeatureHarness(ConnectionInteractor(), open, context: Facts())
        connection.receive(.send(.cancel), effects: [.webSocket(.send(line: #"{"id":1,"type":"cancel"}"#, containsSecret: false))]) {
            $0.nextRequestID = 2
            $0.sentRequests.record(1, .cancel)
        }
        XCTAssertEqual(connection.state.sentRequests.kind(of: 1), .cancel)
    }

    func testPairingShowsInThePhaseUntilItFails() {
        var connection = FeatureHarness(ConnectionInteractor(), ConnectionState(), context: Facts())
        connection.receive(.pairingStarted) { $0.phase = .pairing }
        connection.receive(.pairingFailed) { $0.phase = .disconnected }
        connection.receive(.retryConnection, notes: ["no server to connect to"])
        connection.receive(.disconnect, notes: ["no server to disconnect from"])
    }
}

final class LifecycleAloneTests: XCTestCase {
    /// What opening a notification asks of the others is told by address:
    /// the session to resume, or the connection to come up.
    func testAnOpenedNotificationTellsTheSessionOrTheConnectionWhatItNeeds() {
        let paired = Facts.with {
            $0.servers.list = [NavigationAloneTests.devbox]
            $0.servers.selectedID = "devbox.local:7643"
            $0.session.id = "session-fox"
        }
        let owl = JSONObject([("session_id", .string("session-owl"))])
        var online = paired
        online.connection.canSend = true
        online.connection.phase = .connected
        var lifecycle = FeatureHarness(LifecycleInteractor(), LifecycleState(), context: online)
        lifecycle.receive(.pushNotificationOpened(payload: owl), tells: [.openChat, .lifecycle(.sessionAsked(sessionID: "session-owl"))])
        lifecycle.context = paired
        lifecycle.receive(
            .pushNotificationOpened(payload: owl),
            tells: [.openChat, .lifecycle(.sessionAskedOffline(sessionID: "session-owl")), .lifecycle(.reconnectAsked)])
        lifecycle.context = Facts()
        lifecycle.receive(.pushNotificationOpened(payload: owl), notes: ["push opened with no paired server"])
    }
}
