#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import JcodeMobileCore

// The event stream of include/jcode_mobile.h (jcode_mobile_subscribe …):
// a bounded queue per subscription, filled by the calls on the app while
// they hold the app's lock, emptied by jcode_mobile_next_event or, for a
// callback subscription, by the thread that made the call once it has
// released the app's lock.
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

/// A first-in first-out queue that never moves its elements on removal.
struct EventQueue {
    private var items: [QueuedEvent] = []
    private var head = 0

    var count: Int { items.count - head }
    var isEmpty: Bool { head == items.count }
    var first: QueuedEvent? { isEmpty ? nil : items[head] }

    mutating func append(_ e: QueuedEvent) { items.append(e) }

    mutating func removeFirst() {
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
    /// A callback subscription: a thread is running its delivery loop.
    private var delivering = false
    private var deliverer = pthread_t()

    init(options: SubscribeOptions, callback: EventCallback?, userData: UnsafeMutableRawPointer?, slot: AppSlot) {
        capacity = options.capacity
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

    /// Queues the stream's first event.
    func start(_ subscribed: QueuedEvent) {
        locked { queue.append(subscribed) }
    }

    /// Queues the events this subscription asked for; true when it took any.
    func push(_ events: [QueuedEvent]) -> Bool {
        locked {
            guard !unsubscribed, !appFreed else { return false }
            var took = false
            for e in events {
                guard let kind = e.kind, kinds.contains(kind) else { continue }
                took = true
                if lost.count > 0 {
                    // The gap's marker goes where the gap is, before any later
                    // event; it may take one slot beyond the capacity.
                    if queue.count < capacity {
                        queue.append(lost.marker)
                        lost = LostRun()
                        queue.append(e)
                    } else {
                        lost.add(e)
                    }
                } else if queue.count < capacity {
                    queue.append(e)
                } else {
                    lost.add(e)
                }
            }
            if took { pthread_cond_broadcast(cond) }
            return took
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
        case .queued: queue.removeFirst()
        case .lost: lost = LostRun()
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
                let e: QueuedEvent
                switch next {
                case .queued(let q), .lost(let q), .closed(let q): e = q
                }
                // The event is taken only once its answer exists: out of
                // memory leaves it queued for the next call.
                guard let answer = Subscription.answer(e) else { return ErrorBoundary.copyOutOfMemory() }
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

    /// A callback subscription: delivers what is queued, in order, on the
    /// calling thread — unless another thread (or this one, further up its
    /// stack) is delivering already, in which case that delivery loop will
    /// find the events. Call with no library lock held.
    ///
    /// The lost-wakeup race (a thread ends its loop while another queues an
    /// event and sees the flag still set) cannot happen: the loop looks at
    /// the queue and clears `delivering` in one critical section, and events
    /// are queued under the same lock, so an event queued before that
    /// section is delivered by the loop and one queued after it finds the
    /// flag clear and is delivered by the thread that queued it.
    func deliver() {
        guard let callback else { return }
        pthread_mutex_lock(mutex)
        if delivering {
            pthread_mutex_unlock(mutex)
            return
        }
        delivering = true
        deliverer = pthread_self()
        while true {
            var next = unsubscribed ? nil : peek()
            if case .closed = next {
                if closedDelivered { next = nil } else { closedDelivered = true }
            }
            guard let next else { break }
            commit(next)
            let e: QueuedEvent
            switch next {
            case .queued(let q), .lost(let q), .closed(let q): e = q
            }
            pthread_mutex_unlock(mutex)
            e.bytes.withUnsafeBufferPointer { b in
                b.baseAddress!.withMemoryRebound(to: CChar.self, capacity: b.count) { callback(userData, $0) }
            }
            pthread_mutex_lock(mutex)
        }
        delivering = false
        pthread_cond_broadcast(cond)
        pthread_mutex_unlock(mutex)
    }

    /// `unsubscribe`: nothing more is queued or delivered; waiters wake with
    /// `closed {unsubscribed}`. For a callback subscription, waits for a
    /// delivery running on another thread to finish its current call (from
    /// inside the callback itself it returns at once: that invocation is the
    /// last). Call with no library lock held.
    func cancel() {
        pthread_mutex_lock(mutex)
        unsubscribed = true
        queue.removeAll()
        lost = LostRun()
        pthread_cond_broadcast(cond)
        while delivering && pthread_equal(deliverer, pthread_self()) == 0 {
            pthread_cond_wait(cond, mutex)
        }
        pthread_mutex_unlock(mutex)
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
    /// app's subscriptions before releasing the lock, then delivers to the
    /// callback subscriptions that received some.
    static func input(
        _ handle: UnsafeMutableRawPointer?, _ body: (JcodeMobileApp) -> JSONWriter
    ) -> UnsafeMutablePointer<CChar>? {
        guard let handle else { return ErrorBoundary.cString(ErrorBoundary.invalidHandle(nil)) }
        let key = UInt(bitPattern: handle)
        guard let slot = handles.withLock({ $0.slot(key) }) else {
            return ErrorBoundary.cString(ErrorBoundary.invalidHandle(handle))
        }
        var callbacks: [Subscription] = []
        let answer = slot.app.withLock { app -> UnsafeMutablePointer<CChar>? in
            let answer = ErrorBoundary.answer(body(app))
            if app.isCollectingEvents { callbacks = publish(app.takeEvents(), to: slot.subscribers) }
            return answer
        }
        for subscription in callbacks { subscription.deliver() }
        return answer
    }

    /// Queues the events in every subscription that wants them (the app's
    /// lock is held, so every subscriber sees them in seq order); returns
    /// the callback subscriptions that took any.
    private static func publish(_ events: [StreamEvent], to subscribers: Subscribers) -> [Subscription] {
        guard !events.isEmpty else { return [] }
        let queued = events.map { QueuedEvent(kind: $0.kind, seq: $0.seq, json: $0.bytes) }
        var callbacks: [Subscription] = []
        for subscription in subscribers.list where subscription.push(queued) && subscription.isCallback {
            callbacks.append(subscription)
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
        let result: Result<UInt, CoreError> = slot.app.withLock { instance in
            // The app may have been freed after it was looked up.
            if slot.subscribers.appFreed { return .failure(ErrorBoundary.invalidHandle(app)) }
            guard let handle = handles.withLock({ $0.insert(subscription) }) else {
                return .failure(CoreError(.outOfMemory, "no address space left for a new handle"))
            }
            subscription.start(QueuedEvent(marker: StreamEvent.subscribed(
                revision: instance.store.state.revision, nextSeq: instance.nextEventSeq)))
            slot.subscribers.list.append(subscription)
            instance.collectsEvents = true
            if options.kinds.contains(.tree) { instance.collectsTreeEvents = true }
            return .success(handle)
        }
        if case .success = result, subscription.isCallback { subscription.deliver() }
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
    /// hold and their `closed {app_freed}`.
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
        for subscription in closed where subscription.isCallback { subscription.deliver() }
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
