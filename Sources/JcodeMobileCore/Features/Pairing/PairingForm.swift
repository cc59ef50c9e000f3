import JcodeMobileJSON

/// The onboarding form, as typed, and what the app knows about it.
public struct PairingForm: Equatable, Sendable {
    public var host = ""
    public var port = ""
    /// The 6-digit code while it is being typed. It leaves the form (and the
    /// state JSON) as soon as it is used.
    public var code = ""
    /// A code that was sent but not consumed (the server was unreachable),
    /// kept out of the state JSON so "Pair" can retry without retyping it.
    /// Forgotten on success, on rejection, and when a new code is typed.
    public var heldCode: String?
    public var deviceName = ""
    /// The absolute path on the server in which this device's sessions run
    /// (sent as `subscribe.working_dir`; today's jcode refuses a client without one).
    public var workingDir = ""
    /// The working directory of the `http_pair` in flight (the field may be
    /// edited meanwhile; the server is saved with what was submitted).
    public var submittedWorkingDir: String?
    /// Validation messages show for every field after a submit attempt, and
    /// for a field as soon as it has been edited to something non-empty.
    public var showAllErrors = false
    /// `http_pair` is in flight.
    public var isSubmitting = false
    /// Submitted, waiting for this install's identity before `http_pair` goes out.
    public var awaitingIdentity = false
    /// The last server check (`check_server`).
    public var health: HealthCheck?

    public init() {}

    /// Where the typed code is in the state JSON (scrubbed from the change
    /// feed once the code is used).
    public static let codePath = JSONPath([.key("pairing"), .key("pair_code")])

    /// The result of `check_server` for the address in the form.
    public struct HealthCheck: Equatable, Sendable {
        public enum Status: String, Sendable, CaseIterable { case checking, reachable, unreachable, failed }
        public var status: Status
        public var message: String
    }

    /// The validated form, or nil with `errors` saying why.
    public struct Validated: Equatable, Sendable {
        public var address: ServerAddress
        public var code: String
        public var deviceName: String
        public var workingDir: String
    }

    /// A validation message for each invalid field.
    public var errors: FieldErrors {
        var errors = FieldErrors()
        switch ServerAddress.parseHost(host) {
        case .failure(let message): errors.host = message
        case .success: break
        }
        if !port.trimmingSpaces().isEmpty && ServerAddress.parsePort(port) == nil { errors.port = .portInvalid }
        let digits = PairingForm.normalizedCode(code)
        if code.trimmingSpaces().isEmpty {
            if heldCode == nil { errors.code = .codeMissing }
        } else if digits == nil {
            errors.code = .codeInvalid
        }
        let name = deviceName.trimmingSpaces()
        if name.isEmpty {
            errors.deviceName = .deviceNameMissing
        } else if name.count > 64 {
            errors.deviceName = .deviceNameTooLong
        }
        if case .failure(let message) = WorkingDirectory.validate(workingDir) { errors.workingDir = message }
        return errors
    }

    /// The form as a pairing request, when every field is valid.
    public var validated: Validated? {
        guard case .success(let host) = ServerAddress.parseHost(host), errors.isEmpty,
              case .success(let workingDir) = WorkingDirectory.validate(workingDir),
              let code = code.trimmingSpaces().isEmpty ? heldCode : PairingForm.normalizedCode(code)
        else { return nil }
        let typedPort = ServerAddress.parsePort(port)
        let address = ServerAddress(
            host: host.host, port: typedPort ?? host.port ?? ServerAddress.defaultPort, useTLS: host.useTLS)
        return Validated(address: address, code: code, deviceName: deviceName.trimmingSpaces(), workingDir: workingDir)
    }

    /// The address alone (for `check_server`), when host and port are valid.
    public var address: ServerAddress? {
        guard case .success(let host) = ServerAddress.parseHost(host) else { return nil }
        let typed = port.trimmingSpaces()
        if !typed.isEmpty && ServerAddress.parsePort(typed) == nil { return nil }
        return ServerAddress(
            host: host.host, port: ServerAddress.parsePort(typed) ?? host.port ?? ServerAddress.defaultPort,
            useTLS: host.useTLS)
    }

    /// Six digits, allowing spaces and dashes as typed ("123 456", "123-456").
    public static func normalizedCode(_ raw: String) -> String? {
        let digits = raw.filter { $0 != " " && $0 != "-" }
        guard digits.count == 6, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return digits
    }

    /// Which errors the form shows now.
    public var visibleErrors: FieldErrors {
        let all = errors
        var visible = FieldErrors()
        if showAllErrors || !host.isEmpty { visible.host = all.host }
        if showAllErrors || !port.isEmpty { visible.port = all.port }
        if showAllErrors || !code.isEmpty { visible.code = all.code }
        if showAllErrors || !deviceName.isEmpty { visible.deviceName = all.deviceName }
        if showAllErrors || !workingDir.isEmpty { visible.workingDir = all.workingDir }
        return visible
    }

    var json: JSONValue {
        var o = JSONObject(capacity: 10)
        o.append("host", .string(host))
        o.append("port", .string(port))
        o.append("pair_code", .string(code))
        o.append("has_held_code", .bool(heldCode != nil))
        o.append("device_name", .string(deviceName))
        o.append("working_dir", .string(workingDir))
        o.append("is_submitting", .bool(isSubmitting))
        o.append("awaiting_identity", .bool(awaitingIdentity))
        o.append("can_submit", .bool(validated != nil && !isSubmitting))
        o.append("errors", visibleErrors.json)
        if let health {
            o.append("health", ["status": .string(health.status.rawValue), "message": .string(health.message)])
        } else {
            o.append("health", .null)
        }
        return .object(o)
    }
}

/// The validation messages of the pairing form, one per field.
public struct FieldErrors: Equatable, Sendable {
    public var host: FieldMessage?
    public var port: FieldMessage?
    public var code: FieldMessage?
    public var deviceName: FieldMessage?
    public var workingDir: FieldMessage?

    public var isEmpty: Bool { host == nil && port == nil && code == nil && deviceName == nil && workingDir == nil }

    /// The invalid fields, by their names in the state's `pairing.errors`, in form order.
    public var fieldNames: [String] {
        [("host", host), ("port", port), ("pair_code", code), ("device_name", deviceName), ("working_dir", workingDir)]
            .compactMap { $0.1 == nil ? nil : $0.0 }
    }

    var json: JSONValue {
        var o = JSONObject(capacity: 5)
        o.append("host", .from(host?.text))
        o.append("port", .from(port?.text))
        o.append("pair_code", .from(code?.text))
        o.append("device_name", .from(deviceName?.text))
        o.append("working_dir", .from(workingDir?.text))
        return .object(o)
    }
}

/// A message telling a person what is wrong with a field and how to fix it.
public enum FieldMessage: Error, Equatable, Sendable {
    case hostMissing
    case hostInvalid(String)
    case portInvalid
    case codeMissing
    case codeInvalid
    case deviceNameMissing
    case deviceNameTooLong
    case workingDirMissing
    case workingDirNotAbsolute

    public var text: String {
        switch self {
        case .hostMissing: return "Enter the host name or IP address of the computer running jcode."
        case .hostInvalid(let host): return "\"\(host)\" is not a valid host name or IP address."
        case .portInvalid: return "The port must be a number from 1 to 65535 (jcode uses 7643)."
        case .codeMissing: return "Enter the 6-digit pairing code shown by `jcode pair`."
        case .codeInvalid: return "The pairing code is 6 digits."
        case .deviceNameMissing: return "Give this device a name so you can recognise it on the server."
        case .deviceNameTooLong: return "The device name can be at most 64 characters."
        case .workingDirMissing:
            return "Enter the folder on the server where jcode should work, e.g. /home/you/project."
        case .workingDirNotAbsolute:
            return "The working directory must be an absolute path on the server, starting with / (e.g. /home/you/project)."
        }
    }
}
