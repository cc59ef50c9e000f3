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
        case notice(Notice.Kind, String, passes: Notice.Passing? = nil)
        /// A fresh attempt to pair or connect (pairing started, a socket
        /// opened, a server chosen from the list): an old error is moot, and
        /// so is a notice that the server was updating.
        case freshAttempt
        /// A turn started after one was interrupted: its notice is moot.
        case turnStarted
        /// The chat shows another session (switched, or cleared into a fresh
        /// one): what was said of the last one's turns is moot.
        case sessionChanged
    }

    public func interact(_ state: inout NoticesState, _ input: Input, _ context: Void) -> Emission {
        switch input {
        case .showError(let banner):
            state.errorBanner = banner
            return .none
        case .notice(let kind, let text, let passes):
            state.add(kind, text, passes: passes)
            return .none
        case .freshAttempt:
            state.errorBanner = nil
            state.withdraw(.reconnect)
            return .none
        case .turnStarted:
            state.withdraw(.nextTurn)
            return .none
        case .sessionChanged:
            state.withdraw(.nextTurn)
            state.withdraw(.sessionChange)
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
