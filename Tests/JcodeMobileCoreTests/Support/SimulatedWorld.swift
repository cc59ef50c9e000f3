import XCTest
@testable import JcodeMobileCore
@testable import JcodeMobileJSON

/// A host and a jcode server in one, for the "nothing lost" specifications:
/// it answers every effect of the app the way a well-behaved host and
/// today's jcode would (acks before answers, `done {id}` ends a turn,
/// `history` holds every user row it received), and plays the faults a test
/// asks for. It counts what the server received, so a test can say that
/// every message arrived exactly once.
final class SimulatedWorld {
    private(set) var driver: AppDriver
    /// The contents of the `message` requests the server received, in order.
    private(set) var received: [String] = []
    /// The server's session: its rows, as `history` sends them.
    private(set) var rows: [(role: String, content: String)] = []
    var sessionID = "ses_1"
    /// The host's secure store and its storage (the last snapshot written).
    private(set) var secureStore: [String: String] = [:]
    private(set) var storedSnapshot: JSONValue?
    /// Timers the app scheduled and has not cancelled, by id → purpose.
    private(set) var timers: [String: String] = [:]
    /// Every effect type the app asked for, across calls.
    private(set) var effectTypes: [String] = []

    // Faults
    /// The server is up (sockets open) — false: connects fail.
    var serverUp = true
    /// The next message reaches the server, then the link drops before its ack.
    var dropAfterNextMessage = false
    /// The server streams a reply but the link drops before `done`.
    var dropMidStreamOnNextMessage = false
    /// The server answers pings.
    var answersPings = true
    /// Every server event is delivered twice.
    var duplicatesEvents = false
    /// The server refuses the token at the upgrade (401).
    var refusesToken = false
    /// The secure store cannot be read.
    var secureStoreFails = false
    /// Server events held back (the server is slow): delivered by `flushHeld()`.
    var holdsReplies = false
    private var held: [String] = []

    init(_ options: String? = nil, secureStore: [String: String] = [:]) {
        driver = AppDriver(options)
        self.secureStore = secureStore
    }

    /// Replaces the app by a new one from the stored snapshot (the app was
    /// killed and launched again); the host's stores stay.
    func restart(file: StaticString = #filePath, line: UInt = #line) {
        guard let snapshot = storedSnapshot else { return XCTFail("nothing was stored", file: file, line: line) }
        driver = AppDriver(#"{"snapshot":\#(snapshot.jsonString)}"#, file: file, line: line)
        timers = [:]
        effectTypes = []
    }

    // MARK: - Inputs

    /// The effect types of the last input the test itself sent (not of the
    /// answers the world sent back).
    private(set) var lastTypes: [String] = []

    func dispatch(_ json: String, file: StaticString = #filePath, line: UInt = #line) {
        let effects = driver.dispatch(json, file: file, line: line)
        lastTypes = effects.compactMap { $0["type"]?.stringValue }
        run(effects)
    }

    func event(_ json: String, file: StaticString = #filePath, line: UInt = #line) {
        let effects = driver.event(json, file: file, line: line)
        lastTypes = effects.compactMap { $0["type"]?.stringValue }
        run(effects)
    }

    /// Fires the pending timer of `purpose` ("reconnect", "keepalive").
    func fire(_ purpose: String, file: StaticString = #filePath, line: UInt = #line) {
        guard let id = timers.first(where: { $0.value == purpose })?.key else {
            return XCTFail("no \(purpose) timer pending (\(timers))", file: file, line: line)
        }
        timers[id] = nil
        event(#"{"type":"timer_fired","timer_id":"\#(id)"}"#, file: file, line: line)
    }

    /// Pairs a fresh app with devbox.local, working in /home/ana/project.
    func pair() {
        for action in [
            #"{"type":"set_host","value":"devbox.local"}"#, #"{"type":"set_pair_code","value":"123456"}"#,
            #"{"type":"set_device_name","value":"Ana's phone"}"#, #"{"type":"set_working_dir","value":"/home/ana/project"}"#,
            #"{"type":"submit_pairing"}"#,
        ] { dispatch(action) }
    }

    /// The server loses the link (its process stops, the network breaks): no close frame.
    func dropLink() {
        held = []  // what the server had not written yet goes with the link
        guard let socket = driver.app.state.connection.socketEffectID else { return }
        event(#"{"type":"websocket_closed","effect_id":\#(socket.rawValue),"code":1006}"#)
    }

    /// The link drops while the server is answering (not the test's input).
    private func linkDrops() {
        held = []
        guard let socket = driver.app.state.connection.socketEffectID else { return }
        answer(#"{"type":"websocket_closed","effect_id":\#(socket.rawValue),"code":1006}"#)
    }

    /// The last message never reached the server after all (lost on the
    /// way): the server forgets it.
    func forgetLastReceived() {
        received.removeLast()
        if rows.last?.role == "assistant" { rows.removeLast() }
        if rows.last?.role == "user" { rows.removeLast() }
    }

    /// Delivers the replies held back while `holdsReplies` was on.
    func flushHeld() {
        let lines = held
        held = []
        for line in lines { deliver(line) }
    }

    // MARK: - The host

    /// Effects not performed yet, in the order the app asked for them. A
    /// host performs a call's effects in order and its answers come later,
    /// so answers queue behind the effects already asked for.
    private var queue: [JSONValue] = []
    private var isRunning = false

    private func run(_ effects: [JSONValue]) {
        queue.append(contentsOf: effects)
        guard !isRunning else { return }
        isRunning = true
        while !queue.isEmpty { perform(queue.removeFirst()) }
        isRunning = false
    }

    /// The host answering an effect (not counted as the test's input).
    private func answer(_ json: String) {
        run(driver.event(json))
    }

    private func perform(_ effect: JSONValue) {
        guard let type = effect["type"]?.stringValue, let id = effect["effect_id"]?.int64Value else { return }
        effectTypes.append(type)
        switch type {
        case "storage_write":
            if effect["key"] == "snapshot" { storedSnapshot = effect["value"] }
        case "secure_store_write":
            secureStore[effect["key"]?.stringValue ?? ""] = effect["value"]?.stringValue
            answer(#"{"type":"secure_store_write_finished","effect_id":\#(id),"key":\#(effect["key"]!.jsonString),"ok":true}"#)
        case "secure_store_read":
            let key = effect["key"]?.stringValue ?? ""
            if !secureStoreFails, let token = secureStore[key] {
                answer(#"{"type":"secure_store_read_finished","effect_id":\#(id),"key":"\#(key)","ok":true,"value":"\#(token)"}"#)
            } else {
                answer(#"{"type":"secure_store_read_finished","effect_id":\#(id),"key":"\#(key)","ok":false}"#)
            }
        case "secure_store_delete":
            secureStore[effect["key"]?.stringValue ?? ""] = nil
        case "create_device_id":
            answer(#"{"type":"device_id_created","effect_id":\#(id),"device_id":"install-7f3a"}"#)
        case "http_pair":
            answer(#"{"type":"pair_finished","effect_id":\#(id),"ok":true,"token":"tok-secret-1","server_name":"devbox","server_version":"0.9.1"}"#)
        case "websocket_connect":
            if refusesToken {
                answer(#"{"type":"websocket_failed","effect_id":\#(id),"error":"401 Unauthorized","status":401}"#)
            } else if serverUp && driver.app.state.lifecycle.isNetworkReachable {
                answer(#"{"type":"websocket_opened","effect_id":\#(id)}"#)
            } else {
                answer(#"{"type":"websocket_failed","effect_id":\#(id),"error":"connection refused"}"#)
            }
        case "websocket_send":
            // A line written after the link went never reaches the server.
            guard driver.app.state.connection.isSocketOpen else { return }
            if let line = effect["line"]?.stringValue { serve(json(line)) }
        case "schedule_timer":
            timers[effect["timer_id"]?.stringValue ?? ""] = effect["purpose"]?.stringValue
        case "cancel_timer":
            timers[effect["timer_id"]?.stringValue ?? ""] = nil
        default:
            break
        }
    }

    // MARK: - The server

    private func serve(_ request: JSONValue) {
        guard let type = request["type"]?.stringValue, let id = request["id"]?.int64Value else { return }
        switch type {
        case "ping":
            if answersPings { send(#"{"type":"pong","id":\#(id)}"#) }
        case "subscribe":
            send(#"{"type":"ack","id":\#(id)}"#)
            if let target = request["target_session_id"]?.stringValue {
                // Like today's jcode: subscribing to a session resumes it, answered by its history.
                sessionID = target
                sendHistory(answering: id)
            }
            send(#"{"type":"done","id":\#(id)}"#)
        case "get_history":
            send(#"{"type":"ack","id":\#(id)}"#)
            sendHistory(answering: id)
        case "message":
            let content = request["content"]?.stringValue ?? ""
            received.append(content)
            rows.append(("user", content))
            if dropAfterNextMessage {
                dropAfterNextMessage = false
                return linkDrops()
            }
            send(#"{"type":"ack","id":\#(id)}"#)
            send(#"{"type":"text_delta","text":"on it: "}"#)
            if dropMidStreamOnNextMessage {
                dropMidStreamOnNextMessage = false
                rows.append(("assistant", "on it: "))
                return linkDrops()
            }
            send(#"{"type":"text_delta","text":\#(JSONValue.string(content).jsonString)}"#)
            rows.append(("assistant", "on it: " + content))
            send(#"{"type":"done","id":\#(id)}"#)
        default:
            send(#"{"type":"ack","id":\#(id)}"#)
        }
    }

    private func sendHistory(answering id: Int64) {
        let messages = rows.map { #"{"role":"\#($0.role)","content":\#(JSONValue.string($0.content).jsonString)}"# }
        send(#"{"type":"history","id":\#(id),"session_id":"\#(sessionID)","messages":[\#(messages.joined(separator: ","))]}"#)
    }

    private func send(_ line: String) {
        if holdsReplies { return held.append(line) }
        deliver(line)
    }

    private func deliver(_ line: String) {
        guard driver.app.state.connection.socketEffectID != nil else { return }
        driver.server(line)
        run(driver.effects)
        if duplicatesEvents, driver.app.state.connection.socketEffectID != nil {
            driver.server(line)
            run(driver.effects)
        }
    }

    // MARK: - What the person sees

    /// How many times the tree shows a user message with `text`.
    func timesShown(_ text: String) -> Int { driver.shownUserTexts.filter { $0 == text }.count }

    /// How many times the server received `text`.
    func timesReceived(_ text: String) -> Int { received.filter { $0 == text }.count }
}
