/// A validated JSON document: a flat list of tokens over the input bytes,
/// in document order. A container's token is followed by its members (an
/// object's as key, value, key, value…), and `next` is the index just past
/// a value's whole subtree, so skipping a value is one step.
///
/// A tape points into the input buffer and is valid only while that buffer
/// is (inside `JSONParser.withTape`). Reading a value copies it out.
public struct JSONTape {
    public enum Kind: UInt8, Sendable, BitwiseCopyable {
        case object, array, string, number, trueValue, falseValue, null
    }

    public struct Token: Sendable, BitwiseCopyable {
        public var kind: Kind
        /// Strings: the content has escapes. Numbers: an exact integer fits the fast path.
        public var flag = false
        /// Byte range of a string's content (between the quotes) or of a scalar.
        public var start: UInt32
        public var end: UInt32
        /// The index just past this value's subtree.
        public var next: UInt32

        init(kind: Kind, start: Int, end: Int, next: Int) {
            self.kind = kind
            self.start = UInt32(truncatingIfNeeded: start)
            self.end = UInt32(truncatingIfNeeded: end)
            self.next = UInt32(truncatingIfNeeded: next)
        }

        @inlinable var startIndex: Int { Int(start) }
        @inlinable var endIndex: Int { Int(end) }
        @inlinable var nextIndex: Int {
            get { Int(next) }
            set { next = UInt32(truncatingIfNeeded: newValue) }
        }
    }

    @usableFromInline let tokens: UnsafeBufferPointer<Token>
    @usableFromInline let base: UnsafePointer<UInt8>

    init(tokens: UnsafeBufferPointer<Token>, base: UnsafePointer<UInt8>) {
        self.tokens = tokens
        self.base = base
    }

    @inlinable public func kind(at i: Int) -> Kind { tokens[i].kind }

    /// The JSON type name used in error messages ("string", "object", …).
    public func typeName(at i: Int) -> String {
        switch tokens[i].kind {
        case .object: return "object"
        case .array: return "array"
        case .string: return "string"
        case .number: return tokens[i].flag ? "integer" : "number"
        case .trueValue, .falseValue: return "boolean"
        case .null: return "null"
        }
    }

    // MARK: - Navigation

    /// The value of the last member named `name` of the object at `object`
    /// (the last wins, as in `JSONObject`), compared byte by byte.
    public func member(_ name: String, of object: Int) -> Int? {
        var name = name
        return name.withUTF8 { key -> Int? in
            var found: Int?
            var i = object &+ 1
            let end = tokens[object].nextIndex
            while i < end {
                let value = i &+ 1
                if keyEquals(i, key) { found = value }
                i = tokens[value].nextIndex
            }
            return found
        }
    }

    /// The keys of the object at `object`, in order (repeated keys as often as they appear).
    public func keys(of object: Int) -> [String] {
        var result: [String] = []
        var i = object &+ 1
        let end = tokens[object].nextIndex
        while i < end {
            result.append(string(at: i))
            i = tokens[i &+ 1].nextIndex
        }
        return result
    }

    /// The element tokens of the array at `array`.
    public func elements(of array: Int) -> [Int] {
        var result: [Int] = []
        var i = array &+ 1
        let end = tokens[array].nextIndex
        while i < end {
            result.append(i)
            i = tokens[i].nextIndex
        }
        return result
    }

    @_spi(Leaves) @inlinable public func keyEquals(_ i: Int, _ key: UnsafeBufferPointer<UInt8>) -> Bool {
        let token = tokens[i]
        if token.flag { return string(at: i).utf8.elementsEqual(key) }
        let count = token.endIndex &- token.startIndex
        guard count == key.count else { return false }
        guard let keyBase = key.baseAddress else { return count == 0 }
        return memcmpEqual(base + token.startIndex, keyBase, count)
    }

    /// Whether the string at `i` is exactly `bytes` (no String is made for unescaped content).
    public func stringEquals(_ i: Int, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool { keyEquals(i, bytes) }

    /// Whether the string at `i` is exactly `literal` (a name the core knows).
    @_spi(Leaves) @inlinable public func stringEquals(_ i: Int, _ literal: StaticString) -> Bool {
        keyEquals(i, UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// The values of the members named `a` and `b` of the object at
    /// `object` (the last of each name wins, as in `member`), in one pass.
    @_spi(Leaves) @inlinable public func members(_ a: StaticString, _ b: StaticString, of object: Int) -> (Int?, Int?) {
        var found: (Int?, Int?) = (nil, nil)
        var i = object &+ 1
        let end = tokens[object].nextIndex
        while i < end {
            let value = i &+ 1
            if stringEquals(i, a) { found.0 = value } else if stringEquals(i, b) { found.1 = value }
            i = tokens[value].nextIndex
        }
        return found
    }

    /// How many members the object at `object` has (a name written twice counts twice).
    @_spi(Leaves) @inlinable public func memberCount(of object: Int) -> Int {
        var count = 0
        var i = object &+ 1
        let end = tokens[object].nextIndex
        while i < end {
            count &+= 1
            i = tokens[i &+ 1].nextIndex
        }
        return count
    }

    /// Whether the string at `i` holds escapes.
    @_spi(Leaves) @inlinable public func isEscaped(_ i: Int) -> Bool { tokens[i].flag }

    /// The index just past the value at `i` (and its members).
    @_spi(Leaves) @inlinable public func next(after i: Int) -> Int { tokens[i].nextIndex }

    /// The raw content bytes of a string token (escapes not decoded).
    @_spi(Leaves) @inlinable public func rawBytes(at i: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: base + tokens[i].startIndex, count: tokens[i].endIndex &- tokens[i].startIndex)
    }

    // MARK: - Reading values

    /// The string at `i`, with escapes decoded.
    public func string(at i: Int) -> String {
        let token = tokens[i]
        let raw = UnsafeBufferPointer(start: base + token.startIndex, count: token.endIndex &- token.startIndex)
        guard token.flag else { return String(decoding: raw, as: UTF8.self) }
        return String(unsafeUninitializedCapacity: raw.count) { out in JSONTape.unescape(raw, into: out) }
    }

    /// The number at `i`: exact when it is an integer that fits in 64 bits.
    public func number(at i: Int) -> JSONValue {
        let token = tokens[i]
        if token.flag, let exact = exactInteger(token) { return .int(exact) }
        let text = String(decoding: UnsafeBufferPointer(start: base + token.startIndex, count: token.endIndex &- token.startIndex), as: UTF8.self)
        return .double(Double(text) ?? .nan)
    }

    /// The number at `i` as an exact 64-bit integer: nil when its value is
    /// not a whole number (`1.5`) or does not fit (`9223372036854775808`,
    /// `1e19`). Decided on the literal's digits, so nothing is rounded:
    /// `1000`, `1000.0`, `1e3` and `10000e-1` are all 1000.
    public func integer(at i: Int) -> Int64? {
        let token = tokens[i]
        guard token.kind == .number else { return nil }
        if token.flag, let exact = exactInteger(token) { return exact }
        guard case .exact(let value) = JSONTape.wholeNumber(rawBytes(at: i)) else { return nil }
        return value
    }

    /// What a number literal stands for, decided on its digits.
    public enum WholeNumber: Equatable, Sendable {
        /// A whole number that fits in 64 bits.
        case exact(Int64)
        /// A whole number beyond 64 bits, above (`negative` false) or below.
        case beyond(negative: Bool)
        /// Not a whole number (`1.5`).
        case fraction
    }

    /// What the number literal `text` stands for (nil when it is not a JSON number).
    public static func wholeNumber(_ text: String) -> WholeNumber? {
        var text = text
        return text.withUTF8 { bytes -> WholeNumber? in
            var workspace = JSONParser.Workspace()
            return try? JSONParser.withTape(bytes, workspace: &workspace) { (tape) throws(CoreError) -> WholeNumber? in
                tape.kind(at: 0) == .number ? JSONTape.wholeNumber(tape.rawBytes(at: 0)) : nil
            }
        }
    }

    /// The text of the scalar at `i` as it was written (a number's literal).
    public func literal(at i: Int) -> String {
        String(decoding: UnsafeBufferPointer(start: base + tokens[i].startIndex, count: tokens[i].endIndex &- tokens[i].startIndex), as: UTF8.self)
    }

    /// What a validated number literal stands for. Digits are compared,
    /// never converted through a double; the work is bounded by the
    /// literal's length whatever its exponent.
    static func wholeNumber(_ literal: UnsafeBufferPointer<UInt8>) -> WholeNumber {
        let n = literal.count
        var p = 0
        let negative = n > 0 && literal[0] == UInt8(ascii: "-")
        if negative { p = 1 }
        // The significant digits: integer part then fraction, without the point.
        let intStart = p
        while p < n && literal[p] &- 0x30 < 10 { p &+= 1 }
        let intEnd = p
        var fracStart = p
        var fracEnd = p
        if p < n && literal[p] == UInt8(ascii: ".") {
            p &+= 1
            fracStart = p
            while p < n && literal[p] &- 0x30 < 10 { p &+= 1 }
            fracEnd = p
        }
        // The exponent, saturated far beyond any length an input can have.
        var exponent = 0
        if p < n && (literal[p] == UInt8(ascii: "e") || literal[p] == UInt8(ascii: "E")) {
            p &+= 1
            var expNegative = false
            if p < n && (literal[p] == UInt8(ascii: "+") || literal[p] == UInt8(ascii: "-")) {
                expNegative = literal[p] == UInt8(ascii: "-")
                p &+= 1
            }
            while p < n {
                if exponent < 1_000_000_000_000 { exponent = exponent &* 10 &+ Int(literal[p] &- 0x30) }
                p &+= 1
            }
            if expNegative { exponent = -exponent }
        }
        // digit(k) for k in 0..<count walks the integer part then the fraction.
        let intCount = intEnd &- intStart
        let count = intCount &+ (fracEnd &- fracStart)
        func digit(_ k: Int) -> UInt8 {
            k < intCount ? literal[intStart &+ k] &- 0x30 : literal[fracStart &+ (k &- intCount)] &- 0x30
        }
        var first = 0
        while first < count && digit(first) == 0 { first &+= 1 }
        if first == count { return .exact(0) }  // 0, -0, 0.000e5
        var last = count
        while digit(last &- 1) == 0 { last &-= 1 }
        // value = digits[first..<last] × 10^scale
        let scale = exponent &- (fracEnd &- fracStart) &+ (count &- last)
        if scale < 0 { return .fraction }  // a fraction remains
        if last &- first &+ scale > 19 { return .beyond(negative: negative) }  // 20 digits or more
        // Accumulate negatively so Int64.min is representable.
        var v: Int64 = 0
        for k in first..<last {
            let (m, o1) = v.multipliedReportingOverflow(by: 10)
            let (s, o2) = m.subtractingReportingOverflow(Int64(digit(k)))
            if o1 || o2 { return .beyond(negative: negative) }
            v = s
        }
        for _ in 0..<scale {
            let (m, o) = v.multipliedReportingOverflow(by: 10)
            if o { return .beyond(negative: negative) }
            v = m
        }
        if negative { return .exact(v) }
        return v == Int64.min ? .beyond(negative: false) : .exact(-v)
    }

    private func exactInteger(_ token: Token) -> Int64? {
        var p = token.startIndex
        let negative = base[p] == UInt8(ascii: "-")
        if negative { p &+= 1 }
        // Accumulate negatively so Int64.min is representable.
        var v: Int64 = 0
        while p < token.endIndex {
            let (m, o1) = v.multipliedReportingOverflow(by: 10)
            let (s, o2) = m.subtractingReportingOverflow(Int64(base[p] &- 0x30))
            if o1 || o2 { return nil }
            v = s
            p &+= 1
        }
        if negative { return v }
        return v == Int64.min ? nil : -v
    }

    /// The whole value at `i` as a `JSONValue`. Recursion is bounded by the
    /// tokenizer's depth limit.
    public func value(at i: Int) -> JSONValue {
        switch tokens[i].kind {
        case .null: return .null
        case .trueValue: return .bool(true)
        case .falseValue: return .bool(false)
        case .number: return number(at: i)
        case .string: return .string(string(at: i))
        case .array:
            var elements: [JSONValue] = []
            var j = i &+ 1
            let end = tokens[i].nextIndex
            while j < end {
                elements.append(value(at: j))
                j = tokens[j].nextIndex
            }
            return .array(elements)
        case .object:
            var object = JSONObject()
            var j = i &+ 1
            let end = tokens[i].nextIndex
            while j < end {
                object.append(string(at: j), value(at: j &+ 1))
                j = tokens[j &+ 1].nextIndex
            }
            return .object(object)
        }
    }

    // MARK: - Escapes

    static func hexValue(_ c: UInt8) -> UInt32? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(c &- 0x30)
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt32(c &- 0x57)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return UInt32(c &- 0x37)
        default: return nil
        }
    }

    static func hex4(_ p: UnsafePointer<UInt8>) -> UInt32? {
        var v: UInt32 = 0
        for k in 0..<4 {
            guard let d = hexValue(p[k]) else { return nil }
            v = v << 4 | d
        }
        return v
    }

    /// Decodes validated escaped content into `out`, which holds at least
    /// `raw.count` bytes (the result is never longer: every escape is at
    /// least as long as what it stands for); returns the length. Bytes of
    /// `out` past the result may be overwritten.
    package static func unescape(_ raw: UnsafeBufferPointer<UInt8>, into out: UnsafeMutableBufferPointer<UInt8>) -> Int {
        guard let rb = raw.baseAddress, let ob = out.baseAddress else { return 0 }
        precondition(out.count >= raw.count, "unescape needs room for the input")
        var r = 0
        var o = 0
        let n = raw.count
        func put(_ byte: UInt8) {
            out[o] = byte
            o &+= 1
        }
        while r < n {
            // Eight bytes at a time up to the next backslash, copied as words
            // (o never passes r, so a word written at o ends within `out`).
            while r &+ 8 <= n {
                let w = UnsafeRawPointer(rb + r).loadUnaligned(as: UInt64.self)
                UnsafeMutableRawPointer(ob + o).storeBytes(of: w, as: UInt64.self)
                let slash = UInt64(littleEndian: w) ^ 0x5C5C_5C5C_5C5C_5C5C
                let hit = (slash &- 0x0101_0101_0101_0101) & ~slash & 0x8080_8080_8080_8080
                if hit != 0 {
                    let k = hit.trailingZeroBitCount &>> 3
                    r &+= k
                    o &+= k
                    break
                }
                r &+= 8
                o &+= 8
            }
            guard r < n else { break }
            let c = raw[r]
            guard c == UInt8(ascii: "\\") else {
                put(c)
                r &+= 1
                continue
            }
            let e = raw[r &+ 1]
            r &+= 2
            switch e {
            case UInt8(ascii: "b"): put(0x08)
            case UInt8(ascii: "f"): put(0x0C)
            case UInt8(ascii: "n"): put(0x0A)
            case UInt8(ascii: "r"): put(0x0D)
            case UInt8(ascii: "t"): put(0x09)
            case UInt8(ascii: "u"):
                var scalar = hex4(rb + r) ?? 0xFFFD
                r &+= 4
                if scalar >= 0xD800 && scalar <= 0xDBFF, let low = hex4(rb + (r &+ 2)) {
                    scalar = 0x10000 &+ ((scalar &- 0xD800) << 10) &+ (low &- 0xDC00)
                    r &+= 6
                }
                switch scalar {
                case 0..<0x80:
                    put(UInt8(scalar))
                case 0x80..<0x800:
                    put(UInt8(0xC0 | scalar >> 6))
                    put(UInt8(0x80 | scalar & 0x3F))
                case 0x800..<0x10000:
                    put(UInt8(0xE0 | scalar >> 12))
                    put(UInt8(0x80 | scalar >> 6 & 0x3F))
                    put(UInt8(0x80 | scalar & 0x3F))
                default:
                    put(UInt8(0xF0 | scalar >> 18))
                    put(UInt8(0x80 | scalar >> 12 & 0x3F))
                    put(UInt8(0x80 | scalar >> 6 & 0x3F))
                    put(UInt8(0x80 | scalar & 0x3F))
                }
            default: put(e)  // '"', '\\', '/'
            }
        }
        return o
    }
}

/// Byte equality of two ranges of `count` bytes.
@_spi(Leaves) @inlinable @inline(__always)
public func memcmpEqual(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ count: Int) -> Bool {
    var i = 0
    while i &+ 8 <= count {
        if UnsafeRawPointer(a + i).loadUnaligned(as: UInt64.self) != UnsafeRawPointer(b + i).loadUnaligned(as: UInt64.self) {
            return false
        }
        i &+= 8
    }
    // The tail (a short key's whole length) four, two, then one byte at a time.
    if i &+ 4 <= count {
        if UnsafeRawPointer(a + i).loadUnaligned(as: UInt32.self) != UnsafeRawPointer(b + i).loadUnaligned(as: UInt32.self) {
            return false
        }
        i &+= 4
    }
    if i &+ 2 <= count {
        if UnsafeRawPointer(a + i).loadUnaligned(as: UInt16.self) != UnsafeRawPointer(b + i).loadUnaligned(as: UInt16.self) {
            return false
        }
        i &+= 2
    }
    if i < count && a[i] != b[i] { return false }
    return true
}
