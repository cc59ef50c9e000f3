/// Which screen shows, and which field has the keyboard.
public struct NavigationState: Equatable, Sendable {
    public var screen: Screen = .onboarding
    /// The node that has keyboard focus (a text field tapped last).
    public var focusedNodeID: String?

    public init() {}
}
