import XCTest
@testable import JcodeMobileCore
@testable import JcodeMobileJSON
@testable import JcodeMobileWire

/// The wire definitions drive decoding, redaction and the docs; these tests
/// prove each decoder agrees with its declared fields.
final class WireSpecTests: XCTestCase {
    /// A value of the declared type.
    private func sample(_ type: WireType) -> JSONValue {
        switch type {
        case .string: return "text"
        case .integer(let range): return .int(range.contains(7) ? 7 : range.lowerBound)
        case .number: return 1.5
        case .boolean: return true
        case .object: return .object(JSONObject())
        case .any: return "anything"
        case .stringOrInteger: return "12"
        case .array(let element): return .array([sample(element)])
        case .enumeration(let values): return .string(values[0])
        case .record(let fields): return .object(sampleObject(fields))
        case .defined: return .null  // only in what the core writes
        }
    }

    /// A value of another JSON type than the declared one.
    private func wrong(_ type: WireType) -> JSONValue? {
        switch type {
        case .string, .enumeration: return 1
        case .integer, .number, .stringOrInteger: return true
        case .boolean: return "yes"
        case .object, .record: return [1]
        case .array: return "not an array"
        case .any, .defined: return nil
        }
    }

    private func sampleObject(_ fields: [FieldSpec], type: String? = nil) -> JSONObject {
        var o = JSONObject()
        if let type { o.append("type", .string(type)) }
        for field in fields { o.append(field.name, sample(field.type)) }
        return o
    }

    /// Decodes `object` both ways (from a `JSONObject` and from the bytes on
    /// a tape) and checks the two agree on success or on the exact error.
    private func decodeBothWays<Value>(
        _ union: WireUnion<Value>, _ object: JSONObject, file: StaticString = #filePath, line: UInt = #line
    ) -> Result<Value, CoreError> {
        let fromObject = Result { () throws(CoreError) in try union.decode(.object(object)) }
        var text = JSONValue.object(object).jsonString
        var workspace = JSONParser.Workspace()
        let fromTape = text.withUTF8 { bytes in
            Result { () throws(CoreError) in
                try JSONParser.withTape(bytes, workspace: &workspace) { (tape) throws(CoreError) in try union.decode(tape: tape) }
            }
        }
        switch (fromObject, fromTape) {
        case (.success, .success): break
        case (.failure(let a), .failure(let b)): XCTAssertEqual(a, b, "tape and object decoding fail alike", file: file, line: line)
        default: XCTFail("tape and object decoding disagree on \(text)", file: file, line: line)
        }
        return fromObject
    }

    private func check<Value>(_ union: WireUnion<Value>, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(Set(union.members.map(\.type)).count, union.members.count, "\(union.name) types are unique", file: file, line: line)
        for spec in union.members {
            let full = sampleObject(spec.fields, type: spec.type)
            if case .failure(let error) = decodeBothWays(union, full, file: file, line: line) {
                XCTFail("\(spec.type): a sample with every declared field does not decode: \(error.message)", file: file, line: line)
            }
            for field in spec.fields {
                var without = full
                without[field.name] = nil
                let missing = decodeBothWays(union, without, file: file, line: line)
                if field.required {
                    guard case .failure(let e) = missing else {
                        XCTFail("\(spec.type): missing required \(field.name) decoded", file: file, line: line)
                        continue
                    }
                    XCTAssertEqual(e.code, .invalidField, "\(spec.type).\(field.name)", file: file, line: line)
                    XCTAssertEqual(e.field, field.name, "\(spec.type).\(field.name)", file: file, line: line)
                } else if case .failure(let e) = missing {
                    XCTFail("\(spec.type): optional \(field.name) is required after all: \(e.message)", file: file, line: line)
                }
                checkRange(union, spec.type, full, field, file: file, line: line)
                guard let bad = wrong(field.type) else { continue }
                var mistyped = full
                mistyped[field.name] = bad
                if case .success = decodeBothWays(union, mistyped, file: file, line: line) {
                    XCTFail("\(spec.type): \(field.name) of the wrong type decoded", file: file, line: line)
                }
            }
        }
    }

    /// An integer field takes both ends of its declared range and refuses
    /// one beyond each, naming the range; beyond 64 bits too, as written.
    private func checkRange<Value>(
        _ union: WireUnion<Value>, _ type: String, _ full: JSONObject, _ field: FieldSpec, file: StaticString, line: UInt
    ) {
        let lower: Int64, upper: Int64, expected: String
        switch field.type {
        case .integer(let range): (lower, upper, expected) = (range.lowerBound, range.upperBound, "an integer")
        case .stringOrInteger(let range): (lower, upper, expected) = (range.lowerBound, range.upperBound, "a string or an integer")
        default: return
        }
        let context = "\(type).\(field.name)"
        for bound in [lower, upper] {
            var object = full
            object[field.name] = .int(bound)
            if case .failure(let e) = decodeBothWays(union, object, file: file, line: line) {
                XCTFail("\(context) refuses \(bound), an end of its range: \(e.message)", file: file, line: line)
            }
        }
        let below = lower == Int64.min ? "-9223372036854775809" : String(lower - 1)
        let above = upper == Int64.max ? "9223372036854775808" : String(upper + 1)
        for literal in [below, above] {
            var object = full
            object[field.name] = "<n>"
            var text = JSONValue.object(object).jsonString.replacing(#""<n>""#, with: literal)
            var workspace = JSONParser.Workspace()
            let result = text.withUTF8 { bytes in
                Result { () throws(CoreError) in
                    try JSONParser.withTape(bytes, workspace: &workspace) { (tape) throws(CoreError) in try union.decode(tape: tape) }
                }
            }
            if case .integer(let range) = field.type, range.outsideIsAbsent {
                if case .failure(let e) = result { XCTFail("\(context): \(literal) should read as absent: \(e.message)", file: file, line: line) }
                continue
            }
            guard case .failure(let e) = result else {
                XCTFail("\(context) accepts \(literal), outside its range", file: file, line: line)
                continue
            }
            let shown = field.secret ? "another number" : literal
            XCTAssertEqual(e.code, .invalidField, context, file: file, line: line)
            XCTAssertEqual(e.field, field.name, context, file: file, line: line)
            XCTAssertEqual(
                e.message, "field \"\(field.name)\" must be \(expected) from \(lower) to \(upper), got \(shown)", context,
                file: file, line: line)
        }
    }

    func testEveryActionDecodesExactlyItsDeclaredFields() { check(Action.wire) }
    func testEveryPlatformEventDecodesExactlyItsDeclaredFields() { check(PlatformEvent.wire) }
    func testEveryServerEventDecodesExactlyItsDeclaredFields() { check(ServerEvent.wire) }

    /// A platform event sent as a Swift value is logged under the type its
    /// JSON form would have: `typeName` agrees with every declaration.
    func testEveryPlatformEventValueNamesItsDeclaredType() throws {
        for spec in PlatformEvent.wire.members {
            let value = try PlatformEvent.wire.decode(.object(sampleObject(spec.fields, type: spec.type)))
            XCTAssertEqual(value.typeName, spec.type)
        }
    }

    /// The same for actions (`typeName` is derived from the case name).
    func testEveryActionValueNamesItsDeclaredType() throws {
        for spec in Action.wire.members {
            let value = try Action.wire.decode(.object(sampleObject(spec.fields, type: spec.type)))
            XCTAssertEqual(value.typeName, spec.type)
        }
    }

    func testActionsAndPlatformEventsCannotBeConfused() {
        let actions = Set(Action.wire.members.map(\.type))
        let events = Set(PlatformEvent.wire.members.map(\.type))
        XCTAssertEqual(actions.intersection(events), [], "dispatch and platform_event accept disjoint types")
    }

    func testMissingOrMistypedTypeAndUnknownTypesAreNamed() {
        func error(_ text: String) -> CoreError? {
            if case .failure(let e) = Result(catching: { () throws(CoreError) in try Action.wire.decode(try JSONParser.parse(text)) }) { return e }
            return nil
        }
        XCTAssertEqual(error("{}"), CoreError(.invalidField, "missing required field \"type\"", field: "type"))
        XCTAssertEqual(error(#"{"type":3}"#)?.field, "type")
        XCTAssertEqual(error(#"{"type":"fly"}"#)?.code, .unknownType)
        XCTAssertEqual(error("[]")?.code, .invalidField)
        XCTAssertEqual(error(#"{"type":"set_host","value":42}"#), CoreError(.invalidField, "field \"value\" must be a string, got integer", field: "value"))
    }

    func testNestedFieldErrorsNameTheElementPath() {
        let text = #"{"type":"history","session_id":"s","messages":[{"role":"user","content":"a"},{"role":5}]}"#
        let result = Result(catching: { () throws(CoreError) in try ServerEvent.wire.decode(try JSONParser.parse(text)) })
        guard case .failure(let e) = result else { return XCTFail("decoded") }
        XCTAssertEqual(e.field, "messages[1].role")
    }

    /// One effect of every kind.
    static let sampleEffects: [Effect] = [
        .http(.health(host: "h", port: 1, useTLS: false)),
        .http(.pair(host: "h", port: 1, useTLS: true, code: "123456", deviceID: "d", deviceName: "n", apnsToken: "apns")),
        .secureStore(.write(key: "k", value: "secret")), .secureStore(.read(key: "k")), .secureStore(.delete(key: "k")),
        .storage(.write(key: "k", value: [1])),
        .webSocket(.connect(url: "ws://h:1/ws", authToken: "secret")), .webSocket(.send("{}")), .webSocket(.close),
        .timer(.schedule(timerID: "t", afterMS: 5, purpose: "p")), .timer(.cancel(timerID: "t")),
        .device(.registerPushNotifications), .device(.requestCameraQRScan), .device(.requestSpeechTranscript),
        .device(.requestImagePicker), .device(.createDeviceID), .device(.haptic(style: .success)),
        .device(.showLocalNotification(title: "t", body: "b", sessionID: "s")),
        .device(.copyToClipboard(text: "let x = 1")),
    ]

    func testEveryEffectEncodesExactlyItsDeclaredFields() {
        XCTAssertEqual(Set(Self.sampleEffects.map(\.type)), Set(Effect.specs.map(\.type)), "every declared effect has a sample")
        for effect in Self.sampleEffects {
            guard let spec = Effect.specs.first(where: { $0.type == effect.type }) else {
                XCTFail("no spec for \(effect.type)")
                continue
            }
            let keys = effect.fields(redacted: false).keys
            XCTAssertEqual(keys, spec.fields.map(\.name).filter { keys.contains($0) }, "\(effect.type) writes declared fields in order")
            for field in spec.fields where field.required {
                XCTAssertTrue(keys.contains(field.name), "\(effect.type) writes \(field.name)")
            }
        }
    }

    /// What the store asks of every effect it issues, answered without
    /// encoding the effect, agrees with the declaration.
    func testAnEffectsKindAndWhetherItIsAwaitedAgreeWithItsEncoding() {
        for effect in Self.sampleEffects {
            XCTAssertEqual(effect.kind, effect.encoded.kind, effect.type)
            XCTAssertEqual(effect.expectsAnswer, effect.kind.spec.tracked, effect.type)
            var w = JSONWriter()
            let secret = effect.write(id: EffectID(7), redacted: true, to: &w)
            XCTAssertEqual(w.text, effect.json(id: EffectID(7), redacted: true).jsonString, "\(effect.type), written straight")
            XCTAssertEqual(secret, effect.json(id: EffectID(7), redacted: true) != effect.json(id: EffectID(7)), "\(effect.type) holds a secret")
        }
        for (i, kind) in EffectKind.allCases.enumerated() { XCTAssertEqual(kind.position, i) }
    }

    func testSecretsAreRedactedInEveryEffectMarkedSecret() {
        for effect in Self.sampleEffects {
            let redacted = effect.json(id: EffectID(1), redacted: true).jsonString
            XCTAssertFalse(redacted.contains("secret") || redacted.contains("123456"), "\(effect.type): \(redacted)")
        }
        let send = Effect.webSocket(.send(line: GatewayRequest.stdinResponse(requestID: "r", input: "hunter2").line(id: 1), containsSecret: true))
        XCTAssertFalse(send.json(id: EffectID(1), redacted: true).jsonString.contains("hunter2"))
        XCTAssertTrue(send.json(id: EffectID(1)).jsonString.contains("hunter2"), "the host gets the real line")
    }

    func testLogRedactionUsesTheSpecsSecretFields() {
        let object = json(#"{"type":"pair_finished","effect_id":1,"ok":true,"token":"tok-1"}"#).objectValue!
        XCTAssertEqual(PlatformEvent.wire.redact(object)["token"], "[redacted]")
        let code = json(#"{"type":"set_pair_code","value":"123456"}"#).objectValue!
        XCTAssertEqual(Action.wire.redact(code)["value"], "[redacted]")
        let host = json(#"{"type":"set_host","value":"devbox"}"#).objectValue!
        XCTAssertEqual(Action.wire.redact(host)["value"], "devbox")
    }

    func testGatewayRequestLinesPutIdAndTypeFirst() {
        XCTAssertEqual(GatewayRequest.message(content: "hi", images: []).line(id: 4), #"{"id":4,"type":"message","content":"hi"}"#)
        XCTAssertEqual(
            GatewayRequest.message(content: "look", images: [.init(mediaType: "image/png", dataBase64: "AAAA")]).line(id: 5),
            #"{"id":5,"type":"message","content":"look","images":[["image/png","AAAA"]]}"#)
        XCTAssertEqual(
            GatewayRequest.subscribe(workingDir: "/srv/app", targetSessionID: nil, clientInstanceID: "dev-1").line(id: 1),
            #"{"id":1,"type":"subscribe","working_dir":"/srv/app","client_instance_id":"dev-1"}"#)
        XCTAssertEqual(
            GatewayRequest.subscribe(workingDir: "/srv/app", targetSessionID: "s", clientInstanceID: "dev-1").line(id: 1),
            #"{"id":1,"type":"subscribe","working_dir":"/srv/app","target_session_id":"s","client_instance_id":"dev-1"}"#)
        // Without a device id, client_instance_id is left out.
        XCTAssertEqual(
            GatewayRequest.subscribe(workingDir: "/srv/app", targetSessionID: nil, clientInstanceID: nil).line(id: 1),
            #"{"id":1,"type":"subscribe","working_dir":"/srv/app"}"#)
        XCTAssertEqual(
            GatewayRequest.softInterrupt(content: "see", images: [.init(mediaType: "image/png", dataBase64: "AAAA")], urgent: false).line(id: 6),
            #"{"id":6,"type":"soft_interrupt","content":"see","images":[["image/png","AAAA"]],"urgent":false}"#)
        XCTAssertEqual(
            GatewayRequest.permissionResponse(requestID: "p", approved: true, remember: false).line(id: 9),
            #"{"id":9,"type":"permission_response","request_id":"p","approved":true,"remember":false}"#)
        // jcode's field name (wire.rs, Request::GetCompactedHistory).
        XCTAssertEqual(
            GatewayRequest.getCompactedHistory(visibleMessages: 128).line(id: 7),
            #"{"id":7,"type":"get_compacted_history","visible_messages":128}"#)
        XCTAssertEqual(Set(GatewayRequest.specs.map(\.type)).count, GatewayRequest.specs.count)
    }

    static let sampleRequests: [GatewayRequest] = [
        .subscribe(workingDir: "/w", targetSessionID: "s", clientInstanceID: "d"),
        .subscribe(workingDir: "/w", targetSessionID: nil, clientInstanceID: "d"),
        .subscribe(workingDir: "/w", targetSessionID: "s", clientInstanceID: nil), .getHistory,
        .message(content: "hi", images: [.init(mediaType: "image/png", dataBase64: "AAAA")]), .message(content: "hi", images: []),
        .message(content: "", images: [], systemReminder: "Reload succeeded. Continue immediately."),
        .cancel, .softInterrupt(content: "also", images: [], urgent: true),
        .softInterrupt(content: "look", images: [.init(mediaType: "image/png", dataBase64: "AAAA")], urgent: false),
        .cancelSoftInterrupts, .resumeSession(sessionID: "s", clientInstanceID: "d"), .resumeSession(sessionID: "s", clientInstanceID: nil),
        .setModel("m"), .setReasoningEffort("high"), .compact, .renameSession(title: "t"), .renameSession(title: nil), .clear,
        .permissionResponse(requestID: "p", approved: true, remember: false), .stdinResponse(requestID: "r", input: "secret"), .ping,
        .getCompactedHistory(visibleMessages: 64),
    ]

    func testEveryGatewayRequestEncodesExactlyItsDeclaredFields() {
        XCTAssertEqual(
            Set(Self.sampleRequests.map(\.type)), Set(GatewayRequest.Kind.allCases.map(\.rawValue)), "every request kind has a sample")
        for request in Self.sampleRequests {
            let line = json(request.line(id: 7))
            let keys = line.objectValue?.keys ?? []
            let declared = request.kind.spec.documentedFields.map(\.name)
            XCTAssertEqual(Array(keys.prefix(2)), ["id", "type"], "\(request.type): id and type come first")
            XCTAssertEqual(line["type"], .string(request.type))
            let fields = Array(keys.dropFirst(2))
            XCTAssertEqual(fields, declared.filter { fields.contains($0) }, "\(request.type) writes only declared fields, in order")
            for field in request.kind.spec.fields where field.required {
                XCTAssertTrue(fields.contains(field.name), "\(request.type) writes \(field.name)")
            }
        }
    }

    func testOnlyAnswersToPasswordPromptsAreSecretLines() {
        let secret = Self.sampleRequests.filter(\.containsSecret).map(\.type)
        XCTAssertEqual(secret, ["stdin_response"])
    }

    func testEveryEffectKindAndRequestKindIsDeclaredOnce() {
        XCTAssertEqual(Effect.specs.map(\.kind.rawValue).sorted(), EffectKind.allCases.map(\.rawValue).sorted())
        XCTAssertEqual(GatewayRequest.specs.map(\.kind.rawValue).sorted(), GatewayRequest.Kind.allCases.map(\.rawValue).sorted())
        for kind in EffectKind.allCases { XCTAssertEqual(kind.spec.kind, kind) }
        XCTAssertEqual(Self.sampleEffects.filter(\.expectsAnswer).map(\.type), [
            "http_health", "http_pair", "secure_store_write", "secure_store_read", "websocket_connect", "create_device_id",
        ], "the effects the ledger keeps until answered")
    }
}
