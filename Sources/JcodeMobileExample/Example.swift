// jcode-mobile-swift-example: a whole jcode mobile session in a terminal,
// hosted the way a SwiftUI app hosts the core (docs/SWIFT.md) — a
// `ViewModel` for the state and the tree, a `PlatformAdapter` for the
// platform — over real sockets against a jcode gateway (the real one or
// `python3 -m jcode_mobile.gateway`).
//
//     jcode-mobile-swift-example --port 7643 --code 123456 --working-dir /home/me/project --message "Run the tests"
//
// It fills in the pairing form, taps Pair, waits for the chat to connect,
// sends the message and waits for the reply, printing the screen (the
// semantic tree as text) every time it changes and a line per effect. It
// redraws the way a SwiftUI host does, told by observation what changed: the
// whole screen when the chrome (everything but the message rows) or the list
// of rows changed, and otherwise only the rows that changed (a streamed reply
// redraws its own row, whatever the length of the conversation). Exit
// status: 0 the reply finished; 1 pairing, connecting or the turn failed
// (the reason on stderr); 2 bad arguments; 3 out of time.

#if canImport(Glibc)
import Glibc
import JcodeMobileSwift
import Observation
import Synchronization

struct Arguments {
    var host = "127.0.0.1"
    var port = 7643
    var code = ""
    var workingDir = ""
    var message = "Hello from Swift"
    var deviceName = "Swift example"
    var timeoutSeconds = 30

    static let usage = """
        usage: jcode-mobile-swift-example --code CODE --working-dir DIR [--host 127.0.0.1] [--port 7643]
                                          [--message TEXT] [--device-name NAME] [--timeout SECONDS]
        """

    init(_ arguments: [String]) throws(ExampleFailure) {
        var rest = arguments[...]
        while let option = rest.popFirst() {
            guard let value = rest.popFirst() else { throw ExampleFailure(.usage, "\(option) needs a value") }
            switch option {
            case "--host": host = value
            case "--port":
                port = try Self.number(value, option)
                guard port <= 65535 else { throw ExampleFailure(.usage, "--port must be from 1 to 65535, not \(value)") }
            case "--code": code = value
            case "--working-dir": workingDir = value
            case "--message":
                guard !value.trimmingSpacesForArguments.isEmpty else { throw ExampleFailure(.usage, "--message must not be empty") }
                message = value
            case "--device-name": deviceName = value
            case "--timeout": timeoutSeconds = try Self.number(value, option)
            default: throw ExampleFailure(.usage, "unknown option \(option)")
            }
        }
        if code.isEmpty || workingDir.isEmpty { throw ExampleFailure(.usage, "--code and --working-dir are required") }
    }

    private static func number(_ text: String, _ option: String) throws(ExampleFailure) -> Int {
        guard let n = Int(text), n > 0 else { throw ExampleFailure(.usage, "\(option) takes a positive number, not \(text)") }
        return n
    }
}

struct ExampleFailure: Error, CustomStringConvertible {
    enum Status: Int32 {
        case failed = 1, usage = 2, timedOut = 3
    }

    let status: Status
    let description: String

    init(_ status: Status, _ description: String) {
        self.status = status
        self.description = description
    }
}

@main
struct JcodeMobileSwiftExample {
    static func main() async {
        do {
            let session = Session(try Arguments(Array(CommandLine.arguments.dropFirst())))
            try await session.run()
            exit(0)
        } catch {
            if error.status == .usage { complain(Arguments.usage) }
            complain("jcode-mobile-swift-example: \(error.description)")
            exit(error.status.rawValue)
        }
    }
}

/// The session, step by step, on the main actor (where the view model lives).
@MainActor
final class Session {
    let arguments: Arguments
    let model: ViewModel
    let adapter: PosixAdapter
    /// What the session waits for now (named when time runs out).
    private var waitingFor = "starting"
    private var lastScreen = ""
    /// What observation said changed since the screen was last drawn.
    private let changed = Changes()

    init(_ arguments: Arguments) {
        self.arguments = arguments
        adapter = PosixAdapter(timeoutMS: min(10_000, arguments.timeoutSeconds * 500)) { say($0) }
        var options = AppOptions()
        options.deviceID = "swift-example-device"
        model = ViewModel(options: options, adapter: adapter)
    }

    func run() async throws(ExampleFailure) {
        let watchdog = startWatchdog()
        defer {
            watchdog.cancel()
            adapter.shutDown()
        }
        say("jcode mobile Swift example: pairing with \(arguments.host):\(arguments.port)")
        printScreenIfChanged()

        model.receive(.lifecycle(.foreground))  // as iOS reports at launch
        model.send(.setHost(arguments.host))
        model.send(.setPort(String(arguments.port)))
        model.send(.setPairCode(arguments.code))
        model.send(.setDeviceName(arguments.deviceName))
        model.send(.setWorkingDir(arguments.workingDir, serverID: nil))
        printScreenIfChanged()
        model.send(.tapNode(id: "pair.submit"))

        try await wait(for: "pairing") { state in
            if !state.servers.list.isEmpty { return .done }
            if !state.pairing.isSubmitting, let problem = self.errorBanner() { return .failed("could not pair: \(problem)") }
            return .waiting
        }
        let server = model.state.servers.list[0]
        say("* paired with \(server.name) at \(server.address.serverID)")

        try await wait(for: "the connection") { state in
            if state.connection.phase == .connected && state.chat.turn.historyLoaded { return .done }
            if state.connection.phase == .failed {
                return .failed("could not connect: \(self.errorBanner() ?? "the connection failed")")
            }
            return .waiting
        }
        say("* connected, session \(model.state.session.id ?? "?")")

        let before = model.state.chat.transcript.entries.count
        model.send(.setDraft(arguments.message))
        model.send(.tapNode(id: "chat.send"))
        try await wait(for: "the reply") { state in
            let transcript = state.chat.transcript.entries
            let finished = !state.chat.turn.isProcessing && state.chat.outbox.isEmpty && transcript.count > before + 1
                && !transcript[before...].contains { $0.isStreaming || $0.isQueued }
            if finished { return .done }
            if state.connection.phase == .failed { return .failed("the connection failed during the turn") }
            if !state.chat.turn.isProcessing, let problem = self.errorBanner() {
                return .failed("the turn ended with an error: \(problem)")
            }
            return .waiting
        }
        let reply = model.state.chat.transcript.entries.last { $0.role == .assistant }?.text ?? ""
        say("* reply finished: \(reply)")

        model.send(.disconnect)  // the adapter sends the close frame (websocket_close)
        printScreenIfChanged()
        say("* disconnected (\(model.state.connection.phase.rawValue))")
    }

    // MARK: - Waiting on the view model

    enum Progress {
        case waiting, done
        case failed(String)
    }

    /// Waits until `check` says done (checked now and after every change of
    /// the view model: the way a view is told), printing the screen as it changes.
    private func wait(for what: String, _ check: (AppState) -> Progress) async throws(ExampleFailure) {
        waitingFor = what
        while true {
            printScreenIfChanged()
            switch check(model.state) {
            case .done: return
            case .failed(let reason): throw ExampleFailure(.failed, reason)
            case .waiting: await nextChange()
            }
        }
    }

    /// Returns after the view model's next change. Observation calls
    /// `onChange` as the change begins; by the time this task runs again the
    /// whole call into the core (and any others queued meanwhile) is done.
    private func nextChange() async {
        let model = self.model
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            withObservationTracking { _ = model.revision } onChange: { continuation.resume() }
        }
    }

    /// Ends the process when the whole session takes longer than `--timeout`.
    private func startWatchdog() -> Task<Void, Never> {
        let seconds = arguments.timeoutSeconds
        return Task { [weak self] in
            try? await Task.sleep(for: .seconds(seconds))
            guard !Task.isCancelled, let self else { return }
            let state = model.state
            complain(
                "jcode-mobile-swift-example: timed out after \(seconds) s waiting for \(waitingFor) "
                    + "(screen \(state.navigation.screen.rawValue), connection \(state.connection.phase.rawValue))")
            exit(ExampleFailure.Status.timedOut.rawValue)
        }
    }

    // MARK: - Output

    /// Draws what changed since the last drawing: the whole screen (when its
    /// text changed) if the chrome or the list of rows changed, else each row
    /// whose content changed, alone.
    private func printScreenIfChanged() {
        let (screenChanged, rows) = changed.take()
        if screenChanged {
            let screen = ScreenText.render(model.tree)
            if screen != lastScreen {
                lastScreen = screen
                say("--- revision \(model.revision) · \(model.screen.rawValue) ---")
                say(screen)
            }
            observe()
            return
        }
        for row in model.messages where rows.contains(row.id) {
            say("--- revision \(model.revision) · row \(row.id) ---")
            for line in ScreenText.lines(row.content) { say("  " + line) }  // as indented on the screen
            observe(row)
        }
        lastScreen = ScreenText.render(model.tree)
    }

    /// Asks to be told when the chrome, the list of rows or any row changes.
    private func observe() {
        let model = self.model
        let changed = self.changed
        withObservationTracking {
            _ = model.chrome
            _ = model.messages
        } onChange: {
            changed.screen()
        }
        for row in model.messages { observe(row) }
    }

    /// Asks to be told when what `row` shows changes (not when it only moved).
    private func observe(_ row: MessageRow) {
        let changed = self.changed
        let id = row.id
        withObservationTracking { _ = row.content } onChange: { changed.row(id) }
    }

    /// The error banner's words, when it shows.
    private func errorBanner() -> String? {
        guard let banner = model.tree.find("banner.error"), banner.visible else { return nil }
        return banner.label
    }
}

/// What observation reported since the last `take` (its callbacks are @Sendable).
final class Changes: Sendable {
    private let state = Mutex<(screen: Bool, rows: Set<String>)>((true, []))

    func screen() { state.withLock { $0.screen = true } }
    func row(_ id: String) { state.withLock { _ = $0.rows.insert(id) } }

    func take() -> (screen: Bool, rows: Set<String>) {
        state.withLock { current in
            defer { current = (false, []) }
            return current
        }
    }
}

/// A line on stdout, written at once (unbuffered, also into a pipe).
func say(_ line: String) {
    writeAll(1, line + "\n")
}

/// A line on stderr.
func complain(_ line: String) {
    writeAll(2, line + "\n")
}

private func writeAll(_ fd: Int32, _ text: String) {
    var text = text
    text.withUTF8 { bytes in
        var offset = 0
        while offset < bytes.count {
            let n = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n <= 0 { return }
            offset += n
        }
    }
}

#else
/// The example's sockets are written against Glibc; elsewhere it only says so
/// (an Apple host would use URLSession: docs/SWIFT.md).
@main
struct JcodeMobileSwiftExample {
    static func main() {
        print("jcode-mobile-swift-example runs on Linux (its sockets are written against Glibc)")
    }
}
#endif

extension String {
    /// The text without its leading and trailing spaces, tabs and line ends.
    var trimmingSpacesForArguments: Substring {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = firstIndex(where: { !blank($0) }), let last = lastIndex(where: { !blank($0) }) else { return "" }
        return self[first...last]
    }
}
