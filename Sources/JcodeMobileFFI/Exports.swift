#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import JcodeMobileCore

// The C ABI of include/jcode_mobile.h. Plumbing only: every function checks
// its arguments, finds the app, and hands bytes to JcodeMobileApp.

/// The library version, "MAJOR.MINOR.PATCH", NUL-terminated in static storage.
let versionLiteral: StaticString = "0.7.0\u{0}"

@_cdecl("jcode_mobile_version")
public func jcode_mobile_version() -> UnsafePointer<CChar>? {
    UnsafeRawPointer(versionLiteral.utf8Start).assumingMemoryBound(to: CChar.self)
}

@_cdecl("jcode_mobile_abi_version")
public func jcode_mobile_abi_version() -> UInt32 { 1 }

@_cdecl("jcode_mobile_app_new")
public func jcode_mobile_app_new(_ optionsJSON: UnsafePointer<CChar>?) -> UnsafeMutableRawPointer? {
    let bytes: UnsafeBufferPointer<UInt8>?
    if let optionsJSON {
        switch ErrorBoundary.bytes(of: optionsJSON, argument: "initial_scenario_json") {
        case .success(let b): bytes = b
        case .failure(let error):
            LastError.set(JcodeMobileApp.errorBytes(error))
            return nil
        }
    } else {
        bytes = nil
    }
    let options: AppOptions
    do throws(CoreError) {
        options = try AppOptions.parse(bytes)
    } catch {
        LastError.set(JcodeMobileApp.errorBytes(error))
        return nil
    }
    let slot = AppSlot(options: options)
    guard let handle = handles.withLock({ $0.insert(slot) }) else {
        LastError.set(JcodeMobileApp.errorBytes(
            CoreError(.outOfMemory, "no address space left for a new handle")))
        return nil
    }
    LastError.set(nil)
    return UnsafeMutableRawPointer(bitPattern: handle)
}

@_cdecl("jcode_mobile_last_error")
public func jcode_mobile_last_error() -> UnsafeMutablePointer<CChar>? {
    LastError.copy()
}

@_cdecl("jcode_mobile_app_free")
public func jcode_mobile_app_free(_ app: UnsafeMutableRawPointer?) {
    guard let app else { return }
    let key = UInt(bitPattern: app)
    // The slot is released outside the table lock; a call still running on
    // another thread keeps its own reference and finishes normally.
    let removed = handles.withLock { $0.remove(key) }
    // Its subscriptions are closed: waiters wake, callbacks get closed {app_freed}.
    if let removed { EventHub.appFreed(removed) }
}

@_cdecl("jcode_mobile_dispatch")
public func jcode_mobile_dispatch(
    _ app: UnsafeMutableRawPointer?, _ actionJSON: UnsafePointer<CChar>?
) -> UnsafeMutablePointer<CChar>? {
    input(app, actionJSON, argument: "action_json", kind: .action) { $0.dispatchDocument($1) }
}

@_cdecl("jcode_mobile_platform_event")
public func jcode_mobile_platform_event(
    _ app: UnsafeMutableRawPointer?, _ eventJSON: UnsafePointer<CChar>?
) -> UnsafeMutablePointer<CChar>? {
    input(app, eventJSON, argument: "event_json", kind: .event) { $0.platformEventDocument($1) }
}

private func input(
    _ app: UnsafeMutableRawPointer?, _ json: UnsafePointer<CChar>?, argument: String, kind: LogEntry.Kind,
    _ body: (JcodeMobileApp, UnsafeBufferPointer<UInt8>) -> JSONWriter
) -> UnsafeMutablePointer<CChar>? {
    // Like ErrorBoundary.withApp, and hands the call's events to the app's subscriptions.
    EventHub.input(app) { instance in
        switch ErrorBoundary.bytes(of: json, argument: argument) {
        case .success(let bytes): return body(instance, bytes)
        case .failure(let error): return instance.reject(error, kind: kind)
        }
    }
}

@_cdecl("jcode_mobile_state")
public func jcode_mobile_state(_ app: UnsafeMutableRawPointer?) -> UnsafeMutablePointer<CChar>? {
    ErrorBoundary.withApp(app) { $0.stateDocument() }
}

@_cdecl("jcode_mobile_tree")
public func jcode_mobile_tree(_ app: UnsafeMutableRawPointer?) -> UnsafeMutablePointer<CChar>? {
    ErrorBoundary.withApp(app) { $0.treeDocument() }
}

@_cdecl("jcode_mobile_logs")
public func jcode_mobile_logs(_ app: UnsafeMutableRawPointer?, _ limit: UInt32) -> UnsafeMutablePointer<CChar>? {
    ErrorBoundary.withApp(app) { $0.logsDocument(limit: Int(limit)) }
}

@_cdecl("jcode_mobile_changes")
public func jcode_mobile_changes(_ app: UnsafeMutableRawPointer?, _ sinceRevision: UInt64) -> UnsafeMutablePointer<CChar>? {
    ErrorBoundary.withApp(app) { $0.changesDocument(since: sinceRevision) }
}

@_cdecl("jcode_mobile_tree_changes")
public func jcode_mobile_tree_changes(_ app: UnsafeMutableRawPointer?, _ sinceRevision: UInt64) -> UnsafeMutablePointer<CChar>? {
    ErrorBoundary.withApp(app) { $0.treeChangesDocument(since: sinceRevision) }
}

@_cdecl("jcode_mobile_snapshot")
public func jcode_mobile_snapshot(_ app: UnsafeMutableRawPointer?) -> UnsafeMutablePointer<CChar>? {
    ErrorBoundary.withApp(app) { $0.snapshotDocument() }
}

@_cdecl("jcode_mobile_hit_test")
public func jcode_mobile_hit_test(_ app: UnsafeMutableRawPointer?, _ x: Double, _ y: Double) -> UnsafeMutablePointer<CChar>? {
    ErrorBoundary.withApp(app) { $0.hitTestDocument(x: x, y: y) }
}

@_cdecl("jcode_mobile_screenshot_svg")
public func jcode_mobile_screenshot_svg(_ app: UnsafeMutableRawPointer?) -> UnsafeMutablePointer<CChar>? {
    ErrorBoundary.withApp(app) { $0.screenshotDocument() }
}

@_cdecl("jcode_mobile_string_free")
public func jcode_mobile_string_free(_ ptr: UnsafeMutablePointer<CChar>?) {
    free(ptr)
}
