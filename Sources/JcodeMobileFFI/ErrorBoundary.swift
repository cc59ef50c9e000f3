#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import JcodeMobileCore

/// Turns C arguments into checked Swift values and Swift results into C
/// strings. Every failure becomes a JSON error object; nothing here traps on
/// bad input.
enum ErrorBoundary {
    /// The largest input read from a C string. One byte more than the JSON
    /// limit is scanned, so an oversized input is detected without reading
    /// all of it.
    static let maxInputBytes = JSONLimits.defaultMaxBytes

    /// The bytes of a NUL-terminated C string, or `null_argument` / `too_large`.
    static func bytes(
        of pointer: UnsafePointer<CChar>?, argument: String
    ) -> Result<UnsafeBufferPointer<UInt8>, CoreError> {
        guard let pointer else {
            return .failure(CoreError(.nullArgument, "\(argument) is NULL", field: argument))
        }
        let length = strnlen(pointer, maxInputBytes + 1)
        if length > maxInputBytes {
            return .failure(CoreError(.tooLarge, "\(argument) is larger than \(maxInputBytes) bytes", field: argument))
        }
        let raw = UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self)
        return .success(UnsafeBufferPointer(start: raw, count: length))
    }

    /// A malloc'd, NUL-terminated copy of `bytes`, owned by the caller
    /// (released with `jcode_mobile_string_free`). NULL only if memory is exhausted.
    static func cString(_ bytes: [UInt8]) -> UnsafeMutablePointer<CChar>? {
        guard let out = malloc(bytes.count + 1)?.assumingMemoryBound(to: UInt8.self) else { return nil }
        bytes.withUnsafeBufferPointer { buffer in
            if let base = buffer.baseAddress { out.initialize(from: base, count: buffer.count) }
        }
        out[bytes.count] = 0
        return UnsafeMutableRawPointer(out).assumingMemoryBound(to: CChar.self)
    }

    static func cString(_ error: CoreError) -> UnsafeMutablePointer<CChar>? {
        answer(JcodeMobileApp.errorDocument(error))
    }

    /// What a call answers when memory ran out, in static storage: copying
    /// it needs one small allocation and no Swift code that could trap.
    static let outOfMemory: StaticString =
        #"{"ok":false,"error":{"code":"out_of_memory","message":"not enough memory for the answer; the app is unchanged by this call unless it was a dispatch or platform_event whose input applied (see the logs and the state)"}}"#

    /// The document as the caller's C string; when it could not be written
    /// for want of memory, the out_of_memory error, or NULL when not even
    /// that can be allocated (as the header says).
    static func answer(_ document: consuming JSONWriter) -> UnsafeMutablePointer<CChar>? {
        if let text = document.cString() { return text }
        return copyOutOfMemory()
    }

    /// A malloc'd copy of `outOfMemory`, or NULL.
    static func copyOutOfMemory() -> UnsafeMutablePointer<CChar>? {
        let n = outOfMemory.utf8CodeUnitCount
        guard let out = malloc(n + 1)?.assumingMemoryBound(to: UInt8.self) else { return nil }
        out.initialize(from: outOfMemory.utf8Start, count: n)
        out[n] = 0
        return UnsafeMutableRawPointer(out).assumingMemoryBound(to: CChar.self)
    }

    static func invalidHandle(_ handle: UnsafeMutableRawPointer?) -> CoreError {
        handle == nil
            ? CoreError(.nullArgument, "app is NULL", field: "app")
            : CoreError(.invalidHandle, "app is not a live handle (freed, never issued, or not a handle)", field: "app")
    }

    /// Runs `body` on the app behind `handle` with its lock held; the
    /// document it returns becomes the C string, without another copy.
    static func withApp(
        _ handle: UnsafeMutableRawPointer?, _ body: (JcodeMobileApp) -> JSONWriter
    ) -> UnsafeMutablePointer<CChar>? {
        guard let handle else { return cString(invalidHandle(nil)) }
        let key = UInt(bitPattern: handle)
        guard let slot = handles.withLock({ $0.slot(key) }) else { return cString(invalidHandle(handle)) }
        return slot.app.withLock { app in answer(body(app)) }
    }
}

/// The per-thread last error of `jcode_mobile_app_new`.
enum LastError {
    /// A pthread key whose destructor frees the thread's message when the thread exits.
    static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { LastError.release($0) }
        return key
    }()

    /// Stored instead of a copy of the error when the copy cannot be
    /// allocated: the static out_of_memory answer (never freed).
    static var outOfMemoryMarker: UnsafeMutableRawPointer { UnsafeMutableRawPointer(mutating: UnsafeRawPointer(ErrorBoundary.outOfMemory.utf8Start)) }

    static func set(_ bytes: [UInt8]?) {
        release(pthread_getspecific(key))
        guard let bytes else {
            pthread_setspecific(key, nil)
            return
        }
        pthread_setspecific(key, ErrorBoundary.cString(bytes).map { UnsafeMutableRawPointer($0) } ?? outOfMemoryMarker)
    }

    /// Frees a stored message (the static marker is not freed).
    static func release(_ stored: UnsafeMutableRawPointer?) {
        if let stored, stored != outOfMemoryMarker { free(stored) }
    }

    /// A caller-owned copy of the message, or `{"ok":true}` when the last
    /// `app_new` on this thread succeeded or none was made; NULL when not
    /// even that can be allocated.
    static func copy() -> UnsafeMutablePointer<CChar>? {
        guard let stored = pthread_getspecific(key) else { return strdup("{\"ok\":true}") }
        if stored == outOfMemoryMarker { return ErrorBoundary.copyOutOfMemory() }
        return strdup(stored.assumingMemoryBound(to: CChar.self))
    }
}
