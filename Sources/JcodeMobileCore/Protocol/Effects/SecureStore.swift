import JcodeMobileJSON
import JcodeMobileWire

/// The platform's secret store (the iOS Keychain). Only auth tokens go here.
public enum SecureStoreEffect: Equatable, Sendable {
    case write(key: String, value: String)
    case read(key: String)
    case delete(key: String)

    var encoded: EncodedMessage<EffectKind> {
        switch self {
        case .write(let key, let value): return EncodedMessage(.secureStoreWrite, [.string(key), .string(value)])
        case .read(let key): return EncodedMessage(.secureStoreRead, [.string(key)])
        case .delete(let key): return EncodedMessage(.secureStoreDelete, [.string(key)])
        }
    }

    static let specs: [EffectSpec] = [
        EffectSpec(
            .secureStoreWrite, doc: "Store a secret (an auth token) under key in the Keychain.",
            fields: [FieldSpec("key", .string), FieldSpec("value", .string, secret: true)],
            answeredBy: ["secure_store_write_finished"], tracked: true),
        EffectSpec(
            .secureStoreRead, doc: "Read the secret stored under key.", fields: [FieldSpec("key", .string)],
            answeredBy: ["secure_store_read_finished"], tracked: true),
        EffectSpec(.secureStoreDelete, doc: "Delete the secret stored under key.", fields: [FieldSpec("key", .string)]),
    ]
}

public enum SecureStoreResult: Equatable, Sendable {
    case writeFinished(effectID: EffectID, key: String, ok: Bool)
    case readFinished(effectID: EffectID, key: String, ok: Bool, value: String?)

    static let specs: [MessageSpec<PlatformEvent>] = [
        MessageSpec(
            "secure_store_write_finished", doc: "Answers secure_store_write.",
            fields: [FieldSpec("effect_id", .integer(.id)), FieldSpec("key", .string), FieldSpec("ok", .boolean)]
        ) { r throws(CoreError) in
            .secureStore(.writeFinished(effectID: EffectID(try r.int("effect_id")), key: try r.string("key"), ok: try r.bool("ok")))
        },
        MessageSpec(
            "secure_store_read_finished", doc: "Answers secure_store_read; value is absent when nothing is stored.",
            fields: [
                FieldSpec("effect_id", .integer(.id)), FieldSpec("key", .string), FieldSpec("ok", .boolean),
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
