/// Strict UTF-8 validation (RFC 3629): no overlong forms, no surrogates
/// (U+D800–U+DFFF), nothing above U+10FFFF, no truncated sequences.
public enum UTF8Validation {
    /// The byte offset of the first byte that does not start a valid UTF-8
    /// sequence, or nil when the whole buffer is valid.
    ///
    /// ASCII runs are checked eight bytes at a time, so text that is mostly
    /// ASCII (all jcode traffic) costs well under a nanosecond per byte.
    public static func firstInvalidOffset(_ buffer: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let base = buffer.baseAddress else { return nil }
        let n = buffer.count
        let raw = UnsafeRawPointer(base)
        var i = 0
        while i < n {
            while i &+ 16 <= n,
                  (raw.loadUnaligned(fromByteOffset: i, as: UInt64.self) | raw.loadUnaligned(fromByteOffset: i &+ 8, as: UInt64.self))
                    & 0x8080_8080_8080_8080 == 0 {
                i &+= 16
            }
            while i &+ 8 <= n, raw.loadUnaligned(fromByteOffset: i, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                i &+= 8
            }
            if i >= n { break }
            let c = base[i]
            if c < 0x80 {
                i &+= 1
                continue
            }
            @inline(__always) func isContinuation(_ at: Int) -> Bool {
                at < n && base[at] & 0xC0 == 0x80
            }
            if c < 0xC2 { return i }  // stray continuation byte or overlong 2-byte lead
            if c < 0xE0 {
                guard isContinuation(i &+ 1) else { return i }
                i &+= 2
            } else if c < 0xF0 {
                guard i &+ 1 < n else { return i }
                let c1 = base[i &+ 1]
                let lo: UInt8 = c == 0xE0 ? 0xA0 : 0x80  // E0: no overlongs
                let hi: UInt8 = c == 0xED ? 0x9F : 0xBF  // ED: no surrogates
                guard c1 >= lo, c1 <= hi, isContinuation(i &+ 2) else { return i }
                i &+= 3
            } else if c < 0xF5 {
                guard i &+ 1 < n else { return i }
                let c1 = base[i &+ 1]
                let lo: UInt8 = c == 0xF0 ? 0x90 : 0x80  // F0: no overlongs
                let hi: UInt8 = c == 0xF4 ? 0x8F : 0xBF  // F4: nothing above U+10FFFF
                guard c1 >= lo, c1 <= hi, isContinuation(i &+ 2), isContinuation(i &+ 3) else { return i }
                i &+= 4
            } else {
                return i
            }
        }
        return nil
    }
}
