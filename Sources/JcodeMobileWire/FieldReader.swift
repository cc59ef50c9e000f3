import JcodeMobileJSON

/// Reads the fields of one wire object with type checks and precise paths.
///
/// A missing or `null` optional field reads as nil; a field of the wrong type
/// is an `invalid_field` error naming its path (`event.text`,
/// `images[1].media_type`). Only declared fields may be read: reading an
/// undeclared one is a programming error that the spec tests catch.
///
/// The object is either a `JSONObject` or an object on a `JSONTape`; on a
/// tape, fields are found by comparing bytes and only the values read are
/// copied out, which is what keeps a streamed delta cheap.
public struct FieldReader {
    @usableFromInline enum Source {
        case object(JSONObject)
        case tape(JSONTape, Int)
    }

    @usableFromInline let source: Source
    public let path: String
    @usableFromInline let declared: [FieldSpec]

    public init(_ object: JSONObject, path: String, declared: [FieldSpec]) {
        self.source = .object(object)
        self.path = path
        self.declared = declared
    }

    @usableFromInline package init(tape: JSONTape, object: Int, path: String, declared: [FieldSpec]) {
        self.source = .tape(tape, object)
        self.path = path
        self.declared = declared
    }

    @usableFromInline static func join(_ path: String, _ name: String) -> String {
        path.isEmpty ? name : path + "." + name
    }

    public func fieldPath(_ name: String) -> String { FieldReader.join(path, name) }

    /// A value found in the object, wherever it lives.
    @usableFromInline enum Found {
        case json(JSONValue)
        case token(JSONTape, Int)

        @usableFromInline var typeName: String {
            switch self {
            case .json(let v): return v.typeName
            case .token(let t, let i): return t.typeName(at: i)
            }
        }

        @inlinable var string: String? {
            switch self {
            case .json(let v): return v.stringValue
            case .token(let t, let i): return t.kind(at: i) == .string ? t.string(at: i) : nil
            }
        }

        /// A whole number that fits in 64 bits (`3`, `3.0`, `3e0`), read
        /// from the literal's digits; nil for anything else.
        @inlinable var int64: Int64? {
            switch self {
            case .json(let v): return v.int64Value
            case .token(let t, let i): return t.integer(at: i)
            }
        }

        @inlinable var isNumber: Bool {
            switch self {
            case .json(.int), .json(.double): return true
            case .json: return false
            case .token(let t, let i): return t.kind(at: i) == .number
            }
        }

        /// What a message says was found: a number as it was written (cut
        /// short past 40 characters), anything else by its type.
        @usableFromInline var shown: String {
            let text: String
            switch self {
            case .json(let v) where isNumber: text = v.jsonString
            case .token(let t, let i) where isNumber: text = t.literal(at: i)
            default: return typeName
            }
            let count = text.utf8.count
            return count <= 40 ? text : String(text.prefix(32)) + "… (\(count) characters)"
        }

        @inlinable var double: Double? {
            switch self {
            case .json(let v): return v.doubleValue
            case .token(let t, let i): return t.kind(at: i) == .number ? t.number(at: i).doubleValue : nil
            }
        }

        @inlinable var bool: Bool? {
            switch self {
            case .json(let v): return v.boolValue
            case .token(let t, let i):
                switch t.kind(at: i) {
                case .trueValue: return true
                case .falseValue: return false
                default: return nil
                }
            }
        }

        @usableFromInline var value: JSONValue {
            switch self {
            case .json(let v): return v
            case .token(let t, let i): return t.value(at: i)
            }
        }

        @inlinable var isObject: Bool {
            switch self {
            case .json(let v): return v.objectValue != nil
            case .token(let t, let i): return t.kind(at: i) == .object
            }
        }

        /// A reader over this value when it is an object.
        @inlinable func reader(path: String, declared: [FieldSpec]) -> FieldReader? {
            switch self {
            case .json(.object(let o)): return FieldReader(o, path: path, declared: declared)
            case .json: return nil
            case .token(let t, let i): return t.kind(at: i) == .object ? FieldReader(tape: t, object: i, path: path, declared: declared) : nil
            }
        }

        /// The elements when this value is an array.
        @inlinable var elements: [Found]? {
            switch self {
            case .json(.array(let a)): return a.map(Found.json)
            case .json: return nil
            case .token(let t, let i): return t.kind(at: i) == .array ? t.elements(of: i).map { .token(t, $0) } : nil
            }
        }
    }

    @inlinable func lookup(_ name: String) throws(CoreError) -> Found? {
        // Decoders read only declared fields; WireSpecTests prove it for every
        // member, so release builds skip the check on the hot path.
        assert(declared.contains(where: { $0.name == name }), "decoder read undeclared field \"\(name)\"")
        switch source {
        case .object(let object):
            guard let value = object[name], !value.isNull else { return nil }
            return .json(value)
        case .tape(let tape, let index):
            guard let i = tape.member(name, of: index), tape.kind(at: i) != .null else { return nil }
            return .token(tape, i)
        }
    }

    @usableFromInline func missing(_ name: String) -> CoreError {
        CoreError.invalidField(fieldPath(name), "missing required field \"\(name)\"")
    }

    /// The range declared for an integer field, and whether it is secret.
    @usableFromInline func integerRange(_ name: String) throws(CoreError) -> (IntegerRange, secret: Bool) {
        for field in declared where field.name == name {
            switch field.type {
            case .integer(let range), .stringOrInteger(let range): return (range, field.secret)
            default: break
            }
        }
        throw CoreError(.internal, "field \"\(name)\" is not declared as an integer", field: fieldPath(name))
    }

    /// `field "port" must be an integer from 1 to 65535, got 70000`. A
    /// secret's value is not repeated.
    @usableFromInline func outOfRange(_ name: String, _ expected: String, _ range: IntegerRange, _ got: Found, secret: Bool) -> CoreError {
        let shown = secret && got.isNumber ? "another number" : got.shown
        return CoreError.invalidField(fieldPath(name), "field \"\(name)\" must be \(expected) \(range), got \(shown)")
    }

    @usableFromInline func mistyped(_ name: String, _ expected: String, _ got: Found) -> CoreError {
        CoreError.invalidField(fieldPath(name), "field \"\(name)\" must be \(expected), got \(got.typeName)")
    }

    // MARK: - Strings

    @inlinable public mutating func optionalString(_ name: String) throws(CoreError) -> String? {
        guard let found = try lookup(name) else { return nil }
        guard let s = found.string else { throw mistyped(name, "a string", found) }
        return s
    }

    @inlinable public mutating func string(_ name: String) throws(CoreError) -> String {
        guard let s = try optionalString(name) else { throw missing(name) }
        return s
    }

    @inlinable public mutating func string(_ name: String, default fallback: String) throws(CoreError) -> String {
        try optionalString(name) ?? fallback
    }

    /// A string, or an integer within the declared range converted to its
    /// decimal text.
    @inlinable public mutating func optionalStringOrInteger(_ name: String) throws(CoreError) -> String? {
        guard let found = try lookup(name) else { return nil }
        if let s = found.string { return s }
        let (range, secret) = try integerRange(name)
        if let i = found.int64, range.contains(i) { return String(i) }
        throw outOfRange(name, "a string or an integer", range, found, secret: secret)
    }

    @inlinable public mutating func stringOrInteger(_ name: String) throws(CoreError) -> String {
        guard let s = try optionalStringOrInteger(name) else { throw missing(name) }
        return s
    }

    /// A string that must be one of `values`.
    @inlinable public mutating func enumeration<T: RawRepresentable>(_ name: String, as: T.Type) throws(CoreError) -> T
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
    @inlinable public mutating func optionalText(_ name: String) throws(CoreError) -> String? {
        guard let found = try lookup(name) else { return nil }
        if let s = found.string { return s }
        return found.value.jsonString
    }

    // MARK: - Numbers and booleans

    /// An integer within the field's declared range (`WireType.integer`):
    /// anything else, including a whole number beyond 64 bits, is
    /// `invalid_field` with a message naming the range (or, for a range
    /// declared `orAbsent`, a number outside it reads as nil).
    @inlinable public mutating func optionalInt(_ name: String) throws(CoreError) -> Int? {
        guard let found = try lookup(name) else { return nil }
        let (range, secret) = try integerRange(name)
        if let i = found.int64, range.contains(i), let exact = Int(exactly: i) { return exact }
        if range.outsideIsAbsent && found.isNumber { return nil }
        throw outOfRange(name, "an integer", range, found, secret: secret)
    }

    @inlinable public mutating func int(_ name: String) throws(CoreError) -> Int {
        guard let i = try optionalInt(name) else { throw missing(name) }
        return i
    }

    @inlinable public mutating func int(_ name: String, default fallback: Int) throws(CoreError) -> Int {
        try optionalInt(name) ?? fallback
    }

    @inlinable public mutating func optionalDouble(_ name: String) throws(CoreError) -> Double? {
        guard let found = try lookup(name) else { return nil }
        guard let d = found.double else { throw mistyped(name, "a number", found) }
        return d
    }

    @inlinable public mutating func double(_ name: String) throws(CoreError) -> Double {
        guard let d = try optionalDouble(name) else { throw missing(name) }
        return d
    }

    /// A point's coordinate, in points: a number that is finite (`1e400`
    /// reads as infinity), refused otherwise as `jcode_mobile_hit_test`
    /// refuses one, naming the number as written.
    @inlinable public mutating func coordinate(_ name: String) throws(CoreError) -> Double {
        guard let found = try lookup(name) else { throw missing(name) }
        guard let d = found.double else { throw mistyped(name, "a number", found) }
        guard d.isFinite else { throw CoreError.notACoordinate(fieldPath(name), name: name, got: found.shown) }
        return d
    }

    @inlinable public mutating func optionalBool(_ name: String) throws(CoreError) -> Bool? {
        guard let found = try lookup(name) else { return nil }
        guard let b = found.bool else { throw mistyped(name, "a boolean", found) }
        return b
    }

    @inlinable public mutating func bool(_ name: String) throws(CoreError) -> Bool {
        guard let b = try optionalBool(name) else { throw missing(name) }
        return b
    }

    @inlinable public mutating func bool(_ name: String, default fallback: Bool) throws(CoreError) -> Bool {
        try optionalBool(name) ?? fallback
    }

    // MARK: - Structure

    /// Any JSON value (nil when missing or null).
    @inlinable public mutating func optionalValue(_ name: String) throws(CoreError) -> JSONValue? {
        try lookup(name)?.value
    }

    @inlinable public mutating func optionalObject(_ name: String) throws(CoreError) -> JSONObject? {
        guard let found = try lookup(name) else { return nil }
        guard found.isObject, case .object(let o) = found.value else { throw mistyped(name, "an object", found) }
        return o
    }

    @inlinable public mutating func optionalArray(_ name: String) throws(CoreError) -> [JSONValue]? {
        guard let found = try lookup(name) else { return nil }
        guard case .array(let a) = found.value else { throw mistyped(name, "an array", found) }
        return a
    }

    /// A nested tagged object (`{"type":…}`) decoded with `union`. A nested
    /// value that is not an object is an error of this field; what goes wrong
    /// decoding the object itself is returned, not thrown, for the caller to
    /// handle (a bad server event inside a frame is not an error of the frame).
    @inlinable public mutating func optionalNested<T>(
        _ name: String, _ union: WireUnion<T>
    ) throws(CoreError) -> Result<T, CoreError>? {
        guard let found = try lookup(name) else { return nil }
        guard found.isObject else { throw mistyped(name, "an object", found) }
        switch found {
        case .json(let value): return Result { () throws(CoreError) in try union.decode(value) }
        case .token(let tape, let i): return Result { () throws(CoreError) in try union.decode(tape: tape, at: i) }
        }
    }

    /// An optional array of records, each decoded with `decode`; errors name
    /// the element (`images[2].media_type`).
    @inlinable public mutating func optionalRecords<T>(
        _ name: String, _ decode: (inout FieldReader) throws(CoreError) -> T
    ) throws(CoreError) -> [T]? {
        guard let found = try lookup(name) else { return nil }
        guard let elements = found.elements else { throw mistyped(name, "an array", found) }
        guard case .array(let fields)? = declared.first(where: { $0.name == name })?.type,
              case .record(let elementFields) = fields
        else {
            throw CoreError(.internal, "field \"\(name)\" is not declared as an array of records", field: fieldPath(name))
        }
        var result: [T] = []
        result.reserveCapacity(elements.count)
        for (i, element) in elements.enumerated() {
            let elementPath = "\(fieldPath(name))[\(i)]"
            guard var reader = element.reader(path: elementPath, declared: elementFields) else {
                throw CoreError.invalidField(elementPath, "element \(i) of \"\(name)\" must be an object, got \(element.typeName)")
            }
            result.append(try decode(&reader))
        }
        return result
    }

    /// An optional nested record decoded with `decode`; errors name the path
    /// (`tool_data.id`).
    @inlinable public mutating func optionalRecord<T>(
        _ name: String, _ decode: (inout FieldReader) throws(CoreError) -> T
    ) throws(CoreError) -> T? {
        guard let found = try lookup(name) else { return nil }
        guard case .record(let fields)? = declared.first(where: { $0.name == name })?.type else {
            throw CoreError(.internal, "field \"\(name)\" is not declared as a record", field: fieldPath(name))
        }
        guard var reader = found.reader(path: fieldPath(name), declared: fields) else {
            throw mistyped(name, "an object", found)
        }
        return try decode(&reader)
    }

    /// A required array of strings.
    @inlinable public mutating func strings(_ name: String) throws(CoreError) -> [String] {
        guard let values = try optionalStrings(name) else { throw missing(name) }
        return values
    }

    /// An optional array of strings.
    @inlinable public mutating func optionalStrings(_ name: String) throws(CoreError) -> [String]? {
        guard let found = try lookup(name) else { return nil }
        guard let elements = found.elements else { throw mistyped(name, "an array", found) }
        var result: [String] = []
        result.reserveCapacity(elements.count)
        for (i, element) in elements.enumerated() {
            guard let s = element.string else {
                throw CoreError.invalidField(
                    "\(fieldPath(name))[\(i)]", "element \(i) of \"\(name)\" must be a string, got \(element.typeName)")
            }
            result.append(s)
        }
        return result
    }
}

extension CoreError {
    /// A coordinate that is not a finite number of points: what `tap_xy`
    /// and `jcode_mobile_hit_test` answer (one message for both), `got`
    /// the number as written (or, from C, as the double prints).
    @usableFromInline package static func notACoordinate(_ path: String, name: String, got shown: String) -> CoreError {
        .invalidField(path, "field \"\(name)\" must be a finite number of points, got \(shown)")
    }
}
