import JcodeMobileJSON
import JcodeMobileWire

/// HTTP requests to the jcode gateway: `GET /health` and `POST /pair`.
public enum HTTPEffect: Equatable, Sendable {
    /// `GET http(s)://host:port/health`.
    case health(host: String, port: Int, useTLS: Bool)
    /// `POST http(s)://host:port/pair` with `{code, device_id, device_name, apns_token?}`.
    case pair(host: String, port: Int, useTLS: Bool, code: String, deviceID: String, deviceName: String, apnsToken: String?)

    var encoded: EncodedMessage<EffectKind> {
        switch self {
        case .health(let host, let port, let useTLS):
            return EncodedMessage(.httpHealth, [.string(host), .int(port), .bool(useTLS)])
        case .pair(let host, let port, let useTLS, let code, let deviceID, let deviceName, let apnsToken):
            return EncodedMessage(
                .httpPair,
                [.string(host), .int(port), .bool(useTLS), .string(code), .string(deviceID), .string(deviceName), .optional(apnsToken)])
        }
    }

    static let specs: [EffectSpec] = [
        EffectSpec(
            .httpHealth, doc: "GET http(s)://host:port/health; tells whether a jcode gateway answers there.",
            fields: [
                FieldSpec("host", .string), FieldSpec("port", .integer(.port)),
                FieldSpec("use_tls", .boolean, doc: "https instead of http"),
            ], answeredBy: ["health_finished"], tracked: true),
        EffectSpec(
            .httpPair,
            doc: "POST http(s)://host:port/pair with body {code, device_id, device_name, apns_token?}.",
            fields: [
                FieldSpec("host", .string), FieldSpec("port", .integer(.port)), FieldSpec("use_tls", .boolean),
                FieldSpec("code", .string, secret: true, doc: "the 6-digit pairing code"),
                FieldSpec("device_id", .string), FieldSpec("device_name", .string),
                .optional("apns_token", .string, doc: "the push token, when the host has one"),
            ], answeredBy: ["pair_finished"], tracked: true),
    ]
}

/// The answer to `http_health`.
public struct HealthResult: Equatable, Sendable {
    public var effectID: EffectID
    public var ok: Bool
    public var version: String?
    public var status: Int?
    public var error: String?

    public init(effectID: EffectID, ok: Bool, version: String? = nil, status: Int? = nil, error: String? = nil) {
        self.effectID = effectID
        self.ok = ok
        self.version = version
        self.status = status
        self.error = error
    }
}

/// The answer to `http_pair`. The token is a secret: it only ever leaves the
/// core again inside `secure_store_write` and `websocket_connect`.
public struct PairResult: Equatable, Sendable {
    public var effectID: EffectID
    public var ok: Bool
    public var token: String?
    public var serverName: String?
    public var serverVersion: String?
    public var status: Int?
    public var error: String?

    public init(
        effectID: EffectID, ok: Bool, token: String? = nil, serverName: String? = nil, serverVersion: String? = nil,
        status: Int? = nil, error: String? = nil
    ) {
        self.effectID = effectID
        self.ok = ok
        self.token = token
        self.serverName = serverName
        self.serverVersion = serverVersion
        self.status = status
        self.error = error
    }
}

public enum HTTPResult: Equatable, Sendable {
    case healthFinished(HealthResult)
    case pairFinished(PairResult)

    static let specs: [MessageSpec<PlatformEvent>] = [
        MessageSpec(
            "health_finished",
            doc: "Answers http_health. ok:false without status: unreachable; with status: the HTTP status.",
            fields: [
                FieldSpec("effect_id", .integer(.id)), FieldSpec("ok", .boolean),
                .optional("version", .string), .optional("status", .integer(.httpStatus)), .optional("error", .string),
            ]
        ) { r throws(CoreError) in
            .http(
                .healthFinished(
                    HealthResult(
                        effectID: EffectID(try r.int("effect_id")), ok: try r.bool("ok"),
                        version: try r.optionalString("version"), status: try r.optionalInt("status"),
                        error: try r.optionalString("error"))))
        },
        MessageSpec(
            "pair_finished",
            doc: "Answers http_pair. ok:true carries the token; 401 means an invalid or expired code.",
            fields: [
                FieldSpec("effect_id", .integer(.id)), FieldSpec("ok", .boolean),
                .optional("token", .string, secret: true), .optional("server_name", .string),
                .optional("server_version", .string), .optional("status", .integer(.httpStatus)), .optional("error", .string),
            ]
        ) { r throws(CoreError) in
            .http(
                .pairFinished(
                    PairResult(
                        effectID: EffectID(try r.int("effect_id")), ok: try r.bool("ok"),
                        token: try r.optionalString("token"), serverName: try r.optionalString("server_name"),
                        serverVersion: try r.optionalString("server_version"), status: try r.optionalInt("status"),
                        error: try r.optionalString("error"))))
        },
    ]
}
