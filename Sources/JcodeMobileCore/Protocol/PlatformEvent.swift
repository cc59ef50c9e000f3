/// What the platform tells the core: results of effects and things that
/// happened (`jcode_mobile_platform_event`). Decoded into a different enum
/// from `Action`, so a host UI cannot forge an effect result and a platform
/// adapter cannot forge user intent.
public enum PlatformEvent: Equatable, Sendable {
    case http(HTTPResult)
    case secureStore(SecureStoreResult)
    case webSocket(WebSocketResult)
    case timer(TimerResult)
    case device(DeviceResult)
    case lifecycle(LifecycleEvent)

    /// Every platform event, with its fields: decoding, redaction and docs.
    public static let wire = WireUnion<PlatformEvent>(
        "platform event",
        HTTPResult.specs + SecureStoreResult.specs + WebSocketResult.specs + TimerResult.specs + DeviceResult.specs
            + LifecycleEvent.specs)
}
