import Synchronization

/// "Something changed": a waiter resumes on the next `signal()`, at its deadline or when its task
/// is cancelled, whichever comes first. Used to wait for log lines, socket lines and process exit
/// without polling.
///
/// Take `generation` before checking your condition and pass it to `wait`: a signal that came in
/// between is then not missed.
final class ChangeSignal: Sendable {
    private struct State {
        var generation = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        /// Waits whose deadline or cancellation came before they had parked: they must not park.
        var expired: Set<Int> = []
        var nextID = 0
    }
    private let state = Mutex(State())

    var generation: Int { state.withLock { $0.generation } }

    func signal() {
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.generation += 1
            defer { s.waiters = [:] }
            return Array(s.waiters.values)
        }
        waiters.forEach { $0.resume() }
    }

    /// Returns once the generation differs from `seen`, at the deadline, or on cancellation.
    func wait(since seen: Int, until deadline: ContinuousClock.Instant) async {
        let id = state.withLock { s -> Int in s.nextID += 1; return s.nextID }
        // A deadline, not synchronisation: the awaited event may never come.
        let timer = Task { [self] in
            guard (try? await ContinuousClock().sleep(until: deadline)) != nil else { return }
            expire(id)
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { s -> Bool in
                    if s.generation != seen || s.expired.remove(id) != nil { return true }
                    s.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            expire(id)
        }
        timer.cancel()
        state.withLock { _ = $0.expired.remove(id) }
    }

    /// Resumes wait `id` if it is parked, or keeps it from parking if it is not yet.
    private func expire(_ id: Int) {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            if let waiter = s.waiters.removeValue(forKey: id) { return waiter }
            s.expired.insert(id)
            return nil
        }
        waiter?.resume()
    }
}
