#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import JcodeMobileCore

// jcode_mobile_schema: the runtime schema of include/jcode_mobile.h.

/// `{"ok":true,"schema":{…}}`: the document is built and serialised once
/// (the first call), and every call returns a fresh copy owned by the
/// caller; when that copy cannot be allocated, the out_of_memory answer,
/// or NULL when not even that can be.
@_cdecl("jcode_mobile_schema")
public func jcode_mobile_schema() -> UnsafeMutablePointer<CChar>? {
    ErrorBoundary.cString(RuntimeSchema.answerBytes) ?? ErrorBoundary.copyOutOfMemory()
}
