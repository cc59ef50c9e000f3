import JcodeMobileWire

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

extension PlatformEvent {
    /// A frame from the socket's type: the hot path checks for it by its bytes.
    static let webSocketEventType = "websocket_event"

    /// The event's wire `type` (`pair_finished`, `websocket_event`): what the
    /// log names an event sent as a Swift value. `WireSpecTests` checks it
    /// against the declaration of every platform event.
    public var typeName: String {
        switch self {
        case .http(.healthFinished): return "health_finished"
        case .http(.pairFinished): return "pair_finished"
        case .secureStore(.writeFinished): return "secure_store_write_finished"
        case .secureStore(.readFinished): return "secure_store_read_finished"
        case .webSocket(.opened): return "websocket_opened"
        case .webSocket(.event): return Self.webSocketEventType
        case .webSocket(.closed): return "websocket_closed"
        case .webSocket(.failed): return "websocket_failed"
        case .timer(.fired): return "timer_fired"
        case .device(.deviceIDCreated): return "device_id_created"
        case .device(.pushTokenReceived): return "push_token_received"
        case .device(.qrPayloadScanned): return "qr_payload_scanned"
        case .device(.qrScanCancelled): return "qr_scan_cancelled"
        case .device(.speechTranscript): return "speech_transcript"
        case .device(.imageAttachmentSelected): return "image_attachment_selected"
        case .lifecycle(.foreground): return "app_foreground"
        case .lifecycle(.background): return "app_background"
        case .lifecycle(.networkReachabilityChanged): return "network_reachability_changed"
        case .lifecycle(.pushNotificationOpened): return "push_notification_opened"
        case .lifecycle(.appearanceChanged): return "appearance"
        }
    }
}
