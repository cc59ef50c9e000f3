/// One change to a JSON document: the operations of RFC 6902 (JSON Patch)
/// that the change feed needs, plus `append`, which appends text to the
/// string at `path` (what a streamed delta is, in a few bytes).
public enum JSONPatchOp: Equatable, Sendable {
    case add(path: JSONPath, value: JSONValue)
    case remove(path: JSONPath)
    case replace(path: JSONPath, value: JSONValue)
    case append(path: JSONPath, text: String)

    public func write(to w: inout JSONWriter) {
        w.objectStart()
        w.key("op")
        switch self {
        case .add(let path, let value):
            w.string("add")
            w.key("path"); path.write(to: &w)
            w.key("value"); w.value(value)
        case .remove(let path):
            w.string("remove")
            w.key("path"); path.write(to: &w)
        case .replace(let path, let value):
            w.string("replace")
            w.key("path"); path.write(to: &w)
            w.key("value"); w.value(value)
        case .append(let path, let text):
            w.string("append")
            w.key("path"); path.write(to: &w)
            w.key("value"); w.string(text)
        }
        w.objectEnd()
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
        diff(old, new, path, &ops)
        return ops
    }

    private static func diff(_ old: JSONValue, _ new: JSONValue, _ path: JSONPath, _ ops: inout [JSONPatchOp]) {
        if old == new { return }
        switch (old, new) {
        case (.object(let a), .object(let b)) where a.keys == b.keys:
            for (x, y) in zip(a.entries, b.entries) { diff(x.value, y.value, path.appending(key: x.key), &ops) }
        case (.array(let a), .array(let b)) where a.count <= b.count:
            for i in 0..<a.count { diff(a[i], b[i], path.appending(index: i), &ops) }
            for i in a.count..<b.count { ops.append(.add(path: path.appending(index: i), value: b[i])) }
        case (.array(let a), .array(let b)) where a.count == b.count + 1 && Array(a.dropFirst()) == b:
            ops.append(.remove(path: path.appending(index: 0)))
        case (.string(let a), .string(let b))
        where b.utf8.count > a.utf8.count && b.hasPrefix(a) && !a.isEmpty:
            if let tail = String(b.utf8.dropFirst(a.utf8.count)) {
                ops.append(.append(path: path, text: tail))
            } else {
                ops.append(.replace(path: path, value: new))
            }
        default:
            ops.append(.replace(path: path, value: new))
        }
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
