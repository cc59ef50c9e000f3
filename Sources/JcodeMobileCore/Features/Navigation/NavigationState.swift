/// Which screen shows, and which field has the keyboard.
public struct NavigationState: Equatable, Sendable {
    public var screen: Screen = .onboarding
    /// The node that has keyboard focus (a text field tapped last).
    public var focusedNodeID: String?
    /// How far the message list is scrolled from its top, in points; nil
    /// follows the newest message (the list shows its end as it grows).
    public var messagesScroll: Int?

    public init() {}
}
