import JcodeMobileJSON

private typealias B = SchemaBuilder

extension Snapshot {
    /// What the snapshot keeps of the device: its identity (the lifecycle's) and
    /// the name it pairs with (the pairing form's).
    static let lifecycleMembers: [Member] = [
        Member(
            name: "device",
            schema: { B.strictObject([("device_id", B.nullableString), ("device_name", B.string)]) },
            write: { s in
                var device = JSONObject(capacity: 2)
                device.append("device_id", .from(s.deviceID))
                device.append("device_name", .string(s.deviceName))
                return .object(device)
            },
            features: FeatureID.lifecycle.bit | FeatureID.pairing.bit,
            read: { value, s, reader in
                guard let device = reader.object(value, "device") else { return }
                if let id = device["device_id"], !id.isNull {
                    if let value = id.stringValue, LifecycleState.isValidDeviceID(value) {
                        s.deviceID = value
                    } else {
                        reader.problems.append("the device id")
                    }
                }
                if let name = device["device_name"] {
                    if let value = name.stringValue { s.deviceName = value } else { reader.problems.append("the device name") }
                }
            }),
    ]
}
