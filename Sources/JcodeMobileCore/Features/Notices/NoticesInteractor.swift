/// Owns the error banner and the notices: other features ask for them
/// (`showError`, `notice`), the person closes them, and a fresh attempt to
/// pair or connect clears an old error.
public struct NoticesInteractor: Interactor {
    public init() {}

    public func interact(_ state: inout NoticesState, _ input: Input, _ facts: Facts) -> Emission {
        switch input {
        case .internal(.showError(let banner)):
            state.errorBanner = banner
            return .none
        case .internal(.notice(let kind, let text)):
            state.add(kind, text)
            return .none
        case .internal(.pairingStarted), .internal(.socketOpened):
            state.errorBanner = nil
            return .none
        case .internal(.serverSelected(let selection)) where selection.reason == .chosen:
            state.errorBanner = nil
            return .none
        case .action(.dismissError):
            guard state.errorBanner != nil else { return .note("no error banner to dismiss") }
            state.errorBanner = nil
            return .none
        case .action(.dismissNotice(let id)):
            guard let i = state.notices.firstIndex(where: { $0.id == id }) else {
                return .note("dismiss_notice: no notice \(id)")
            }
            state.notices.remove(at: i)
            return .none
        default:
            return .none
        }
    }
}
