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
/// `mmap(PROT_NONE, MAP_NORESERVE)`: `base + n * stride + tag`. The ranges
/// are never unmapped and `n` only grows, so
///
/// * two copies of the library in one process (two plugins that each bundle
///   it) hand out disjoint numbers — the kernel never maps one address twice —
///   and a handle of one copy is never in the other's table;
/// * no number is handed out twice in the life of the process, so a freed
///   handle can never reach a newer app;
/// * consecutive handles are `stride` (one page) apart, so an integer within
///   `stride - 1` of a live handle is never a handle;
/// * a host that mistakes a handle for a pointer and reads through it faults
///   at once (the pages are inaccessible) instead of reading another object.
///
/// The reservation takes address space only: no memory, no swap, no file.
/// No randomness is involved; uniqueness comes from the address space.
struct HandleSpace {
    /// Distance between consecutive handles: one page.
    static let stride: UInt = 4096
    /// Low bits set so a handle never looks like an aligned pointer.
    static let tag: UInt = 0x5
    /// Address space reserved at a time. 1 GiB is 262 144 handles; on a
    /// 32-bit process, 16 MiB (4 096 handles). Smaller sizes are tried when
    /// the system refuses (a tight `ulimit -v`).
    static let reservationSizes: [Int] =
        MemoryLayout<Int>.size == 8 ? [1 << 30, 1 << 24, 1 << 20, 1 << 16] : [1 << 24, 1 << 20, 1 << 16]

    /// The next handle to hand out and the end of its range (exclusive).
    private var next: UInt = 0
    private var end: UInt = 0

    /// A number never handed out before in this process by any copy of the
    /// library, or nil when no address space can be reserved.
    mutating func take() -> UInt? {
        if end - next < HandleSpace.stride {
            guard let (base, size) = HandleSpace.reserve() else { return nil }
            next = base
            end = base + size
        }
        let handle = next | HandleSpace.tag
        next += HandleSpace.stride
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
/// from `HandleSpace`, so they are never reused in the process and never
/// collide with another copy of the library's. Apps and subscriptions share
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
        return slots.removeValue(forKey: handle)
    }

    var count: Int { slots.count }

    /// The new subscription's handle, or nil when no handle can be issued.
    mutating func insert(_ subscription: Subscription) -> UInt? {
        guard let handle = space.take() else { return nil }
        subscriptions[handle] = subscription
        return handle
    }

    func subscription(_ handle: UInt) -> Subscription? { subscriptions[handle] }

    mutating func removeSubscription(_ handle: UInt) -> Subscription? { subscriptions.removeValue(forKey: handle) }
}

/// Every live app of the process. The table lock is held only to look a
/// handle up; the app's own lock is taken after it is released, so calls on
/// different handles never wait for each other.
let handles = Locked(HandleTable())
