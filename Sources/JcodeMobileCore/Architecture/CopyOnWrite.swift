/// Copy-on-write storage for a section of the state: a box that is copied
/// only when it is written while another copy of the state holds it.
///
/// Copying the state (the store keeps the previous one for every input) then
/// copies one reference per boxed section instead of every field, and "did
/// this section change?" is a pointer comparison unless the section was
/// written to. Reads and writes go through `_read`/`_modify`, so neither
/// copies the section when it is not shared.
///
///     @CopyOnWrite public var session = SessionState()
///     state.session.model = "gpt-5"      // in place when not shared
@propertyWrapper
public struct CopyOnWrite<Value: Equatable & Sendable>: Equatable, Sendable {
    /// Mutated only while uniquely referenced (checked in `_modify`), so no
    /// access to `value` overlaps another: Swift's dynamic exclusivity check
    /// is skipped (it cost about a hundred instructions per read).
    final class Box: @unchecked Sendable {
        @exclusivity(unchecked) var value: Value
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

    public var projectedValue: CopyOnWrite<Value> { self }

    public static func == (lhs: CopyOnWrite<Value>, rhs: CopyOnWrite<Value>) -> Bool {
        lhs.box === rhs.box || lhs.box.value == rhs.box.value
    }
}
