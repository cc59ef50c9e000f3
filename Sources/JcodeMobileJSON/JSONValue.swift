/// A JSON value, as parsed by `JSONParser` and written by `JSONWriter`.
///
/// Integers that fit in 64 bits stay exact (`.int`); every other number is a
/// `.double`. Objects keep their keys in insertion order, which is what makes
/// every document the core writes byte-for-byte stable.
///
///     let value: JSONValue = ["type": "text_delta", "text": "hi"]
///     value["type"]?.stringValue   // "text_delta"
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)
}

/// An ordered JSON object. Lookups scan from the end, so for an input with a
/// repeated key the last occurrence wins (as in most JSON libraries).
public struct JSONObject: Sendable, Equatable {
    public var entries: [(key: String, value: JSONValue)]

    @inlinable public init() { entries = [] }
    @inlinable
    public init(capacity: Int) {
        entries = []
        entries.reserveCapacity(capacity)
    }
    @inlinable public init(_ entries: [(key: String, value: JSONValue)]) { self.entries = entries }

    @inlinable public var count: Int { entries.count }
    @inlinable public var isEmpty: Bool { entries.isEmpty }
    public var keys: [String] { entries.map(\.key) }

    @inlinable
    public subscript(key: String) -> JSONValue? {
        get {
            var i = entries.count
            while i > 0 {
                i -= 1
                if entries[i].key == key { return entries[i].value }
            }
            return nil
        }
        set {
            if let index = entries.lastIndex(where: { $0.key == key }) {
                if let newValue { entries[index].value = newValue } else { entries.remove(at: index) }
            } else if let newValue {
                entries.append((key, newValue))
            }
        }
    }

    /// Appends without looking for an existing key: the fast path for
    /// encoders that know their keys are distinct.
    @inlinable
    public mutating func append(_ key: String, _ value: JSONValue) {
        entries.append((key, value))
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.entries.count == rhs.entries.count else { return false }
        for (l, r) in zip(lhs.entries, rhs.entries) where l.key != r.key || l.value != r.value {
            return false
        }
        return true
    }
}

extension JSONValue {
    @inlinable
    public subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    @inlinable
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }
    @inlinable
    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }
    /// The value as an exact integer: `.int`, or a `.double` with no
    /// fraction and a magnitude below 2^53 (where every integer is a double
    /// of its own): `3.0` is 3; `3.5` and `9223372036854775808.0` are nil,
    /// never clamped. Decoders of input read integers from the literal's
    /// digits instead (`JSONTape.integer(at:)`), which a double may have rounded.
    @inlinable
    public var int64Value: Int64? {
        switch self {
        case .int(let i): return i
        case .double(let d):
            guard d.isFinite, d.rounded(.towardZero) == d, d.magnitude < 9_007_199_254_740_992.0 else { return nil }
            return Int64(d)
        default: return nil
        }
    }
    @inlinable
    public var doubleValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }
    @inlinable
    public var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }
    @inlinable
    public var objectValue: JSONObject? {
        if case .object(let o) = self { return o }
        return nil
    }
    @inlinable
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The JSON type name used in error messages ("string", "object", …).
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .int: return "integer"
        case .double: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByFloatLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    @inlinable public init(stringLiteral value: String) { self = .string(value) }
    @inlinable public init(integerLiteral value: Int64) { self = .int(value) }
    @inlinable public init(booleanLiteral value: Bool) { self = .bool(value) }
    @inlinable public init(floatLiteral value: Double) { self = .double(value) }
    @inlinable public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    @inlinable public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(JSONObject(elements.map { (key: $0.0, value: $0.1) }))
    }
    @inlinable public init(nilLiteral: ()) { self = .null }
}

extension JSONValue {
    /// Convenience constructors used by the encoders of wire types.
    @inlinable public static func from(_ s: String?) -> JSONValue { s.map(JSONValue.string) ?? .null }
    @inlinable public static func from(_ i: Int?) -> JSONValue { i.map { .int(Int64($0)) } ?? .null }
    @inlinable public static func from(_ b: Bool?) -> JSONValue { b.map(JSONValue.bool) ?? .null }
    @inlinable public static func from(_ d: Double?) -> JSONValue { d.map(JSONValue.double) ?? .null }
}
