/// The screen the app shows.
public enum Screen: String, Sendable, CaseIterable {
    /// Pair with a server (and pick a saved one).
    case onboarding
    case chat
    /// The server's sessions.
    case sessions
    case modelPicker = "model_picker"
    case settings
}
