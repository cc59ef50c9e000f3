/// Correlates an effect with the platform events that answer it. Assigned by
/// the store from a counter in state, so replays produce the same ids.
public struct EffectID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: Int
    public init(_ rawValue: Int) { self.rawValue = rawValue }
    public static func < (lhs: EffectID, rhs: EffectID) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { String(rawValue) }
}

/// Something only the host can do (a socket, an HTTP request, the Keychain,
/// the camera…), requested by the core as a value. Each family lives in its
/// own file with its request, its results, its codec and its redaction.
public enum Effect: Equatable, Sendable {
    case http(HTTPEffect)
    case secureStore(SecureStoreEffect)
    case storage(StorageEffect)
    case webSocket(WebSocketEffect)
    case timer(TimerEffect)
    case device(DeviceEffect)

    /// The wire `type` of the effect.
    public var type: String {
        switch self {
        case .http(let e): return e.type
        case .secureStore(let e): return e.type
        case .storage(let e): return e.type
        case .webSocket(let e): return e.type
        case .timer(let e): return e.type
        case .device(let e): return e.type
        }
    }

    /// The effect's own fields, in declared order. `redacted` replaces
    /// secrets (for logs); the host always gets the real values.
    public func fields(redacted: Bool) -> JSONObject {
        var fields = JSONObject(capacity: 6)
        switch self {
        case .http(let e): e.encode(into: &fields, redacted: redacted)
        case .secureStore(let e): e.encode(into: &fields, redacted: redacted)
        case .storage(let e): e.encode(into: &fields, redacted: redacted)
        case .webSocket(let e): e.encode(into: &fields, redacted: redacted)
        case .timer(let e): e.encode(into: &fields, redacted: redacted)
        case .device(let e): e.encode(into: &fields, redacted: redacted)
        }
        return fields
    }

    /// `{"effect_id":…,"type":…, fields…}` as the host receives it.
    public func json(id: EffectID, redacted: Bool = false) -> JSONValue {
        var object = JSONObject(capacity: 8)
        object.append("effect_id", .int(Int64(id.rawValue)))
        object.append("type", .string(type))
        object.entries.append(contentsOf: fields(redacted: redacted).entries)
        return .object(object)
    }

    /// Whether the host answers this effect with a platform event carrying its `effect_id`.
    public var expectsAnswer: Bool {
        switch self {
        case .http: return true
        case .secureStore(let e): return e.expectsAnswer
        case .storage: return false
        case .webSocket(let e): return e.expectsAnswer
        case .timer: return false
        case .device(let e): return e.expectsAnswer
        }
    }

    /// The same effect with every secret replaced, safe to keep in state or logs.
    public var redacted: Effect {
        switch self {
        case .http(let e): return .http(e.redacted)
        case .secureStore(let e): return .secureStore(e.redacted)
        case .webSocket(let e): return .webSocket(e.redacted)
        case .storage, .timer, .device: return self
        }
    }

    /// Every effect the core can request, for documentation and the schema.
    public static let specs: [EffectSpec] =
        HTTPEffect.specs + SecureStoreEffect.specs + StorageEffect.specs + WebSocketEffect.specs
        + TimerEffect.specs + DeviceEffect.specs
}

/// Declares one effect on the wire: its type, fields and the events that answer it.
public struct EffectSpec: Sendable {
    public let type: String
    public let doc: String
    public let fields: [FieldSpec]
    /// Platform event types that answer this effect (empty: fire and forget).
    public let answeredBy: [String]

    public init(_ type: String, doc: String, fields: [FieldSpec] = [], answeredBy: [String] = []) {
        self.type = type
        self.doc = doc
        self.fields = fields
        self.answeredBy = answeredBy
    }
}

/// The text that replaces a secret in logs and redacted copies.
let redactedText = "[redacted]"
