import JcodeMobileJSON
import JcodeMobileWire

/// Small constructors for JSON Schema (2020-12) fragments, and the mapping
/// from the wire declarations (`FieldSpec`, `WireType`) to schemas.
///
/// Two modes, because the core is lenient in what it reads and exact in
/// what it writes:
/// - `.input` (what the core decodes: actions, platform events, server
///   events): unknown extra members are allowed (the core ignores them), and
///   an optional member may also be `null` (the readers take `null` as absent).
/// - `.output` (what the core writes from these declarations: effects,
///   gateway requests, stream events): `additionalProperties: false`, every
///   required member listed, and an optional member is *omitted* when absent
///   (the declaration-driven encoders never write `null` for it).
enum SchemaBuilder {
    enum Mode { case input, output }

    // MARK: - Fragments

    static func type(_ name: String) -> JSONValue { ["type": .string(name)] }
    static let string = type("string")
    static let boolean = type("boolean")
    static let number = type("number")
    static let any: JSONValue = .object(JSONObject())
    /// `"type":[name,"null"]`: what a hand-written encoder writes for an absent optional value.
    static func nullable(_ name: String) -> JSONValue { ["type": [.string(name), "null"]] }
    static let nullableString = nullable("string")

    static func integer(_ range: IntegerRange) -> JSONValue {
        ["type": "integer", "minimum": .int(range.lowerBound), "maximum": .int(range.upperBound)]
    }

    static func nullableInteger(_ range: IntegerRange) -> JSONValue {
        ["type": ["integer", "null"], "minimum": .int(range.lowerBound), "maximum": .int(range.upperBound)]
    }

    static func array(_ items: JSONValue) -> JSONValue { ["type": "array", "items": items] }
    static func ref(_ name: String) -> JSONValue { ["$ref": .string("#/$defs/" + name)] }
    static func const(_ value: JSONValue) -> JSONValue { ["const": value] }
    static func enumeration(_ values: [String]) -> JSONValue { ["type": "string", "enum": .array(values.map(JSONValue.string))] }
    static func nullableEnumeration(_ values: [String]) -> JSONValue {
        ["type": ["string", "null"], "enum": .array(values.map(JSONValue.string) + [.null])]
    }
    static func oneOf(_ schemas: [JSONValue]) -> JSONValue { ["oneOf": .array(schemas)] }
    /// `schema`, or `null`.
    static func orNull(_ schema: JSONValue) -> JSONValue { ["anyOf": [schema, ["type": "null"]]] }

    /// A strict object: exactly these members, all of them always written
    /// (`optional` names members that may be left out).
    static func strictObject(
        _ members: [(String, JSONValue)], optional: Set<String> = [], description: String? = nil
    ) -> JSONValue {
        var o = JSONObject(capacity: 5)
        o.append("type", "object")
        if let description { o.append("description", .string(description)) }
        o.append("properties", .object(JSONObject(members.map { (key: $0.0, value: $0.1) })))
        o.append("required", .array(members.map(\.0).filter { !optional.contains($0) }.map(JSONValue.string)))
        o.append("additionalProperties", false)
        return .object(o)
    }

    /// Adds `description` to a schema object.
    static func described(_ schema: JSONValue, _ description: String) -> JSONValue {
        guard !description.isEmpty, case .object(var o) = schema else { return schema }
        o["description"] = .string(description)
        return .object(o)
    }

    // MARK: - From the wire declarations

    /// The schema of one declared type.
    static func schema(of type: WireType, mode: Mode) -> JSONValue {
        switch type {
        case .string: return string
        case .integer(let range):
            // A number outside the range reads as absent instead of being refused: any number is taken.
            if range.outsideIsAbsent && mode == .input {
                return ["type": "number", "x-range": [.int(range.lowerBound), .int(range.upperBound)]]
            }
            return integer(range)
        case .number: return number
        case .boolean: return boolean
        case .object: return SchemaBuilder.type("object")
        case .any: return any
        case .stringOrInteger(let range): return ["anyOf": [string, integer(range)]]
        case .array(let element): return array(schema(of: element, mode: mode))
        case .enumeration(let values): return enumeration(values)
        case .record(let fields): return object(fields, mode: mode)
        case .defined(let name): return ref(name)
        }
    }

    /// The schema of one declared field: its type, `description` from its
    /// doc, `x-secret` for a secret; in input mode an optional field may be `null`.
    static func schema(of field: FieldSpec, mode: Mode) -> JSONValue {
        var schema = schema(of: field.type, mode: mode)
        if mode == .input && !field.required { schema = allowingNull(schema) }
        guard case .object(var o) = schema else { return schema }
        if !field.doc.isEmpty { o["description"] = .string(field.doc) }
        if field.secret { o["x-secret"] = true }
        return .object(o)
    }

    /// `schema` that also accepts `null`: `"type":[t,"null"]` for a simple
    /// type, an `anyOf` otherwise.
    static func allowingNull(_ schema: JSONValue) -> JSONValue {
        guard case .object(var o) = schema else { return schema }
        if case .string(let t)? = o["type"], o["enum"] == nil {
            o["type"] = [.string(t), "null"]
            return .object(o)
        }
        if o.isEmpty { return schema }  // {} takes null already
        return orNull(schema)
    }

    /// The object of a record's fields (no `type` tag).
    static func object(_ fields: [FieldSpec], mode: Mode) -> JSONValue {
        var o = JSONObject(capacity: 4)
        o.append("type", "object")
        o.append("properties", .object(JSONObject(fields.map { (key: $0.name, value: schema(of: $0, mode: mode)) })))
        o.append("required", .array(fields.filter(\.required).map { .string($0.name) }))
        if mode == .output { o.append("additionalProperties", false) }
        return .object(o)
    }

    /// One member of a `"type"`-tagged union: `type` as a const, then
    /// `leading` members (`effect_id`, `id`, `seq`), then the fields.
    static func member(
        type: String, doc: String, leading: [FieldSpec] = [], fields: [FieldSpec], mode: Mode, example: JSONValue?
    ) -> JSONValue {
        var properties = JSONObject(capacity: fields.count + 2)
        var required: [JSONValue] = []
        for field in leading {
            properties.append(field.name, schema(of: field, mode: mode))
            required.append(.string(field.name))
        }
        properties.append("type", const(.string(type)))
        required.append("type")
        for field in fields {
            properties.append(field.name, schema(of: field, mode: mode))
            if field.required { required.append(.string(field.name)) }
        }
        var o = JSONObject(capacity: 7)
        o.append("type", "object")
        if !doc.isEmpty { o.append("description", .string(doc)) }
        o.append("properties", .object(properties))
        o.append("required", .array(required))
        if mode == .output { o.append("additionalProperties", false) }
        if let example { o.append("examples", [example]) }
        return .object(o)
    }
}
