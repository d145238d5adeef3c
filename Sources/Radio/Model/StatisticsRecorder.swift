import Synchronization

/// Drop counters shared by the pieces of one radio (reader thread, controller, scanner), which
/// run on different threads; a lock is the honest tool for a few integers.
final class StatisticsRecorder: Sendable {
    private let counters = Mutex(RadioStatistics())

    var snapshot: RadioStatistics { counters.withLock { $0 } }

    func record(_ update: (inout RadioStatistics) -> Void) {
        counters.withLock { update(&$0) }
    }
}
