/// Every output a feature can tell, named by the compiler: the ownership
/// table (docs/ARCHITECTURE.md) and the routing tests read them from here.
///
/// An output type's `Kind` mirrors its cases and `kind` is an exhaustive
/// switch, so a new case does not compile until it has a kind; `samples(of:)`
/// is an exhaustive switch over the kinds, so a new kind does not compile
/// until it has its examples (more than one where the route depends on the
/// payload). `OutputSampleTests` checks that each kind's examples are of it.
protocol EnumeratedOutput {
    associatedtype Kind: CaseIterable, Equatable
    var kind: Kind { get }
    static func samples(of kind: Kind) -> [Self]
}

extension EnumeratedOutput {
    /// The examples of every kind, in the order the kinds are declared.
    static var everySample: [Self] { Kind.allCases.flatMap { samples(of: $0) } }
}

/// The server the examples name.
private enum Example {
    static let server = SavedServer(address: ServerAddress(host: "devbox.local", port: 7643, useTLS: false), name: "devbox", workingDir: "/src")
    static let paired = PairedServer(address: server.address, name: "devbox", serverVersion: nil, workingDir: "/src", token: "<token>")
}

extension InternalInput: EnumeratedOutput {
    enum Kind: CaseIterable { case pairing, lifecycle, servers, connection, session, chat, approvals, app, send, showError, notice, openChat }

    var kind: Kind {
        switch self {
        case .pairing: .pairing
        case .lifecycle: .lifecycle
        case .servers: .servers
        case .connection: .connection
        case .session: .session
        case .chat: .chat
        case .approvals: .approvals
        case .app: .app
        case .send: .send
        case .showError: .showError
        case .notice: .notice
        case .openChat: .openChat
        }
    }

    static func samples(of kind: Kind) -> [InternalInput] {
        switch kind {
        case .pairing: PairingOutput.everySample.map { .pairing($0) }
        case .lifecycle: LifecycleOutput.everySample.map { .lifecycle($0) }
        case .servers: ServersOutput.everySample.map { .servers($0) }
        case .connection: ConnectionOutput.everySample.map { .connection($0) }
        case .session: SessionOutput.everySample.map { .session($0) }
        case .chat: ChatOutput.everySample.map { .chat($0) }
        case .approvals: ApprovalsOutput.everySample.map { .approvals($0) }
        case .app: AppOutput.everySample.map { .app($0) }
        case .send: [.send(.ping)]
        case .showError: [.showError(ErrorBanner(message: "!"))]
        case .notice: [.notice(.info, "!")]
        case .openChat: [.openChat]
        }
    }
}

extension PairingOutput: EnumeratedOutput {
    enum Kind: CaseIterable { case pairingStarted, pairingFailed, paired, pairingLinkScanned, serverVersionSeen, identityNeeded }

    var kind: Kind {
        switch self {
        case .pairingStarted: .pairingStarted
        case .pairingFailed: .pairingFailed
        case .paired: .paired
        case .pairingLinkScanned: .pairingLinkScanned
        case .serverVersionSeen: .serverVersionSeen
        case .identityNeeded: .identityNeeded
        }
    }

    static func samples(of kind: Kind) -> [PairingOutput] {
        switch kind {
        case .pairingStarted: [.pairingStarted]
        case .pairingFailed: [.pairingFailed]
        case .paired: [.paired(Example.paired)]
        case .pairingLinkScanned: [.pairingLinkScanned]
        case .serverVersionSeen: [.serverVersionSeen(serverID: Example.server.id, version: nil)]
        case .identityNeeded: [.identityNeeded]
        }
    }
}

extension LifecycleOutput: EnumeratedOutput {
    enum Kind: CaseIterable { case identityReady, identityFailed, sessionAskedOffline, sessionAsked, reconnectAsked }

    var kind: Kind {
        switch self {
        case .identityReady: .identityReady
        case .identityFailed: .identityFailed
        case .sessionAskedOffline: .sessionAskedOffline
        case .sessionAsked: .sessionAsked
        case .reconnectAsked: .reconnectAsked
        }
    }

    static func samples(of kind: Kind) -> [LifecycleOutput] {
        switch kind {
        case .identityReady: [.identityReady]
        case .identityFailed: [.identityFailed]
        case .sessionAskedOffline: [.sessionAskedOffline(sessionID: "session-owl")]
        case .sessionAsked: [.sessionAsked(sessionID: "session-owl")]
        case .reconnectAsked: [.reconnectAsked]
        }
    }
}

extension ServersOutput: EnumeratedOutput {
    enum Kind: CaseIterable { case serverChanged, serverSelected, credentialsLoaded, credentialsMissing, workingDirChanged }

    var kind: Kind {
        switch self {
        case .serverChanged: .serverChanged
        case .serverSelected: .serverSelected
        case .credentialsLoaded: .credentialsLoaded
        case .credentialsMissing: .credentialsMissing
        case .workingDirChanged: .workingDirChanged
        }
    }

    static func samples(of kind: Kind) -> [ServersOutput] {
        switch kind {
        case .serverChanged: [.serverChanged(to: Example.server), .serverChanged(to: nil)]
        case .serverSelected:
            [.serverSelected(ServerSelection(server: Example.server, reason: .chosen)),
             .serverSelected(ServerSelection(server: Example.server, reason: .paired(serverVersion: nil)))]
        case .credentialsLoaded: [.credentialsLoaded(serverID: Example.server.id)]
        case .credentialsMissing: [.credentialsMissing(serverName: "devbox")]
        case .workingDirChanged: [.workingDirChanged(serverID: Example.server.id)]
        }
    }
}

extension ConnectionOutput: EnumeratedOutput {
    enum Kind: CaseIterable { case credentialsNeeded, credentialsRejected, socketOpened, connectionLost, historyLost }

    var kind: Kind {
        switch self {
        case .credentialsNeeded: .credentialsNeeded
        case .credentialsRejected: .credentialsRejected
        case .socketOpened: .socketOpened
        case .connectionLost: .connectionLost
        case .historyLost: .historyLost
        }
    }

    static func samples(of kind: Kind) -> [ConnectionOutput] {
        switch kind {
        case .credentialsNeeded: [.credentialsNeeded]
        case .credentialsRejected: [.credentialsRejected(serverID: Example.server.id)]
        case .socketOpened: [.socketOpened]
        case .connectionLost: [.connectionLost]
        case .historyLost: [.historyLost]
        }
    }
}

extension SessionOutput: EnumeratedOutput {
    enum Kind: CaseIterable { case sessionSwitched, clearAnswered }

    var kind: Kind {
        switch self {
        case .sessionSwitched: .sessionSwitched
        case .clearAnswered: .clearAnswered
        }
    }

    static func samples(of kind: Kind) -> [SessionOutput] {
        switch kind {
        case .sessionSwitched: [.sessionSwitched(sessionID: "session-fox")]
        case .clearAnswered: [.clearAnswered(accepted: true), .clearAnswered(accepted: false)]
        }
    }
}

extension ChatOutput: EnumeratedOutput {
    enum Kind: CaseIterable { case turnEnded, composerSent, keepInDraft, turnStarted, olderMessagesShown }

    var kind: Kind {
        switch self {
        case .turnEnded: .turnEnded
        case .composerSent: .composerSent
        case .keepInDraft: .keepInDraft
        case .turnStarted: .turnStarted
        case .olderMessagesShown: .olderMessagesShown
        }
    }

    static func samples(of kind: Kind) -> [ChatOutput] {
        switch kind {
        case .turnEnded: [.turnEnded(outcome: .done)]
        case .composerSent: [.composerSent(clearDraft: true, clearAttachments: true)]
        case .keepInDraft: [.keepInDraft(text: "hi")]
        case .turnStarted: [.turnStarted]
        case .olderMessagesShown: [.olderMessagesShown(count: 3)]
        }
    }
}

extension ApprovalsOutput: EnumeratedOutput {
    enum Kind: CaseIterable { case permissionAsked, inputAsked }

    var kind: Kind {
        switch self {
        case .permissionAsked: .permissionAsked
        case .inputAsked: .inputAsked
        }
    }

    static func samples(of kind: Kind) -> [ApprovalsOutput] {
        switch kind {
        case .permissionAsked: [.permissionAsked(action: "bash", sessionID: nil)]
        case .inputAsked: [.inputAsked(prompt: "Name:")]
        }
    }
}

extension AppOutput: EnumeratedOutput {
    enum Kind: CaseIterable { case focus, scrollMessages, scrollScreen }

    var kind: Kind {
        switch self {
        case .focus: .focus
        case .scrollMessages: .scrollMessages
        case .scrollScreen: .scrollScreen
        }
    }

    static func samples(of kind: Kind) -> [AppOutput] {
        switch kind {
        case .focus: [.focus(nodeID: "chat.draft")]
        case .scrollMessages: [.scrollMessages(offset: nil)]
        case .scrollScreen: [.scrollScreen(offset: 120)]
        }
    }
}
