/// The one synchronous entry point of a feature: mutate its own slice of
/// the state in place for one of its own inputs, and say what happens next.
///
/// A feature declares the inputs it handles as its own enum (`Input`: the
/// actions, platform events, server events and other features' outputs it
/// acts on), so its switch is exhaustive without a `default:`; the root
/// (`AppRouter`) delivers each input to its owners. A feature is handed only
/// the state it owns, plus a read-only `Context` (`Facts`: what the other
/// features own, taken before the input; `Void` for a feature that needs
/// nothing else). It never performs side effects; it returns them as values.
public protocol Interactor<State, Input, Context>: Sendable {
    associatedtype State
    associatedtype Input
    associatedtype Context
    func interact(_ state: inout State, _ input: Input, _ context: Context) -> Emission
}
