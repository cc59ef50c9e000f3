/// Owns what the host reports about the app and the device: foreground and
/// background, the network, push registration and opened notifications.
public struct LifecycleInteractor: Interactor {
    public init() {}

    public func interact(_ state: inout LifecycleState, _ input: Input, _ facts: Facts) -> Emission {
        switch input {
        case .platform(.lifecycle(.foreground)):
            state.isForeground = true
            return .none
        case .platform(.lifecycle(.background)):
            state.isForeground = false
            return .none
        case .platform(.lifecycle(.networkReachabilityChanged(let reachable))):
            state.isNetworkReachable = reachable
            return .none
        case .platform(.device(.pushTokenReceived(let token))):
            state.pushToken = token
            return .none
        case .platform(.lifecycle(.pushNotificationOpened(let payload))):
            // A notification about a session (an approval waiting, a finished
            // task) opens that session's chat.
            guard facts.selectedServer != nil else { return .note("push opened with no paired server") }
            var emission = Emission.internal(.openChat)
            if let sessionID = payload["session_id"]?.stringValue, sessionID != facts.sessionID, facts.canSend {
                emission.append(.action(.resumeSession(id: sessionID)))
            } else if facts.connectionPhase != .connected && facts.connectionPhase != .connecting {
                emission.append(.action(.retryConnection))
            }
            return emission
        default:
            return .none
        }
    }
}
