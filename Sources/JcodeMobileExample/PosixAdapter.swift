// The platform for a Linux terminal: carries out the core's effects with
// POSIX sockets (HTTP, the WebSocket), Swift tasks (timers) and dictionaries
// (the Keychain and app storage, in memory), and answers with platform
// events on the main actor.
//
// Threads. `perform` runs on the main actor and never blocks: a request or
// a socket gets its own thread, which hands its answers back to the main
// queue (`DispatchQueue.main.async`, first in first out, so a socket's
// frames reach the core in the order they arrived).

#if canImport(Glibc)
import Dispatch
import JcodeMobileSwift
import Synchronization

@MainActor
final class PosixAdapter: PlatformAdapter {
    /// The secure store (an iOS host uses the Keychain).
    private(set) var secrets: [String: String] = [:]
    /// Non-secret app storage (an iOS host uses Application Support or UserDefaults).
    private(set) var storage: [String: JSONValue] = [:]
    private var timers: [String: Task<Void, Never>] = [:]
    /// The socket the core uses, named by its `websocket_connect`'s id.
    private var socket: SocketHandle?
    private let timeoutMS: Int
    /// Where a line per effect goes (the effect's type and what it is about, never a secret).
    private let trace: (String) -> Void

    init(timeoutMS: Int, trace: @escaping (String) -> Void) {
        self.timeoutMS = timeoutMS
        self.trace = trace
    }

    func perform(_ request: RequestedEffect, events: PlatformEventSink) {
        trace(Self.describe(request))
        let id = request.id
        switch request.effect {
        case .http(.health(let host, let port, let useTLS)):
            let timeout = timeoutMS
            startThread { deliver(Self.health(id, host, port, useTLS, timeoutMS: timeout), to: events) }
        case .http(.pair(let host, let port, let useTLS, let code, let deviceID, let deviceName, let apnsToken)):
            let timeout = timeoutMS
            startThread {
                let body = Self.pairBody(code: code, deviceID: deviceID, deviceName: deviceName, apnsToken: apnsToken)
                deliver(Self.pair(id, host, port, useTLS, body: body, timeoutMS: timeout), to: events)
            }

        case .webSocket(.connect(let url, let token)):
            socket?.retire()  // a new socket replaces the old one, silently
            let handle = SocketHandle(id: id)
            socket = handle
            let timeout = timeoutMS
            startThread { handle.run(url: url, token: token, timeoutMS: timeout, events: events) }
        case .webSocket(.send(let line, _)):
            if socket?.send(line) != true { trace("  (no open socket: the line was not sent)") }
        case .webSocket(.close):
            socket?.close()  // the reader reports websocket_closed when the server answers

        case .timer(.schedule(let timerID, let afterMS, _)):
            timers[timerID]?.cancel()
            timers[timerID] = Task { [weak self] in
                try? await Task.sleep(for: .milliseconds(afterMS))
                guard !Task.isCancelled else { return }
                self?.timers[timerID] = nil
                events.send(.timer(.fired(timerID: timerID)))
            }
        case .timer(.cancel(let timerID)):
            timers.removeValue(forKey: timerID)?.cancel()

        case .secureStore(.write(let key, let value)):
            secrets[key] = value
            events.send(.secureStore(.writeFinished(effectID: id, key: key, ok: true)))
        case .secureStore(.read(let key)):
            events.send(.secureStore(.readFinished(effectID: id, key: key, ok: true, value: secrets[key])))
        case .secureStore(.delete(let key)):
            secrets[key] = nil
        case .storage(.write(let key, let value)):
            storage[key] = value

        case .device(.createDeviceID):
            let identity = (0..<16).map { _ in String(UInt8.random(in: 0...255), radix: 16) }.joined()
            events.send(.device(.deviceIDCreated(effectID: id, deviceID: "linux-" + identity)))
        case .device:
            break  // no push service, camera, microphone, photo library or haptics in a terminal
        }
    }

    /// Stops the timers and closes the socket (the process is about to end).
    func shutDown() {
        for timer in timers.values { timer.cancel() }
        timers = [:]
        socket?.close()
        socket = nil
    }

    // MARK: - HTTP (on a request's own thread)

    nonisolated static func pairBody(code: String, deviceID: String, deviceName: String, apnsToken: String?) -> String {
        var body = JSONObject()
        body.append("code", .string(code))
        body.append("device_id", .string(deviceID))
        body.append("device_name", .string(deviceName))
        if let apnsToken { body.append("apns_token", .string(apnsToken)) }
        return JSONValue.object(body).jsonString
    }

    nonisolated static func health(_ id: EffectID, _ host: String, _ port: Int, _ useTLS: Bool, timeoutMS: Int) -> PlatformEvent {
        guard !useTLS else { return .http(.healthFinished(HealthResult(effectID: id, ok: false, error: "https needs TLS, which this example does not do"))) }
        do {
            let response = try HTTP.request("GET", host: host, port: port, path: "/health", timeoutMS: timeoutMS)
            let answer = try? JSONParser.parse(String(decoding: response.body, as: UTF8.self))
            guard response.status == 200, answer?["status"]?.stringValue == "ok" else {
                return .http(.healthFinished(HealthResult(effectID: id, ok: false, status: response.status, error: errorText(response))))
            }
            return .http(.healthFinished(HealthResult(effectID: id, ok: true, version: answer?["version"]?.stringValue)))
        } catch {
            return .http(.healthFinished(HealthResult(effectID: id, ok: false, error: error.description)))  // unreachable: no status
        }
    }

    nonisolated static func pair(_ id: EffectID, _ host: String, _ port: Int, _ useTLS: Bool, body: String, timeoutMS: Int) -> PlatformEvent {
        guard !useTLS else { return .http(.pairFinished(PairResult(effectID: id, ok: false, error: "https needs TLS, which this example does not do"))) }
        do {
            let response = try HTTP.request("POST", host: host, port: port, path: "/pair", json: body, timeoutMS: timeoutMS)
            let answer = try? JSONParser.parse(String(decoding: response.body, as: UTF8.self))
            guard response.status == 200, let token = answer?["token"]?.stringValue else {
                return .http(.pairFinished(PairResult(effectID: id, ok: false, status: response.status, error: errorText(response))))
            }
            return .http(
                .pairFinished(
                    PairResult(
                        effectID: id, ok: true, token: token, serverName: answer?["server_name"]?.stringValue,
                        serverVersion: answer?["server_version"]?.stringValue)))
        } catch {
            return .http(.pairFinished(PairResult(effectID: id, ok: false, error: error.description)))
        }
    }

    /// The gateway's `{"error": …}`, or the status.
    nonisolated static func errorText(_ response: HTTPResponse) -> String {
        let answer = try? JSONParser.parse(String(decoding: response.body, as: UTF8.self))
        return answer?["error"]?.stringValue ?? "HTTP \(response.status)"
    }

    // MARK: - The trace

    /// `→ #4 websocket_connect ws://127.0.0.1:7643/ws`: what the effect is
    /// about, without its secrets (the code, the token, stored values).
    static func describe(_ request: RequestedEffect) -> String {
        let detail: String
        switch request.effect {
        case .http(.health(let host, let port, _)), .http(.pair(let host, let port, _, _, _, _, _)): detail = "\(host):\(port)"
        case .webSocket(.connect(let url, _)): detail = url
        case .webSocket(.send(let line, let secret)): detail = secret ? "(a line with a secret)" : line
        case .timer(.schedule(let id, let after, _)): detail = "\(id) in \(after) ms"
        case .timer(.cancel(let id)): detail = id
        case .secureStore(.write(let key, _)), .secureStore(.read(let key)), .secureStore(.delete(let key)): detail = key
        case .storage(.write(let key, _)): detail = key
        case .device(.haptic(let style)): detail = style.rawValue
        case .device(.showLocalNotification(let title, let body, _)): detail = "\(title): \(body)"
        default: detail = ""
        }
        return "→ #\(request.id) \(request.effect.type)" + (detail.isEmpty ? "" : " " + detail)
    }
}

/// Hands `event` to the core on the main queue, after everything handed before it.
nonisolated func deliver(_ event: PlatformEvent, to events: PlatformEventSink, unless socket: SocketHandle? = nil) {
    DispatchQueue.main.async {
        MainActor.assumeIsolated {
            if let socket, socket.isRetired { return }  // the core has moved on to another socket
            events.send(event)
        }
    }
}

/// One socket the core asked for: opened, read and closed on its own thread;
/// written to from the main actor.
final class SocketHandle: Sendable {
    let id: EffectID
    private let client = Mutex<WebSocketClient?>(nil)
    private let retired = Mutex(false)
    private let closeRequested = Mutex(false)

    init(id: EffectID) { self.id = id }

    var isRetired: Bool { retired.withLock { $0 } }

    /// Opens the socket, reports `websocket_opened`, then every text frame,
    /// then how it ended. Runs on the socket's thread until the socket ends.
    func run(url: String, token: String, timeoutMS: Int, events: PlatformEventSink) {
        let opened: WebSocketClient
        do {
            opened = try WebSocketClient.open(
                try WebSocketURL(url), headers: [("Authorization", "Bearer \(token)")], timeoutMS: timeoutMS)
        } catch let refused as WebSocketClient.Refused {
            let body = refused.body.split(separator: "\n").first.map(String.init) ?? ""
            let error = "HTTP \(refused.status)" + (body.isEmpty ? "" : ": \(body)")
            deliver(.webSocket(.failed(effectID: id, error: error, status: refused.status)), to: events, unless: self)
            return
        } catch {
            deliver(.webSocket(.failed(effectID: id, error: "\(error)", status: nil)), to: events, unless: self)
            return
        }
        client.withLock { $0 = opened }
        if isRetired || closeRequested.withLock({ $0 }) { opened.close() }
        deliver(.webSocket(.opened(effectID: id)), to: events, unless: self)
        let ending = opened.readMessages { text in
            deliver(.webSocketFrame(text, socket: id), to: events, unless: self)
        }
        switch ending {
        case .closed(let code, let reason):
            deliver(.webSocket(.closed(effectID: id, code: code, reason: reason)), to: events, unless: self)
        case .failed(let error):
            deliver(.webSocket(.failed(effectID: id, error: error, status: nil)), to: events, unless: self)
        }
    }

    /// Sends one request line as a text frame; false when the socket is not open.
    func send(_ line: String) -> Bool {
        guard let open = client.withLock({ $0 }) else { return false }
        do {
            try open.sendText(line)
            return true
        } catch {
            open.abort()  // the reader reports how the socket ended
            return false
        }
    }

    /// Starts the closing handshake (or makes the opening end in one).
    func close() {
        closeRequested.withLock { $0 = true }
        client.withLock { $0 }?.close()
    }

    /// The core no longer uses this socket: close it, and drop what it still says.
    func retire() {
        retired.withLock { $0 = true }
        close()
    }
}
#endif
