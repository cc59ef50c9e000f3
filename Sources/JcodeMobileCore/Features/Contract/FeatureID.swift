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

    /// The feature's bit in a set of features (`AppInteractor` reports the
    /// features an input reached; the change feed compares only their sections).
    /// (The position in the declaration, by a switch: `allCases` would
    /// build an array on every input.)
    public var bit: UInt32 {
        switch self {
        case .navigation: return 1 << 0
        case .pairing: return 1 << 1
        case .servers: return 1 << 2
        case .connection: return 1 << 3
        case .session: return 1 << 4
        case .chat: return 1 << 5
        case .approvals: return 1 << 6
        case .composer: return 1 << 7
        case .notices: return 1 << 8
        case .lifecycle: return 1 << 9
        case .app: return 1 << 10
        case .store: return 1 << 11
        }
    }
    /// Every feature.
    public static let all: UInt32 = allCases.reduce(0) { $0 | $1.bit }

    /// The name the table prints ("Navigation", "App").
    public var title: String { rawValue.prefix(1).uppercased() + rawValue.dropFirst() }
}
