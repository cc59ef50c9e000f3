/// The one synchronous entry point of a feature: mutate the state in place
/// for an input and say what happens next.
///
/// Interactors never perform side effects; they return them as values.
/// Inputs a feature does not handle return `.none`.
public protocol Interactor: Sendable {
    func interact(_ state: inout AppState, _ input: Input) -> Emission
}

/// Combinators for composing interactors.
public enum Interactors {
    /// Runs every child, in order, on the same input and merges what they emit.
    /// The order is part of the behaviour (see `AppInteractor`).
    public struct Merge: Interactor {
        public let children: [any Interactor]

        public init(_ children: [any Interactor]) { self.children = children }

        public func interact(_ state: inout AppState, _ input: Input) -> Emission {
            var emission = Emission.none
            for child in children { emission.append(child.interact(&state, input)) }
            return emission
        }
    }
}
