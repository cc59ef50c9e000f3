/// The names of the app's features (one folder each under `Features/`), and
/// of the two layers that own what no feature can: the app root (`App/`:
/// taps, scenarios, reset) and the store (the revision and the ledger of
/// pending effects). Routing tables, state sections and the ownership table
/// in docs/ARCHITECTURE.md name their owners with these.
public enum FeatureID: String, CaseIterable, Sendable {
    case navigation, pairing, servers, connection, session, chat, approvals, composer, notices, lifecycle
    /// `App/`: what is resolved against the whole state or replaces it.
    case app
    /// `Architecture/Store.swift`: the revision and the pending effects.
    case store

    /// The name the table prints ("Navigation", "App").
    public var title: String { rawValue.prefix(1).uppercased() + rawValue.dropFirst() }
}
