/// Owns what the host reports about the app and the device: foreground and
/// background, the network, this install's identity, push registration and
/// opened notifications.
///
///     identity_needed (pairing) → create_device_id (once)
///     device_id_created         → identity_ready, or identity_failed
public struct LifecycleInteractor: Interactor {
    public init() {}

    /// What the lifecycle acts on.
    public enum Input: Equatable, Sendable {
        // Platform events
        case foreground
        case background
        case networkReachabilityChanged(reachable: Bool)
        case pushNotificationOpened(payload: JSONObject)
        case deviceIDCreated(effectID: EffectID, deviceID: String)
        case pushTokenReceived(token: String)
        // Pairing's outputs
        case identityNeeded
    }

    public func interact(_ state: inout LifecycleState, _ input: Input, _ facts: Facts) -> Emission {
        switch input {
        case .foreground:
            state.isForeground = true
            return .none
        case .background:
            state.isForeground = false
            return .none
        case .networkReachabilityChanged(let reachable):
            state.isNetworkReachable = reachable
            return .none
        case .identityNeeded:
            if state.deviceID != nil { return .tell(.identityReady) }
            guard !facts.pendingEffects.contains(.createDeviceID) else { return .note("device id already requested") }
            return .effect(.device(.createDeviceID))
        case .deviceIDCreated(let id, let value):
            guard facts.pending(id)?.kind == .createDeviceID else {
                return .note("device_id_created for effect \(id), which is not a pending create_device_id; ignored", .ignored)
            }
            guard LifecycleState.isValidDeviceID(value) else {
                return .settle(id) + .note("device_id_created: not 1 to 128 printable ASCII characters without spaces; ignored", .ignored)
                    + .tell(.identityFailed)
            }
            // The first identity stays: an install never changes who it is.
            if state.deviceID == nil { state.deviceID = value }
            return .settle(id) + .tell(.identityReady)
        case .pushTokenReceived(let token):
            state.pushToken = token
            return .none
        case .pushNotificationOpened(let payload):
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
        }
    }
}
