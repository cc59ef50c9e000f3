/// Writes compact JSON into a byte buffer it owns.
///
/// Keys are written in the order the caller writes them, so every encoder in
/// the core produces byte-identical output for equal values. Strings are
/// escaped per RFC 8259 (quote, backslash, control characters); non-ASCII
/// text is written as UTF-8. Non-finite doubles, which JSON cannot express,
/// are written as `null`.
///
/// The buffer is plain `malloc` memory, so a finished document can be handed
/// to C as its return value without another copy (`cString()`). The writer
/// is noncopyable: there is exactly one owner of the buffer.
///
/// Running out of memory is a state, not a crash: when the buffer cannot
/// grow, the writer releases it, ignores everything written after, and says
/// so (`failed`); `cString()` then gives nil, which the ABI answers with
/// `out_of_memory`. `reset()` makes a failed writer usable again.
///
///     var w = JSONWriter()
///     w.objectStart(); w.key("ok"); w.bool(true); w.objectEnd()
///     w.bytes   // {"ok":true}
public struct JSONWriter: ~Copyable {
    /// nil only when there is no buffer (allocation failed).
    @usableFromInline var base: UnsafeMutablePointer<UInt8>?
    @usableFromInline var capacity = 0
    /// Bytes written so far.
    @inlinable public var count: Int { written }
    @usableFromInline var written = 0
    // Whether the next value in the current container needs a comma first.
    @usableFromInline var needsComma = false
    /// The buffer could not grow: the document is lost and nothing more is written.
    public private(set) var failed = false
    /// The largest buffer this writer may have; growing beyond fails like
    /// an exhausted allocator (tests).
    private let limit: Int
    /// The buffer is the caller's (`init(startingIn:)`): never freed here.
    private var borrowed = false

    public init(capacity: Int = 256) { self.init(capacity: capacity, limit: Int.max) }

    /// A writer whose buffer may not grow beyond `limit` bytes, as if memory
    /// ran out there (tests).
    init(capacity: Int = 256, limit: Int) {
        self.limit = limit
        allocate(max(capacity, 16))
    }

    /// A writer holding a copy of `other`'s document (failed if `other` is,
    /// or if the copy cannot be allocated).
    public init(copying other: borrowing JSONWriter) {
        limit = Int.max
        guard !other.failed else {
            failed = true
            return
        }
        allocate(max(other.written &+ 1, 16))
        if let base, let source = other.base, other.written > 0 {
            base.initialize(from: source, count: other.written)
            written = other.written
        }
    }

    /// A writer that starts in the caller's `buffer` (stack memory from
    /// `withUnsafeTemporaryAllocation`, say) and moves to `malloc` memory
    /// only if the document outgrows it: a scratch document of a hot path
    /// costs no allocation. Valid only while `buffer` is; read it with
    /// `bytes` or `withBytes`.
    public init(startingIn buffer: UnsafeMutableRawBufferPointer) {
        limit = Int.max
        guard let start = buffer.baseAddress, buffer.count >= 16 else {
            allocate(256)
            return
        }
        base = start.assumingMemoryBound(to: UInt8.self)
        capacity = buffer.count
        borrowed = true
    }

    deinit { if !borrowed { RawMemory.release(base.map { UnsafeMutableRawPointer($0) }) } }

    /// Frees the buffer if it is the writer's own.
    private mutating func releaseBuffer() {
        if !borrowed { RawMemory.release(base.map { UnsafeMutableRawPointer($0) }) }
        borrowed = false
        base = nil
        capacity = 0
    }

    /// A fresh buffer of `bytes`; failed when it cannot be had.
    private mutating func allocate(_ bytes: Int) {
        guard bytes <= limit, let p = RawMemory.allocate(bytes) else {
            failed = true
            return
        }
        base = p.assumingMemoryBound(to: UInt8.self)
        capacity = bytes
    }

    /// Empties the writer for a new document; a buffer grown beyond
    /// `keepingUpTo` bytes is released. A failed writer gets a new buffer.
    public mutating func reset(keepingUpTo limit: Int = 1 << 20) {
        written = 0
        needsComma = false
        if failed || capacity > limit {
            releaseBuffer()
            failed = false
            allocate(Swift.min(256, self.limit))
        }
    }

    // MARK: - The document

    /// A copy of the bytes written (empty when failed).
    public var bytes: [UInt8] { Array(UnsafeBufferPointer(start: base, count: written)) }

    /// The document as text (empty when failed).
    public var text: String { String(decoding: UnsafeBufferPointer(start: base, count: written), as: UTF8.self) }

    /// Calls `body` with the bytes written (valid only inside `body`).
    public func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        body(UnsafeBufferPointer(start: base, count: written))
    }

    /// Hands the buffer over as a NUL-terminated C string, owned by the
    /// caller and released with `free` (what `jcode_mobile_string_free` does);
    /// nil when the document could not be written for want of memory.
    public consuming func cString() -> UnsafeMutablePointer<CChar>? {
        if borrowed {
            // Not the writer's to hand over: a copy.
            let copy = JSONWriter(copying: self)
            discard self
            return copy.cString()
        }
        guard reserve(1), let base else {
            RawMemory.release(self.base.map { UnsafeMutableRawPointer($0) })  // nil: a failed growth released it
            discard self
            return nil
        }
        base[written] = 0
        let result = UnsafeMutableRawPointer(base).assumingMemoryBound(to: CChar.self)
        discard self
        return result
    }

    // MARK: - Raw bytes

    /// Whether `n` more bytes fit (growing the buffer if needed); false once failed.
    @inlinable @inline(__always) mutating func reserve(_ n: Int) -> Bool {
        if capacity &- written >= n { return true }
        return grow(n)
    }

    @usableFromInline mutating func grow(_ n: Int) -> Bool {
        guard !failed else { return false }
        let (needed, o1) = written.addingReportingOverflow(n)
        let (doubled, o2) = capacity.multipliedReportingOverflow(by: 2)
        let newCapacity = o2 ? needed : max(doubled, needed)
        let grown: UnsafeMutableRawPointer?
        if borrowed {
            // Leaving the caller's buffer: a buffer of its own, with what was written.
            grown = !o1 && newCapacity <= limit ? RawMemory.allocate(newCapacity) : nil
            if let grown, let base, written > 0 { grown.copyMemory(from: base, byteCount: written) }
        } else {
            grown = !o1 && newCapacity <= limit ? RawMemory.reallocate(base.map { UnsafeMutableRawPointer($0) }, newCapacity) : nil
        }
        guard let p = grown else {
            // Out of memory: let go of the buffer now, so what memory there
            // is serves the caller's next step (an error answer).
            releaseBuffer()
            written = 0
            failed = true
            return false
        }
        borrowed = false
        base = p.assumingMemoryBound(to: UInt8.self)
        capacity = newCapacity
        return true
    }

    @inlinable @inline(__always) mutating func put(_ byte: UInt8) {
        guard reserve(1) else { return }
        base.unsafelyUnwrapped[written] = byte
        written &+= 1
    }

    @inlinable @inline(__always) mutating func put(_ bytes: UnsafePointer<UInt8>, _ n: Int) {
        guard reserve(n) else { return }
        (base.unsafelyUnwrapped + written).initialize(from: bytes, count: n)
        written &+= n
    }

    @inlinable @inline(__always) mutating func put(_ literal: StaticString) {
        put(literal.utf8Start, literal.utf8CodeUnitCount)
    }

    // MARK: - Fragments

    /// Hand-assembled output for hot paths: `beginFragment()` writes the
    /// separator a value needs, `fragment` appends text verbatim (the caller
    /// guarantees it is valid JSON), `valueFollows()` lets the next value be
    /// written without a comma, and `endFragment()` closes the value.
    @inlinable public mutating func beginFragment() { separator() }
    @inlinable public mutating func fragment(_ text: StaticString) { put(text) }
    public mutating func fragment(integer: Int) { writeInteger(Int64(integer)) }
    /// Bytes that are valid JSON text where they go.
    @inlinable public mutating func fragment(bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { b in
            if let p = b.baseAddress { put(p, b.count) }
        }
    }
    @inlinable public mutating func valueFollows() { needsComma = false }
    @inlinable public mutating func endFragment() { needsComma = true }

    // MARK: - Structure

    @inlinable @inline(__always) mutating func separator() {
        if needsComma { put(UInt8(ascii: ",")) }
    }

    @inlinable public mutating func objectStart() {
        separator()
        put(UInt8(ascii: "{"))
        needsComma = false
    }
    @inlinable public mutating func objectEnd() {
        put(UInt8(ascii: "}"))
        needsComma = true
    }
    @inlinable public mutating func arrayStart() {
        separator()
        put(UInt8(ascii: "["))
        needsComma = false
    }
    @inlinable public mutating func arrayEnd() {
        put(UInt8(ascii: "]"))
        needsComma = true
    }
    /// Writes `"key":` for a key computed at run time (escaped as needed);
    /// the value written next belongs to it.
    public mutating func key(string key: String) {
        separator()
        writeEscaped(key)
        put(UInt8(ascii: ":"))
        needsComma = false
    }
    /// Writes `"key":` for a key known to need no escaping.
    @inlinable public mutating func key(_ key: StaticString) {
        let n = key.utf8CodeUnitCount
        guard reserve(n &+ 4), let base else { return }
        if needsComma {
            base[written] = UInt8(ascii: ",")
            written &+= 1
        }
        base[written] = UInt8(ascii: "\"")
        (base + (written &+ 1)).initialize(from: key.utf8Start, count: n)
        base[written &+ 1 &+ n] = UInt8(ascii: "\"")
        base[written &+ 2 &+ n] = UInt8(ascii: ":")
        written &+= n &+ 3
        needsComma = false
    }

    // MARK: - Scalars

    public mutating func null() {
        separator()
        put("null")
        needsComma = true
    }
    public mutating func bool(_ b: Bool) {
        separator()
        if b { put("true") } else { put("false") }
        needsComma = true
    }
    public mutating func int(_ value: Int64) {
        separator()
        writeInteger(value)
        needsComma = true
    }
    public mutating func int(_ value: Int) { int(Int64(value)) }
    /// An unsigned integer, written exactly (18446744073709551615 too).
    public mutating func uint(_ value: UInt64) {
        separator()
        writeDigits(value, negative: false)
        needsComma = true
    }

    public mutating func double(_ value: Double) {
        separator()
        if value.isFinite {
            if value == value.rounded(.towardZero), abs(value) < 1e15 {
                // Integral doubles keep a fractional part so they read back as numbers of the same kind.
                writeInteger(Int64(value))
                put(".0")
            } else {
                var text = value.description
                text.withUTF8 { put($0.baseAddress!, $0.count) }
            }
        } else {
            put("null")
        }
        needsComma = true
    }
    public mutating func string(_ s: String) {
        separator()
        writeEscaped(s)
        needsComma = true
    }
    /// Writes a string known to need no escaping.
    @inlinable public mutating func staticString(_ s: StaticString) {
        separator()
        put(UInt8(ascii: "\""))
        put(s)
        put(UInt8(ascii: "\""))
        needsComma = true
    }
    public mutating func string(_ s: String?) {
        if let s { string(s) } else { null() }
    }
    public mutating func int(_ value: Int?) {
        if let value { int(Int64(value)) } else { null() }
    }
    /// Writes bytes that are already a complete JSON value.
    @inlinable public mutating func raw(_ json: [UInt8]) {
        separator()
        json.withUnsafeBufferPointer { b in
            if let p = b.baseAddress { put(p, b.count) }
        }
        needsComma = true
    }

    /// Writes any `JSONValue`. Recursion depth is the value's nesting depth,
    /// which the parser bounds for input and the core's own types bound for output.
    public mutating func value(_ v: JSONValue) {
        switch v {
        case .null: null()
        case .bool(let b): bool(b)
        case .int(let i): int(i)
        case .double(let d): double(d)
        case .string(let s): string(s)
        case .array(let a):
            arrayStart()
            // Read in place: an element is not copied (and retained) to be written.
            a.withUnsafeBufferPointer { elements in
                for i in elements.indices { value(elements[i]) }
            }
            arrayEnd()
        case .object(let o):
            objectStart()
            o.entries.withUnsafeBufferPointer { entries in
                for i in entries.indices {
                    key(string: entries[i].key)
                    value(entries[i].value)
                }
            }
            objectEnd()
        }
    }

    // MARK: - Internals

    private mutating func writeInteger(_ value: Int64) {
        if value >= 0 && value < 10 {
            put(UInt8(truncatingIfNeeded: value) &+ 0x30)
            return
        }
        writeDigits(value.magnitude, negative: value < 0)
    }

    private mutating func writeDigits(_ magnitude: UInt64, negative: Bool) {
        guard reserve(21), let base else { return }
        if negative {
            base[written] = UInt8(ascii: "-")
            written &+= 1
        }
        var magnitude = magnitude
        var digits = 1
        var bound: UInt64 = 10  // 10^digits while digits < 20 (UInt64.max has 20)
        while digits < 20 && magnitude >= bound {
            digits &+= 1
            if digits < 20 { bound &*= 10 }
        }
        // Two digits per step, from a table of "00"…"99".
        var i = written &+ digits
        let pairs = JSONWriter.digitPairs.utf8Start
        while magnitude >= 100 {
            let pair = Int(truncatingIfNeeded: magnitude % 100) &* 2
            magnitude /= 100
            i &-= 2
            base[i] = pairs[pair]
            base[i &+ 1] = pairs[pair &+ 1]
        }
        if magnitude >= 10 {
            let pair = Int(truncatingIfNeeded: magnitude) &* 2
            base[i &- 2] = pairs[pair]
            base[i &- 1] = pairs[pair &+ 1]
        } else {
            base[i &- 1] = UInt8(truncatingIfNeeded: magnitude) &+ 0x30
        }
        written &+= digits
    }

    private static let digitPairs: StaticString = """
        00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899
        """

    private static let hexDigits: StaticString = "0123456789abcdef"

    private mutating func writeEscaped(_ s: String) {
        put(UInt8(ascii: "\""))
        writeEscapedContent(s)
        put(UInt8(ascii: "\""))
    }

    /// Writes a JSON Pointer (RFC 6901) as a string, straight from its
    /// components: `"/transcript/4/text"`.
    public mutating func pointer(_ components: [JSONPath.Component]) {
        separator()
        put(UInt8(ascii: "\""))
        for component in components {
            put(UInt8(ascii: "/"))
            switch component {
            case .index(let i):
                writeInteger(Int64(i))
            case .key(let key):
                var key = key
                key.withUTF8 { bytes in
                    guard bytes.contains(where: { $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: "/") }) else {
                        writeEscapedContent(bytes)
                        return
                    }
                    var escaped = ""
                    for c in String(decoding: bytes, as: UTF8.self).unicodeScalars {
                        switch c {
                        case "~": escaped += "~0"
                        case "/": escaped += "~1"
                        default: escaped.unicodeScalars.append(c)
                        }
                    }
                    writeEscapedContent(escaped)
                }
            }
        }
        put(UInt8(ascii: "\""))
        needsComma = true
    }

    /// Writes the escaped content of a string, without quotes.
    private mutating func writeEscapedContent(_ s: String) {
        var s = s
        s.withUTF8 { writeEscapedContent($0) }
    }

    /// Writes the escaped content of UTF-8 text, without quotes.
    private mutating func writeEscapedContent(_ utf8: UnsafeBufferPointer<UInt8>) {
        guard let source = utf8.baseAddress, utf8.count > 0 else { return }
        let n = utf8.count
        _ = reserve(n)  // one growth for the common case; every put checks again
        let raw = UnsafeRawPointer(source)
        var runStart = 0
        var i = 0
        while i < n {
            // Skip eight bytes at a time while none needs escaping.
            i = StringScan.skipPlainWords(raw, from: i, end: n)
            guard i < n else { break }
            let c = source[i]
            if c >= 0x20 && c != 0x22 && c != 0x5C {
                i &+= 1
                continue
            }
            put(source + runStart, i &- runStart)
            switch c {
            case 0x22: put("\\\"")
            case 0x5C: put("\\\\")
            case 0x0A: put("\\n")
            case 0x0D: put("\\r")
            case 0x09: put("\\t")
            case 0x08: put("\\b")
            case 0x0C: put("\\f")
            default:
                put("\\u00")
                put(JSONWriter.hexDigits.utf8Start[Int(c >> 4)])
                put(JSONWriter.hexDigits.utf8Start[Int(c & 0xF)])
            }
            i &+= 1
            runStart = i
        }
        put(source + runStart, n &- runStart)
    }
}

extension JSONValue {
    /// The compact JSON text of this value.
    public var jsonBytes: [UInt8] {
        var w = JSONWriter()
        w.value(self)
        return w.bytes
    }
    public var jsonString: String {
        var w = JSONWriter()
        w.value(self)
        return w.text
    }
}
