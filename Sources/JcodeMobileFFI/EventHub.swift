#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import JcodeMobileCore

// The event stream of include/jcode_mobile.h (jcode_mobile_subscribe …):
// a bounded queue per subscription (in events and in bytes), filled by the
// calls on the app while they hold the app's lock, emptied by
// jcode_mobile_next_event or, for a callback subscription, by the threads
// that made the calls once they have released the app's lock (`Delivery`).
//
// Locks, always taken in this order and never the other way round:
//   the handle table's lock (only to look up, insert or remove a handle)
//   → an app's lock (AppSlot.app): its `Subscribers` list is guarded by it
//   → a subscription's lock (Subscription.mutex): its queue and flags.
// No lock is held while a callback runs.

/// One event as queued: NUL-terminated bytes shared by every queue it is in.
struct QueuedEvent {
    let kind: StreamEvent.Kind?
    let seq: Int
    /// The JSON object followed by one NUL byte.
    let bytes: [UInt8]

    init(kind: StreamEvent.Kind?, seq: Int, json: [UInt8]) {
        self.kind = kind
        self.seq = seq
        var b = json
        b.append(0)
        self.bytes = b
    }

    /// A marker of the stream itself (`subscribed`, `events_lost`, `closed`).
    init(marker json: [UInt8]) { self.init(kind: nil, seq: 0, json: json) }
}

/// A first-in first-out queue that never moves its elements on removal,
/// and counts the bytes of the events it holds.
struct EventQueue {
    private var items: [QueuedEvent] = []
    private var head = 0
    /// The bytes of the events held, their NULs included.
    private(set) var bytes = 0

    var count: Int { items.count - head }
    var isEmpty: Bool { head == items.count }
    var first: QueuedEvent? { isEmpty ? nil : items[head] }

    mutating func append(_ e: QueuedEvent) {
        items.append(e)
        bytes += e.bytes.count
    }

    mutating func removeFirst() {
        bytes -= items[head].bytes.count
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: items.count <= 64)
            head = 0
        } else if head >= 64 && head * 2 >= items.count {
            items.removeFirst(head)
            head = 0
        }
    }

    mutating func removeAll() {
        items = []
        head = 0
        bytes = 0
    }
}

/// The events a full queue dropped since its last delivered event.
struct LostRun {
    var count = 0
    var firstSeq = 0
    var lastSeq = 0
    var effects = 0

    mutating func add(_ e: QueuedEvent) {
        if count == 0 { firstSeq = e.seq }
        count += 1
        lastSeq = e.seq
        if e.kind == .effects { effects += 1 }
    }

    var marker: QueuedEvent {
        QueuedEvent(marker: StreamEvent.eventsLost(count: count, firstSeq: firstSeq, lastSeq: lastSeq, effects: effects))
    }
}

/// The answers and markers that never change.
enum StreamMarkers {
    static let closedUnsubscribed = QueuedEvent(marker: StreamEvent.closed(.unsubscribed))
    static let closedAppFreed = QueuedEvent(marker: StreamEvent.closed(.appFreed))
    static let noEvent: StaticString = #"{"ok":true,"event":null}"#
}

/// The host's function of `jcode_mobile_subscribe_callback`.
typealias EventCallback = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?) -> Void

/// One subscription: its queue, its waiters, its callback.
///
/// Referenced by the handle table (until `unsubscribe`) and by its app's
/// `Subscribers` (until `unsubscribe` or `app_free`); it refers to its app
/// weakly, so neither keeps the other alive.
final class Subscription: @unchecked Sendable {
    let capacity: Int
    let capacityBytes: Int
    let kinds: Set<StreamEvent.Kind>
    let callback: EventCallback?
    let userData: UnsafeMutableRawPointer?
    /// The app, while it lives (to leave its list on `unsubscribe`).
    weak var slot: AppSlot?

    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let cond: UnsafeMutablePointer<pthread_cond_t>

    // Guarded by `mutex`.
    private var queue = EventQueue()
    private var lost = LostRun()
    /// Set by `app_free`: the queue delivers what it holds, then `closed {app_freed}`.
    private var appFreed = false
    /// A callback subscription delivers `closed {app_freed}` once.
    private var closedDelivered = false
    /// Set by `unsubscribe`: nothing more is queued or delivered.
    private var unsubscribed = false
    /// What the subscriber will be given, counted since the subscription
    /// began: each queued event, and each `events_lost` marker (counted when
    /// its gap opens). `closed` is not counted.
    private var scheduled = 0
    /// How many of those it was given.
    private var delivered = 0
    /// A callback subscription: a thread is running its callback.
    private var invoking = false
    private var invoker = pthread_t()

    init(options: SubscribeOptions, callback: EventCallback?, userData: UnsafeMutableRawPointer?, slot: AppSlot) {
        capacity = options.capacity
        capacityBytes = options.capacityBytes
        kinds = options.kinds
        self.callback = callback
        self.userData = userData
        self.slot = slot
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
        cond.initialize(to: pthread_cond_t())
        var attr = pthread_condattr_t()
        pthread_condattr_init(&attr)
        #if canImport(Glibc)
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC)
        #endif
        pthread_cond_init(cond, &attr)
        pthread_condattr_destroy(&attr)
    }

    deinit {
        pthread_cond_destroy(cond)
        cond.deinitialize(count: 1)
        cond.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    var isCallback: Bool { callback != nil }

    private func locked<R>(_ body: () -> R) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }

    // MARK: - Filling (the app's lock is held)

    /// Queues the stream's first event; returns what a delivery must reach to have delivered it.
    func start(_ subscribed: QueuedEvent) -> Int {
        locked {
            queue.append(subscribed)
            scheduled += 1
            return scheduled
        }
    }

    /// Whether `e` may join the queue: under `capacity` events and
    /// `capacityBytes` bytes, or the queue is empty (a larger event still goes).
    private func fits(_ e: QueuedEvent) -> Bool {
        queue.isEmpty || (queue.count < capacity && queue.bytes + e.bytes.count <= capacityBytes)
    }

    /// Queues the events this subscription asked for. Returns nil when it
    /// took none, else what a delivery must reach to have delivered them
    /// (their `events_lost` marker, for those dropped).
    func push(_ events: [QueuedEvent]) -> Int? {
        locked {
            guard !unsubscribed, !appFreed else { return nil }
            var took = false
            for e in events {
                guard let kind = e.kind, kinds.contains(kind) else { continue }
                took = true
                if lost.count > 0 {
                    // The gap's marker goes where the gap is, before any later
                    // event (it was counted in `scheduled` when the gap opened);
                    // it may take one slot beyond the capacity.
                    if fits(e) {
                        queue.append(lost.marker)
                        lost = LostRun()
                        queue.append(e)
                        scheduled += 1
                    } else {
                        lost.add(e)
                    }
                } else if fits(e) {
                    queue.append(e)
                    scheduled += 1
                } else {
                    lost.add(e)
                    scheduled += 1  // the marker of the gap this opens
                }
            }
            guard took else { return nil }
            pthread_cond_broadcast(cond)
            return scheduled
        }
    }

    /// `app_free`: what is queued is still delivered, then `closed {app_freed}`.
    func closeForAppFree() {
        locked {
            appFreed = true
            pthread_cond_broadcast(cond)
        }
    }

    // MARK: - Emptying

    /// What the subscriber gets next, if anything, without taking it.
    private enum Next {
        case queued(QueuedEvent)
        case lost(QueuedEvent)
        case closed(QueuedEvent)

        var event: QueuedEvent {
            switch self {
            case .queued(let e), .lost(let e), .closed(let e): e
            }
        }
    }

    /// Call with `mutex` held.
    private func peek() -> Next? {
        if unsubscribed { return .closed(StreamMarkers.closedUnsubscribed) }
        if let e = queue.first { return .queued(e) }
        if lost.count > 0 { return .lost(lost.marker) }
        if appFreed { return .closed(StreamMarkers.closedAppFreed) }
        return nil
    }

    /// Call with `mutex` held, after delivering what `peek` returned.
    private func commit(_ next: Next) {
        switch next {
        case .queued:
            queue.removeFirst()
            delivered += 1
        case .lost:
            lost = LostRun()
            delivered += 1
        case .closed: break  // answered again at every later call
        }
    }

    /// `jcode_mobile_next_event`: the answer for the caller.
    func next(timeoutMs: Int32) -> UnsafeMutablePointer<CChar>? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        let deadline = timeoutMs > 0 ? Monotonic.deadline(afterMilliseconds: Int(timeoutMs)) : timespec()
        var timedOut = timeoutMs == 0
        while true {
            if let next = peek() {
                // The event is taken only once its answer exists: out of
                // memory leaves it queued for the next call.
                guard let answer = Subscription.answer(next.event) else { return ErrorBoundary.copyOutOfMemory() }
                commit(next)
                return answer
            }
            if timedOut { return Subscription.copy(StreamMarkers.noEvent) }
            if timeoutMs < 0 {
                pthread_cond_wait(cond, mutex)
            } else {
                var until = deadline
                // Spurious wakeups and EINTR come back here and wait again
                // for what is left of the same deadline.
                if Monotonic.wait(cond, mutex, until: &until) == ETIMEDOUT { timedOut = true }
            }
        }
    }

    /// `{"ok":true,"event":…}` as a malloc'd C string, or nil.
    private static func answer(_ e: QueuedEvent) -> UnsafeMutablePointer<CChar>? {
        let prefix: StaticString = #"{"ok":true,"event":"#
        let p = prefix.utf8CodeUnitCount
        let n = e.bytes.count - 1
        guard let out = malloc(p + n + 2)?.assumingMemoryBound(to: UInt8.self) else { return nil }
        out.initialize(from: prefix.utf8Start, count: p)
        e.bytes.withUnsafeBufferPointer { b in (out + p).initialize(from: b.baseAddress!, count: n) }
        out[p + n] = UInt8(ascii: "}")
        out[p + n + 1] = 0
        return UnsafeMutableRawPointer(out).assumingMemoryBound(to: CChar.self)
    }

    private static func copy(_ s: StaticString) -> UnsafeMutablePointer<CChar>? {
        let n = s.utf8CodeUnitCount
        guard let out = malloc(n + 1)?.assumingMemoryBound(to: UInt8.self) else { return nil }
        out.initialize(from: s.utf8Start, count: n)
        out[n] = 0
        return UnsafeMutableRawPointer(out).assumingMemoryBound(to: CChar.self)
    }

    /// What one step of a delivery did (`Delivery`).
    enum Step {
        /// Delivered one event (the callback ran and returned).
        case delivered
        /// Another thread's callback of this subscription is running.
        case busy
        /// Nothing is left to deliver up to `target`.
        case done
    }

    /// A callback subscription: delivers its next event, when the
    /// subscription has not yet delivered what `target` counts (the
    /// `scheduled` a call's events reached; `Int.max`: up to and including
    /// `closed {app_freed}`) and no other thread is running its callback.
    /// Call with no library lock held.
    ///
    /// Events are taken in queue order under the lock and one callback runs
    /// at a time, so the callback sees them in seq order, never overlapping.
    func deliverNext(upTo target: Int) -> Step {
        guard let callback else { return .done }
        pthread_mutex_lock(mutex)
        if unsubscribed || closedDelivered || delivered >= target {
            pthread_mutex_unlock(mutex)
            return .done
        }
        if invoking {
            pthread_mutex_unlock(mutex)
            return .busy
        }
        guard let next = peek() else {
            pthread_mutex_unlock(mutex)
            return .done
        }
        if case .closed = next {
            // Only `app_free`'s delivery counts up to `closed`.
            guard target == Int.max else {
                pthread_mutex_unlock(mutex)
                return .done
            }
            closedDelivered = true
        } else {
            commit(next)
        }
        invoking = true
        invoker = pthread_self()
        pthread_mutex_unlock(mutex)
        next.event.bytes.withUnsafeBufferPointer { b in
            b.baseAddress!.withMemoryRebound(to: CChar.self, capacity: b.count) { callback(userData, $0) }
        }
        pthread_mutex_lock(mutex)
        invoking = false
        pthread_cond_broadcast(cond)
        pthread_mutex_unlock(mutex)
        return .delivered
    }

    /// Waits while another thread runs this subscription's callback.
    func waitWhileInvoking() {
        pthread_mutex_lock(mutex)
        while invoking && pthread_equal(invoker, pthread_self()) == 0 {
            pthread_cond_wait(cond, mutex)
        }
        pthread_mutex_unlock(mutex)
    }

    /// `unsubscribe`: nothing more is queued or delivered; waiters wake with
    /// `closed {unsubscribed}`. For a callback subscription, waits for an
    /// invocation running on another thread to return (from inside the
    /// callback itself it returns at once: that invocation is the last).
    /// Call with no library lock held.
    func cancel() {
        pthread_mutex_lock(mutex)
        unsubscribed = true
        queue.removeAll()
        lost = LostRun()
        pthread_cond_broadcast(cond)
        while invoking && pthread_equal(invoker, pthread_self()) == 0 {
            pthread_cond_wait(cond, mutex)
        }
        pthread_mutex_unlock(mutex)
    }
}

/// Who runs callbacks, and how far.
///
/// A call that queued events in callback subscriptions (a dispatch, a
/// platform event, a subscribe, an app_free) delivers them itself once it
/// has released the app's lock, and returns when each of those
/// subscriptions has delivered what it had queued when the call queued its
/// own (`Subscription.push`'s target): never more, so no call is held by
/// other threads' events. When another thread is running a subscription's
/// callback, the call delivers to its other subscriptions meanwhile, and
/// waits only when nothing else is left; that thread's own target is
/// bounded too.
///
/// A call made from inside a callback (on the thread running it) only adds
/// its targets to that thread's delivery and returns: the loop further up
/// the stack delivers them after the callback returns. So the stack never
/// grows with the number of subscriptions, and a callback is never entered
/// again from within itself.
final class Delivery {
    /// The subscriptions with something to deliver, each with the highest target asked for.
    private var pending: [(subscription: Subscription, target: Int)] = []
    private var index: [ObjectIdentifier: Int] = [:]

    /// The delivery running on this thread, if any (`pthread_getspecific`).
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    private func add(_ subscription: Subscription, _ target: Int) {
        let id = ObjectIdentifier(subscription)
        if let i = index[id] {
            if target > pending[i].target { pending[i].target = target }
        } else {
            index[id] = pending.count
            pending.append((subscription, target))
        }
    }

    private func remove(at i: Int) {
        index[ObjectIdentifier(pending[i].subscription)] = nil
        let last = pending.count - 1
        if i != last {
            pending[i] = pending[last]
            index[ObjectIdentifier(pending[i].subscription)] = i
        }
        pending.removeLast()
    }

    /// Delivers up to each target (see the type). Call with no library lock held.
    static func run(_ targets: [(Subscription, Int)]) {
        guard !targets.isEmpty else { return }
        if let running = pthread_getspecific(key) {
            // Inside a callback on this thread: the running loop delivers them.
            let delivery = Unmanaged<Delivery>.fromOpaque(running).takeUnretainedValue()
            for (s, t) in targets { delivery.add(s, t) }
            return
        }
        let delivery = Delivery()
        for (s, t) in targets { delivery.add(s, t) }
        pthread_setspecific(key, Unmanaged.passUnretained(delivery).toOpaque())
        delivery.drain()
        pthread_setspecific(key, nil)
    }

    /// One event per subscription per round, until every target is reached.
    private func drain() {
        while !pending.isEmpty {
            var progressed = false
            var i = 0
            // `pending` may grow during a callback (a call made from inside it).
            while i < pending.count {
                switch pending[i].subscription.deliverNext(upTo: pending[i].target) {
                case .delivered:
                    progressed = true
                    i += 1
                case .busy:
                    i += 1
                case .done:
                    remove(at: i)
                }
            }
            // Every subscription left is running a callback on another
            // thread: wait for one to return (each returns, or the host's
            // callback is blocked on something else).
            if !progressed, let first = pending.first { first.subscription.waitWhileInvoking() }
        }
    }
}

/// The subscriptions of one app. Guarded by the app's lock (`AppSlot.app`):
/// touched only inside `slot.app.withLock`.
final class Subscribers: @unchecked Sendable {
    var list: [Subscription] = []
    /// Set by `app_free`: no subscription is added after it.
    var appFreed = false
}

enum EventHub {
    /// Runs an input (`dispatch`, `platform_event`) on the app behind
    /// `handle` with its lock held, hands the events it produced to the
    /// app's subscriptions before releasing the lock, then delivers them to
    /// the callback subscriptions that took some (`Delivery`).
    static func input(
        _ handle: UnsafeMutableRawPointer?, _ body: (JcodeMobileApp) -> JSONWriter
    ) -> UnsafeMutablePointer<CChar>? {
        guard let handle else { return ErrorBoundary.cString(ErrorBoundary.invalidHandle(nil)) }
        let key = UInt(bitPattern: handle)
        guard let slot = handles.withLock({ $0.slot(key) }) else {
            return ErrorBoundary.cString(ErrorBoundary.invalidHandle(handle))
        }
        var callbacks: [(Subscription, Int)] = []
        let answer = slot.app.withLock { app -> UnsafeMutablePointer<CChar>? in
            let answer = ErrorBoundary.answer(body(app))
            if app.isCollectingEvents { callbacks = publish(app.takeEvents(), to: slot.subscribers) }
            return answer
        }
        Delivery.run(callbacks)
        return answer
    }

    /// Queues the events in every subscription that wants them (the app's
    /// lock is held, so every subscriber sees them in seq order); returns
    /// the callback subscriptions that took any, with their targets.
    private static func publish(_ events: [StreamEvent], to subscribers: Subscribers) -> [(Subscription, Int)] {
        guard !events.isEmpty else { return [] }
        let queued = events.map { QueuedEvent(kind: $0.kind, seq: $0.seq, json: $0.bytes) }
        var callbacks: [(Subscription, Int)] = []
        for subscription in subscribers.list {
            if let target = subscription.push(queued), subscription.isCallback { callbacks.append((subscription, target)) }
        }
        return callbacks
    }

    /// `subscribe` / `subscribe_callback`: the new handle, or the error.
    static func subscribe(
        _ app: UnsafeMutableRawPointer?, _ optionsJSON: UnsafePointer<CChar>?,
        callback: EventCallback?, userData: UnsafeMutableRawPointer?, wantsCallback: Bool
    ) -> Result<UInt, CoreError> {
        guard let app else { return .failure(ErrorBoundary.invalidHandle(nil)) }
        if wantsCallback && callback == nil {
            return .failure(CoreError(.nullArgument, "callback is NULL", field: "callback"))
        }
        let key = UInt(bitPattern: app)
        guard let slot = handles.withLock({ $0.slot(key) }) else { return .failure(ErrorBoundary.invalidHandle(app)) }
        var bytes: UnsafeBufferPointer<UInt8>? = nil
        if let optionsJSON {
            switch ErrorBoundary.bytes(of: optionsJSON, argument: "options_json") {
            case .success(let b): bytes = b
            case .failure(let error): return .failure(error)
            }
        }
        let options: SubscribeOptions
        do throws(CoreError) {
            options = try SubscribeOptions.parse(bytes)
        } catch {
            return .failure(error)
        }
        let subscription = Subscription(options: options, callback: callback, userData: userData, slot: slot)
        var target = 0
        let result: Result<UInt, CoreError> = slot.app.withLock { instance in
            // The app may have been freed after it was looked up.
            if slot.subscribers.appFreed { return .failure(ErrorBoundary.invalidHandle(app)) }
            guard let handle = handles.withLock({ $0.insert(subscription) }) else {
                return .failure(CoreError(.outOfMemory, "no address space left for a new handle"))
            }
            target = subscription.start(QueuedEvent(marker: StreamEvent.subscribed(
                revision: instance.store.state.revision, nextSeq: instance.nextEventSeq)))
            slot.subscribers.list.append(subscription)
            instance.collectsEvents = true
            if options.kinds.contains(.tree) { instance.collectsTreeEvents = true }
            return .success(handle)
        }
        if case .success = result, subscription.isCallback { Delivery.run([(subscription, target)]) }
        return result
    }

    /// `unsubscribe`: ignores what is not a live subscription handle.
    static func unsubscribe(_ handle: UnsafeMutableRawPointer?) {
        guard let handle else { return }
        let key = UInt(bitPattern: handle)
        guard let subscription = handles.withLock({ $0.removeSubscription(key) }) else { return }
        if let slot = subscription.slot {
            slot.app.withLock { instance in
                slot.subscribers.list.removeAll { $0 === subscription }
                if slot.subscribers.list.isEmpty { instance.collectsEvents = false }
                instance.collectsTreeEvents = slot.subscribers.list.contains { $0.kinds.contains(.tree) }
            }
        }
        subscription.cancel()
    }

    /// `app_free`, after the handle left the table: closes every
    /// subscription of the app, then delivers what the callback ones still
    /// hold and their `closed {app_freed}` (from inside a callback: once it returns).
    static func appFreed(_ slot: AppSlot) {
        let closed: [Subscription] = slot.app.withLock { instance in
            slot.subscribers.appFreed = true
            let list = slot.subscribers.list
            slot.subscribers.list = []
            instance.collectsEvents = false
            instance.collectsTreeEvents = false
            for subscription in list { subscription.closeForAppFree() }
            return list
        }
        Delivery.run(closed.filter(\.isCallback).map { ($0, Int.max) })
    }

    /// What `next_event` answers for a handle that is not a pull subscription.
    static func lookup(_ handle: UnsafeMutableRawPointer?) -> Result<Subscription, CoreError> {
        guard let handle else {
            return .failure(CoreError(.nullArgument, "subscription is NULL", field: "subscription"))
        }
        let key = UInt(bitPattern: handle)
        let (subscription, isApp) = handles.withLock { ($0.subscription(key), $0.slot(key) != nil) }
        guard let subscription else {
            let message = isApp
                ? "subscription is an app handle, not a subscription"
                : "subscription is not a live subscription handle (unsubscribed, never issued, or not a handle)"
            return .failure(CoreError(.invalidHandle, message, field: "subscription"))
        }
        if subscription.isCallback {
            return .failure(CoreError(
                .invalidHandle,
                "subscription is a callback subscription: its events go to its callback, not to jcode_mobile_next_event",
                field: "subscription"))
        }
        return .success(subscription)
    }
}

/// Deadlines on the monotonic clock, which the condition variables wait on.
enum Monotonic {
    static func deadline(afterMilliseconds ms: Int) -> timespec {
        var now = timespec()
        #if canImport(Glibc)
        clock_gettime(CLOCK_MONOTONIC, &now)
        #else
        clock_gettime(CLOCK_REALTIME, &now)
        #endif
        var sec = Int(now.tv_sec) + ms / 1000
        var nsec = Int(now.tv_nsec) + (ms % 1000) * 1_000_000
        if nsec >= 1_000_000_000 {
            sec += 1
            nsec -= 1_000_000_000
        }
        var t = timespec()
        t.tv_sec = time_t(sec)
        t.tv_nsec = type(of: t.tv_nsec).init(nsec)
        return t
    }

    /// One wait; ETIMEDOUT once the deadline has passed.
    static func wait(
        _ cond: UnsafeMutablePointer<pthread_cond_t>, _ mutex: UnsafeMutablePointer<pthread_mutex_t>,
        until deadline: inout timespec
    ) -> Int32 {
        pthread_cond_timedwait(cond, mutex, &deadline)
    }
}
