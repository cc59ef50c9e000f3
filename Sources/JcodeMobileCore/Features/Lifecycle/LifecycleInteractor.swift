/// Owns what the host reports about the app and the device: foreground and
/// background, push registration and opened notifications.
public struct LifecycleInteractor: Interactor {
    public init() {}

    public func interact(_ state: inout AppState, _ input: Input) -> Emission {
        switch input {
        case .platform(.lifecycle(.foreground)):
            state.lifecycle.isForeground = true
            return .none
        case .platform(.lifecycle(.background)):
            state.lifecycle.isForeground = false
            return .none
        case .platform(.device(.pushTokenReceived(let token))):
            state.lifecycle.pushToken = token
            return .none
        case .platform(.lifecycle(.pushNotificationOpened(let payload))):
            // A notification about a session (an approval waiting, a finished
            // task) opens that session's chat.
            guard state.selectedServer != nil else { return .note("push opened with no paired server") }
            state.screen = .chat
            if let sessionID = payload["session_id"]?.stringValue, sessionID != state.session.id, state.connection.canSend {
                return .action(.resumeSession(id: sessionID))
            }
            if state.connection.phase != .connected && state.connection.phase != .connecting {
                return .action(.retryConnection)
            }
            return .none
        default:
            return .none
        }
    }
}
