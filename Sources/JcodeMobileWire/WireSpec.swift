@_spi(Leaves) import JcodeMobileJSON

/// The declared type of a wire field. Used for validation messages, log
/// redaction, documentation and (later) the runtime JSON Schema.
public indirect enum WireType: Sendable, Equatable {
    case string
    /// A whole number within the range. Every integer field declares one:
    /// decoding refuses a value outside it (`invalid_field` naming the
    /// range), and the reference documents it.
    case integer(IntegerRange)
    case number
    case boolean
    /// Any JSON object (its members are not described).
    case object
    /// Any JSON value.
    case any
    /// A string, or an integer within the range (a port typed into a text
    /// field, say). The string is taken as it is.
    case stringOrInteger(IntegerRange)
    case array(WireType)
    /// A string restricted to these values.
    case enumeration([String])
    /// An object whose members are described.
    case record([FieldSpec])
    /// A value described by the runtime schema's definition of this name
    /// (`patch_op`, `effect`): only in what the core writes, never decoded.
    case defined(String)

}

/// The values an integer field takes, both bounds included.
///
/// An integer field reads a JSON number whose value is a whole number in the
/// range: `3`, `3.0` and `3e0` are the same; `3.5`, a number beyond the
/// range (however many digits it has) and anything that is not a number are
/// `invalid_field` with a message naming the range. Nothing is rounded,
/// clamped or wrapped.
public struct IntegerRange: Sendable, Equatable, CustomStringConvertible {
    public let lowerBound: Int64
    public let upperBound: Int64
    /// A number outside the range reads as absent instead of being refused:
    /// only for a server's hint the app can do without (an error's retry
    /// delay), so a bad hint does not drop the event that carries it.
    public private(set) var outsideIsAbsent = false

    public init(_ range: ClosedRange<Int64>) {
        lowerBound = range.lowerBound
        upperBound = range.upperBound
    }

    /// The same range, with a number outside it read as absent.
    public var orAbsent: IntegerRange {
        var copy = self
        copy.outsideIsAbsent = true
        return copy
    }

    public func contains(_ value: Int64) -> Bool { value >= lowerBound && value <= upperBound }

    /// "from 1 to 65535", as messages and the reference say it.
    public var description: String { "from \(lowerBound) to \(upperBound)" }

    /// Ids the core issues (effect ids, request ids): 1 and up.
    public static let id = IntegerRange(1...Int64.max)
    /// An id a server gives or answers with: 0 and up (today's jcode
    /// answers a request it cannot read with id 0).
    public static let serverID = IntegerRange(0...Int64.max)
    /// Counts, sizes, ordinals and durations: 0 and up.
    public static let count = IntegerRange(0...Int64.max)
    /// A TCP port.
    public static let port = IntegerRange(1...65_535)
    /// An HTTP status code: three digits.
    public static let httpStatus = IntegerRange(100...999)
    /// A WebSocket close code: two bytes on the wire (0 when the close frame had none).
    public static let closeCode = IntegerRange(0...65_535)
}

/// One declared field of a wire object.
public struct FieldSpec: Sendable, Equatable {
    public let name: String
    public let type: WireType
    public let required: Bool
    /// Secrets (tokens, pairing codes) are replaced by `"[redacted]"` in logs.
    public let secret: Bool
    public let doc: String

    public init(_ name: String, _ type: WireType, required: Bool = true, secret: Bool = false, doc: String = "") {
        self.name = name
        self.type = type
        self.required = required
        self.secret = secret
        self.doc = doc
    }

    public static func optional(_ name: String, _ type: WireType, secret: Bool = false, doc: String = "") -> FieldSpec {
        FieldSpec(name, type, required: false, secret: secret, doc: doc)
    }
}

/// One member of a `"type"`-tagged union on the wire: its type name, its
/// fields, and how to decode it. This single definition drives decoding,
/// log redaction and the documentation, so they cannot drift apart.
public struct MessageSpec<Value>: Sendable {
    public let type: String
    public let doc: String
    public let fields: [FieldSpec]
    @usableFromInline let decoder: @Sendable (inout FieldReader) throws(CoreError) -> Value

    public init(
        _ type: String, doc: String = "", fields: [FieldSpec] = [],
        decode: @escaping @Sendable (inout FieldReader) throws(CoreError) -> Value
    ) {
        self.type = type
        self.doc = doc
        self.fields = fields
        self.decoder = decode
    }

    public func decode(_ object: JSONObject, path: String = "") throws(CoreError) -> Value {
        var reader = FieldReader(object, path: path, declared: fields)
        return try decoder(&reader)
    }

    @inlinable func decode(tape: JSONTape, at index: Int, path: String = "") throws(CoreError) -> Value {
        var reader = FieldReader(tape: tape, object: index, path: path, declared: fields)
        return try decoder(&reader)
    }

    /// Whether any field of this member is a secret (its log payload must be redacted).
    public var hasSecrets: Bool { fields.contains { $0.secret } }
}

/// Finds a union member by its type name: a small table keyed by length and
/// last byte, so a lookup is a handful of comparisons and no string hashing.
/// It knows nothing of the members' values, so a lookup is an ordinary call
/// from another module (no generic metadata is made for it).
public struct WireTypeIndex: Sendable {
    let types: [String]
    let buckets: [[Int]]

    public init(_ types: [String]) {
        self.types = types
        var buckets = [[Int]](repeating: [], count: WireTypeIndex.bucketCount)
        for (i, type) in types.enumerated() { buckets[WireTypeIndex.bucket(of: type.utf8)].append(i) }
        self.buckets = buckets
    }

    private static var bucketCount: Int { 64 }

    private static func bucket<Bytes: BidirectionalCollection<UInt8>>(of bytes: Bytes) -> Int {
        (bytes.count &* 7 &+ Int(bytes.last ?? 0)) & (bucketCount - 1)
    }

    /// The position of the member named `type`.
    public func position(of type: String) -> Int? {
        for i in buckets[WireTypeIndex.bucket(of: type.utf8)] where types[i] == type { return i }
        return nil
    }

    /// The member whose type is the string token `i` of `tape`, compared as
    /// bytes (no String is made on the hot path).
    public func position(ofTypeAt i: Int, in tape: JSONTape) -> Int? {
        let raw = tape.rawBytes(at: i)
        for m in buckets[WireTypeIndex.bucket(of: raw)] {
            var type = types[m]
            if type.withUTF8({ tape.stringEquals(i, $0) }) { return m }
        }
        // An escaped type name ("text\u005fdelta") is rare: compare it decoded.
        return position(of: tape.string(at: i))
    }
}

/// A `"type"`-tagged union: every message a channel accepts.
public struct WireUnion<Value>: Sendable {
    public let name: String
    public let members: [MessageSpec<Value>]
    @usableFromInline let typeIndex: WireTypeIndex

    public init(_ name: String, _ members: [MessageSpec<Value>]) {
        self.name = name
        self.members = members
        // A plain loop: a union is made once, often inside the first call a
        // host makes, so no key path or unspecialised map is paid for here.
        var types: [String] = []
        types.reserveCapacity(members.count)
        for member in members { types.append(member.type) }
        self.typeIndex = WireTypeIndex(types)
    }

    public func spec(for type: String) -> MessageSpec<Value>? {
        typeIndex.position(of: type).map { members[$0] }
    }

    /// Decodes a JSON value that must be an object with a known `type`.
    ///
    /// - Throws: `invalid_field` (not an object, `type` missing or not a
    ///   string, or a member field is wrong), `unknown_type`.
    public func decode(_ value: JSONValue, path: String = "") throws(CoreError) -> Value {
        guard case .object(let object) = value else {
            throw CoreError.invalidField(
                path.isEmpty ? "$" : path, "expected \(name) to be a JSON object, got \(value.typeName)")
        }
        let typePath = FieldReader.join(path, "type")
        guard let typeValue = object["type"] else {
            throw CoreError.invalidField(typePath, "missing required field \"type\"")
        }
        guard case .string(let type) = typeValue else {
            throw CoreError.invalidField(typePath, "field \"type\" must be a string, got \(typeValue.typeName)")
        }
        guard let i = typeIndex.position(of: type) else {
            throw CoreError(.unknownType, "unknown \(name) type \"\(type)\"", field: typePath)
        }
        return try members[i].decode(object, path: path)
    }

    /// Decodes the object at token `index` of `tape`; the same errors as
    /// `decode(_:path:)`.
    @inlinable public func decode(tape: JSONTape, at index: Int = 0, path: String = "") throws(CoreError) -> Value {
        try decodeMember(tape: tape, at: index, path: path).value
    }

    /// Decodes the object at token `index` of `tape` and says which member it was.
    @inlinable public func decodeMember(
        tape: JSONTape, at index: Int = 0, path: String = ""
    ) throws(CoreError) -> (value: Value, spec: MessageSpec<Value>) {
        guard tape.kind(at: index) == .object else {
            throw CoreError.invalidField(
                path.isEmpty ? "$" : path, "expected \(name) to be a JSON object, got \(tape.typeName(at: index))")
        }
        let typePath = FieldReader.join(path, "type")
        guard let typeToken = tape.member("type", of: index) else {
            throw CoreError.invalidField(typePath, "missing required field \"type\"")
        }
        guard tape.kind(at: typeToken) == .string else {
            throw CoreError.invalidField(typePath, "field \"type\" must be a string, got \(tape.typeName(at: typeToken))")
        }
        guard let i = typeIndex.position(ofTypeAt: typeToken, in: tape) else {
            throw CoreError(.unknownType, "unknown \(name) type \"\(tape.string(at: typeToken))\"", field: typePath)
        }
        return (try members[i].decode(tape: tape, at: index, path: path), members[i])
    }

    /// A copy of `object` with the secret fields of its member replaced by
    /// `"[redacted]"`, for logs.
    public func redact(_ object: JSONObject) -> JSONObject {
        guard case .string(let type)? = object["type"], let spec = spec(for: type) else { return object }
        return Redaction.redact(object, fields: spec.fields)
    }
}

/// Replaces secret values before anything is logged.
public enum Redaction {
    public static let placeholder: JSONValue = "[redacted]"

    public static func redact(_ object: JSONObject, fields: [FieldSpec]) -> JSONObject {
        var copy = object
        for field in fields {
            if field.secret {
                if let value = copy[field.name], !value.isNull { copy[field.name] = placeholder }
            } else if case .record(let nested) = field.type, case .object(let inner)? = copy[field.name] {
                copy[field.name] = .object(redact(inner, fields: nested))
            }
        }
        return copy
    }
}
