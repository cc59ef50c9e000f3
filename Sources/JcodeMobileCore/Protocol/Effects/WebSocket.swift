import JcodeMobileJSON
import JcodeMobileWire

/// The WebSocket to the jcode gateway (`ws(s)://host:port/ws`, text frames of
/// newline-delimited JSON). The `effect_id` of `websocket_connect` names the
/// socket: every `websocket_*` event about it carries that id.
public enum WebSocketEffect: Equatable, Sendable {
    /// Open a socket with header `Authorization: Bearer <auth_token>`.
    case connect(url: String, authToken: String)
    /// Send one NDJSON request line on the open socket. `containsSecret`
    /// lines (an answer to a password prompt) are redacted in logs.
    case send(line: String, containsSecret: Bool)

    /// A request line with nothing secret in it.
    public static func send(_ line: String) -> WebSocketEffect { .send(line: line, containsSecret: false) }
    /// Close the socket; the host answers with `websocket_closed`.
    case close

    var encoded: EncodedMessage<EffectKind> {
        switch self {
        case .connect(let url, let token): return EncodedMessage(.websocketConnect, [.string(url), .string(token)])
        case .send(let line, let secret): return EncodedMessage(.websocketSend, [secret ? .secret(.string(line)) : .string(line)])
        case .close: return EncodedMessage(.websocketClose)
        }
    }

    static let specs: [EffectSpec] = [
        EffectSpec(
            .websocketConnect,
            doc: "Open ws(s)://host:port/ws with header Authorization: Bearer <auth_token>. "
                + "Report websocket_opened, then websocket_event per text frame, and websocket_closed or websocket_failed, each with this effect_id.",
            fields: [FieldSpec("url", .string), FieldSpec("auth_token", .string, secret: true)],
            answeredBy: ["websocket_opened", "websocket_event", "websocket_closed", "websocket_failed"], tracked: true),
        EffectSpec(
            .websocketSend, doc: "Send line (one JSON request, no trailing newline needed) as a text frame on the open socket.",
            fields: [FieldSpec("line", .string, doc: "redacted in logs when it answers a password prompt")]),
        EffectSpec(.websocketClose, doc: "Close the open socket, then report websocket_closed.", answeredBy: ["websocket_closed"]),
    ]
}

/// One server event of a `websocket_event`, decoded at the boundary: the
/// event, or why it was dropped (logged as a note; a bad server event is
/// never an error of the call that carried it).
public enum FrameItem: Equatable, Sendable {
    case event(ServerEvent)
    case dropped(String)

    init(_ result: Result<ServerEvent, CoreError>) {
        switch result {
        case .success(let event): self = .event(event)
        case .failure(let error) where error.code == .unknownType: self = .dropped("\(error.message) ignored")
        case .failure(let error): self = .dropped("malformed server event dropped: \(error.message)")
        }
    }
}

public enum WebSocketResult: Equatable, Sendable {
    case opened(effectID: EffectID)
    /// The events of one text frame, in order.
    case event(effectID: EffectID?, items: [FrameItem])
    case closed(effectID: EffectID, code: Int?, reason: String?)
    case failed(effectID: EffectID, error: String, status: Int?)

    static let specs: [MessageSpec<PlatformEvent>] = [
        MessageSpec(
            "websocket_opened", doc: "The socket of websocket_connect effect_id is open.",
            fields: [FieldSpec("effect_id", .integer(.id))]
        ) { r throws(CoreError) in
            .webSocket(.opened(effectID: EffectID(try r.int("effect_id"))))
        },
        MessageSpec(
            "websocket_event",
            doc: "One text frame from the server: parsed (event) or raw (line, possibly several newline-separated events). "
                + "effect_id, when given, must name the current socket; events of an older socket are ignored.",
            fields: [
                .optional("effect_id", .integer(.id)), .optional("event", .object, doc: "one parsed server event"),
                .optional("line", .string, doc: "a raw frame of newline-delimited JSON"),
            ]
        ) { r throws(CoreError) in
            let effectID = try r.optionalInt("effect_id").map(EffectID.init)
            let event = try r.optionalNested("event", ServerEvent.wire)
            let line = try r.optionalString("line")
            if let event {
                return .webSocket(.event(effectID: effectID, items: [FrameItem(event)]))
            }
            if let line {
                return .webSocket(.event(effectID: effectID, items: try ServerFrame.items(of: line)))
            }
            throw CoreError.invalidField(r.fieldPath("event"), "websocket_event needs \"event\" (an object) or \"line\" (a string)")
        },
        MessageSpec(
            "websocket_closed", doc: "The socket closed (by either side).",
            fields: [FieldSpec("effect_id", .integer(.id)), .optional("code", .integer(.closeCode)), .optional("reason", .string)]
        ) { r throws(CoreError) in
            .webSocket(
                .closed(
                    effectID: EffectID(try r.int("effect_id")), code: try r.optionalInt("code"),
                    reason: try r.optionalString("reason")))
        },
        MessageSpec(
            "websocket_failed", doc: "The socket could not open or broke; status 401 means the token was rejected.",
            fields: [FieldSpec("effect_id", .integer(.id)), FieldSpec("error", .string), .optional("status", .integer(.httpStatus))]
        ) { r throws(CoreError) in
            .webSocket(
                .failed(
                    effectID: EffectID(try r.int("effect_id")), error: try r.string("error"),
                    status: try r.optionalInt("status")))
        },
    ]
}
