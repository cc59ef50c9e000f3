import JcodeMobileJSON
import JcodeMobileWire

/// Non-secret persisted data (saved servers, preferences). Fire and forget.
public enum StorageEffect: Equatable, Sendable {
    case write(key: String, value: JSONValue)

    var encoded: EncodedMessage<EffectKind> {
        switch self {
        case .write(let key, let value): return EncodedMessage(.storageWrite, [.string(key), .plain(value)])
        }
    }

    static let specs: [EffectSpec] = [
        EffectSpec(
            .storageWrite, doc: "Persist a non-secret JSON value under key (app support / UserDefaults).",
            fields: [FieldSpec("key", .string), FieldSpec("value", .any)])
    ]
}
