import JcodeMobileCore

/// One app and the lock that serialises every call on its handle.
final class AppSlot: Sendable {
    let app: Locked<JcodeMobileApp>

    init(options: AppOptions) {
        self.app = Locked(JcodeMobileApp(options: options))
    }
}

/// Maps the opaque handles given to C to live apps.
///
/// A handle is a number, never a pointer to memory: a freed, never-issued or
/// garbage handle is simply not in the table (`invalid_handle`), so it can
/// never be dereferenced. Numbers are never reused, so a stale handle cannot
/// reach a newer app.
struct HandleTable {
    private var slots: [UInt: AppSlot] = [:]
    private var issued: UInt = 0

    /// Low bits set so a handle is never NULL and never looks like an aligned pointer.
    private static let tag: UInt = 0x5

    mutating func insert(_ slot: AppSlot) -> UInt {
        issued &+= 1
        let handle = issued << 4 | HandleTable.tag
        slots[handle] = slot
        return handle
    }

    func slot(_ handle: UInt) -> AppSlot? { slots[handle] }

    mutating func remove(_ handle: UInt) -> AppSlot? { slots.removeValue(forKey: handle) }

    var count: Int { slots.count }
}

/// Every live app of the process. The table lock is held only to look a
/// handle up; the app's own lock is taken after it is released, so calls on
/// different handles never wait for each other.
let handles = Locked(HandleTable())
