/// Owns the error banner and the notices: closing them.
public struct NoticesInteractor: Interactor {
    public init() {}

    public func interact(_ state: inout AppState, _ input: Input) -> Emission {
        switch input {
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
