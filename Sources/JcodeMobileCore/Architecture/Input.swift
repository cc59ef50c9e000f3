/// Everything an interactor can be asked to handle.
public enum Input: Equatable, Sendable {
    /// User intent, from `jcode_mobile_dispatch`.
    case action(Action)
    /// A platform result or happening, from `jcode_mobile_platform_event`.
    case platform(PlatformEvent)
    /// One event from the gateway, unpacked from a `websocket_event` by the
    /// connection feature. Hosts cannot send these directly.
    case server(ServerEvent)
}
