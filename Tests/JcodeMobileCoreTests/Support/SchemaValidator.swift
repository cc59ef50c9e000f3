@testable import JcodeMobileCore
@testable import JcodeMobileJSON

/// A small JSON Schema (2020-12) validator supporting exactly the keywords
/// the runtime schema uses: `type` (a name or a list of names), `const`,
/// `enum`, `properties`, `required`, `additionalProperties: false`, `items`,
/// `minimum`, `maximum`, `oneOf`, `anyOf` and `$ref` to `#/$defs/…`.
/// Annotations (`description`, `examples`, `title`, `x-…`, content
/// keywords) are ignored. Any other keyword is reported as an error, so a
/// schema that starts using one cannot pass unchecked.
struct SchemaValidator {
    let root: JSONValue
    private let defs: JSONObject

    init(_ root: JSONValue) {
        self.root = root
        defs = root["$defs"]?.objectValue ?? JSONObject()
    }

    static let annotations: Set<String> = [
        "description", "examples", "title", "$schema", "$id", "$defs", "contentMediaType", "contentSchema", "default",
    ]

    /// The validation errors of `instance` against the definition `name` (empty: valid).
    func errors(_ instance: JSONValue, def name: String) -> [String] {
        errors(instance, ["$ref": .string("#/$defs/" + name)], at: "$")
    }

    func isValid(_ instance: JSONValue, def name: String) -> Bool { errors(instance, def: name).isEmpty }

    /// The validation errors of `instance` against `schema`, each naming the instance path.
    func errors(_ instance: JSONValue, _ schema: JSONValue, at path: String) -> [String] {
        if case .bool(let b) = schema { return b ? [] : ["\(path): false schema"] }
        guard case .object(let s) = schema else { return ["\(path): schema is not an object"] }
        var found: [String] = []
        for (keyword, value) in s.entries {
            if Self.annotations.contains(keyword) || keyword.hasPrefix("x-") { continue }
            switch keyword {
            case "$ref":
                guard let ref = value.stringValue, ref.hasPrefix("#/$defs/"), let target = defs[String(ref.dropFirst(8))] else {
                    found.append("\(path): unresolvable $ref \(value.jsonString)")
                    continue
                }
                found += errors(instance, target, at: path)
            case "type":
                let names: [String]
                switch value {
                case .string(let n): names = [n]
                case .array(let list): names = list.compactMap(\.stringValue)
                default: found.append("\(path): bad type keyword"); continue
                }
                if !names.contains(where: { Self.matches(instance, type: $0) }) {
                    found.append("\(path): expected \(names.joined(separator: " or ")), got \(instance.typeName) \(Self.short(instance))")
                }
            case "const":
                if !Self.equal(instance, value) { found.append("\(path): expected \(value.jsonString), got \(Self.short(instance))") }
            case "enum":
                if !(value.arrayValue ?? []).contains(where: { Self.equal(instance, $0) }) {
                    found.append("\(path): \(Self.short(instance)) is not one of \(value.jsonString)")
                }
            case "properties":
                guard case .object(let object) = instance else { continue }
                for (name, sub) in value.objectValue?.entries ?? [] {
                    if let member = object[name] { found += errors(member, sub, at: path + "." + name) }
                }
            case "required":
                guard case .object(let object) = instance else { continue }
                for name in (value.arrayValue ?? []).compactMap(\.stringValue) where object[name] == nil {
                    found.append("\(path): missing required member \"\(name)\"")
                }
            case "additionalProperties":
                guard case .object(let object) = instance else { continue }
                guard value == .bool(false) else { found.append("\(path): only additionalProperties false is supported"); continue }
                let declared = Set(s["properties"]?.objectValue?.keys ?? [])
                for key in object.keys where !declared.contains(key) {
                    found.append("\(path): unexpected member \"\(key)\"")
                }
            case "items":
                guard case .array(let items) = instance else { continue }
                for (i, item) in items.enumerated() { found += errors(item, value, at: "\(path)[\(i)]") }
            case "minimum", "maximum":
                guard value.doubleValue != nil else { found.append("\(path): bad \(keyword)"); continue }
                guard instance.doubleValue != nil else { continue }
                let below = Self.compare(instance, value) < 0
                let above = Self.compare(instance, value) > 0
                if keyword == "minimum" && below { found.append("\(path): \(instance.jsonString) is below \(value.jsonString)") }
                if keyword == "maximum" && above { found.append("\(path): \(instance.jsonString) is above \(value.jsonString)") }
            case "oneOf", "anyOf":
                let branches = value.arrayValue ?? []
                let results = branches.map { errors(instance, $0, at: path) }
                let passing = results.filter(\.isEmpty).count
                if keyword == "oneOf" && passing != 1 || keyword == "anyOf" && passing == 0 {
                    let closest = results.min(by: { $0.count < $1.count }) ?? []
                    found.append("\(path): \(passing) of \(branches.count) \(keyword) branches match"
                        + (passing == 0 ? " (closest: \(closest.prefix(3).joined(separator: "; ")))" : ""))
                }
            default:
                found.append("\(path): unsupported keyword \"\(keyword)\"")
            }
        }
        return found
    }

    /// Every keyword of every subschema of `schema` that this validator does
    /// not know (empty for the runtime schema).
    static func unsupportedKeywords(in schema: JSONValue) -> Set<String> {
        var found = Set<String>()
        func walk(_ s: JSONValue) {
            guard case .object(let o) = s else { return }
            for (keyword, value) in o.entries {
                if keyword.hasPrefix("x-") || ["description", "examples", "title", "$schema", "$id", "contentMediaType"].contains(keyword) { continue }
                switch keyword {
                case "$defs", "properties": for (_, sub) in value.objectValue?.entries ?? [] { walk(sub) }
                case "items", "contentSchema": walk(value)
                case "oneOf", "anyOf": for sub in value.arrayValue ?? [] { walk(sub) }
                case "$ref", "type", "const", "enum", "required", "additionalProperties", "minimum", "maximum": break
                default: found.insert(keyword)
                }
            }
        }
        walk(schema)
        return found
    }

    static func matches(_ value: JSONValue, type: String) -> Bool {
        switch (type, value) {
        case ("null", .null), ("boolean", .bool), ("string", .string), ("array", .array), ("object", .object): return true
        case ("number", .int), ("number", .double), ("integer", .int): return true
        case ("integer", .double(let d)): return d.isFinite && d.rounded(.towardZero) == d
        default: return false
        }
    }

    /// JSON equality: numbers by value, objects regardless of member order.
    static func equal(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.int, .int), (.int, .double), (.double, .int), (.double, .double): return compare(a, b) == 0
        case (.object(let x), .object(let y)):
            return x.count == y.count && x.entries.allSatisfy { entry in y[entry.key].map { equal(entry.value, $0) } ?? false }
        case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy { equal($0, $1) }
        default: return a == b
        }
    }

    /// Compares two numbers exactly when both are integers.
    static func compare(_ a: JSONValue, _ b: JSONValue) -> Int {
        if case .int(let x) = a, case .int(let y) = b { return x < y ? -1 : (x > y ? 1 : 0) }
        let x = a.doubleValue ?? 0, y = b.doubleValue ?? 0
        return x < y ? -1 : (x > y ? 1 : 0)
    }

    private static func short(_ value: JSONValue) -> String {
        let text = value.jsonString
        return text.count > 80 ? String(text.prefix(77)) + "…" : text
    }
}

/// The runtime schema's validator, shared by the tests.
let runtimeSchemaValidator = SchemaValidator(RuntimeSchema.document)
