#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import JcodeMobileCore

// The event stream's C functions (include/jcode_mobile.h, "EVENT STREAM").
// Plumbing only: the hub is in EventHub.swift.

@_cdecl("jcode_mobile_subscribe")
public func jcode_mobile_subscribe(
    _ app: UnsafeMutableRawPointer?, _ optionsJSON: UnsafePointer<CChar>?
) -> UnsafeMutableRawPointer? {
    subscribed(EventHub.subscribe(app, optionsJSON, callback: nil, userData: nil, wantsCallback: false))
}

@_cdecl("jcode_mobile_subscribe_callback")
public func jcode_mobile_subscribe_callback(
    _ app: UnsafeMutableRawPointer?, _ optionsJSON: UnsafePointer<CChar>?,
    _ callback: (@convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?) -> Void)?,
    _ userData: UnsafeMutableRawPointer?
) -> UnsafeMutableRawPointer? {
    subscribed(EventHub.subscribe(app, optionsJSON, callback: callback, userData: userData, wantsCallback: true))
}

/// The handle, or NULL with the thread's last error set.
private func subscribed(_ result: Result<UInt, CoreError>) -> UnsafeMutableRawPointer? {
    switch result {
    case .success(let handle):
        LastError.set(nil)
        return UnsafeMutableRawPointer(bitPattern: handle)
    case .failure(let error):
        LastError.set(JcodeMobileApp.errorBytes(error))
        return nil
    }
}

@_cdecl("jcode_mobile_next_event")
public func jcode_mobile_next_event(
    _ subscription: UnsafeMutableRawPointer?, _ timeoutMs: Int32
) -> UnsafeMutablePointer<CChar>? {
    switch EventHub.lookup(subscription) {
    case .success(let s): return s.next(timeoutMs: timeoutMs)
    case .failure(let error): return ErrorBoundary.cString(error)
    }
}

@_cdecl("jcode_mobile_unsubscribe")
public func jcode_mobile_unsubscribe(_ subscription: UnsafeMutableRawPointer?) {
    EventHub.unsubscribe(subscription)
}
