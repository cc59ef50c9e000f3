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
    ///     Interactors.Scope<AppState, _>(ComposerInteractor()) { state, run in run(&state.composer) }
    ///
    /// The closure hands the child its slice, in place. It is a closure, not
    /// a stored key path, because applying a key path at run time costs more
    /// than the rest of a feature's work on an input it ignores; the
    /// closure's access is code the compiler sees.
    public struct Scope<Parent, Child: Interactor>: Interactor {
        public typealias State = Parent
        public typealias Context = Child.Context
        /// Calls `run` with the child's slice of `parent`, in place.
        public typealias Slice = @Sendable (_ parent: inout Parent, _ run: (inout Child.State) -> Emission) -> Emission
        let slice: Slice
        let child: Child

        public init(_ child: Child, slice: @escaping Slice) {
            self.child = child
            self.slice = slice
        }

        public func interact(_ state: inout Parent, _ input: Input, _ context: Child.Context) -> Emission {
            slice(&state) { child.interact(&$0, input, context) }
        }
    }

    /// Runs every child, in order, on the same input and context, and merges
    /// what they emit. The children's follow-ups run after all of them.
    ///
    ///     Interactors.Merge {
    ///         Feature(NavigationInteractor()) { state, run in run(&state.navigation) }
    ///         Feature(ComposerInteractor()) { state, run in run(&state.composer) }
    ///     }
    ///
    /// The children are nested generic pairs (built by `InteractorBuilder`),
    /// not an array of existentials, so every call is a direct call the
    /// compiler can inline.
    public struct Merge<Children: Interactor>: Interactor {
        let children: Children

        public init(@InteractorBuilder _ children: () -> Children) { self.children = children() }

        public func interact(_ state: inout Children.State, _ input: Input, _ context: Children.Context) -> Emission {
            children.interact(&state, input, context)
        }
    }

    /// Two interactors of the same state and context, run in order.
    public struct Pair<First: Interactor, Second: Interactor>: Interactor
    where First.State == Second.State, First.Context == Second.Context {
        let first: First
        let second: Second

        public func interact(_ state: inout First.State, _ input: Input, _ context: First.Context) -> Emission {
            var emission = first.interact(&state, input, context)
            emission.append(second.interact(&state, input, context))
            return emission
        }
    }
}

/// Builds `Interactors.Merge`'s children: a list of interactors becomes
/// nested `Interactors.Pair`s, in the order written.
@resultBuilder
public enum InteractorBuilder {
    public static func buildPartialBlock<First: Interactor>(first: First) -> First { first }

    public static func buildPartialBlock<Accumulated: Interactor, Next: Interactor>(
        accumulated: Accumulated, next: Next
    ) -> Interactors.Pair<Accumulated, Next> {
        Interactors.Pair(first: accumulated, second: next)
    }
}
