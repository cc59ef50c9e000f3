// HTTP/1.1 for the gateway's two plain requests, GET /health and POST /pair:
// one request per connection (`Connection: close`), a JSON body, the
// response read to its Content-Length or to the end of the stream.

#if canImport(Glibc)

struct HTTPResponse {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }
}

enum HTTP {
    /// The most a response may hold (the gateway's are a few hundred bytes).
    static let maxResponseBytes = 1 << 20

    /// One blocking request; throws when the server cannot be reached or
    /// does not answer within `timeoutMS`.
    static func request(
        _ method: String, host: String, port: Int, path: String, json body: String? = nil, timeoutMS: Int
    ) throws(NetworkError) -> HTTPResponse {
        let connection = try TCPConnection.open(host: host, port: port, timeoutMS: Int32(timeoutMS), ioTimeoutMS: timeoutMS)
        defer { connection.close() }
        let payload = Array((body ?? "").utf8)
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(hostHeader(host, port))\r\nConnection: close\r\nAccept: application/json\r\n"
        if body != nil { head += "Content-Type: application/json\r\nContent-Length: \(payload.count)\r\n" }
        head += "\r\n"
        try connection.send(Array(head.utf8) + payload)

        var received: [UInt8] = []
        var parsed: (response: HTTPResponse, bodyStart: Int)?
        while true {
            let chunk = try connection.receive()
            if chunk.isEmpty { break }
            received += chunk
            guard received.count <= maxResponseBytes else { throw NetworkError("the response is larger than 1 MiB") }
            if parsed == nil, let end = headerEnd(received) {
                parsed = try parseHead(received[..<end])
                parsed!.bodyStart = end + 4
            }
            if let parsed, let length = parsed.response.header("Content-Length").flatMap({ Int($0) }),
               received.count - parsed.bodyStart >= length {
                break
            }
        }
        guard let (head, start) = parsed else { throw NetworkError("the server closed the connection without an answer") }
        var response = head
        response.body = Array(received[start...])
        if let length = response.header("Content-Length").flatMap({ Int($0) }) {
            guard response.body.count >= length else { throw NetworkError("the response ended early") }
            response.body = Array(response.body.prefix(length))
        }
        return response
    }

    /// `host:port`, an IPv6 literal in brackets.
    static func hostHeader(_ host: String, _ port: Int) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// Where `\r\n\r\n` starts, if it has arrived.
    static func headerEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for i in 0...(bytes.count - 4)
        where bytes[i] == 13 && bytes[i + 1] == 10 && bytes[i + 2] == 13 && bytes[i + 3] == 10 {
            return i
        }
        return nil
    }

    /// The status line and the headers (the body is filled in by the caller).
    static func parseHead(_ bytes: ArraySlice<UInt8>) throws(NetworkError) -> (response: HTTPResponse, bodyStart: Int) {
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusParts = lines.first?.split(separator: " ", maxSplits: 2) ?? []
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]) else {
            throw NetworkError("not an HTTP response: \(lines.first.map(String.init) ?? "")")
        }
        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let value = line[line.index(after: colon)...].drop(while: { $0 == " " || $0 == "\t" })
            headers.append((String(line[..<colon]), String(value)))
        }
        return (HTTPResponse(status: status, headers: headers, body: []), 0)
    }
}
#endif
