/// The one synchronous entry point of a feature: mutate its own slice of
/// the state in place for an input, and say what happens next.
///
/// A feature is handed only the state it owns, plus a read-only `Context`
/// (for the app's features, `Facts`: what the other features own). It never
/// performs side effects; it returns them as values. Inputs a feature does
/// not handle return `.none`.
public protocol Interactor<State, Context>: Sendable {
    associatedtype State
    associatedtype Context
    func interact(_ state: inout State, _ input: Input, _ context: Context) -> Emission
}

/// Combinators for composing interactors.
public enum Interactors {
    /// Runs a child on one slice of its parent's state: the child sees and
    /// writes only that slice; what it emits is the parent's emission.
    ///
    ///     Interactors.Scope(\AppState.composer, ComposerInteractor())
    public struct Scope<Parent, Child: Interactor>: Interactor {
        public typealias State = Parent
        public typealias Context = Child.Context
        nonisolated(unsafe) let slice: WritableKeyPath<Parent, Child.State>
        let child: Child

        public init(_ slice: WritableKeyPath<Parent, Child.State>, _ child: Child) {
            self.slice = slice
            self.child = child
        }

        public func interact(_ state: inout Parent, _ input: Input, _ context: Child.Context) -> Emission {
            child.interact(&state[keyPath: slice], input, context)
        }
    }

    /// Runs every child, in order, on the same input and context, and merges
    /// what they emit. The children's follow-ups run after all of them.
    public struct Merge<State, Context>: Interactor {
        public let children: [any Interactor<State, Context>]

        public init(_ children: [any Interactor<State, Context>]) { self.children = children }

        public func interact(_ state: inout State, _ input: Input, _ context: Context) -> Emission {
            var emission = Emission.none
            for child in children { emission.append(child.interact(&state, input, context)) }
            return emission
        }
    }
}
