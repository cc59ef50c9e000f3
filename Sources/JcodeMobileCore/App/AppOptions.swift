import JcodeMobileJSON
import JcodeMobileWire

/// What `jcode_mobile_app_new` accepts: `NULL`, `""` or `{}` for a first
/// launch, or an object with these members.
public struct AppOptions: Equatable, Sendable {
    public var scenario: Scenario?
    public var logCapacity = TransitionLog.defaultCapacity
    public var viewport = SemanticTree.Viewport()
    public var deviceID: String?
    public var deviceName: String?
    /// A persisted snapshot to restore, as read (with what could not be).
    public var snapshot: Snapshot.Restored?

    public init() {}

    public static let maxLogCapacity = 100_000

    /// The documented members (docs and, later, the schema).
    public static let fields: [FieldSpec] = [
        .optional("scenario", .enumeration(Scenario.allCases.map(\.rawValue)), doc: "start from a named fixture"),
        .optional("snapshot", .object, doc: "restore a persisted snapshot (what storage_write {key: \"snapshot\"} or jcode_mobile_snapshot gave; docs/LIFECYCLE.md)"),
        .optional("log_capacity", .integer(IntegerRange(1...Int64(maxLogCapacity))), doc: "transitions kept by the log (default 256)"),
        .optional(
            "viewport",
            .record([
                FieldSpec("width", .integer(viewportRange)), FieldSpec("height", .integer(viewportRange)),
                .optional(
                    "safe_area",
                    .record(["top", "left", "bottom", "right"].map { FieldSpec($0, .integer(IntegerRange(0...Int64(viewportRange.upperBound)))) }),
                    doc: "what the phone draws over each edge, in points (default: a 390×844 iPhone's by the viewport's shape)"),
            ]),
            doc: "screen size in points for the tree's bounds (default 390×844), and its safe area"),
        .optional("device_id", .string, doc: "identifies this install to servers (1 to 128 printable ASCII characters without spaces); without one the core asks the host with create_device_id before pairing"),
        .optional("device_name", .string, doc: "prefills the device name field"),
    ]

    /// A viewport's width and height, in points.
    static let viewportRange = IntegerRange(1...100_000)

    /// Parses the options from the bytes of a C string (nil for NULL).
    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>?) throws(CoreError) -> AppOptions {
        guard let bytes, !bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) else {
            return AppOptions()
        }
        var workspace = JSONParser.Workspace()
        // Read from the tape, so a number is judged by its literal (a
        // log_capacity of 1e20 is named as written, never rounded).
        return try JSONParser.withTape(bytes, workspace: &workspace) { (tape) throws(CoreError) -> AppOptions in
            try parse(tape)
        }
    }

    private static func parse(_ tape: JSONTape) throws(CoreError) -> AppOptions {
        guard tape.kind(at: 0) == .object else {
            throw CoreError(.invalidScenario, "app_new expects a JSON object, got \(tape.typeName(at: 0))", field: "$")
        }
        for key in tape.keys(of: 0) where !fields.contains(where: { $0.name == key }) {
            throw CoreError(.invalidScenario, "unknown app_new option \"\(key)\"", field: key)
        }
        var r = FieldReader(tape: tape, object: 0, path: "", declared: fields)
        var options = AppOptions()
        if let name = try r.optionalString("scenario") {
            guard let scenario = Scenario(rawValue: name) else {
                throw CoreError(.invalidScenario, "unknown scenario \"\(name)\"", field: "scenario")
            }
            options.scenario = scenario
        }
        if let snapshot = tape.member("snapshot", of: 0) {
            guard options.scenario == nil else {
                throw CoreError(.invalidScenario, "give a scenario or a snapshot, not both", field: "snapshot")
            }
            let version = tape.kind(at: snapshot) == .object ? tape.member("version", of: snapshot) : nil
            let literal = version.flatMap { tape.kind(at: $0) == .number ? tape.literal(at: $0) : nil }
            options.snapshot = try Snapshot.read(tape.value(at: snapshot), versionLiteral: literal)
        }
        if let capacity = try r.optionalInt("log_capacity") { options.logCapacity = capacity }
        if let size = try r.optionalRecord("viewport", { (v: inout FieldReader) throws(CoreError) -> SemanticTree.Viewport in
            let width = try v.int("width"), height = try v.int("height")
            let safe = try v.optionalRecord("safe_area") { (s: inout FieldReader) throws(CoreError) -> Layout.Insets in
                Layout.Insets(top: try s.int("top"), left: try s.int("left"), bottom: try s.int("bottom"), right: try s.int("right"))
            }
            if let safe, safe.top + safe.bottom >= height || safe.left + safe.right >= width {
                throw CoreError.invalidField("viewport.safe_area", "the safe area must leave some of the viewport: top + bottom under its height, left + right under its width")
            }
            return SemanticTree.Viewport(width: width, height: height, safeArea: safe)
        }) {
            options.viewport = size
        }
        if let deviceID = try r.optionalString("device_id") {
            guard LifecycleState.isValidDeviceID(deviceID) else {
                throw CoreError.invalidField("device_id", "device_id must be 1 to 128 printable ASCII characters without spaces")
            }
            options.deviceID = deviceID
        }
        options.deviceName = try r.optionalString("device_name")
        return options
    }
}
