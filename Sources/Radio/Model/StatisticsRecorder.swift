import Synchronization

/// Drop counters shared by the pieces of one radio (reader thread, controller, scanner), which
/// run on different threads; a lock is the honest tool for a few integers.
final class StatisticsRecorder: Sendable {
    private let counters = Mutex(RadioStatistics())
    private let rate = Mutex(CommandRate())
    private let started = ContinuousClock.now

    var snapshot: RadioStatistics {
        var statistics = counters.withLock { $0 }
        let second = monotonicSecond()
        statistics.commandsPerSecond = rate.withLock { $0.perSecond(atSecond: second) }
        return statistics
    }

    func record(_ update: (inout RadioStatistics) -> Void) {
        counters.withLock { update(&$0) }
    }

    /// One HCI command written to the controller.
    func commandSent() {
        counters.withLock { $0.commandsSent += 1 }
        let second = monotonicSecond()
        rate.withLock { $0.record(atSecond: second) }
    }

    /// Whole seconds since the recorder was made, on the monotonic clock.
    private func monotonicSecond() -> Int64 {
        (ContinuousClock.now - started).components.seconds
    }
}
