/// Non-secret persisted data (saved servers, preferences). Fire and forget.
public enum StorageEffect: Equatable, Sendable {
    case write(key: String, value: JSONValue)

    public var type: String { "storage_write" }

    func encode(into fields: inout JSONObject, redacted: Bool) {
        switch self {
        case .write(let key, let value):
            fields.append("key", .string(key))
            fields.append("value", value)
        }
    }

    static let specs: [EffectSpec] = [
        EffectSpec(
            "storage_write", doc: "Persist a non-secret JSON value under key (app support / UserDefaults).",
            fields: [FieldSpec("key", .string), FieldSpec("value", .any)])
    ]
}
