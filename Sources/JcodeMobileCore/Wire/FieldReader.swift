/// Reads the fields of one wire object with type checks and precise paths.
///
/// A missing or `null` optional field reads as nil; a field of the wrong type
/// is an `invalid_field` error naming its path (`event.text`,
/// `images[1].media_type`). Only declared fields may be read: reading an
/// undeclared one is a programming error that the spec tests catch.
public struct FieldReader {
    public let object: JSONObject
    public let path: String
    let declared: [FieldSpec]

    public init(_ object: JSONObject, path: String, declared: [FieldSpec]) {
        self.object = object
        self.path = path
        self.declared = declared
    }

    static func join(_ path: String, _ name: String) -> String {
        path.isEmpty ? name : path + "." + name
    }

    public func fieldPath(_ name: String) -> String { FieldReader.join(path, name) }

    private mutating func lookup(_ name: String) throws(CoreError) -> JSONValue? {
        guard declared.contains(where: { $0.name == name }) else {
            throw CoreError(.internal, "decoder read undeclared field \"\(name)\"", field: fieldPath(name))
        }
        guard let value = object[name], !value.isNull else { return nil }
        return value
    }

    private func missing(_ name: String) -> CoreError {
        CoreError.invalidField(fieldPath(name), "missing required field \"\(name)\"")
    }

    private func mistyped(_ name: String, _ expected: String, _ got: JSONValue) -> CoreError {
        CoreError.invalidField(fieldPath(name), "field \"\(name)\" must be \(expected), got \(got.typeName)")
    }

    // MARK: - Strings

    public mutating func optionalString(_ name: String) throws(CoreError) -> String? {
        guard let value = try lookup(name) else { return nil }
        guard case .string(let s) = value else { throw mistyped(name, "a string", value) }
        return s
    }

    public mutating func string(_ name: String) throws(CoreError) -> String {
        guard let s = try optionalString(name) else { throw missing(name) }
        return s
    }

    public mutating func string(_ name: String, default fallback: String) throws(CoreError) -> String {
        try optionalString(name) ?? fallback
    }

    /// A string, or an integer converted to its decimal text.
    public mutating func optionalStringOrInteger(_ name: String) throws(CoreError) -> String? {
        guard let value = try lookup(name) else { return nil }
        switch value {
        case .string(let s): return s
        case .int(let i): return String(i)
        default:
            if let i = value.int64Value { return String(i) }
            throw mistyped(name, "a string or an integer", value)
        }
    }

    public mutating func stringOrInteger(_ name: String) throws(CoreError) -> String {
        guard let s = try optionalStringOrInteger(name) else { throw missing(name) }
        return s
    }

    /// A string that must be one of `values`.
    public mutating func enumeration<T: RawRepresentable>(_ name: String, as: T.Type) throws(CoreError) -> T
    where T.RawValue == String {
        let raw = try string(name)
        guard let value = T(rawValue: raw) else {
            throw CoreError.invalidField(fieldPath(name), "field \"\(name)\" has an unknown value \"\(raw)\"")
        }
        return value
    }

    /// Text from a field that may hold a string or structured JSON (a tool's
    /// input arrives as an object): strings as they are, anything else as its
    /// compact JSON text.
    public mutating func optionalText(_ name: String) throws(CoreError) -> String? {
        guard let value = try lookup(name) else { return nil }
        if case .string(let s) = value { return s }
        return value.jsonString
    }

    // MARK: - Numbers and booleans

    public mutating func optionalInt(_ name: String) throws(CoreError) -> Int? {
        guard let value = try lookup(name) else { return nil }
        guard let i = value.int64Value else { throw mistyped(name, "an integer", value) }
        guard let exact = Int(exactly: i) else {
            throw CoreError.invalidField(fieldPath(name), "field \"\(name)\" is out of range")
        }
        return exact
    }

    public mutating func int(_ name: String) throws(CoreError) -> Int {
        guard let i = try optionalInt(name) else { throw missing(name) }
        return i
    }

    public mutating func int(_ name: String, default fallback: Int) throws(CoreError) -> Int {
        try optionalInt(name) ?? fallback
    }

    public mutating func optionalDouble(_ name: String) throws(CoreError) -> Double? {
        guard let value = try lookup(name) else { return nil }
        guard let d = value.doubleValue else { throw mistyped(name, "a number", value) }
        return d
    }

    public mutating func optionalBool(_ name: String) throws(CoreError) -> Bool? {
        guard let value = try lookup(name) else { return nil }
        guard case .bool(let b) = value else { throw mistyped(name, "a boolean", value) }
        return b
    }

    public mutating func bool(_ name: String) throws(CoreError) -> Bool {
        guard let b = try optionalBool(name) else { throw missing(name) }
        return b
    }

    public mutating func bool(_ name: String, default fallback: Bool) throws(CoreError) -> Bool {
        try optionalBool(name) ?? fallback
    }

    // MARK: - Structure

    /// Any JSON value (nil when missing or null).
    public mutating func optionalValue(_ name: String) throws(CoreError) -> JSONValue? {
        try lookup(name)
    }

    public mutating func optionalObject(_ name: String) throws(CoreError) -> JSONObject? {
        guard let value = try lookup(name) else { return nil }
        guard case .object(let o) = value else { throw mistyped(name, "an object", value) }
        return o
    }

    public mutating func optionalArray(_ name: String) throws(CoreError) -> [JSONValue]? {
        guard let value = try lookup(name) else { return nil }
        guard case .array(let a) = value else { throw mistyped(name, "an array", value) }
        return a
    }

    /// An optional array of records, each decoded with `decode`; errors name
    /// the element (`images[2].media_type`).
    public mutating func optionalRecords<T>(
        _ name: String, _ decode: (inout FieldReader) throws(CoreError) -> T
    ) throws(CoreError) -> [T]? {
        guard let array = try optionalArray(name) else { return nil }
        guard case .array(let fields)? = declared.first(where: { $0.name == name })?.type,
              case .record(let elementFields) = fields
        else {
            throw CoreError(.internal, "field \"\(name)\" is not declared as an array of records", field: fieldPath(name))
        }
        var result: [T] = []
        result.reserveCapacity(array.count)
        for (i, element) in array.enumerated() {
            let elementPath = "\(fieldPath(name))[\(i)]"
            guard case .object(let object) = element else {
                throw CoreError.invalidField(elementPath, "element \(i) of \"\(name)\" must be an object, got \(element.typeName)")
            }
            var reader = FieldReader(object, path: elementPath, declared: elementFields)
            result.append(try decode(&reader))
        }
        return result
    }

    /// An optional nested record decoded with `decode`; errors name the path
    /// (`tool_data.id`).
    public mutating func optionalRecord<T>(
        _ name: String, _ decode: (inout FieldReader) throws(CoreError) -> T
    ) throws(CoreError) -> T? {
        guard let object = try optionalObject(name) else { return nil }
        guard case .record(let fields)? = declared.first(where: { $0.name == name })?.type else {
            throw CoreError(.internal, "field \"\(name)\" is not declared as a record", field: fieldPath(name))
        }
        var reader = FieldReader(object, path: fieldPath(name), declared: fields)
        return try decode(&reader)
    }

    /// A required array of strings.
    public mutating func strings(_ name: String) throws(CoreError) -> [String] {
        guard let values = try optionalStrings(name) else { throw missing(name) }
        return values
    }

    /// An optional array of strings.
    public mutating func optionalStrings(_ name: String) throws(CoreError) -> [String]? {
        guard let array = try optionalArray(name) else { return nil }
        var result: [String] = []
        result.reserveCapacity(array.count)
        for (i, element) in array.enumerated() {
            guard case .string(let s) = element else {
                throw CoreError.invalidField(
                    "\(fieldPath(name))[\(i)]", "element \(i) of \"\(name)\" must be a string, got \(element.typeName)")
            }
            result.append(s)
        }
        return result
    }
}
