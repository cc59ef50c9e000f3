import JcodeMobileJSON
import JcodeMobileWire

/// Device capabilities: this install's identity, push registration, the
/// camera, speech, the photo picker, haptics and local notifications.
public enum DeviceEffect: Equatable, Sendable {
    /// A new identity for this install (the core never draws random numbers).
    case createDeviceID
    case registerPushNotifications
    case requestCameraQRScan
    case requestSpeechTranscript
    case requestImagePicker
    case haptic(style: HapticStyle)
    /// Tell the person, while the app is in the background, that the agent
    /// finished, stopped or waits for them (docs/LIFECYCLE.md).
    case showLocalNotification(title: String, body: String, sessionID: String?)
    /// Put text on the clipboard: a code block's code or a message's text
    /// the person chose to copy (`copy`).
    case copyToClipboard(text: String)

    public enum HapticStyle: String, Sendable, CaseIterable {
        case success, warning, error, light
    }

    var encoded: EncodedMessage<EffectKind> {
        switch self {
        case .createDeviceID: return EncodedMessage(.createDeviceID)
        case .registerPushNotifications: return EncodedMessage(.registerPushNotifications)
        case .requestCameraQRScan: return EncodedMessage(.requestCameraQRScan)
        case .requestSpeechTranscript: return EncodedMessage(.requestSpeechTranscript)
        case .requestImagePicker: return EncodedMessage(.requestImagePicker)
        case .haptic(let style): return EncodedMessage(.haptic, [.string(style.rawValue)])
        case .showLocalNotification(let title, let body, let sessionID):
            return EncodedMessage(.showLocalNotification, [.string(title), .string(body), .optional(sessionID)])
        case .copyToClipboard(let text): return EncodedMessage(.copyToClipboard, [.string(text)])
        }
    }

    static let specs: [EffectSpec] = [
        EffectSpec(
            .createDeviceID,
            doc: "Create an identity for this install (a random UUID is right) and answer with it; the core keeps it in the snapshot and sends it with http_pair.",
            answeredBy: ["device_id_created"], tracked: true),
        EffectSpec(
            .registerPushNotifications, doc: "Ask the OS for a push token.", answeredBy: ["push_token_received"]),
        EffectSpec(
            .requestCameraQRScan, doc: "Show the camera to scan a pairing QR code.",
            answeredBy: ["qr_payload_scanned", "qr_scan_cancelled"]),
        EffectSpec(
            .requestSpeechTranscript, doc: "Start dictation; report partial and final transcripts.",
            answeredBy: ["speech_transcript"]),
        EffectSpec(.requestImagePicker, doc: "Show the photo picker.", answeredBy: ["image_attachment_selected"]),
        EffectSpec(
            .haptic, doc: "Play a haptic.",
            fields: [FieldSpec("style", .enumeration(HapticStyle.allCases.map(\.rawValue)))]),
        EffectSpec(
            .showLocalNotification,
            doc: "Show a local notification now (the core asks only while the app is in the background; nothing answers it). "
                + "Keep session_id in its user info and, when the person opens it, send push_notification_opened with "
                + "{\"session_id\": …} as the payload. One notification per session: a later one for the same session_id replaces "
                + "the one still shown (on iOS, the request identifier \"jcode.session.<session_id>\").",
            fields: [
                FieldSpec("title", .string, doc: "the session's title, or \"jcode\""),
                FieldSpec("body", .string, doc: "what happened, in one short line (never an answer the person typed)"),
                FieldSpec.optional("session_id", .string, doc: "the session it is about; absent when no session is known yet"),
            ]),
        EffectSpec(
            .copyToClipboard,
            doc: "Put text on the system clipboard (the person asked to copy a code block or a message; nothing answers it).",
            fields: [FieldSpec("text", .string, doc: "the text, as the person sees it (a code block's code, a message's markdown)")]),
    ]
}

public enum DeviceResult: Equatable, Sendable {
    case deviceIDCreated(effectID: EffectID, deviceID: String)
    case pushTokenReceived(token: String)
    case qrPayloadScanned(payload: String)
    case qrScanCancelled
    case speechTranscript(text: String, isFinal: Bool)
    case imageAttachmentSelected(mediaType: String, dataBase64: String)

    static let specs: [MessageSpec<PlatformEvent>] = [
        MessageSpec(
            "device_id_created", doc: "Answers create_device_id with this install's new identity (1 to 128 printable ASCII characters without spaces).",
            fields: [FieldSpec("effect_id", .integer(.id)), FieldSpec("device_id", .string)]
        ) { r throws(CoreError) in
            .device(.deviceIDCreated(effectID: EffectID(try r.int("effect_id")), deviceID: try r.string("device_id")))
        },
        MessageSpec("push_token_received", doc: "The OS issued a push token.", fields: [FieldSpec("token", .string)]) {
            r throws(CoreError) in
            .device(.pushTokenReceived(token: try r.string("token")))
        },
        MessageSpec(
            "qr_payload_scanned", doc: "A QR code was scanned (or a jcode:// link opened).",
            fields: [FieldSpec("payload", .string, secret: true, doc: "jcode://pair?host=H&port=P&code=C")]
        ) { r throws(CoreError) in
            .device(.qrPayloadScanned(payload: try r.string("payload")))
        },
        MessageSpec("qr_scan_cancelled", doc: "The person closed the scanner.") { _ throws(CoreError) in
            .device(.qrScanCancelled)
        },
        MessageSpec(
            "speech_transcript", doc: "Dictated text so far (is_final: false) or the finished transcript.",
            fields: [FieldSpec("text", .string), FieldSpec("is_final", .boolean)]
        ) { r throws(CoreError) in
            .device(.speechTranscript(text: try r.string("text"), isFinal: try r.bool("is_final")))
        },
        MessageSpec(
            "image_attachment_selected", doc: "The person picked an image.",
            fields: [FieldSpec("media_type", .string, doc: "e.g. image/png"), FieldSpec("data_base64", .string)]
        ) { r throws(CoreError) in
            .device(.imageAttachmentSelected(mediaType: try r.string("media_type"), dataBase64: try r.string("data_base64")))
        },
    ]
}

/// App lifecycle and environment, reported by the host whenever they change.
public enum LifecycleEvent: Equatable, Sendable {
    case foreground
    case background
    case networkReachabilityChanged(reachable: Bool)
    case pushNotificationOpened(payload: JSONObject)
    case appearanceChanged(Appearance)

    static let specs: [MessageSpec<PlatformEvent>] = [
        MessageSpec(
            "app_foreground",
            doc: "The app became active (send it at launch too, once the app is visible: a restored app connects then)."
        ) { _ throws(CoreError) in .lifecycle(.foreground) },
        MessageSpec(
            "app_background", doc: "The app went to the background (keep-alive and reconnect timers stop; docs/LIFECYCLE.md)."
        ) { _ throws(CoreError) in .lifecycle(.background) },
        MessageSpec(
            "network_reachability_changed", doc: "The network became reachable or unreachable.",
            fields: [FieldSpec("reachable", .boolean)]
        ) { r throws(CoreError) in
            .lifecycle(.networkReachabilityChanged(reachable: try r.bool("reachable")))
        },
        MessageSpec(
            "push_notification_opened",
            doc: "The person opened a notification (a push, or one shown for show_local_notification); payload is its user info. "
                + "A string session_id in it lands in that session's chat (resumed if it is not the current one).",
            fields: [FieldSpec("payload", .object)]
        ) { r throws(CoreError) in
            guard let payload = try r.optionalObject("payload") else {
                throw CoreError.invalidField(r.fieldPath("payload"), "missing required field \"payload\"")
            }
            return .lifecycle(.pushNotificationOpened(payload: payload))
        },
        MessageSpec(
            "appearance",
            doc: "The device's light or dark appearance, at launch and whenever it changes (light until told). "
                + "The tree carries roles, never colours: the pictures (jcode_mobile_screenshot_svg) draw the appearance told.",
            fields: [FieldSpec("mode", .enumeration(Appearance.allCases.map(\.rawValue)))]
        ) { r throws(CoreError) in
            .lifecycle(.appearanceChanged(try r.enumeration("mode", as: Appearance.self)))
        },
    ]
}

/// The device's appearance (`appearance`): what the pictures are drawn in.
public enum Appearance: String, Sendable, CaseIterable {
    case light, dark
}
