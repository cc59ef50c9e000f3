/// What navigation lets the other features read (`Facts.navigation`), taken
/// before each input from its slice: the only part of it they see.
public struct NavigationFacts: Sendable {
    /// The screen shown.
    public var screen: Screen = .onboarding

    public init() {}

    /// Read in place from the state (no copy of the slice).
    init(_ state: UnsafePointer<AppState>) {
        screen = state.pointee.navigation.screen
    }
}
