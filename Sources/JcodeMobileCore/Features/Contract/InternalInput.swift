/// What features tell each other. A feature never writes another's state or
/// calls another's functions: when something it owns happens that matters
/// elsewhere, it emits one of its own *outputs* (`.tell(…)`; each feature's
/// output type is in its folder, `Features/<Name>/<Name>Output.swift`), and the root
/// (`App/AppRouter.swift`) delivers it to the features that act on it — one
/// exhaustive switch names every addressee. The store runs these as
/// follow-ups of the same host call, and the log lists them by name.
///
/// Four requests have one owner whoever makes them: `send` (the connection
/// owns the request ids), `showError` and `notice` (the notices), and
/// `openChat` (navigation, the one writer of the screen).
public enum InternalInput: Equatable, Sendable {
    // Each output is boxed (`indirect`): inline, a small output inside this
    // enum's larger payload area left bytes the switch reads unwritten
    // (memcheck reported them under `make valgrind`); a box is one whole word.
    indirect case pairing(PairingOutput)
    indirect case lifecycle(LifecycleOutput)
    indirect case servers(ServersOutput)
    indirect case connection(ConnectionOutput)
    indirect case session(SessionOutput)
    indirect case chat(ChatOutput)
    indirect case approvals(ApprovalsOutput)
    indirect case app(AppOutput)

    /// Send a gateway request on the open socket (→ Connection).
    case send(GatewayRequest)
    /// Show an error banner (→ Notices).
    case showError(ErrorBanner)
    /// Add a notice line (→ Notices); `passes` names the condition whose end
    /// withdraws it (nil: it stays until dismissed).
    case notice(Notice.Kind, String, passes: Notice.Passing? = nil)
    /// Show the chat (→ Navigation).
    case openChat

    /// The name the log and the test steps use: the output's own case
    /// (`turn_ended`, `socket_opened`), never its sender.
    public var name: String {
        switch self {
        case .pairing(let output): return Input.wireName(of: output)
        case .lifecycle(let output): return Input.wireName(of: output)
        case .servers(let output): return Input.wireName(of: output)
        case .connection(let output): return Input.wireName(of: output)
        case .session(let output): return Input.wireName(of: output)
        case .chat(let output): return Input.wireName(of: output)
        case .approvals(let output): return Input.wireName(of: output)
        case .app(let output): return Input.wireName(of: output)
        case .send, .showError, .notice, .openChat: return Input.wireName(of: self)
        }
    }
}
