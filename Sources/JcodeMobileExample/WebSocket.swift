// A minimal WebSocket client (RFC 6455) over TCPConnection: the opening
// handshake with its Sec-WebSocket-Accept check, masked client frames, text
// messages (reassembled from continuation frames), ping → pong, and the
// closing handshake. No TLS (`wss://` is refused), no extensions.

#if canImport(Glibc)
import Synchronization

/// `ws://host:port/path`, split.
struct WebSocketURL {
    var host: String
    var port: Int
    var path: String

    init(_ text: String) throws(NetworkError) {
        guard text.hasPrefix("ws://") else {
            throw NetworkError(text.hasPrefix("wss://") ? "wss:// needs TLS, which this example does not do" : "not a ws:// URL: \(text)")
        }
        let rest = text.dropFirst("ws://".count)
        let authority = rest.prefix { $0 != "/" }
        path = rest.count > authority.count ? String(rest.dropFirst(authority.count)) : "/"
        var hostPart = Substring(authority)
        port = 80
        if let colon = authority.lastIndex(of: ":"), !authority[colon...].contains("]") {
            guard let number = Int(authority[authority.index(after: colon)...]) else { throw NetworkError("bad port in \(text)") }
            port = number
            hostPart = authority[..<colon]
        }
        host = String(hostPart.hasPrefix("[") ? hostPart.dropFirst().dropLast() : hostPart)
    }
}

/// How a socket's life ended.
enum WebSocketEnding: Equatable {
    /// A close frame (code and reason when it carried them), or the end of
    /// the stream without one (code 1006).
    case closed(code: Int?, reason: String?)
    case failed(String)
}

final class WebSocketClient: Sendable {
    /// The handshake was answered, but not with 101 Switching Protocols.
    struct Refused: Error {
        var status: Int
        var body: String
    }

    static let acceptGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
    /// The largest message accepted (tungstenite's default, as the gateway's).
    static let maxMessageBytes = 64 << 20

    private let connection: TCPConnection
    private let sentClose = Mutex(false)
    /// Bytes that arrived with the handshake's answer: the first frames.
    private let early: [UInt8]

    private init(connection: TCPConnection, early: [UInt8]) {
        self.connection = connection
        self.early = early
    }

    /// Connects and completes the opening handshake within `timeoutMS`.
    static func open(_ url: WebSocketURL, headers: [(String, String)], timeoutMS: Int) throws -> WebSocketClient {
        let connection = try TCPConnection.open(host: url.host, port: url.port, timeoutMS: Int32(timeoutMS), ioTimeoutMS: timeoutMS)
        let key = Base64.encode((0..<16).map { _ in UInt8.random(in: 0...255) })
        var request = "GET \(url.path) HTTP/1.1\r\nHost: \(HTTP.hostHeader(url.host, url.port))\r\n"
        request += "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        request += "\r\n"
        do {
            try connection.send(Array(request.utf8))
            var received: [UInt8] = []
            while HTTP.headerEnd(received) == nil {
                let chunk = try connection.receive()
                if chunk.isEmpty { throw NetworkError("the server closed the connection during the handshake") }
                received += chunk
                if received.count > 64 * 1024 { throw NetworkError("the handshake's answer is too long") }
            }
            let end = HTTP.headerEnd(received)!
            let (answer, _) = try HTTP.parseHead(received[..<end])
            guard answer.status == 101 else {
                throw Refused(status: answer.status, body: String(decoding: received[(end + 4)...], as: UTF8.self))
            }
            let expected = Base64.encode(SHA1.digest(Array((key + acceptGUID).utf8)))
            guard answer.header("Sec-WebSocket-Accept") == expected else {
                throw NetworkError("the server's Sec-WebSocket-Accept does not match the key")
            }
            connection.setTimeouts(ms: 0)  // from now on a quiet socket is fine: keep-alive is the core's job
            return WebSocketClient(connection: connection, early: Array(received[(end + 4)...]))
        } catch {
            connection.close()
            throw error
        }
    }

    // MARK: - Sending (any thread)

    func sendText(_ text: String) throws(NetworkError) {
        try send(opcode: 0x1, Array(text.utf8))
    }

    /// Starts the closing handshake (once); the reader sees the server's answer.
    func close(code: UInt16 = 1000) {
        let first = sentClose.withLock { sent in
            defer { sent = true }
            return !sent
        }
        guard first else { return }
        try? send(opcode: 0x8, [UInt8(code >> 8), UInt8(code & 0xFF)])
    }

    /// Drops the connection without a closing handshake (the reader ends).
    func abort() {
        connection.shutdown()
    }

    /// One frame, FIN set, masked with a fresh key as RFC 6455 requires of clients.
    private func send(opcode: UInt8, _ payload: [UInt8]) throws(NetworkError) {
        var frame: [UInt8] = [0x80 | opcode]
        switch payload.count {
        case ..<126: frame.append(0x80 | UInt8(payload.count))
        case ..<65536: frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        default:
            frame.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) { frame.append(UInt8((UInt64(payload.count) >> UInt64(shift)) & 0xFF)) }
        }
        let mask = (0..<4).map { _ in UInt8.random(in: 0...255) }
        frame += mask
        frame.reserveCapacity(frame.count + payload.count)
        for (i, byte) in payload.enumerated() { frame.append(byte ^ mask[i & 3]) }
        try connection.send(frame)
    }

    // MARK: - Reading (the reader thread)

    /// Reads until the socket ends, handing each text message to `onText`;
    /// answers pings and the server's close. Closes the connection at the end.
    func readMessages(onText: (String) -> Void) -> WebSocketEnding {
        defer { connection.close() }
        var reader = FrameReader(buffer: early)
        var message: [UInt8] = []
        var inText = false
        while true {
            let frame: Frame
            do {
                guard let next = try reader.next(from: connection) else { return .closed(code: 1006, reason: nil) }
                frame = next
            } catch {
                return sentClose.withLock { $0 } ? .closed(code: 1006, reason: nil) : .failed(error.description)
            }
            switch frame.opcode {
            case 0x1, 0x0:  // text, continuation
                if frame.opcode == 0x1 { message = []; inText = true }
                guard inText else { continue }  // continuation of a binary message
                message += frame.payload
                if message.count > Self.maxMessageBytes { close(code: 1009); return .failed("a message larger than 64 MiB") }
                if frame.fin {
                    onText(String(decoding: message, as: UTF8.self))
                    message = []
                    inText = false
                }
            case 0x2:  // binary: the gateway sends none; ignored
                inText = false
            case 0x8:
                let code = frame.payload.count >= 2 ? Int(frame.payload[0]) << 8 | Int(frame.payload[1]) : nil
                let reason = frame.payload.count > 2 ? String(decoding: frame.payload[2...], as: UTF8.self) : nil
                close()  // answer it (1000), unless we started it
                return .closed(code: code ?? 1005, reason: reason)
            case 0x9:
                try? send(opcode: 0xA, frame.payload)
            default:
                continue  // pong, reserved
            }
        }
    }

    struct Frame {
        var fin: Bool
        var opcode: UInt8
        var payload: [UInt8]
    }

    /// Cuts frames out of the bytes as they arrive.
    struct FrameReader {
        var buffer: [UInt8]
        var start = 0

        /// The next frame; nil at the end of the stream.
        mutating func next(from connection: TCPConnection) throws(NetworkError) -> Frame? {
            while true {
                if let frame = try parse() { return frame }
                let chunk = try connection.receive(max: 64 * 1024)
                if chunk.isEmpty { return nil }
                if start > 0 {
                    buffer.removeFirst(start)
                    start = 0
                }
                buffer += chunk
            }
        }

        private mutating func parse() throws(NetworkError) -> Frame? {
            let available = buffer.count - start
            guard available >= 2 else { return nil }
            let first = buffer[start], second = buffer[start + 1]
            guard second & 0x80 == 0 else { throw NetworkError("the server masked a frame") }
            var length = Int(second & 0x7F)
            var offset = 2
            if length == 126 {
                guard available >= 4 else { return nil }
                length = Int(buffer[start + 2]) << 8 | Int(buffer[start + 3])
                offset = 4
            } else if length == 127 {
                guard available >= 10 else { return nil }
                var big: UInt64 = 0
                for i in 0..<8 { big = big << 8 | UInt64(buffer[start + 2 + i]) }
                guard big <= UInt64(WebSocketClient.maxMessageBytes) else { throw NetworkError("a frame larger than 64 MiB") }
                length = Int(big)
                offset = 10
            }
            guard available >= offset + length else { return nil }
            let payload = Array(buffer[(start + offset)..<(start + offset + length)])
            start += offset + length
            return Frame(fin: first & 0x80 != 0, opcode: first & 0x0F, payload: payload)
        }
    }
}

enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            let n = min(3, bytes.count - i)
            let chunk = (UInt32(bytes[i]) << 16) | (n > 1 ? UInt32(bytes[i + 1]) << 8 : 0) | (n > 2 ? UInt32(bytes[i + 2]) : 0)
            for j in 0..<4 {
                out.append(j <= n ? alphabet[Int((chunk >> UInt32(18 - 6 * j)) & 0x3F)] : UInt8(ascii: "="))
            }
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// SHA-1 (FIPS 180-4), for the handshake's Sec-WebSocket-Accept only.
enum SHA1 {
    static func digest(_ message: [UInt8]) -> [UInt8] {
        var h: [UInt32] = [0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0]
        var data = message
        data.append(0x80)
        while data.count % 64 != 56 { data.append(0) }
        let bits = UInt64(message.count) * 8
        for shift in stride(from: 56, through: 0, by: -8) { data.append(UInt8((bits >> UInt64(shift)) & 0xFF)) }
        var w = [UInt32](repeating: 0, count: 80)
        for block in stride(from: 0, to: data.count, by: 64) {
            for t in 0..<16 {
                let b = block + t * 4
                w[t] = UInt32(data[b]) << 24 | UInt32(data[b + 1]) << 16 | UInt32(data[b + 2]) << 8 | UInt32(data[b + 3])
            }
            for t in 16..<80 { w[t] = rotl(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1) }
            var (a, b, c, d, e) = (h[0], h[1], h[2], h[3], h[4])
            for t in 0..<80 {
                let (f, k): (UInt32, UInt32)
                switch t {
                case 0..<20: (f, k) = ((b & c) | (~b & d), 0x5A82_7999)
                case 20..<40: (f, k) = (b ^ c ^ d, 0x6ED9_EBA1)
                case 40..<60: (f, k) = ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC)
                default: (f, k) = (b ^ c ^ d, 0xCA62_C1D6)
                }
                let temp = rotl(a, 5) &+ f &+ e &+ k &+ w[t]
                (e, d, c, b, a) = (d, c, rotl(b, 30), a, temp)
            }
            h[0] &+= a; h[1] &+= b; h[2] &+= c; h[3] &+= d; h[4] &+= e
        }
        return h.flatMap { word in [24, 16, 8, 0].map { UInt8((word >> UInt32($0)) & 0xFF) } }
    }

    private static func rotl(_ x: UInt32, _ n: UInt32) -> UInt32 { (x << n) | (x >> (32 - n)) }
}
#endif
