/// What the lifecycle tells the others.
public enum LifecycleOutput: Equatable, Sendable {
    /// This install has its identity now (`device_id`).
    case identityReady
    /// The host answered `create_device_id` with an unusable value.
    case identityFailed
    /// A notification about another session was opened while the link is
    /// down: that session is the one to subscribe to when it comes up.
    case sessionAskedOffline(sessionID: String)
    /// A notification about another session was opened while requests can
    /// go out: that session is resumed now.
    case sessionAsked(sessionID: String)
    /// A notification was opened while the link is down and not coming up:
    /// connect now.
    case reconnectAsked
}
