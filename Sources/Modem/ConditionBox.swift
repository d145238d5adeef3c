#if canImport(Glibc)
import Glibc
#endif

/// State shared between a caller and one worker thread, with a condition the worker can sleep on
/// until the caller changes something or a deadline passes. Deadlines are on `clock` (monotonic in
/// the product) and the wait itself is a pthread condition bound to CLOCK_MONOTONIC: Foundation's
/// `NSCondition.wait(until: Date)` waits on the wall clock, which steps. Every access goes through
/// the mutex, which is what makes the `@unchecked Sendable` honest.
final class ConditionBox<State>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var state: State
    let clock: any AudioClock

    init(_ state: State, clock: any AudioClock = MonotonicClock()) {
        self.state = state
        self.clock = clock
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` under the lock and wakes the worker.
    @discardableResult
    func update<R>(_ body: (inout State) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer {
            pthread_cond_broadcast(condition)
            pthread_mutex_unlock(mutex)
        }
        return try body(&state)
    }

    func read<R>(_ body: (State) -> R) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body(state)
    }

    enum Decision<R> {
        case proceed(R)
        /// Sleep until woken by `update`, or until `clock` reaches the deadline (nil: no timeout).
        case sleep(until: Double?)
    }

    /// Asks `decide` (under the lock) what to do, sleeping as it says until it returns `.proceed`.
    func next<R>(_ decide: (inout State) -> Decision<R>) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while true {
            switch decide(&state) {
            case .proceed(let r): return r
            case .sleep(let deadline?):
                // Waited for on CLOCK_MONOTONIC: `clock` is that clock in the product; a test's clock
                // is re-read by `decide` whenever `update` wakes the worker.
                let remaining = max(0, deadline - clock.now())
                var ts = timespec()
                clock_gettime(CLOCK_MONOTONIC, &ts)
                let whole = remaining.rounded(.down)
                var nanoseconds = Int(ts.tv_nsec) + Int((remaining - whole) * 1e9)
                var seconds = Int(ts.tv_sec) + Int(min(whole, 1e9))
                if nanoseconds >= 1_000_000_000 {
                    nanoseconds -= 1_000_000_000
                    seconds += 1
                }
                ts.tv_sec = seconds
                ts.tv_nsec = nanoseconds
                _ = pthread_cond_timedwait(condition, mutex, &ts)
            case .sleep(nil):
                pthread_cond_wait(condition, mutex)
            }
        }
    }
}
