/// Writes compact JSON into a byte buffer.
///
/// Keys are written in the order the caller writes them, so every encoder in
/// the core produces byte-identical output for equal values. Strings are
/// escaped per RFC 8259 (quote, backslash, control characters); non-ASCII
/// text is written as UTF-8. Non-finite doubles, which JSON cannot express,
/// are written as `null`.
///
///     var w = JSONWriter()
///     w.objectStart(); w.key("ok"); w.bool(true); w.objectEnd()
///     w.bytes   // {"ok":true}
public struct JSONWriter {
    public var bytes: [UInt8]
    // Whether the next value in the current container needs a comma first.
    private var needsComma = false

    public init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    // MARK: - Structure

    @inline(__always) private mutating func separator() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
    }

    public mutating func objectStart() {
        separator()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
    }
    public mutating func objectEnd() {
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }
    public mutating func arrayStart() {
        separator()
        bytes.append(UInt8(ascii: "["))
        needsComma = false
    }
    public mutating func arrayEnd() {
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }
    /// Writes `"key":` for a key computed at run time (escaped as needed);
    /// the value written next belongs to it.
    public mutating func key(string key: String) {
        separator()
        writeEscaped(key)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }
    /// Writes `"key":` for a key known to need no escaping.
    public mutating func key(_ key: StaticString) {
        separator()
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    // MARK: - Scalars

    public mutating func null() {
        separator()
        bytes.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])
        needsComma = true
    }
    public mutating func bool(_ b: Bool) {
        separator()
        if b { bytes.append(contentsOf: [0x74, 0x72, 0x75, 0x65]) } else { bytes.append(contentsOf: [0x66, 0x61, 0x6C, 0x73, 0x65]) }
        needsComma = true
    }
    public mutating func int(_ value: Int64) {
        separator()
        writeInteger(value)
        needsComma = true
    }
    public mutating func int(_ value: Int) { int(Int64(value)) }

    public mutating func double(_ value: Double) {
        separator()
        if value.isFinite {
            if value == value.rounded(.towardZero), abs(value) < 1e15 {
                // Integral doubles keep a fractional part so they read back as numbers of the same kind.
                writeInteger(Int64(value))
                bytes.append(contentsOf: [0x2E, 0x30])
            } else {
                bytes.append(contentsOf: value.description.utf8)
            }
        } else {
            bytes.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])
        }
        needsComma = true
    }
    public mutating func string(_ s: String) {
        separator()
        writeEscaped(s)
        needsComma = true
    }
    public mutating func string(_ s: String?) {
        if let s { string(s) } else { null() }
    }
    public mutating func int(_ value: Int?) {
        if let value { int(Int64(value)) } else { null() }
    }
    /// Writes bytes that are already a complete JSON value.
    public mutating func raw(_ json: [UInt8]) {
        separator()
        bytes.append(contentsOf: json)
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
            for element in a { value(element) }
            arrayEnd()
        case .object(let o):
            objectStart()
            for entry in o.entries {
                key(string: entry.key)
                value(entry.value)
            }
            objectEnd()
        }
    }

    // MARK: - Internals

    private mutating func writeInteger(_ value: Int64) {
        if value >= 0 && value < 10 {
            bytes.append(UInt8(truncatingIfNeeded: value) &+ 0x30)
            return
        }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes of scratch, enough for 20 digits
        var magnitude = value.magnitude
        let count = withUnsafeMutableBytes(of: &digits) { buffer -> Int in
            var i = 24
            repeat {
                i -= 1
                buffer[i] = UInt8(truncatingIfNeeded: magnitude % 10) &+ 0x30
                magnitude /= 10
            } while magnitude != 0
            return i
        }
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        withUnsafeBytes(of: &digits) { buffer in
            bytes.append(contentsOf: buffer[count..<24])
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    private mutating func writeEscaped(_ s: String) {
        var s = s
        s.withUTF8 { utf8 in
            bytes.append(UInt8(ascii: "\""))
            guard let base = utf8.baseAddress else {
                bytes.append(UInt8(ascii: "\""))
                return
            }
            let n = utf8.count
            let raw = UnsafeRawPointer(base)
            var runStart = 0
            var i = 0
            while i < n {
                // Skip eight bytes at a time while none needs escaping.
                while i &+ 8 <= n {
                    let w = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                    let quote = w ^ 0x2222_2222_2222_2222
                    let slash = w ^ 0x5C5C_5C5C_5C5C_5C5C
                    let hit = (((quote &- 0x0101_0101_0101_0101) & ~quote)
                        | ((slash &- 0x0101_0101_0101_0101) & ~slash)
                        | ((w &- 0x2020_2020_2020_2020) & ~w)) & 0x8080_8080_8080_8080
                    if hit != 0 {
                        i &+= hit.trailingZeroBitCount &>> 3  // the first byte to escape
                        break
                    }
                    i &+= 8
                }
                guard i < n else { break }
                let c = base[i]
                if c >= 0x20 && c != 0x22 && c != 0x5C {
                    i &+= 1
                    continue
                }
                bytes.append(contentsOf: UnsafeBufferPointer(start: base + runStart, count: i &- runStart))
                bytes.append(UInt8(ascii: "\\"))
                switch c {
                case 0x22: bytes.append(0x22)
                case 0x5C: bytes.append(0x5C)
                case 0x0A: bytes.append(UInt8(ascii: "n"))
                case 0x0D: bytes.append(UInt8(ascii: "r"))
                case 0x09: bytes.append(UInt8(ascii: "t"))
                case 0x08: bytes.append(UInt8(ascii: "b"))
                case 0x0C: bytes.append(UInt8(ascii: "f"))
                default:
                    bytes.append(contentsOf: [UInt8(ascii: "u"), 0x30, 0x30])
                    bytes.append(JSONWriter.hexDigits[Int(c >> 4)])
                    bytes.append(JSONWriter.hexDigits[Int(c & 0xF)])
                }
                i &+= 1
                runStart = i
            }
            bytes.append(contentsOf: UnsafeBufferPointer(start: base + runStart, count: n &- runStart))
            bytes.append(UInt8(ascii: "\""))
        }
    }
}

extension JSONValue {
    /// The compact JSON text of this value.
    public var jsonBytes: [UInt8] {
        var w = JSONWriter()
        w.value(self)
        return w.bytes
    }
    public var jsonString: String { String(decoding: jsonBytes, as: UTF8.self) }
}
