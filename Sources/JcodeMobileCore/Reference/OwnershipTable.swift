import JcodeMobileWire

/// The ownership table of docs/ARCHITECTURE.md ("Who owns what"), generated
/// from the code so it cannot drift: the state sections from
/// `StateSection.all`, the inputs from `AppRouter` (every declared action,
/// platform event and server event is decoded from its reference example and
/// routed; every feature output is routed), what a feature tells from the
/// sender of each output, and the effects it awaits from the platform
/// events that answer them. `DocumentationTests` checks the document
/// against it (`JCODE_UPDATE_DOCS=1` rewrites it).
public enum OwnershipTable {
    /// Every feature output and shared request (the table's "acts on" and
    /// "tells" columns), as the compiler enumerates them (OutputSamples.swift).
    static let everyOutput: [InternalInput] = InternalInput.everySample

    /// Who sends an output (nil: a shared request, anyone may).
    static func sender(of message: InternalInput) -> FeatureID? {
        switch message {
        case .pairing: return .pairing
        case .lifecycle: return .lifecycle
        case .servers: return .servers
        case .connection: return .connection
        case .session: return .session
        case .chat: return .chat
        case .approvals: return .approvals
        case .app: return .app
        case .send, .showError, .notice, .openChat: return nil
        }
    }

    /// One row per feature.
    struct Row {
        var sections: [String] = []
        var actions: [String] = []
        var platformEvents: [String] = []
        var serverEvents: [String] = []
        var actsOn: [String] = []
        var tells: [String] = []
        var awaits: [String] = []
    }

    /// Adds `item` once, keeping the order of first sight.
    private static func add(_ item: String, to list: inout [String]) {
        if !list.contains(item) { list.append(item) }
    }

    /// The decoded reference examples of a union's members: with every
    /// field, and with the required ones only (a route can depend on an
    /// optional field: `set_working_dir` with or without `server_id`).
    static func examples<Value>(_ union: WireUnion<Value>) -> [(type: String, value: Value)] {
        var out: [(type: String, value: Value)] = []
        for spec in union.members {
            for fields in [spec.fields, spec.fields.filter(\.required)] {
                if let value = try? union.decode(ABIReference.exampleValue(type: spec.type, fields)) { out.append((spec.type, value)) }
            }
        }
        return out
    }

    static func rows() -> [FeatureID: Row] {
        var rows: [FeatureID: Row] = [:]
        for section in StateSection.all { add(section.name, to: &rows[section.owner, default: Row()].sections) }
        for (type, action) in examples(Action.wire) {
            for d in AppRouter.route(.action(action)).deliveries { add(type, to: &rows[d.feature, default: Row()].actions) }
        }
        var platformOwners: [String: [FeatureID]] = [:]
        for (type, event) in examples(PlatformEvent.wire) {
            for d in AppRouter.route(.platform(event)).deliveries {
                add(type, to: &rows[d.feature, default: Row()].platformEvents)
                if !(platformOwners[type]?.contains(d.feature) ?? false) { platformOwners[type, default: []].append(d.feature) }
            }
        }
        for (type, event) in examples(ServerEvent.wire) {
            for d in AppRouter.route(.server(event)).deliveries { add(type, to: &rows[d.feature, default: Row()].serverEvents) }
        }
        for message in everyOutput {
            let from = sender(of: message)
            for d in AppRouter.route(.internal(message)).deliveries {
                add(message.name + (from.map { " (\($0.rawValue))" } ?? ""), to: &rows[d.feature, default: Row()].actsOn)
            }
            if let from { add(message.name, to: &rows[from, default: Row()].tells) }
        }
        for spec in Effect.specs {
            for answer in spec.answeredBy {
                for owner in platformOwners[answer] ?? [] { add(spec.kind.rawValue, to: &rows[owner, default: Row()].awaits) }
            }
        }
        return rows
    }

    /// The table, as markdown.
    public static func markdown() -> String {
        let rows = rows()
        func cell(_ items: [String]) -> String { items.isEmpty ? "—" : items.map { "`\($0)`" }.joined(separator: ", ") }
        var out = "| feature | state sections | actions | platform events | server events | acts on (sender) | tells | awaits answers to |\n"
        out += "|---|---|---|---|---|---|---|---|\n"
        for feature in FeatureID.allCases {
            let r = rows[feature] ?? Row()
            out += "| \(feature.title) | \(cell(r.sections)) | \(cell(r.actions)) | \(cell(r.platformEvents)) | \(cell(r.serverEvents)) | "
            out += "\(cell(r.actsOn)) | \(cell(r.tells)) | \(cell(r.awaits)) |\n"
        }
        var loggedOnly: [String] = []
        for (type, event) in examples(ServerEvent.wire) where AppRouter.route(.server(event)).deliveries.isEmpty {
            add(type, to: &loggedOnly)
        }
        out += "\nServer events no feature acts on (the log shows them): \(cell(loggedOnly)).\n"
        return out
    }
}
