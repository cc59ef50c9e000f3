/// Owns the error banner and the notices: other features ask for them
/// (`showError`, `notice`), the person closes them, and a fresh attempt to
/// pair or connect clears an old error.
public struct NoticesInteractor: Interactor {
    public init() {}

    /// What the notices act on.
    public enum Input: Equatable, Sendable {
        // Actions
        case dismissError
        case dismissNotice(id: String)
        // Requests from any feature
        case showError(ErrorBanner)
        case notice(Notice.Kind, String)
        /// A fresh attempt to pair or connect (pairing started, a socket
        /// opened, a server chosen from the list): an old error is moot.
        case freshAttempt
    }

    public func interact(_ state: inout NoticesState, _ input: Input, _ context: Void) -> Emission {
        switch input {
        case .showError(let banner):
            state.errorBanner = banner
            return .none
        case .notice(let kind, let text):
            state.add(kind, text)
            return .none
        case .freshAttempt:
            state.errorBanner = nil
            return .none
        case .dismissError:
            guard state.errorBanner != nil else { return .note("no error banner to dismiss") }
            state.errorBanner = nil
            return .none
        case .dismissNotice(let id):
            guard let i = state.notices.firstIndex(where: { $0.id == id }) else {
                return .note("dismiss_notice: no notice \(id)")
            }
            state.notices.remove(at: i)
            return .none
        }
    }
}
