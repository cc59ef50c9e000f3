#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import JcodeMobileCore

/// One app and the lock that serialises every call on its handle.
final class AppSlot: Sendable {
    let app: Locked<JcodeMobileApp>
    /// The app's event-stream subscriptions, guarded by `app`'s lock.
    let subscribers = Subscribers()

    init(options: AppOptions) {
        self.app = Locked(JcodeMobileApp(options: options))
    }
}

/// Where handles come from: address space this copy of the library has
/// reserved for itself.
///
/// A handle is an address inside a range reserved with
/// `mmap(PROT_NONE, MAP_NORESERVE)`: `base + n * stride + generation * 8 + tag`,
/// one page (a slot) per live handle. The ranges are never unmapped, so
///
/// * two copies of the library in one process (two plugins that each bundle
///   it) hand out disjoint numbers — the kernel never maps one address twice —
///   and a handle of one copy is never in the other's table;
/// * a slot holds one live handle at a time, and a generation moves a handle
///   at most 2 040 bytes into its page, so any two live handles are more
///   than 2 048 apart: an integer within 2 048 of a live handle is never
///   another live handle;
/// * a host that mistakes a handle for a pointer and reads through it faults
///   at once (the pages are inaccessible) instead of reading another object.
///
/// A freed slot goes to the back of a quarantine and is taken again, with
/// the next of its 256 generations, only once `quarantine` slots were freed
/// after it: so a freed handle's value comes back only after at least
/// 256 × `quarantine` frees (16.7 million on a 64-bit process), and the
/// address space stays bounded by the handles alive at once plus the
/// quarantine (256 MiB of it on a 64-bit process; no memory) however many
/// come and go. When no address space can be reserved, a slot of the
/// quarantine is taken sooner; when there is none either, no handle is
/// issued (`out_of_memory`), nothing aborts.
///
/// The reservation takes address space only: no memory, no swap, no file.
/// No randomness is involved; uniqueness comes from the address space.
struct HandleSpace {
    /// Distance between slots: one page.
    static let stride: UInt = 4096
    /// Low bits set so a handle never looks like an aligned pointer.
    static let tag: UInt = 0x5
    /// Generations of one slot: `generation * 8 + tag` stays in the first half of the page.
    static let generations: UInt = 256
    /// Freed slots held back before one is taken again.
    static let quarantine = MemoryLayout<Int>.size == 8 ? 65_536 : 1024
    /// Address space reserved at a time. 1 GiB is 262 144 slots; on a
    /// 32-bit process, 16 MiB (4 096 slots). Smaller sizes are tried when
    /// the system refuses (a tight `ulimit -v`).
    static let reservationSizes: [Int] =
        MemoryLayout<Int>.size == 8 ? [1 << 30, 1 << 24, 1 << 20, 1 << 16] : [1 << 24, 1 << 20, 1 << 16]

    /// The next fresh slot and the end of its range (exclusive).
    private var next: UInt = 0
    private var end: UInt = 0
    /// The freed slots, oldest first, each as the handle its next generation
    /// will be (a ring: `freed[(first + i) % freed.count]`, `freedCount` of them).
    private var freed: [UInt] = []
    private var first = 0
    private var freedCount = 0

    /// A number no live handle of any copy of the library is, or nil when
    /// no address space can be reserved and no freed slot is left.
    mutating func take() -> UInt? {
        if freedCount > HandleSpace.quarantine { return takeFreed() }
        if end - next < HandleSpace.stride {
            guard let (base, size) = HandleSpace.reserve() else { return freedCount > 0 ? takeFreed() : nil }
            next = base
            end = base + size
        }
        let handle = next | HandleSpace.tag
        next += HandleSpace.stride
        return handle
    }

    /// Gives back the slot of `handle` (a live one, just removed from the table).
    mutating func release(_ handle: UInt) {
        let slot = handle & ~(HandleSpace.stride - 1)
        let generation = (((handle & (HandleSpace.stride - 1)) >> 3) + 1) % HandleSpace.generations
        if freedCount == freed.count {
            // Full ring: oldest first again, then room for as many more.
            freed = (0..<freedCount).map { freed[(first + $0) % freedCount] }
            freed.append(contentsOf: repeatElement(0, count: max(16, freedCount)))
            first = 0
        }
        freed[(first + freedCount) % freed.count] = slot | (generation << 3) | HandleSpace.tag
        freedCount += 1
    }

    private mutating func takeFreed() -> UInt {
        let handle = freed[first]
        first = (first + 1) % freed.count
        freedCount -= 1
        return handle
    }

    /// A fresh range of inaccessible address space, never released.
    private static func reserve() -> (base: UInt, size: UInt)? {
        for size in reservationSizes {
            let flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE
            guard let address = mmap(nil, size, PROT_NONE, flags, -1, 0),
                  address != UnsafeMutableRawPointer(bitPattern: -1)
            else { continue }
            return (UInt(bitPattern: address), UInt(size))
        }
        return nil
    }
}

/// Maps the opaque handles given to C to live apps and subscriptions.
///
/// A handle is a key, never dereferenced: a freed, never-issued, foreign or
/// garbage handle is simply not in the table (`invalid_handle`). Handles come
/// from `HandleSpace`, so a freed one comes back only after millions of
/// others were freed, and none collides with another copy of the library's. Apps and subscriptions share
/// the space: an app handle is never a subscription handle, and vice versa.
struct HandleTable {
    private var slots: [UInt: AppSlot] = [:]
    private var subscriptions: [UInt: Subscription] = [:]
    private var space = HandleSpace()

    /// The new app's handle, or nil when no handle can be issued.
    mutating func insert(_ slot: AppSlot) -> UInt? {
        guard let handle = space.take() else { return nil }
        slots[handle] = slot
        return handle
    }

    /// The app last looked up: a host calls one app many times in a row
    /// (a reply's deltas), and comparing a number is cheaper than hashing it.
    private var recent: (handle: UInt, slot: AppSlot)?

    mutating func slot(_ handle: UInt) -> AppSlot? {
        if let recent, recent.handle == handle { return recent.slot }
        guard let slot = slots[handle] else { return nil }
        recent = (handle, slot)
        return slot
    }

    mutating func remove(_ handle: UInt) -> AppSlot? {
        if recent?.handle == handle { recent = nil }
        guard let slot = slots.removeValue(forKey: handle) else { return nil }
        space.release(handle)
        return slot
    }

    var count: Int { slots.count }

    /// The new subscription's handle, or nil when no handle can be issued.
    mutating func insert(_ subscription: Subscription) -> UInt? {
        guard let handle = space.take() else { return nil }
        subscriptions[handle] = subscription
        return handle
    }

    func subscription(_ handle: UInt) -> Subscription? { subscriptions[handle] }

    mutating func removeSubscription(_ handle: UInt) -> Subscription? {
        guard let subscription = subscriptions.removeValue(forKey: handle) else { return nil }
        space.release(handle)
        return subscription
    }
}

/// Every live app of the process. The table lock is held only to look a
/// handle up; the app's own lock is taken after it is released, so calls on
/// different handles never wait for each other.
let handles = Locked(HandleTable())
