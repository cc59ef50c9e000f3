import JcodeMobileJSON

private typealias B = SchemaBuilder

extension Snapshot {
    /// What the snapshot keeps of the device: its identity (the lifecycle's) and the name it pairs
    /// with (the pairing form's).
    public struct Device: Equatable, Sendable {
        public var deviceID: String?
        public var deviceName: String = ""

        /// The features whose slices the part is read from.
        static let features: UInt32 = FeatureID.lifecycle.bit | FeatureID.pairing.bit

        /// Reads the part again from `state`; true when it changed.
        @inline(__always) mutating func refresh(from state: AppState) -> Bool {
            guard deviceID != state.lifecycle.deviceID || deviceName != state.pairing.deviceName else { return false }
            deviceID = state.lifecycle.deviceID
            deviceName = state.pairing.deviceName
            return true
        }

        /// Puts the part back into a first-launch state.
        func restore(into state: inout AppState) {
            state.lifecycle.deviceID = deviceID
            state.pairing.deviceName = deviceName
        }
    }

    /// What the snapshot keeps of the device: its identity (the lifecycle's) and
    /// the name it pairs with (the pairing form's).
    static let lifecycleMembers: [Member] = [
        Member(
            name: "device",
            schema: { B.strictObject([("device_id", B.nullableString), ("device_name", B.string)]) },
            write: { s in
                var device = JSONObject(capacity: 2)
                device.append("device_id", .from(s.device.deviceID))
                device.append("device_name", .string(s.device.deviceName))
                return .object(device)
            },
            features: FeatureID.lifecycle.bit | FeatureID.pairing.bit,
            read: { value, s, reader in
                guard let device = reader.object(value, "device") else { return }
                if let id = device["device_id"], !id.isNull {
                    if let value = id.stringValue, LifecycleState.isValidDeviceID(value) {
                        s.device.deviceID = value
                    } else {
                        reader.problems.append("the device id")
                    }
                }
                if let name = device["device_name"] {
                    if let value = name.stringValue { s.device.deviceName = value } else { reader.problems.append("the device name") }
                }
            }),
    ]
}
