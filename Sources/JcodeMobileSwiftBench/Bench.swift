// jcode-mobile-swift-bench: what a streamed reply costs a Swift host through
// the ViewModel (`make bench` runs it, built -c release), at 10, 1 000,
// 10 000 and 100 000 transcript entries.
//
// For each size it loads a history of that many entries (~96-character
// texts, as harness/c/bench.c does), sends a message, and times text
// deltas fed through `ViewModel.receive`: the core's transition, the tree
// changes it reports and the view model applying them to its rows. Each
// round times a batch of deltas, then ends the reply (`message_end`, not
// timed) so the reply being streamed stays a few hundred bytes long, as a
// real one does between screen updates. Two more lines put the figure in
// context: the core alone (`platformEvent`, no tree), and what the view
// model did before it applied changes (rebuilding the tree with
// `app.tree()` and keeping a copy of the state after every delta).
//
// Medians of many rounds, because these machines are shared and noisy:
// compare ratios, not absolute numbers from different runs.

import JcodeMobileSwift

#if canImport(Glibc)
import Glibc
#endif

@main
struct JcodeMobileSwiftBench {
    static let sizes = [10, 1_000, 10_000, 100_000]

    @MainActor
    static func main() throws {
        let arguments = CommandLine.arguments.dropFirst()
        let quick = arguments.contains("--quick")
        // Only the view model's line (for a profiler: `perf record … --viewmodel-only`).
        viewModelOnly = arguments.contains("--viewmodel-only")
        let sizes = quick ? Array(sizes.prefix(3)) : sizes
        let rounds = 101
        let batch = 100
        print("jcode mobile core \(LibraryVersion.string), Swift ViewModel (release build): per streamed text_delta,")
        print("medians of \(rounds) rounds of \(batch) deltas\n")
        // Warm up: the first view model pays for the runtime's one-time set-up.
        _ = try run(entries: 10, rounds: 5, batch: 20)
        var results: [Result] = []
        for size in sizes { results.append(try run(entries: size, rounds: rounds, batch: batch)) }

        func row(_ name: String, _ value: (Result) -> Double) {
            var line = name.padding(to: 44)
            for r in results { line += format(value(r)).leftPadding(to: 13) }
            print(line)
        }
        var header = "entries".padding(to: 44)
        for size in sizes { header += String(size).leftPadding(to: 13) }
        print(header)
        row("ViewModel.receive(text_delta)", \.viewModel)
        row("  the same, CPU time of the thread", \.viewModelCPU)
        row("the core alone (platformEvent, no tree)", \.core)
        row("old ViewModel: + tree() + state kept", \.rebuild)
        var rows = "rows in the view model".padding(to: 44)
        for r in results { rows += String(r.rows).leftPadding(to: 13) }
        print(rows)
        print("")
        if let small = results.first(where: { $0.entries == 1_000 }), let large = results.last, large.entries > small.entries {
            print("ViewModel per delta, \(large.entries) vs \(small.entries) entries: \(ratio(large.viewModel / small.viewModel))x"
                + " (CPU time: \(ratio(large.viewModelCPU / small.viewModelCPU))x)")
        }
    }

    struct Result {
        var entries: Int
        var viewModel: Double
        var viewModelCPU: Double
        var core: Double
        var rebuild: Double
        var rows: Int
    }

    nonisolated(unsafe) static var viewModelOnly = false

    @MainActor
    static func run(entries: Int, rounds: Int, batch: Int) throws -> Result {
        let delta = PlatformEvent.webSocket(.event(effectID: nil, items: [.event(.textDelta("hello "))]))
        let end = PlatformEvent.webSocket(.event(effectID: nil, items: [.event(.messageEnd(stopReason: nil))]))

        // Through the view model.
        let model = ViewModel(app: try app(entries: entries))
        model.send(.sendMessage(text: "go"))
        let (viewModel, viewModelCPU) = timings(rounds: rounds, batch: batch, between: { model.receive(end) }) { model.receive(delta) }
        guard model.messages.last?.node.value == String(repeating: "hello ", count: batch) else {
            fatalError("the streamed row does not hold the streamed text")
        }

        if viewModelOnly {
            return Result(entries: entries, viewModel: viewModel, viewModelCPU: viewModelCPU, core: 0, rebuild: 0, rows: model.messages.count)
        }

        // The core alone.
        let core = try app(entries: entries)
        core.dispatch(.sendMessage(text: "go"))
        let coreNs = median(rounds: rounds, batch: batch, between: { core.platformEvent(end) }) { core.platformEvent(delta) }

        // The view model before: the whole tree rebuilt and the state kept, per delta.
        let old = try app(entries: entries)
        old.dispatch(.sendMessage(text: "go"))
        var kept = old.state
        var tree = old.tree()
        let small = entries >= 100_000 ? 5 : entries >= 10_000 ? 20 : batch
        let rebuild = median(rounds: entries >= 100_000 ? 11 : 31, batch: small, between: { old.platformEvent(end) }) {
            old.platformEvent(delta)
            kept = old.state
            tree = old.tree()
        }
        _ = (kept.revision, tree.id)

        return Result(
            entries: entries, viewModel: viewModel, viewModelCPU: viewModelCPU, core: coreNs, rebuild: rebuild, rows: model.messages.count)
    }

    /// A connected chat whose history holds `entries` entries.
    static func app(entries: Int) throws -> JcodeMobileApp {
        var options = AppOptions()
        options.scenario = .connectedEmptyChat
        options.logCapacity = 64
        let app = JcodeMobileApp(options: options)
        var history = #"{"type":"websocket_event","event":{"type":"history","id":2,"session_id":"bench","messages":["#
        history.reserveCapacity(entries * 140)
        for i in 0..<entries {
            let length = 96 - 8 + (i * 7919) % 17
            var text = ""
            text.reserveCapacity(length)
            for k in 0..<length { text.unicodeScalars.append(Unicode.Scalar(UInt8(97 + (i + k) % 26))) }
            history += #"\#(i > 0 ? "," : ""){"role":"\#(i % 2 == 1 ? "assistant" : "user")","content":"\#(text)"}"#
        }
        history += "]}}"
        let report = String(decoding: app.platformEvent(json: history), as: UTF8.self)
        guard report.hasPrefix(#"{"ok":true"#), app.state.chat.transcript.count == entries else {
            fatalError("the history of \(entries) entries was not taken: \(report.prefix(200))")
        }
        return app
    }

    /// The median over `rounds` of the time per call of `body` (a batch of
    /// `batch` calls per round), with `between` run untimed after each round.
    @MainActor
    static func median(rounds: Int, batch: Int, between: () -> Void, _ body: () -> Void) -> Double {
        timings(rounds: rounds, batch: batch, between: between, body).wall
    }

    /// The same, as wall time and as the CPU time of this thread (which does
    /// not count the turns other processes take on a shared machine).
    @MainActor
    static func timings(rounds: Int, batch: Int, between: () -> Void, _ body: () -> Void) -> (wall: Double, cpu: Double) {
        var wall: [Double] = []
        var cpu: [Double] = []
        wall.reserveCapacity(rounds)
        cpu.reserveCapacity(rounds)
        for _ in 0..<rounds {
            let (wall0, cpu0) = (now(), threadCPUTime())
            for _ in 0..<batch { body() }
            wall.append((now() - wall0) / Double(batch))
            cpu.append((threadCPUTime() - cpu0) / Double(batch))
            between()
        }
        wall.sort()
        cpu.sort()
        return (wall[rounds / 2], cpu[rounds / 2])
    }

    /// Nanoseconds on the monotonic clock.
    static func now() -> Double {
        let t = ContinuousClock.now - start
        return Double(t.components.seconds) * 1e9 + Double(t.components.attoseconds) / 1e9
    }

    static let start = ContinuousClock.now

    /// Nanoseconds of CPU time this thread used (0 where the platform has no such clock here).
    static func threadCPUTime() -> Double {
        #if canImport(Glibc)
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) * 1e9 + Double(ts.tv_nsec)
        #else
        return 0
        #endif
    }

    static func format(_ ns: Double) -> String {
        ns < 1_000_000 ? "\(fixed(ns / 1000)) µs" : "\(fixed(ns / 1e6)) ms"
    }

    /// Two decimals.
    static func fixed(_ x: Double) -> String {
        let hundredths = Int((x * 100).rounded())
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }

    static func ratio(_ x: Double) -> String { fixed(x) }
}

extension String {
    func padding(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }

    func leftPadding(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
