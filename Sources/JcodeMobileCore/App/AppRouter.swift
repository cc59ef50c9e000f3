/// Where every input goes: one exhaustive switch from each action, platform
/// event, server event and feature output to the feature(s) that own it,
/// translated into each owner's own input. There is no `default:`, so an
/// input nobody handles does not compile, and this file is the one place
/// that says who acts on what (docs/ARCHITECTURE.md's ownership table is
/// generated from it).
///
/// An input for several features lists them in the app's fixed feature
/// order (`FeatureID.allCases`), which decides the order of the effects one
/// input produces; every feature sees the same `Facts`, taken before the
/// input, so none sees another's change to the same input.
public enum AppRouter {
    /// One input in the words of the feature that acts on it.
    public enum Delivery: Equatable, Sendable {
        case navigation(NavigationInteractor.Input)
        case pairing(PairingInteractor.Input)
        case servers(ServersInteractor.Input)
        case connection(ConnectionInteractor.Input)
        /// A frame from the socket: unpacked into the server events it carries.
        case connectionFrame(effectID: EffectID?, items: [FrameItem])
        case session(SessionInteractor.Input)
        case chat(ChatInteractor.Input)
        /// The streamed events: the transcript and the turn only.
        case chatStream(ChatInteractor.Stream)
        case approvals(ApprovalsInteractor.Input)
        case composer(ComposerInteractor.Input)
        case notices(NoticesInteractor.Input)
        case lifecycle(LifecycleInteractor.Input)
        case app(AppInteractor.Input)

        /// The feature that acts on it.
        public var feature: FeatureID {
            switch self {
            case .navigation: return .navigation
            case .pairing: return .pairing
            case .servers: return .servers
            case .connection, .connectionFrame: return .connection
            case .session: return .session
            case .chat, .chatStream: return .chat
            case .approvals: return .approvals
            case .composer: return .composer
            case .notices: return .notices
            case .lifecycle: return .lifecycle
            case .app: return .app
            }
        }

        /// The owner's name for it (`follow_newest`, `socket_opened`).
        public var name: String {
            switch self {
            case .navigation(let input): return Input.wireName(of: input)
            case .pairing(let input): return Input.wireName(of: input)
            case .servers(let input): return Input.wireName(of: input)
            case .connection(let input): return Input.wireName(of: input)
            case .connectionFrame: return "frame"
            case .session(let input): return Input.wireName(of: input)
            case .chat(let input): return Input.wireName(of: input)
            case .chatStream(let input): return Input.wireName(of: input)
            case .approvals(let input): return Input.wireName(of: input)
            case .composer(let input): return Input.wireName(of: input)
            case .notices(let input): return Input.wireName(of: input)
            case .lifecycle(let input): return Input.wireName(of: input)
            case .app(let input): return Input.wireName(of: input)
            }
        }

        /// The features whose slices the delivery may change: its owner's (a
        /// frame only reads the connection's; the root may replace them all).
        var reaches: UInt32 {
            switch self {
            case .connectionFrame: return 0
            case .app: return FeatureID.all
            case .navigation, .pairing, .servers, .connection, .session, .chat, .chatStream, .approvals, .composer, .notices,
                .lifecycle:
                return feature.bit
            }
        }

        /// Whether the delivery can change what the snapshot holds: a
        /// streamed delta touches only the transcript and the turn, and a
        /// frame only unpacks into events that run as inputs of their own,
        /// so the store need not compare the snapshot after them.
        public var mayChangeSnapshot: Bool {
            switch self {
            case .chatStream, .connectionFrame: return false
            case .navigation, .pairing, .servers, .connection, .session, .chat, .approvals, .composer, .notices, .lifecycle, .app:
                return true
            }
        }
    }

    /// Who acts on an input.
    public enum Route: Equatable, Sendable {
        /// Nothing acts on it (it is only logged); the reason says why.
        case nobody(String)
        case one(Delivery)
        /// Several features, in the fixed feature order.
        case many([Delivery])

        /// Whether any owner can change what the snapshot holds.
        public var mayChangeSnapshot: Bool {
            switch self {
            case .nobody: return false
            case .one(let delivery): return delivery.mayChangeSnapshot
            case .many(let list): return list.contains(where: \.mayChangeSnapshot)
            }
        }

        public var deliveries: [Delivery] {
            switch self {
            case .nobody: return []
            case .one(let delivery): return [delivery]
            case .many(let list): return list
            }
        }
    }

    /// The route of `input`.
    public static func route(_ input: Input) -> Route {
        switch input {
        case .action(let action): return route(action)
        case .platform(let event): return route(event)
        case .server(let event): return route(event)
        case .internal(let message): return route(message)
        }
    }

    // MARK: - Actions

    static func route(_ action: Action) -> Route {
        switch action {
        case .setHost(let value): return .one(.pairing(.setHost(value)))
        case .setPort(let value): return .one(.pairing(.setPort(value)))
        case .setPairCode(let value): return .one(.pairing(.setPairCode(value)))
        case .setDeviceName(let value): return .one(.pairing(.setDeviceName(value)))
        case .setWorkingDir(let value, serverID: nil): return .one(.pairing(.setWorkingDir(value)))
        case .setWorkingDir(let value, serverID: let id?): return .one(.servers(.setWorkingDir(value, serverID: id)))
        case .submitPairing: return .one(.pairing(.submitPairing))
        case .scanQR: return .one(.pairing(.scanQR))
        case .checkServer: return .one(.pairing(.checkServer))
        case .setDraft(let value): return .one(.composer(.setDraft(value)))
        case .sendMessage(let text): return .one(.chat(.sendMessage(text: text)))
        case .interrupt: return .one(.chat(.interrupt))
        case .queueInterrupt(let text, let urgent): return .one(.chat(.queueInterrupt(text: text, urgent: urgent)))
        case .cancelQueuedInterrupts: return .one(.chat(.cancelQueuedInterrupts))
        case .retryMessage(let id): return .one(.chat(.retryMessage(id: id)))
        case .discardMessage(let id): return .one(.chat(.discardMessage(id: id)))
        case .attachImage: return .one(.composer(.attachImage))
        case .removeAttachment(let id): return .one(.composer(.removeAttachment(id: id)))
        case .startVoiceInput: return .one(.composer(.startVoiceInput))
        case .selectServer(let id): return .one(.servers(.selectServer(id: id)))
        case .forgetServer(let id): return .one(.servers(.forgetServer(id: id)))
        case .pairAgain(let id): return .many([.navigation(.navigate(.onboarding)), .pairing(.pairAgain(serverID: id))])
        case .retryConnection: return .one(.connection(.retryConnection))
        case .disconnect: return .one(.connection(.disconnect))
        case .resumeSession(let id): return .one(.session(.resumeSession(id: id)))
        case .setModel(let model): return .one(.session(.setModel(model)))
        case .setReasoningEffort(let effort): return .one(.session(.setReasoningEffort(effort)))
        case .compact: return .one(.session(.compact))
        case .renameSession(let title): return .one(.session(.renameSession(title: title)))
        case .clearConversation: return .one(.session(.clearConversation))
        case .setRenameDraft(let text): return .one(.session(.setRenameDraft(text)))
        case .respondPermission(let id, let approved, let remember):
            return .one(.approvals(.respondPermission(requestID: id, approved: approved, remember: remember)))
        case .respondStdin(let id, let text): return .one(.approvals(.respondStdin(requestID: id, input: text)))
        // The next error shows closed, whether this one was opened or not.
        case .dismissError: return .many([.notices(.dismissError), .navigation(.forgetExpansion(nodeID: "banner.error"))])
        case .dismissNotice(let id): return .one(.notices(.dismissNotice(id: id)))
        case .dismissInterruptedTurn: return .one(.chat(.dismissInterruptedTurn))
        case .continueInterruptedTurn: return .one(.chat(.continueInterruptedTurn))
        case .checkTurn: return .one(.chat(.checkTurn))
        case .loadOlderMessages: return .one(.chat(.loadOlderMessages))
        case .navigate(let screen): return .one(.navigation(.navigate(screen)))
        case .tapNode(let id): return .one(.app(.tapNode(id: id)))
        case .tapXY(let x, let y): return .one(.app(.tapXY(x: x, y: y)))
        case .scrollMessages(let offset): return .one(.app(.scrollMessages(offset: offset)))
        case .scrollScreen(let offset): return .one(.app(.scrollScreen(offset: offset)))
        case .scrollToMessage(let index): return .one(.app(.scrollToMessage(index: index)))
        case .setExpanded(let id, let expanded): return .one(.navigation(.setExpanded(nodeID: id, expanded: expanded)))
        case .copy(let id): return .one(.app(.copy(nodeID: id)))
        case .loadScenario(let name): return .one(.app(.loadScenario(name)))
        case .reset: return .one(.app(.reset))
        }
    }

    // MARK: - Platform events

    static func route(_ event: PlatformEvent) -> Route {
        switch event {
        case .http(.healthFinished(let result)): return .one(.pairing(.healthFinished(result)))
        case .http(.pairFinished(let result)): return .one(.pairing(.pairFinished(result)))
        case .secureStore(let result): return .one(.servers(.secureStore(result)))
        case .webSocket(.opened(let id)): return .one(.connection(.socketOpened(effectID: id)))
        case .webSocket(.event(let id, let items)): return .one(.connectionFrame(effectID: id, items: items))
        case .webSocket(.closed(let id, let code, let reason)):
            return .one(.connection(.socketClosed(effectID: id, code: code, reason: reason)))
        case .webSocket(.failed(let id, let error, let status)):
            return .one(.connection(.socketFailed(effectID: id, error: error, status: status)))
        case .timer(.fired(let id)):
            // The connection's reconnect and keep-alive; the keep-alive's tick is the chat's turn watch too.
            return .many([.connection(.timerFired(timerID: id)), .chat(.timerFired(timerID: id))])
        case .device(.deviceIDCreated(let id, let value)): return .one(.lifecycle(.deviceIDCreated(effectID: id, deviceID: value)))
        case .device(.pushTokenReceived(let token)): return .one(.lifecycle(.pushTokenReceived(token: token)))
        case .device(.qrPayloadScanned(let payload)): return .one(.pairing(.qrPayloadScanned(payload: payload)))
        case .device(.qrScanCancelled): return .one(.pairing(.qrScanCancelled))
        case .device(.speechTranscript(let text, let isFinal)): return .one(.composer(.speechTranscript(text: text, isFinal: isFinal)))
        case .device(.imageAttachmentSelected(let mediaType, let data)):
            return .one(.composer(.imageAttachmentSelected(mediaType: mediaType, dataBase64: data)))
        case .lifecycle(.foreground): return .many([.connection(.foreground), .lifecycle(.foreground)])
        case .lifecycle(.background): return .many([.connection(.background), .lifecycle(.background)])
        case .lifecycle(.appearanceChanged(let appearance)): return .one(.lifecycle(.appearanceChanged(appearance)))
        case .lifecycle(.networkReachabilityChanged(let reachable)):
            return .many([.connection(.networkReachabilityChanged(reachable: reachable)), .lifecycle(.networkReachabilityChanged(reachable: reachable))])
        case .lifecycle(.pushNotificationOpened(let payload)): return .one(.lifecycle(.pushNotificationOpened(payload: payload)))
        }
    }

    // MARK: - Server events

    static func route(_ event: ServerEvent) -> Route {
        switch event {
        case .textDelta(let text): return .one(.chatStream(.textDelta(text)))
        case .textReplace(let text): return .one(.chatStream(.textReplace(text)))
        case .reasoningDelta(let text): return .one(.chatStream(.reasoningDelta(text)))
        case .toolInput(let delta): return .one(.chatStream(.toolInput(delta: delta)))
        case .ack(let id): return .many([.connection(.answered(.ack, id: id)), .chat(.ack(id: id))])
        case .reasoningDone(let secs): return .one(.chat(.reasoningDone(durationSecs: secs)))
        case .toolStart(let id, let name): return .one(.chat(.toolStart(id: id, name: name)))
        case .toolExec(let id, let name): return .one(.chat(.toolExec(id: id, name: name)))
        case .toolDone(let id, let name, let output, let error):
            return .one(.chat(.toolDone(id: id, name: name, output: output, error: error)))
        case .messageEnd(let reason): return .one(.chat(.messageEnd(stopReason: reason)))
        case .providerGuardrail(_, let message): return .one(.chat(.providerGuardrail(message: message)))
        // The session owns the answers to `clear` and `rename_session`; the chat, a turn's;
        // the connection forgets the request each answer ends (`GatewayAnswer`).
        case .done(let id): return .many([.connection(.answered(.done, id: id)), .session(.done(id: id)), .chat(.done(id: id))])
        case .interrupted: return .one(.chat(.interrupted))
        case .error(let id, let message, let retryAfter):
            // The connection owns an error answering `subscribe`; the session, a refused
            // `clear` or `rename_session`; the chat, one about the turn (and shows each).
            return .many([
                .connection(.error(id: id, message: message)), .session(.error(id: id, message: message)),
                .chat(.error(id: id, message: message, retryAfterSecs: retryAfter)),
            ])
        case .tokens(let usage): return .many([.session(.tokens(usage)), .chat(.tokens(usage))])
        case .statusDetail(let detail): return .one(.chat(.statusDetail(detail)))
        case .connectionPhase(let phase): return .one(.chat(.connectionPhase(phase)))
        case .retryRollback(let attempt, let max): return .one(.chat(.retryRollback(attempt: attempt, max: max)))
        case .softInterruptInjected(let content, let role, _, _):
            return .one(.chat(.softInterruptInjected(content: content, displayRole: role)))
        case .state(_, let sessionID, _, let isProcessing):
            return .many([.session(.state(sessionID: sessionID)), .chat(.state(isProcessing: isProcessing))])
        case .session(let id): return .many([.connection(.answered(.session, id: nil)), .session(.session(sessionID: id))])
        case .sessionRenamed(let id, let title): return .one(.session(.sessionRenamed(sessionID: id, displayTitle: title)))
        case .history(let history): return .many([.connection(.history(requestID: history.requestID)), .session(.history(history)), .chat(.history(history))])
        case .modelChanged(let id, let model, let provider, let error):
            return .many([.connection(.answered(.modelChanged, id: id)), .session(.modelChanged(model: model, providerName: provider, error: error))])
        case .reasoningEffortChanged(let id, let effort, let error):
            return .many([.connection(.answered(.reasoningEffortChanged, id: id)), .session(.reasoningEffortChanged(effort: effort, error: error))])
        case .availableModelsUpdated(let models, let model, let provider):
            return .one(.session(.availableModelsUpdated(models: models, providerModel: model, providerName: provider)))
        case .compactResult(let id, let message, let success):
            return .many([.connection(.answered(.compactResult, id: id)), .session(.compactResult(message: message, success: success))])
        case .compaction(let trigger, let saved): return .one(.session(.compaction(trigger: trigger, tokensSaved: saved)))
        case .notification(let notification): return .one(.session(.notification(notification)))
        case .connectionType(let type): return .one(.session(.connectionType(type)))
        case .upstreamProvider(let provider): return .one(.session(.upstreamProvider(provider)))
        case .reloadProgress(let step, let message, let success):
            return .one(.session(.reloadProgress(step: step, message: message, success: success)))
        case .loggedOnly(let type): return .nobody("\(type): shown in the log only")
        case .reloading: return .many([.connection(.reloading), .chat(.reloading)])
        case .sessionCloseRequested(let reason):
            return .many([.connection(.sessionCloseRequested(reason: reason)), .chat(.sessionCloseRequested)])
        case .permissionRequest(let request): return .one(.approvals(.permissionRequest(request)))
        case .stdinRequest(let request): return .one(.approvals(.stdinRequest(request)))
        case .pong(let id): return .one(.connection(.pong(id: id)))
        case .compactedHistory(let answer):
            return .many([.connection(.answered(.compactedHistory, id: answer.requestID)), .chat(.compactedHistory(answer))])
        case .sidePaneImages(let sessionID, let images): return .one(.chat(.liveImages(sessionID: sessionID, images: images)))
        case .generatedImage(let id, let path, let format, let prompt):
            return .one(.chat(.generatedImage(id: id, path: path, outputFormat: format, revisedPrompt: prompt)))
        }
    }

    /// The chat's stream input of a streamed text event: what
    /// `route(.textDelta(…))` and the others deliver, for the hot path that
    /// reads them without a `ServerEvent` (`Store.sendFrame`, App/StreamedFrames.swift).
    static func route(_ streamed: ServerEvent.StreamedText) -> ChatInteractor.Stream {
        switch streamed.kind {
        case .textDelta: return .textDelta(streamed.text)
        case .textReplace: return .textReplace(streamed.text)
        case .reasoningDelta: return .reasoningDelta(streamed.text)
        }
    }

    // MARK: - What features tell each other

    static func route(_ message: InternalInput) -> Route {
        switch message {
        case .send(let request): return .one(.connection(.send(request)))
        // A new error shows closed (its words, not the last one's details).
        case .showError(let banner): return .many([.notices(.showError(banner)), .navigation(.forgetExpansion(nodeID: "banner.error"))])
        case .notice(let kind, let text, let passes): return .one(.notices(.notice(kind, text, passes: passes)))
        case .openChat: return .one(.navigation(.openChat))
        case .pairing(let output): return route(output)
        case .lifecycle(.identityReady): return .one(.pairing(.identityReady))
        case .lifecycle(.identityFailed): return .one(.pairing(.identityFailed))
        case .lifecycle(.sessionAskedOffline(let id)): return .one(.session(.resumeOnConnect(id: id)))
        case .lifecycle(.sessionAsked(let id)): return .one(.session(.resumeSession(id: id)))
        case .lifecycle(.reconnectAsked): return .one(.connection(.retryConnection))
        case .servers(let output): return route(output)
        case .connection(let output): return route(output)
        case .session(.sessionSwitched):
            return .many([.navigation(.followNewest), .chat(.sessionSwitched), .approvals(.nothingWaits), .notices(.sessionChanged)])
        case .session(.clearAnswered(let accepted)):
            return accepted
                ? .many([.navigation(.followNewest), .chat(.clearAnswered(accepted: true)), .notices(.sessionChanged)])
                : .one(.chat(.clearAnswered(accepted: false)))
        case .chat(.turnEnded(let outcome, let error)):
            return .many([.session(.turnOver), .approvals(.nothingWaits), .lifecycle(.turnEnded(outcome: outcome, error: error))])
        case .chat(.composerSent(let clearDraft, let clearAttachments)):
            return .many([.navigation(.followNewest), .composer(.composerSent(clearDraft: clearDraft, clearAttachments: clearAttachments))])
        case .chat(.keepInDraft(let text)): return .one(.composer(.keepInDraft(text: text)))
        case .approvals(.permissionAsked(let action, let sessionID)):
            return .one(.lifecycle(.permissionAsked(action: action, sessionID: sessionID)))
        case .approvals(.inputAsked(let prompt)): return .one(.lifecycle(.inputAsked(prompt: prompt)))
        case .chat(.turnStarted): return .one(.notices(.turnStarted))
        case .chat(.olderMessagesShown(let count)): return .one(.app(.keepReadingPlace(entriesAbove: count)))
        case .app(.focus(let id)): return .one(.navigation(.focus(nodeID: id)))
        case .app(.scrollMessages(let offset)): return .one(.navigation(.scrollMessages(offset: offset)))
        case .app(.scrollScreen(let offset)): return .one(.navigation(.scrollScreen(offset: offset)))
        }
    }

    static func route(_ output: PairingOutput) -> Route {
        switch output {
        case .pairingStarted: return .many([.connection(.pairingStarted), .notices(.freshAttempt)])
        case .pairingFailed: return .one(.connection(.pairingFailed))
        case .paired(let server): return .one(.servers(.paired(server)))
        case .pairingLinkScanned: return .one(.navigation(.pairingLinkScanned))
        case .serverVersionSeen(let id, let version): return .one(.servers(.serverVersionSeen(serverID: id, version: version)))
        case .identityNeeded: return .one(.lifecycle(.identityNeeded))
        }
    }

    static func route(_ output: ServersOutput) -> Route {
        switch output {
        case .serverChanged(let server):
            var list: [Delivery] = [.navigation(.serverChanged(server))]
            if server == nil { list.append(.connection(.serverCleared)) }
            list += [.session(.serverChanged(server)), .chat(.serverChanged), .approvals(.nothingWaits)]
            return .many(list)
        case .serverSelected(let selection):
            var list: [Delivery] = [.connection(.serverSelected(selection)), .session(.serverSelected(selection))]
            // A server picked from the list is a fresh attempt; a paired one follows pairing's.
            if selection.reason == .chosen { list.append(.notices(.freshAttempt)) }
            return .many(list)
        case .credentialsLoaded(let id): return .one(.connection(.credentialsLoaded(serverID: id)))
        case .credentialsMissing(let name): return .one(.connection(.credentialsMissing(serverName: name)))
        case .workingDirChanged(let id): return .one(.connection(.workingDirChanged(serverID: id)))
        }
    }

    static func route(_ output: ConnectionOutput) -> Route {
        switch output {
        case .credentialsNeeded: return .one(.servers(.credentialsNeeded))
        case .credentialsRejected(let id): return .one(.servers(.credentialsRejected(serverID: id)))
        case .socketOpened:
            return .many([.navigation(.socketOpened), .chat(.socketOpened), .approvals(.socketOpened), .notices(.freshAttempt)])
        case .connectionLost: return .many([.session(.connectionLost), .chat(.connectionLost)])
        case .historyLost: return .one(.chat(.historyLost))
        }
    }
}
