// Blocking TCP over POSIX sockets (Linux, Glibc), and a way to run a
// closure on its own thread. Everything here blocks: it runs on threads the
// example starts (never on the main actor, which only sends small frames).

#if canImport(Glibc)
import Glibc
import Synchronization

struct NetworkError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }

    /// `what: strerror(errno)`.
    static func posix(_ what: String) -> NetworkError {
        NetworkError("\(what): \(String(cString: strerror(errno)))")
    }
}

/// One connected TCP socket. Sends may come from one thread while another
/// reads; `close()` may come from any thread and happens once (under the
/// lock a send holds, so a closed descriptor number is never written to).
final class TCPConnection: Sendable {
    private let fd: Int32
    private let isClosed = Mutex(false)

    private init(fd: Int32) { self.fd = fd }

    /// Connects to `host:port`, giving up after `timeoutMS`; reads and
    /// writes then time out after `ioTimeoutMS` (0: never).
    static func open(host: String, port: Int, timeoutMS: Int32, ioTimeoutMS: Int) throws(NetworkError) -> TCPConnection {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw NetworkError("cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        var lastError = NetworkError("no address for \(host)")
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let info = next {
            next = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
            if fd < 0 {
                lastError = .posix("socket")
                continue
            }
            do throws(NetworkError) {
                try connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen, timeoutMS: timeoutMS, to: "\(host):\(port)")
                let connection = TCPConnection(fd: fd)
                if ioTimeoutMS > 0 { connection.setTimeouts(ms: ioTimeoutMS) }
                return connection
            } catch {
                Glibc.close(fd)
                lastError = error
            }
        }
        throw lastError
    }

    /// A non-blocking connect bounded by `poll`, then back to blocking.
    private static func connect(
        _ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>, _ length: socklen_t, timeoutMS: Int32, to name: String
    ) throws(NetworkError) {
        let flags = fcntl(fd, F_GETFL, 0)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
        if Glibc.connect(fd, address, length) != 0 {
            guard errno == EINPROGRESS else { throw .posix("connect to \(name)") }
            var waiting = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            let ready = poll(&waiting, 1, timeoutMS)
            if ready == 0 { throw NetworkError("connect to \(name): timed out after \(timeoutMS) ms") }
            if ready < 0 { throw .posix("connect to \(name)") }
            var problem: Int32 = 0
            var size = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &problem, &size)
            if problem != 0 { throw NetworkError("connect to \(name): \(String(cString: strerror(problem)))") }
        }
        _ = fcntl(fd, F_SETFL, flags)
    }

    /// Reads and writes give up after `ms` milliseconds (0: they wait for ever).
    func setTimeouts(ms: Int) {
        var limit = timeval(tv_sec: ms / 1000, tv_usec: (ms % 1000) * 1000)
        let size = socklen_t(MemoryLayout<timeval>.size)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, size)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, size)
    }

    /// Writes every byte (MSG_NOSIGNAL: a peer that went away is an error, not SIGPIPE).
    func send(_ bytes: [UInt8]) throws(NetworkError) {
        try isClosed.withLock { (closed) throws(NetworkError) in
            guard !closed else { throw NetworkError("the connection is closed") }
            var sent = 0
            while sent < bytes.count {
                let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
                if n < 0 {
                    if errno == EINTR { continue }
                    throw .posix("send")
                }
                sent += n
            }
        }
    }

    /// Up to `max` bytes; empty at the end of the stream.
    func receive(max: Int = 16 * 1024) throws(NetworkError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: max)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, max, 0) }
            if n >= 0 { return Array(buffer[0..<n]) }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { throw NetworkError("no answer in time") }
            throw .posix("receive")
        }
    }

    /// Ends both directions: a thread blocked in `receive` returns (end of stream).
    func shutdown() {
        isClosed.withLock { closed in
            if !closed { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    func close() {
        isClosed.withLock { closed in
            if !closed {
                closed = true
                _ = Glibc.close(fd)
            }
        }
    }

    deinit { close() }
}

/// Runs `body` on a new detached thread. Blocking I/O gets its own thread
/// instead of a Swift-concurrency worker (there are as few of those as cores).
nonisolated func startThread(_ body: @escaping @Sendable () -> Void) {
    final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }
    let context = Unmanaged.passRetained(Body(body)).toOpaque()
    var thread = pthread_t()
    let status = pthread_create(&thread, nil, { context in
        let body = Unmanaged<Body>.fromOpaque(context!).takeRetainedValue()
        body.run()
        return nil
    }, context)
    guard status == 0 else {
        Unmanaged<Body>.fromOpaque(context).release()
        fatalError("pthread_create failed: \(status)")
    }
    pthread_detach(thread)
}

#endif
