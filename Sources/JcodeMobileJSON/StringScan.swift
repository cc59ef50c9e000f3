/// The scan every reader and writer of JSON string content shares: where
/// the next byte that is not itself inside a string is (a quote, a
/// backslash or a control character).
@_spi(Leaves) public enum StringScan {
    /// From offset `i`, eight bytes at a time: the offset of the first such
    /// byte among the whole eight-byte words before `end`, or the first
    /// offset from which fewer than eight bytes remain (the caller reads
    /// those one by one). A flagged byte is always a real one: false flags
    /// (from a borrow) only ever follow a true one.
    @inlinable @inline(__always)
    public static func skipPlainWords(_ raw: UnsafeRawPointer, from i: Int, end: Int) -> Int {
        var i = i
        while i &+ 8 <= end {
            let w = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            let quote = w ^ 0x2222_2222_2222_2222
            let slash = w ^ 0x5C5C_5C5C_5C5C_5C5C
            let hits = ((quote &- 0x0101_0101_0101_0101) & ~quote | (slash &- 0x0101_0101_0101_0101) & ~slash
                | (w &- 0x2020_2020_2020_2020) & ~w) & 0x8080_8080_8080_8080
            if hits != 0 { return i &+ hits.trailingZeroBitCount &>> 3 }
            i &+= 8
        }
        return i
    }
}
