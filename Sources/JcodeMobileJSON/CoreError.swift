/// The stable, machine-readable error codes of the ABI.
///
/// Raw values are the wire codes and are mirrored in `include/jcode_mobile.h`.
/// Codes are added, never renamed or removed; hosts should treat a code they
/// do not know like `internal`.
public enum ErrorCode: String, Sendable, CaseIterable {
    /// A required pointer argument was NULL.
    case nullArgument = "null_argument"
    /// The handle was never issued, has been freed, or is not a handle at all.
    case invalidHandle = "invalid_handle"
    /// The input is not valid UTF-8 (`offset` is the first bad byte).
    case invalidUTF8 = "invalid_utf8"
    /// The input is not valid JSON (`offset` is the byte where parsing stopped).
    case invalidJSON = "invalid_json"
    /// The input is larger than the documented limit.
    case tooLarge = "too_large"
    /// The input nests deeper than the documented limit.
    case tooDeep = "too_deep"
    /// The `type` of an action or event is not one the core knows.
    case unknownType = "unknown_type"
    /// A field is missing or has the wrong type or value (`field` is its path).
    case invalidField = "invalid_field"
    /// `app_new` was given an unknown scenario or option.
    case invalidScenario = "invalid_scenario"
    /// `app_new`'s snapshot is damaged beyond use (not an object, no integer version).
    case invalidSnapshot = "invalid_snapshot"
    /// `app_new`'s snapshot is of a version this library does not read (a newer one).
    case unsupportedSnapshot = "unsupported_snapshot"
    /// The answer (or the tokens of the input) could not be allocated. The
    /// input was not applied unless it was the answer's report that failed;
    /// the app stays usable, and a call that needs less memory works.
    case outOfMemory = "out_of_memory"
    /// A bug in the core. Never expected; reported instead of crashing.
    case `internal` = "internal"
}

/// An error crossing the ABI: a code for programs, a message for people, and
/// where it applies the byte offset or field path it concerns.
public struct CoreError: Error, Sendable, Equatable {
    public var code: ErrorCode
    public var message: String
    public var offset: Int?
    public var field: String?

    public init(_ code: ErrorCode, _ message: String, offset: Int? = nil, field: String? = nil) {
        self.code = code
        self.message = message
        self.offset = offset
        self.field = field
    }

    public static func invalidField(_ field: String, _ message: String) -> CoreError {
        CoreError(.invalidField, message, field: field)
    }

    /// `{"ok":false,"error":{"code":…,"message":…,"offset"?:…,"field"?:…}}`
    public var json: JSONValue {
        var error = JSONObject(capacity: 4)
        error.append("code", .string(code.rawValue))
        error.append("message", .string(message))
        if let offset { error.append("offset", .int(Int64(offset))) }
        if let field { error.append("field", .string(field)) }
        var root = JSONObject(capacity: 2)
        root.append("ok", .bool(false))
        root.append("error", .object(error))
        return .object(root)
    }
}
