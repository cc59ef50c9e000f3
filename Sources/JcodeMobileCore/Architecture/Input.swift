/// Everything an interactor can be asked to handle.
public enum Input: Equatable, Sendable {
    /// User intent, from `jcode_mobile_dispatch`.
    case action(Action)
    /// A platform result or happening, from `jcode_mobile_platform_event`.
    case platform(PlatformEvent)
    /// One event from the gateway, unpacked from a `websocket_event` by the
    /// connection feature. Hosts cannot send these directly.
    case server(ServerEvent)
    /// What one feature tells the others (paired, turn ended, server
    /// changed …). Only features emit these; hosts cannot send them.
    case `internal`(InternalInput)

    /// How the input is named in the log and in test steps: the wire type of
    /// an action, the name of an internal input.
    public var name: String {
        switch self {
        case .action(let action): return action.typeName
        case .platform(let event): return Self.wireName(of: event)
        case .server(let event): return Self.wireName(of: event)
        case .internal(let input): return input.name
        }
    }

    /// `submitPairing` → `submit_pairing`, `scanQR` → `scan_qr`: a case
    /// name in the wire's snake case (a run of capitals is one word).
    static func wireName<T>(of value: T) -> String {
        let caseName = String(describing: value).prefix(while: { $0 != "(" })
        var out = ""
        var previousWasUpper = false
        for c in caseName {
            if c.isUppercase {
                if !previousWasUpper { out.append("_") }
                out += c.lowercased()
                previousWasUpper = true
            } else {
                out.append(c)
                previousWasUpper = false
            }
        }
        return out
    }
}

extension Action {
    /// The action's wire `type` (`set_host`, `scan_qr`).
    public var typeName: String { Input.wireName(of: self) }
}
