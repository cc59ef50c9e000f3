/// What the app root tells navigation (resolved against the whole screen).
public enum AppOutput: Equatable, Sendable {
    /// The node the person tapped takes the keyboard focus.
    case focus(nodeID: String)
    /// The message list scrolled (nil: to its end, following new messages).
    case scrollMessages(offset: Int?)
    /// A screen taller than the viewport scrolled (points above its top).
    case scrollScreen(offset: Int)
}
