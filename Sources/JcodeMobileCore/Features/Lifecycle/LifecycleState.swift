import JcodeMobileJSON

/// What the host reported about the app and the device.
public struct LifecycleState: Equatable, Sendable {
    public var isForeground = true
    public var isNetworkReachable = true
    /// The push token, once the OS issued one (sent with `http_pair`).
    public var pushToken: String?
    /// Identifies this install to servers (`http_pair.device_id`,
    /// `subscribe.client_instance_id`): `app_new`'s `device_id`, the
    /// snapshot's, or one the host created when asked (`create_device_id`).
    /// nil until then: there is no shared default.
    public var deviceID: String?
    /// Light or dark, as the host told (`appearance`): how the pictures are drawn.
    public var appearance = Appearance.light

    public init() {}

    /// The longest device id accepted from the host.
    public static let deviceIDLimit = 128

    /// Whether `value` can identify this install: 1 to 128 printable ASCII, no spaces
    /// characters (it travels in JSON bodies and headers-like fields).
    public static func isValidDeviceID(_ value: String) -> Bool {
        let bytes = value.utf8
        return !bytes.isEmpty && bytes.count <= deviceIDLimit && bytes.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }

    var json: JSONValue {
        [
            "is_foreground": .bool(isForeground), "network_reachable": .bool(isNetworkReachable),
            "push_registered": .bool(pushToken != nil), "device_id": .from(deviceID), "appearance": .string(appearance.rawValue),
        ]
    }
}
