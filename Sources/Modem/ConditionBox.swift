import Foundation

/// State shared between a caller and one worker thread, with a condition the worker can sleep on
/// until the caller changes something or a deadline passes. `Mutex` cannot wait with a timeout,
/// so this pairs NSCondition with the value it guards; every access goes through the lock, which
/// is what makes the `@unchecked Sendable` honest.
final class ConditionBox<State>: @unchecked Sendable {
    private let condition = NSCondition()
    private var state: State

    init(_ state: State) { self.state = state }

    /// Runs `body` under the lock and wakes the worker.
    @discardableResult
    func update<R>(_ body: (inout State) throws -> R) rethrows -> R {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        return try body(&state)
    }

    func read<R>(_ body: (State) -> R) -> R {
        condition.lock()
        defer { condition.unlock() }
        return body(state)
    }

    enum Decision<R> {
        case proceed(R)
        /// Sleep until woken by `update`, or until the date passes (nil: no timeout).
        case sleep(until: Date?)
    }

    /// Asks `decide` (under the lock) what to do, sleeping as it says until it returns `.proceed`.
    func next<R>(_ decide: (inout State) -> Decision<R>) -> R {
        condition.lock()
        defer { condition.unlock() }
        while true {
            switch decide(&state) {
            case .proceed(let r): return r
            case .sleep(let deadline):
                if let deadline { _ = condition.wait(until: deadline) } else { condition.wait() }
            }
        }
    }
}
