/// The platform's secret store (the iOS Keychain). Only auth tokens go here.
public enum SecureStoreEffect: Equatable, Sendable {
    case write(key: String, value: String)
    case read(key: String)
    case delete(key: String)

    public var type: String {
        switch self {
        case .write: return "secure_store_write"
        case .read: return "secure_store_read"
        case .delete: return "secure_store_delete"
        }
    }

    var expectsAnswer: Bool {
        if case .delete = self { return false }
        return true
    }

    func encode(into fields: inout JSONObject, redacted: Bool) {
        switch self {
        case .write(let key, let value):
            fields.append("key", .string(key))
            fields.append("value", .string(redacted ? redactedText : value))
        case .read(let key), .delete(let key):
            fields.append("key", .string(key))
        }
    }

    var redacted: SecureStoreEffect {
        if case .write(let key, _) = self { return .write(key: key, value: redactedText) }
        return self
    }

    static let specs: [EffectSpec] = [
        EffectSpec(
            "secure_store_write", doc: "Store a secret (an auth token) under key in the Keychain.",
            fields: [FieldSpec("key", .string), FieldSpec("value", .string, secret: true)],
            answeredBy: ["secure_store_write_finished"]),
        EffectSpec(
            "secure_store_read", doc: "Read the secret stored under key.", fields: [FieldSpec("key", .string)],
            answeredBy: ["secure_store_read_finished"]),
        EffectSpec("secure_store_delete", doc: "Delete the secret stored under key.", fields: [FieldSpec("key", .string)]),
    ]
}

public enum SecureStoreResult: Equatable, Sendable {
    case writeFinished(effectID: EffectID, key: String, ok: Bool)
    case readFinished(effectID: EffectID, key: String, ok: Bool, value: String?)

    static let specs: [MessageSpec<PlatformEvent>] = [
        MessageSpec(
            "secure_store_write_finished", doc: "Answers secure_store_write.",
            fields: [FieldSpec("effect_id", .integer), FieldSpec("key", .string), FieldSpec("ok", .boolean)]
        ) { r throws(CoreError) in
            .secureStore(.writeFinished(effectID: EffectID(try r.int("effect_id")), key: try r.string("key"), ok: try r.bool("ok")))
        },
        MessageSpec(
            "secure_store_read_finished", doc: "Answers secure_store_read; value is absent when nothing is stored.",
            fields: [
                FieldSpec("effect_id", .integer), FieldSpec("key", .string), FieldSpec("ok", .boolean),
                .optional("value", .string, secret: true),
            ]
        ) { r throws(CoreError) in
            .secureStore(
                .readFinished(
                    effectID: EffectID(try r.int("effect_id")), key: try r.string("key"), ok: try r.bool("ok"),
                    value: try r.optionalString("value")))
        },
    ]
}
