/// One change to a JSON document: the operations of RFC 6902 (JSON Patch)
/// that the change feed needs, plus `append`, which appends text to the
/// string at `path` (what a streamed delta is, in a few bytes).
public enum JSONPatchOp: Equatable, Sendable {
    case add(path: JSONPath, value: JSONValue)
    case remove(path: JSONPath)
    case replace(path: JSONPath, value: JSONValue)
    case append(path: JSONPath, text: String)

    /// `{"op":…,"path":…[,"value":…]}`, its fixed parts written as they are.
    public func write(to w: inout JSONWriter) {
        w.beginFragment()
        switch self {
        case .add(let path, let value):
            w.fragment(#"{"op":"add","path":"#)
            w.valueFollows()
            path.write(to: &w)
            w.fragment(#","value":"#)
            w.valueFollows()
            w.value(value)
        case .remove(let path):
            w.fragment(#"{"op":"remove","path":"#)
            w.valueFollows()
            path.write(to: &w)
        case .replace(let path, let value):
            w.fragment(#"{"op":"replace","path":"#)
            w.valueFollows()
            path.write(to: &w)
            w.fragment(#","value":"#)
            w.valueFollows()
            w.value(value)
        case .append(let path, let text):
            w.fragment(#"{"op":"append","path":"#)
            w.valueFollows()
            path.write(to: &w)
            w.fragment(#","value":"#)
            w.valueFollows()
            w.string(text)
        }
        w.fragment("}")
        w.endFragment()
    }

}

/// A JSON Pointer (RFC 6901): a list of object keys and array indices.
public struct JSONPath: Equatable, Sendable, CustomStringConvertible {
    public enum Component: Equatable, Sendable {
        case key(String)
        case index(Int)
    }

    public var components: [Component]

    public init(_ components: [Component] = []) { self.components = components }

    public func appending(_ component: Component) -> JSONPath {
        var copy = self
        copy.components.append(component)
        return copy
    }

    public func appending(key: String) -> JSONPath { appending(.key(key)) }

    public func appending(index: Int) -> JSONPath { appending(.index(index)) }

    /// `/transcript/3/text`; `~` and `/` in keys are escaped as `~0` and `~1`.
    public var description: String {
        var text = ""
        for component in components {
            text += "/"
            switch component {
            case .index(let i): text += String(i)
            case .key(let k):
                for c in k.unicodeScalars {
                    switch c {
                    case "~": text += "~0"
                    case "/": text += "~1"
                    default: text.unicodeScalars.append(c)
                    }
                }
            }
        }
        return text
    }

    func write(to w: inout JSONWriter) { w.pointer(components) }
}

/// The smallest practical patch from one JSON value to another.
///
/// Objects with the same keys in the same order are diffed member by member;
/// arrays of the same length element by element, and an array that only grew
/// gets `add`s at its end; a string that only grew at its end gets an
/// `append`. Anything else is replaced whole.
public enum JSONDiff {
    public static func ops(from old: JSONValue, to new: JSONValue, at path: JSONPath = JSONPath()) -> [JSONPatchOp] {
        var ops: [JSONPatchOp] = []
        var path = path
        diff(old, new, &path, &ops)
        return ops
    }

    /// One path, extended and shortened in place as the walk descends, so an
    /// unchanged member costs a compare and no allocation; a path is copied
    /// only into an operation.
    private static func diff(_ old: JSONValue, _ new: JSONValue, _ path: inout JSONPath, _ ops: inout [JSONPatchOp]) {
        switch (old, new) {
        case (.object(let a), .object(let b)) where sameKeys(a, b):
            for i in a.entries.indices {
                path.components.append(.key(a.entries[i].key))
                diff(a.entries[i].value, b.entries[i].value, &path, &ops)
                path.components.removeLast()
            }
        case (.array(let a), .array(let b)) where a.count <= b.count:
            for i in 0..<a.count {
                path.components.append(.index(i))
                diff(a[i], b[i], &path, &ops)
                path.components.removeLast()
            }
            for i in a.count..<b.count { ops.append(.add(path: path.appending(index: i), value: b[i])) }
        case (.array(let a), .array(let b)) where a.count == b.count + 1 && a.dropFirst().elementsEqual(b):
            ops.append(.remove(path: path.appending(index: 0)))
        case (.string(let a), .string(let b)):
            if let op = op(from: a, to: b, at: path) { ops.append(op) }
        default:
            if old != new { ops.append(.replace(path: path, value: new)) }
        }
    }

    /// The operation from string `a` to string `b` at `path`: nil when they
    /// are equal, an `append` when `b` only grew at the end, else a `replace`.
    package static func op(from a: String, to b: String, at path: JSONPath) -> JSONPatchOp? {
        if a == b { return nil }
        if b.utf8.count > a.utf8.count && b.hasPrefix(a) && !a.isEmpty, let tail = String(b.utf8.dropFirst(a.utf8.count)) {
            return .append(path: path, text: tail)
        }
        return .replace(path: path, value: .string(b))
    }

    /// Whether two objects have the same keys in the same order.
    private static func sameKeys(_ a: JSONObject, _ b: JSONObject) -> Bool {
        guard a.entries.count == b.entries.count else { return false }
        for i in a.entries.indices where a.entries[i].key != b.entries[i].key { return false }
        return true
    }

    /// Applies `ops` to `document` (the reference for what the feed means;
    /// the tests use it to check the feed against the state).
    public static func apply(_ ops: [JSONPatchOp], to document: inout JSONValue) -> Bool {
        for op in ops {
            switch op {
            case .add(let path, let value):
                guard update(&document, path.components[...], { parent, last in
                    switch (last, parent) {
                    case (.index(let i), .array(var a)) where i <= a.count:
                        a.insert(value, at: i)
                        parent = .array(a)
                        return true
                    case (.key(let k), .object(var o)):
                        o[k] = value
                        parent = .object(o)
                        return true
                    default: return false
                    }
                }) else { return false }
            case .remove(let path):
                guard update(&document, path.components[...], { parent, last in
                    switch (last, parent) {
                    case (.index(let i), .array(var a)) where i < a.count:
                        a.remove(at: i)
                        parent = .array(a)
                        return true
                    case (.key(let k), .object(var o)) where o[k] != nil:
                        o[k] = nil
                        parent = .object(o)
                        return true
                    default: return false
                    }
                }) else { return false }
            case .replace(let path, let value):
                if path.components.isEmpty {
                    document = value
                    continue
                }
                guard update(&document, path.components[...], { parent, last in
                    switch (last, parent) {
                    case (.index(let i), .array(var a)) where i < a.count:
                        a[i] = value
                        parent = .array(a)
                        return true
                    case (.key(let k), .object(var o)) where o[k] != nil:
                        o[k] = value
                        parent = .object(o)
                        return true
                    default: return false
                    }
                }) else { return false }
            case .append(let path, let text):
                guard update(&document, path.components[...], { parent, last in
                    switch (last, parent) {
                    case (.index(let i), .array(var a)) where i < a.count:
                        guard case .string(let s) = a[i] else { return false }
                        a[i] = .string(s + text)
                        parent = .array(a)
                        return true
                    case (.key(let k), .object(var o)):
                        guard case .string(let s)? = o[k] else { return false }
                        o[k] = .string(s + text)
                        parent = .object(o)
                        return true
                    default: return false
                    }
                }) else { return false }
            }
        }
        return true
    }

    /// Walks to the parent of the last component and lets `body` change it.
    private static func update(
        _ value: inout JSONValue, _ path: ArraySlice<JSONPath.Component>,
        _ body: (inout JSONValue, JSONPath.Component) -> Bool
    ) -> Bool {
        guard let first = path.first else { return false }
        if path.count == 1 { return body(&value, first) }
        switch (first, value) {
        case (.index(let i), .array(var a)) where i < a.count:
            var child = a[i]
            guard update(&child, path.dropFirst(), body) else { return false }
            a[i] = child
            value = .array(a)
            return true
        case (.key(let k), .object(var o)):
            guard var child = o[k] else { return false }
            guard update(&child, path.dropFirst(), body) else { return false }
            o[k] = child
            value = .object(o)
            return true
        default:
            return false
        }
    }
}
