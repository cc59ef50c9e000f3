// libFuzzer targets for the core, compiled with the FFI sources into one
// executable; JCODE_FUZZ_TARGET names the target a run fuzzes (see the
// Makefile's `fuzz`):
//
//   json            the JSON codec: parse, write, parse again
//   app_new         jcode_mobile_app_new with any options text
//   dispatch        jcode_mobile_dispatch on a connected chat
//   platform_event  jcode_mobile_platform_event: as given, as a raw
//                   websocket frame (multi-line), as a parsed server event
//   session         a sequence of calls on one handle, with a mirror kept
//                   from the change feed checked against the state
//   server          a hostile server: bursts of up to 3 000 events per
//                   frame, with colliding or fresh ids, in any order; the
//                   lists stay within their caps, a frame buzzes at most
//                   once per style, and the mirror equals the state
//   markdown        the markdown parser: depth within the cap, and the
//                   input streamed in chunks (sized by its first byte)
//                   equals a whole parse after every step; streamed in
//                   deltas of 1 to 8 bytes (sized by its last) through the
//                   markdown cache, its nodes equal a whole parse's
//   tooldiff        tool-card summaries and diffs of any tool call input
//
// Every answer must be one JSON object with "ok"; an error must carry a
// known code. A violated invariant traps, which libFuzzer reports as a crash.

import JcodeMobileCore
import JcodeMobileJSON
import JcodeMobileMarkdown
import JcodeMobileToolCards

#if canImport(Glibc)
import Glibc
#endif

/// Takes a returned string: checks it is one JSON object with "ok", frees it, returns it parsed.
@discardableResult
func take(_ pointer: UnsafeMutablePointer<CChar>?, _ what: String) -> JSONObject {
    guard let pointer else { fatalError("\(what): NULL") }
    defer { jcode_mobile_string_free(pointer) }
    let length = strlen(pointer)
    let value: JSONValue
    do throws(CoreError) {
        value = try JSONParser.parse(
            UnsafeBufferPointer(start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self), count: length),
            limits: JSONLimits(maxBytes: Int.max, maxDepth: 4096))
    } catch {
        fatalError("\(what): the library returned invalid JSON: \(error.message)")
    }
    guard case .object(let object) = value, case .bool(let ok)? = object["ok"] else {
        fatalError("\(what): not an object with \"ok\"")
    }
    if !ok {
        guard let code = object["error"]?["code"]?.stringValue, ErrorCode(rawValue: code) != nil,
              object["error"]?["message"]?.stringValue != nil
        else { fatalError("\(what): malformed error object") }
    }
    return object
}

/// `bytes` as a NUL-terminated C string (cut at an embedded NUL, as C would read it).
func withCString<R>(_ bytes: UnsafeBufferPointer<UInt8>, _ body: (UnsafePointer<CChar>) -> R) -> R {
    var copy = [CChar](repeating: 0, count: bytes.count + 1)
    for (i, b) in bytes.enumerated() { copy[i] = CChar(bitPattern: b) }
    return copy.withUnsafeBufferPointer { body($0.baseAddress!) }
}

func withCString<R>(_ text: String, _ body: (UnsafePointer<CChar>) -> R) -> R {
    text.withCString(body)
}

/// A connected chat whose socket is open (the fixture most inputs can act on).
func connectedChat() -> UnsafeMutableRawPointer {
    guard let app = jcode_mobile_app_new(#"{"scenario":"connected_chat","log_capacity":16}"#) else {
        fatalError("app_new(connected_chat) failed")
    }
    return app
}

/// Checks every read-only call answers well.
func inspect(_ app: UnsafeMutableRawPointer) {
    take(jcode_mobile_state(app), "state")
    take(jcode_mobile_tree(app), "tree")
    take(jcode_mobile_logs(app, 0), "logs")
    take(jcode_mobile_changes(app, 0), "changes")
}

func fuzzJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeBufferPointer(start: data, count: size)
    guard let value = try? JSONParser.parse(input) else { return 0 }
    // What the writer writes parses back to the same value, and writing that
    // again gives the same bytes.
    let written = value.jsonBytes
    let again: JSONValue
    do throws(CoreError) {
        again = try written.withUnsafeBufferPointer { b throws(CoreError) in
            try JSONParser.parse(b, limits: JSONLimits(maxBytes: Int.max, maxDepth: 4096))
        }
    } catch {
        fatalError("written JSON does not parse: \(error.message)")
    }
    if case .double(let d) = value, !d.isFinite { return 0 }  // written as null by design
    if !containsNonFinite(value) {
        precondition(again == value, "round trip changed the value")
    }
    precondition(again.jsonBytes == written, "writing is not stable")
    return 0
}

func containsNonFinite(_ v: JSONValue) -> Bool {
    switch v {
    case .double(let d): return !d.isFinite
    case .array(let a): return a.contains(where: containsNonFinite)
    case .object(let o): return o.entries.contains { containsNonFinite($0.value) }
    default: return false
    }
}

func fuzzAppNew(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    withCString(UnsafeBufferPointer(start: data, count: size)) { options in
        if let app = jcode_mobile_app_new(options) {
            precondition(take(jcode_mobile_last_error(), "last_error")["ok"] == true)
            inspect(app)
            jcode_mobile_app_free(app)
        } else {
            precondition(take(jcode_mobile_last_error(), "last_error")["ok"] == false, "NULL without an error")
        }
    }
    return 0
}

func fuzzDispatch(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let app = connectedChat()
    defer { jcode_mobile_app_free(app) }
    let revision = take(jcode_mobile_state(app), "state")["state"]?["revision"]
    let report = withCString(UnsafeBufferPointer(start: data, count: size)) { take(jcode_mobile_dispatch(app, $0), "dispatch") }
    if report["ok"] == false {
        precondition(take(jcode_mobile_state(app), "state")["state"]?["revision"] == revision, "a rejected action changed the state")
    }
    inspect(app)
    return 0
}

func fuzzPlatformEvent(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let app = connectedChat()
    defer { jcode_mobile_app_free(app) }
    _ = take(jcode_mobile_dispatch(app, #"{"type":"send_message","text":"go"}"#), "dispatch")
    let body = UnsafeBufferPointer(start: data + 1, count: size - 1)
    switch data[0] % 3 {
    case 0:
        // The input is the platform event.
        withCString(body) { _ = take(jcode_mobile_platform_event(app, $0), "platform_event") }
    case 1:
        // The input is a raw text frame from the gateway (several lines, any bytes).
        let line = JSONValue.string(String(decoding: body, as: UTF8.self)).jsonString
        withCString(#"{"type":"websocket_event","line":\#(line)}"#) {
            let report = take(jcode_mobile_platform_event(app, $0), "platform_event(line)")
            precondition(report["ok"] == true, "a frame of any content is never an error of the call")
        }
    default:
        // The input is one parsed server event.
        let event = String(decoding: body, as: UTF8.self)
        withCString(#"{"type":"websocket_event","event":\#(event)}"#) { _ = take(jcode_mobile_platform_event(app, $0), "platform_event(event)") }
    }
    inspect(app)
    return 0
}

/// A mirror of the state kept only from the change feed.
struct Mirror {
    var document: JSONValue
    var revision: Int64

    init(_ app: UnsafeMutableRawPointer) {
        document = take(jcode_mobile_state(app), "state")["state"] ?? .null
        revision = document["revision"]?.int64Value ?? 0
    }

    mutating func check(_ app: UnsafeMutableRawPointer) {
        let answer = take(jcode_mobile_changes(app, UInt64(revision)), "changes")
        if answer["resync"] == true {
            document = answer["state"] ?? .null
        } else {
            for record in answer["changes"]?.arrayValue ?? [] {
                let ops = (record["ops"]?.arrayValue ?? []).map(Mirror.op)
                precondition(JSONDiff.apply(ops, to: &document), "a change-feed operation does not apply")
                if case .object(var o) = document {
                    o["revision"] = record["revision"] ?? .null
                    document = .object(o)
                }
            }
        }
        revision = answer["revision"]?.int64Value ?? -1
        let state = take(jcode_mobile_state(app), "state")["state"] ?? .null
        precondition(document == state, "the mirror kept from the change feed differs from the state")
    }

    static func op(_ value: JSONValue) -> JSONPatchOp {
        let pathText = value["path"]?.stringValue ?? ""
        let components: [JSONPath.Component] = pathText.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map { part in
            var key = ""
            var escape = false
            for c in part {
                if escape { key.append(c == "1" ? "/" : "~"); escape = false } else if c == "~" { escape = true } else { key.append(c) }
            }
            if let i = Int(key), String(i) == key { return .index(i) }
            return .key(key)
        }
        let path = JSONPath(components)
        switch value["op"]?.stringValue {
        case "add": return .add(path: path, value: value["value"] ?? .null)
        case "remove": return .remove(path: path)
        case "replace": return .replace(path: path, value: value["value"] ?? .null)
        case "append": return .append(path: path, text: value["value"]?.stringValue ?? "")
        default: fatalError("unknown change-feed op")
        }
    }
}


/// Reads the input as steps: a byte choosing the call, a byte of length, then that many bytes.
func fuzzSession(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var app = connectedChat()
    defer { jcode_mobile_app_free(app) }
    var mirror = Mirror(app)
    var i = 0
    var steps = 0
    while i < size && steps < 64 {
        let op = data[i]
        let length = i + 1 < size ? Int(data[i + 1]) : 0
        let start = min(i + 2, size)
        let end = min(start + length, size)
        let body = UnsafeBufferPointer(start: data + start, count: end - start)
        let text = String(decoding: body, as: UTF8.self)
        i = end
        steps += 1
        switch op % 12 {
        case 0: withCString(body) { _ = take(jcode_mobile_dispatch(app, $0), "dispatch") }
        case 1: withCString(body) { _ = take(jcode_mobile_platform_event(app, $0), "platform_event") }
        case 2:
            let line = JSONValue.string(text).jsonString
            withCString(#"{"type":"websocket_event","line":\#(line)}"#) { _ = take(jcode_mobile_platform_event(app, $0), "frame") }
        case 3: withCString(#"{"type":"websocket_event","event":{"type":"text_delta","text":\#(JSONValue.string(text).jsonString)}}"#) {
            _ = take(jcode_mobile_platform_event(app, $0), "text_delta")
        }
        case 4: withCString(#"{"type":"send_message","text":\#(JSONValue.string(text).jsonString)}"#) { _ = take(jcode_mobile_dispatch(app, $0), "send") }
        case 5: withCString(#"{"type":"set_draft","value":\#(JSONValue.string(text).jsonString)}"#) { _ = take(jcode_mobile_dispatch(app, $0), "draft") }
        case 6: withCString(#"{"type":"tap_node","node_id":\#(JSONValue.string(text).jsonString)}"#) { _ = take(jcode_mobile_dispatch(app, $0), "tap") }
        case 7:
            let events = ["done", "interrupted", "message_end", "reasoning_done", "retry_rollback", "history"]
            let kind = events[Int(op / 12) % events.count]
            let event: String
            switch kind {
            case "retry_rollback": event = #"{"type":"retry_rollback","attempt":1,"max":3}"#
            case "history": event = #"{"type":"history","session_id":"s","messages":[{"role":"user","content":\#(JSONValue.string(text).jsonString)}]}"#
            default: event = #"{"type":"\#(kind)"}"#
            }
            withCString(#"{"type":"websocket_event","event":\#(event)}"#) { _ = take(jcode_mobile_platform_event(app, $0), kind) }
        case 8:
            let tools = ["tool_start", "tool_exec", "tool_done"]
            let kind = tools[Int(op / 12) % tools.count]
            withCString(#"{"type":"websocket_event","event":{"type":"\#(kind)","id":\#(JSONValue.string(text).jsonString),"name":"bash","output":"x"}}"#) {
                _ = take(jcode_mobile_platform_event(app, $0), kind)
            }
        case 9: withCString(#"{"type":"queue_interrupt","text":\#(JSONValue.string(text).jsonString)}"#) { _ = take(jcode_mobile_dispatch(app, $0), "queue") }
        case 10:
            take(jcode_mobile_tree(app), "tree")
            take(jcode_mobile_logs(app, UInt32(length)), "logs")
            take(jcode_mobile_changes(app, UInt64(length)), "changes")
        default:
            // A fresh app: freeing twice is harmless and the old handle is dead.
            jcode_mobile_app_free(app)
            jcode_mobile_app_free(app)
            precondition(take(jcode_mobile_state(app), "state")["error"]?["code"] == "invalid_handle")
            app = connectedChat()
            mirror = Mirror(app)
        }
        mirror.check(app)
    }
    return 0
}

/// Reads the input as frames: a byte choosing the event, a byte for how many
/// (a burst of up to 3 000 in one frame), a byte seeding the ids (low values
/// collide with earlier ones, high ones are fresh), then up to 16 bytes of text.
func fuzzServer(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let app = connectedChat()
    defer { jcode_mobile_app_free(app) }
    var mirror = Mirror(app)
    var i = 0
    var frames = 0
    while i + 3 <= size && frames < 8 {
        let kind = Int(data[i]) % 16
        let count = Int(data[i + 1]) * Int(data[i + 1]) / 21 + 1  // 1 … 3 097, mostly small
        let seed = Int(data[i + 2])
        let end = min(i + 3 + 16, size)
        let text = JSONValue.string(String(decoding: UnsafeBufferPointer(start: data + i + 3, count: end - i - 3), as: UTF8.self))
            .jsonString
        i = end
        frames += 1
        var lines: [String] = []
        lines.reserveCapacity(min(count, 3000))
        for n in 0..<min(count, 3000) {
            let id = seed < 128 ? seed % 8 : seed * 4096 + n  // colliding or fresh
            switch kind {
            case 0: lines.append(#"{"type":"permission_request","request_id":"p\#(id)","action":"bash","detail":\#(text)}"#)
            case 1: lines.append(#"{"type":"stdin_request","request_id":"s\#(id)","prompt":\#(text)}"#)
            case 2: lines.append(#"{"type":"session_renamed","session_id":"ses-\#(id)","display_title":\#(text)}"#)
            case 3: lines.append(#"{"type":"text_delta","text":\#(text)}"#)
            case 4: lines.append(#"{"type":"tool_start","id":"c\#(id)","name":"bash"}"#)
            case 5: lines.append(#"{"type":"tool_done","id":"c\#(id)","name":"bash","output":\#(text)}"#)
            case 6: lines.append(#"{"type":"done","id":\#(id)}"#)
            case 7: lines.append(#"{"type":"ack","id":\#(id)}"#)
            case 8: lines.append(#"{"type":"error","id":\#(id),"message":\#(text)}"#)
            case 9: lines.append(#"{"type":"soft_interrupt_injected","content":\#(text)}"#)
            case 10: lines.append(#"{"type":"history","id":\#(id),"session_id":"ses-\#(id)","messages":[{"role":"user","content":\#(text)}]}"#)
            case 11: lines.append(#"{"type":"interrupted"}"#)
            case 12: lines.append(#"{"type":"tokens","input":\#(id),"output":\#(n)}"#)
            case 13: lines.append(#"{"type":"reasoning_delta","text":\#(text)}"#)
            case 14: lines.append(#"{"type":"tool_input","delta":\#(text)}"#)
            default: lines.append(#"{"type":"session_close_requested","reason":\#(text)}"#)
            }
        }
        if kind == 15 {
            // Now and then the person acts between frames.
            withCString(#"{"type":"send_message","text":\#(text)}"#) { _ = take(jcode_mobile_dispatch(app, $0), "send") }
        }
        let frame = #"{"type":"websocket_event","line":\#(JSONValue.string(lines.joined(separator: "\n")).jsonString)}"#
        let report = withCString(frame) { take(jcode_mobile_platform_event(app, $0), "frame") }
        let haptics = (report["effects"]?.arrayValue ?? []).filter { $0["type"] == "haptic" }
        precondition(haptics.count <= 3, "one frame buzzed \(haptics.count) times")
        mirror.check(app)
        let state = take(jcode_mobile_state(app), "state")["state"] ?? .null
        precondition((state["permission_requests"]?.arrayValue?.count ?? 0) <= 64, "permission requests past their cap")
        precondition((state["stdin_requests"]?.arrayValue?.count ?? 0) <= 64, "stdin requests past their cap")
        precondition((state["session"]?["all_sessions"]?.arrayValue?.count ?? 0) <= 512, "sessions past their cap")
        precondition((state["notices"]?.arrayValue?.count ?? 0) <= 50, "notices past their cap")
    }
    inspect(app)
    return 0
}

func fuzzMarkdown(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let whole = Markdown.parse(text)
    for block in whole {
        precondition(block.depth <= Markdown.maxDepth, "a block deeper than the cap")
    }
    let bytes = Array(text.utf8)
    let chunk = Int(bytes.first ?? 0) % 64 + 1
    var stream = MarkdownStream()
    var previous: [MarkdownBlock] = []
    var previousStable = 0
    var end = 0
    while end < bytes.count {
        end = min(bytes.count, end + chunk)
        while end < bytes.count && bytes[end] & 0xC0 == 0x80 { end += 1 }  // whole characters
        let prefix = String(decoding: bytes[0..<end], as: UTF8.self)
        let first = stream.update(prefix, appendedOnly: true)
        precondition(stream.blocks == Markdown.parse(prefix), "streamed blocks differ from a whole parse")
        precondition(first <= previous.count && stream.blocks.prefix(first) == previous.prefix(first),
                     "a block before the returned index changed")
        precondition(stream.stableCount >= previousStable && stream.stableCount <= stream.blocks.count,
                     "stableCount went back")
        precondition(stream.blocks.prefix(previousStable) == previous.prefix(previousStable), "a stable block changed")
        previous = stream.blocks
        previousStable = stream.stableCount
    }
    precondition(stream.blocks == whole, "the streamed end differs from the whole parse")
    // The nodes a streamed reply shows, in deltas of 1 to 8 bytes (sized by
    // the last byte): the cache's (appended as they are, a line read again,
    // or parsed) equal a whole parse's after every delta.
    let cache = MarkdownCache()
    let delta = Int(bytes.last ?? 0) % 8 + 1
    var sent: Int?
    end = 0
    while end < bytes.count {
        end = min(bytes.count, end + delta)
        while end < bytes.count && bytes[end] & 0xC0 == 0x80 { end += 1 }
        let prefix = String(decoding: bytes[0..<end], as: UTF8.self)
        precondition(cache.nodes(of: prefix, prefix: "f", appendedTo: sent) == MarkdownCache.wholeParseNodes(of: prefix, prefix: "f"),
                     "the cache's nodes differ from a whole parse's")
        sent = end
    }
    // Folded past a budget of 1 to 32 nodes (sized by the first byte): the
    // cache shows the nodes a whole parse shows within it, after every delta.
    let folded = MarkdownCache()
    let budget = Int(bytes.first ?? 0) % 32 + 1
    sent = nil
    end = 0
    while end < bytes.count {
        end = min(bytes.count, end + delta)
        while end < bytes.count && bytes[end] & 0xC0 == 0x80 { end += 1 }
        let prefix = String(decoding: bytes[0..<end], as: UTF8.self)
        precondition(
            folded.nodes(of: prefix, prefix: "f", appendedTo: sent, budget: budget)
                == MarkdownCache.wholeParseNodes(of: prefix, prefix: "f", budget: budget),
            "the cache's folded nodes differ from a whole parse's")
        sent = end
    }
    return 0
}

// Tool cards: the input's first line is a tool name, the rest its input
// JSON (complete, streaming or broken). The summary stays one short line;
// the diffs keep within the line limit and, when nothing was left out,
// count exactly the lines they hold.
func fuzzToolDiff(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let name = String(text.prefix { $0 != "\n" && $0 != "\r\n" })
    let input = String(text.dropFirst(name.count).drop { $0 == "\n" || $0 == "\r\n" })
    let summary = ToolSummary.summary(name: name, input: input)
    precondition(summary.count <= ToolSummary.maxLength, "summary of \(summary.count) characters")
    precondition(!summary.unicodeScalars.contains { $0 == "\n" || $0 == "\r" || $0 == "\t" }, "summary breaks the line")
    guard let files = ToolDiff.diffs(name: name, input: input) else { return 0 }
    var kept = 0
    for file in files {
        let lines = file.hunks.flatMap(\.lines)
        precondition(file.hunks.allSatisfy { !$0.lines.isEmpty }, "an empty hunk")
        kept += lines.count
        if file.omittedLines == 0 {
            precondition(lines.filter { $0.kind == .added }.count == file.added, "added count")
            precondition(lines.filter { $0.kind == .removed }.count == file.removed, "removed count")
        }
    }
    precondition(kept <= ToolDiff.lineLimit, "\(kept) lines kept")
    return 0
}

/// The targets, by the name JCODE_FUZZ_TARGET gives.
enum FuzzTarget: String, CaseIterable {
    case json, app_new, dispatch, platform_event, session, server, markdown, tooldiff

    /// The one this run fuzzes: read once, at the first input.
    static let chosen: FuzzTarget = {
        let names = allCases.map(\.rawValue).joined(separator: ", ")
        guard let name = getenv("JCODE_FUZZ_TARGET").map({ String(cString: $0) }) else {
            fatalError("JCODE_FUZZ_TARGET is not set (one of: \(names))")
        }
        guard let target = FuzzTarget(rawValue: name) else {
            fatalError("JCODE_FUZZ_TARGET=\(name) is no target (one of: \(names))")
        }
        return target
    }()

    func run(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
        switch self {
        case .json: return fuzzJSON(data, size)
        case .app_new: return fuzzAppNew(data, size)
        case .dispatch: return fuzzDispatch(data, size)
        case .platform_event: return fuzzPlatformEvent(data, size)
        case .session: return fuzzSession(data, size)
        case .server: return fuzzServer(data, size)
        case .markdown: return fuzzMarkdown(data, size)
        case .tooldiff: return fuzzToolDiff(data, size)
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    FuzzTarget.chosen.run(data, size)
}
