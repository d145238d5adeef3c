import Synchronization

/// "Something changed": a waiter resumes on the next `signal()` or at its deadline, whichever comes
/// first. Used to wait for log lines, socket lines and process exit without polling.
///
/// Take `generation` before checking your condition and pass it to `wait`: a signal that came in
/// between is then not missed.
final class ChangeSignal: Sendable {
    private struct State {
        var generation = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
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

    /// Returns once the generation differs from `seen`, or at the deadline.
    func wait(since seen: Int, until deadline: ContinuousClock.Instant) async {
        let id = state.withLock { s -> Int in s.nextID += 1; return s.nextID }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let resumeNow = self.state.withLock { s -> Bool in
                        if s.generation != seen { return true }
                        s.waiters[id] = continuation
                        return false
                    }
                    if resumeNow { continuation.resume() }
                }
            }
            group.addTask {
                // A deadline, not synchronisation: the awaited event may never come.
                try? await ContinuousClock().sleep(until: deadline)
                let waiter = self.state.withLock { $0.waiters.removeValue(forKey: id) }
                waiter?.resume()
            }
            await group.next()
            group.cancelAll()
        }
    }
}
