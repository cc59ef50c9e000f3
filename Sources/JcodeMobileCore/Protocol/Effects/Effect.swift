import JcodeMobileJSON
import JcodeMobileWire

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
/// own file with its request, its results and its declaration.
public enum Effect: Equatable, Sendable {
    case http(HTTPEffect)
    case secureStore(SecureStoreEffect)
    case storage(StorageEffect)
    case webSocket(WebSocketEffect)
    case timer(TimerEffect)
    case device(DeviceEffect)

    /// Which effect this is, and the values of its declared fields in
    /// declared order: the one place an effect value meets its declaration.
    var encoded: EncodedMessage<EffectKind> {
        switch self {
        case .http(let e): return e.encoded
        case .secureStore(let e): return e.encoded
        case .storage(let e): return e.encoded
        case .webSocket(let e): return e.encoded
        case .timer(let e): return e.encoded
        case .device(let e): return e.encoded
        }
    }

    /// Which effect this is (what `encoded` says, without encoding the
    /// fields: the store asks for every effect it issues; WireSpecTests
    /// holds the two to the same answer).
    public var kind: EffectKind {
        switch self {
        case .http(.health): return .httpHealth
        case .http(.pair): return .httpPair
        case .secureStore(.write): return .secureStoreWrite
        case .secureStore(.read): return .secureStoreRead
        case .secureStore(.delete): return .secureStoreDelete
        case .storage(.write): return .storageWrite
        case .webSocket(.connect): return .websocketConnect
        case .webSocket(.send): return .websocketSend
        case .webSocket(.close): return .websocketClose
        case .timer(.schedule): return .scheduleTimer
        case .timer(.cancel): return .cancelTimer
        case .device(.createDeviceID): return .createDeviceID
        case .device(.registerPushNotifications): return .registerPushNotifications
        case .device(.requestCameraQRScan): return .requestCameraQRScan
        case .device(.requestSpeechTranscript): return .requestSpeechTranscript
        case .device(.requestImagePicker): return .requestImagePicker
        case .device(.haptic): return .haptic
        case .device(.showLocalNotification): return .showLocalNotification
        case .device(.copyToClipboard): return .copyToClipboard
        }
    }

    /// The wire `type` of the effect.
    public var type: String { kind.rawValue }

    /// The declaration of this effect.
    public var spec: EffectSpec { kind.spec }

    /// The effect's own fields, in declared order. `redacted` replaces
    /// secrets (for logs); the host always gets the real values.
    public func fields(redacted: Bool) -> JSONObject {
        encoded.fields(spec.fields, redacted: redacted)
    }

    /// Writes `{"effect_id":…,"type":…, fields…}` (what `json(id:redacted:)`
    /// is) straight to `w`, and says whether the effect holds a secret (so
    /// its redacted form differs from what the host gets).
    @discardableResult
    func write(id: EffectID, redacted: Bool, to w: inout JSONWriter) -> Bool {
        let message = encoded
        let spec = message.kind.spec
        w.objectStart()
        w.key("effect_id"); w.int(id.rawValue)
        w.key("type"); w.string(message.kind.rawValue)
        var secret = false
        for (field, value) in zip(spec.fields, message.values) {
            switch value {
            case .plain(let v):
                w.key(string: field.name)
                if field.secret {
                    secret = true
                    w.value(redacted ? Redaction.placeholder : v)
                } else {
                    w.value(v)
                }
            case .secret(let v):
                secret = true
                w.key(string: field.name)
                w.value(redacted ? Redaction.placeholder : v)
            case .absent:
                continue
            }
        }
        w.objectEnd()
        return secret
    }

    /// `{"effect_id":…,"type":…, fields…}` as the host receives it.
    public func json(id: EffectID, redacted: Bool = false) -> JSONValue {
        var object = JSONObject(capacity: 8)
        object.append("effect_id", .int(Int64(id.rawValue)))
        object.append("type", .string(type))
        object.entries.append(contentsOf: fields(redacted: redacted).entries)
        return .object(object)
    }

    /// Whether the host answers this effect with a platform event carrying
    /// its `effect_id`, so the ledger keeps it until then.
    public var expectsAnswer: Bool { kind.isTracked }

    /// Every effect the core can request, for documentation and the schema.
    public static let specs: [EffectSpec] =
        HTTPEffect.specs + SecureStoreEffect.specs + StorageEffect.specs + WebSocketEffect.specs
        + TimerEffect.specs + DeviceEffect.specs
}

/// Every effect type, by its wire name.
public enum EffectKind: String, CaseIterable, Sendable {
    case httpHealth = "http_health"
    case httpPair = "http_pair"
    case secureStoreWrite = "secure_store_write"
    case secureStoreRead = "secure_store_read"
    case secureStoreDelete = "secure_store_delete"
    case storageWrite = "storage_write"
    case websocketConnect = "websocket_connect"
    case websocketSend = "websocket_send"
    case websocketClose = "websocket_close"
    case scheduleTimer = "schedule_timer"
    case cancelTimer = "cancel_timer"
    case createDeviceID = "create_device_id"
    case registerPushNotifications = "register_push_notifications"
    case requestCameraQRScan = "request_camera_qr_scan"
    case requestSpeechTranscript = "request_speech_transcript"
    case requestImagePicker = "request_image_picker"
    case haptic
    case showLocalNotification = "show_local_notification"
    case copyToClipboard = "copy_to_clipboard"

    /// The declaration of this kind (every kind has exactly one; a test checks).
    public var spec: EffectSpec { EffectKind.table[position] }

    /// The kind's place in `allCases`, by a switch (no hashing of its name).
    var position: Int {
        switch self {
        case .httpHealth: return 0
        case .httpPair: return 1
        case .secureStoreWrite: return 2
        case .secureStoreRead: return 3
        case .secureStoreDelete: return 4
        case .storageWrite: return 5
        case .websocketConnect: return 6
        case .websocketSend: return 7
        case .websocketClose: return 8
        case .scheduleTimer: return 9
        case .cancelTimer: return 10
        case .createDeviceID: return 11
        case .registerPushNotifications: return 12
        case .requestCameraQRScan: return 13
        case .requestSpeechTranscript: return 14
        case .requestImagePicker: return 15
        case .haptic: return 16
        case .showLocalNotification: return 17
        case .copyToClipboard: return 18
        }
    }

    /// Whether effects of this kind are kept in the ledger (`EffectSpec.tracked`).
    var isTracked: Bool { EffectKind.trackedTable[position] }

    private static let trackedTable: [Bool] = table.map(\.tracked)

    /// The declarations in `allCases` order.
    private static let table: [EffectSpec] = EffectKind.allCases.map { kind in
        Effect.specs.first { $0.kind == kind }!
    }
}

/// Declares one effect on the wire: its type, fields and the events that
/// answer it. The declaration drives the encoding, the redaction of its
/// secrets in logs, the documentation and (later) the schema.
public struct EffectSpec: Sendable {
    public let kind: EffectKind
    public var type: String { kind.rawValue }
    public let doc: String
    public let fields: [FieldSpec]
    /// Platform event types that answer this effect (empty: fire and forget).
    public let answeredBy: [String]
    /// Kept in the ledger until an answer with its `effect_id` arrives
    /// (device answers are matched by type, timers by timer id).
    public let tracked: Bool

    public init(_ kind: EffectKind, doc: String, fields: [FieldSpec] = [], answeredBy: [String] = [], tracked: Bool = false) {
        self.kind = kind
        self.doc = doc
        self.fields = fields
        self.answeredBy = answeredBy
        self.tracked = tracked
    }
}

/// A message value split into its kind and the values of its declared
/// fields, in declared order (`.absent` for an optional field left out).
struct EncodedMessage<Kind> {
    enum Value {
        case plain(JSONValue)
        /// Secret in this message even if its field is not always (a line
        /// that answers a password prompt).
        case secret(JSONValue)
        case absent
    }

    var kind: Kind
    var values: [Value]

    init(_ kind: Kind, _ values: [Value] = []) {
        self.kind = kind
        self.values = values
    }

    /// The fields as JSON, named by `declared` (same order as `values`);
    /// `redacted` replaces every secret value by the placeholder.
    func fields(_ declared: [FieldSpec], redacted: Bool) -> JSONObject {
        var object = JSONObject(capacity: values.count)
        for (field, value) in zip(declared, values) {
            switch value {
            case .plain(let v): object.append(field.name, redacted && field.secret ? Redaction.placeholder : v)
            case .secret(let v): object.append(field.name, redacted ? Redaction.placeholder : v)
            case .absent: continue
            }
        }
        return object
    }

    /// Whether any value is a secret (declared or marked).
    func hasSecret(_ declared: [FieldSpec]) -> Bool {
        for (field, value) in zip(declared, values) {
            switch value {
            case .plain: if field.secret { return true }
            case .secret: return true
            case .absent: continue
            }
        }
        return false
    }
}

extension EncodedMessage.Value {
    static func string(_ s: String) -> Self { .plain(.string(s)) }
    static func int(_ i: Int) -> Self { .plain(.int(Int64(i))) }
    static func bool(_ b: Bool) -> Self { .plain(.bool(b)) }
    static func optional(_ s: String?) -> Self { s.map { .plain(.string($0)) } ?? .absent }
}
