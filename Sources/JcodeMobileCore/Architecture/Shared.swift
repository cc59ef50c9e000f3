/// Copy-on-write storage for a section of the state.
///
/// Copying the state (the store keeps the previous one for every input) then
/// copies one reference per section instead of every field, and "did this
/// section change?" is a pointer comparison unless the section was written
/// to. Reads and writes go through `_read`/`_modify`, so neither copies the
/// section when it is not shared.
///
///     @Shared public var session = SessionState()
///     state.session.isProcessing = true      // in place when unshared
///     state.$session.isIdentical(to: before.$session)
@propertyWrapper
public struct Shared<Value: Equatable & Sendable>: Equatable, Sendable {
    /// Mutated only while uniquely referenced (checked in `_modify`).
    final class Box: @unchecked Sendable {
        var value: Value
        init(_ value: Value) { self.value = value }
    }

    private var box: Box

    public init(wrappedValue: Value) { box = Box(wrappedValue) }

    public var wrappedValue: Value {
        _read { yield box.value }
        _modify {
            if !isKnownUniquelyReferenced(&box) { box = Box(box.value) }
            yield &box.value
        }
    }

    public var projectedValue: Shared<Value> { self }

    /// The same storage: certainly equal, and not written since it was shared.
    public func isIdentical(to other: Shared<Value>) -> Bool { box === other.box }

    public static func == (lhs: Shared<Value>, rhs: Shared<Value>) -> Bool {
        lhs.box === rhs.box || lhs.box.value == rhs.box.value
    }
}
