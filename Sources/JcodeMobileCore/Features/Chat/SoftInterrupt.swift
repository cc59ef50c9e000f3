import JcodeMobileJSON

/// A soft interrupt sent while a turn runs and not yet received by the agent.
/// Its bubble is the queued transcript entry `entrySerial`.
public struct SoftInterrupt: Equatable, Sendable {
    public var entrySerial: Int
    public var content: String
    public var urgent: Bool

    public init(entrySerial: Int, content: String, urgent: Bool) {
        self.entrySerial = entrySerial
        self.content = content
        self.urgent = urgent
    }

    var json: JSONValue {
        ["entry_id": .string("m" + String(entrySerial)), "content": .string(content), "urgent": .bool(urgent)]
    }
}
