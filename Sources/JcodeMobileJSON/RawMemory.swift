#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The C allocator, for the core's own large buffers: the answers handed to
/// C (`JSONWriter`) and the tokens of an input (`JSONParser`). Unlike Swift's
/// arrays and strings, which end the process when memory runs out, these
/// report failure (nil), so a call that cannot allocate its answer returns
/// `out_of_memory` and the app stays usable. The only file of the core that
/// reaches libc.
@_spi(Leaves) public enum RawMemory {
    static func allocate(_ bytes: Int) -> UnsafeMutableRawPointer? { malloc(bytes) }

    /// Grows or shrinks `pointer`; on failure (nil) `pointer` is untouched and still owned.
    static func reallocate(_ pointer: UnsafeMutableRawPointer?, _ bytes: Int) -> UnsafeMutableRawPointer? {
        realloc(pointer, bytes)
    }

    static func release(_ pointer: UnsafeMutableRawPointer?) { free(pointer) }

    /// Whether the first `count` bytes at `a` and `b` are equal (libc's
    /// vectorised compare: long texts are compared on every streamed delta;
    /// inlinable, so the core's and the parser's calls are libc's call).
    @inlinable public static func equal(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ count: Int) -> Bool {
        memcmp(a, b, count) == 0
    }

    /// Whether the first `count` bytes of `text` are those of `prefix`
    /// (false when either is shorter).
    @inlinable public static func hasPrefix(_ text: String, _ prefix: String, count: Int) -> Bool {
        guard count > 0 else { return true }
        var text = text
        var prefix = prefix
        guard text.utf8.count >= count, prefix.utf8.count >= count else { return false }
        return text.withUTF8 { t in prefix.withUTF8 { p in equal(t.baseAddress!, p.baseAddress!, count) } }
    }
}

/// A growable array of trivial values in `malloc` memory whose growth can
/// fail: `append` answers false when memory is exhausted (or when `limit`
/// elements are reached, which is how tests exhaust it) and the contents stay
/// as they were. The owner releases it with `release()`.
struct RawArray<Element: BitwiseCopyable> {
    private(set) var base: UnsafeMutablePointer<Element>?
    private(set) var count = 0
    private(set) var capacity = 0
    /// The most elements it may hold; growing beyond fails like an exhausted allocator.
    var limit = Int.max

    init(limit: Int = Int.max) { self.limit = limit }

    @inline(__always)
    mutating func append(_ element: Element) -> Bool {
        if count == capacity, !grow() { return false }
        (base.unsafelyUnwrapped + count).initialize(to: element)
        count &+= 1
        return true
    }

    private mutating func grow() -> Bool {
        guard capacity < limit else { return false }
        let (doubled, overflow) = Swift.max(capacity, 64).multipliedReportingOverflow(by: 2)
        let newCapacity = Swift.min(overflow ? limit : doubled, limit)
        let (bytes, tooMany) = newCapacity.multipliedReportingOverflow(by: MemoryLayout<Element>.stride)
        guard !tooMany, let p = RawMemory.reallocate(base.map { UnsafeMutableRawPointer($0) }, bytes) else { return false }
        base = p.bindMemory(to: Element.self, capacity: newCapacity)
        capacity = newCapacity
        return true
    }

    subscript(i: Int) -> Element {
        @inline(__always) get {
            precondition(i >= 0 && i < count)
            return base.unsafelyUnwrapped[i]
        }
        @inline(__always) set {
            precondition(i >= 0 && i < count)
            base.unsafelyUnwrapped[i] = newValue
        }
    }

    /// The elements, valid until the next change.
    var elements: UnsafeBufferPointer<Element> { UnsafeBufferPointer(start: base, count: count) }

    mutating func removeAll() { count = 0 }

    /// Frees the storage of an array that is not used again (an owner's deinit).
    func deallocate() { RawMemory.release(base.map { UnsafeMutableRawPointer($0) }) }

    /// Frees the storage; the array is empty afterwards and may be used again.
    mutating func release() {
        deallocate()
        base = nil
        count = 0
        capacity = 0
    }
}
