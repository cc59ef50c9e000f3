/// The payload of a pairing QR code: `jcode://pair?host=H&port=P&code=C`
/// (port optional), as printed by `jcode pair`.
public struct PairingLink: Equatable, Sendable {
    public var host: String
    public var port: String?
    public var code: String

    /// Why a payload is not a pairing link, in words a person understands.
    public enum Problem: Error, Equatable, Sendable {
        case notJcode
        case missing(String)

        public var message: String {
            switch self {
            case .notJcode:
                return "That QR code is not a jcode pairing code. Run `jcode pair` on your computer and scan the code it shows."
            case .missing(let field):
                return "That pairing QR code has no \(field). Run `jcode pair` again and scan the new code."
            }
        }
    }

    public static func parse(_ payload: String) -> Result<PairingLink, Problem> {
        let text = payload.trimmingSpaces()
        let prefix = "jcode://pair"
        guard text.count >= prefix.count, text.prefix(prefix.count).lowercased() == prefix else {
            return .failure(.notJcode)
        }
        var rest = text.dropFirst(prefix.count)
        if rest.hasPrefix("/") { rest = rest.dropFirst() }
        guard rest.isEmpty || rest.hasPrefix("?") else { return .failure(.notJcode) }
        var host: String?
        var port: String?
        var code: String?
        for pair in rest.dropFirst().split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = percentDecoded(parts[0])
            let value = parts.count > 1 ? percentDecoded(parts[1]) : ""
            switch key {
            case "host": host = value
            case "port": port = value
            case "code": code = value
            default: break
            }
        }
        guard let host, !host.trimmingSpaces().isEmpty else { return .failure(.missing("host")) }
        guard let code, !code.trimmingSpaces().isEmpty else { return .failure(.missing("pairing code")) }
        let trimmedPort = port?.trimmingSpaces()
        return .success(PairingLink(host: host, port: trimmedPort?.isEmpty == true ? nil : trimmedPort, code: code))
    }

    /// Decodes `%XX` escapes; malformed escapes are kept as written.
    static func percentDecoded(_ text: Substring) -> String {
        guard text.contains("%") else { return String(text) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        let utf8 = Array(text.utf8)
        var i = 0
        func hex(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: return c - 0x30
            case 0x41...0x46: return c - 0x37
            case 0x61...0x66: return c - 0x57
            default: return nil
            }
        }
        while i < utf8.count {
            if utf8[i] == 0x25, i + 2 < utf8.count, let hi = hex(utf8[i + 1]), let lo = hex(utf8[i + 2]) {
                bytes.append(hi << 4 | lo)
                i += 3
            } else {
                bytes.append(utf8[i])
                i += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
