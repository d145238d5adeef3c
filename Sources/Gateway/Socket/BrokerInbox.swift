#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// What other threads hand to the broker's loop: events from the manager, replies from handler
/// tasks, shutdown. A non-blocking pipe wakes the loop's poll(2) (eventfd is not visible to Swift's
/// Glibc module); it is written only when the inbox goes from empty to non-empty, so a burst of
/// events costs one wake-up. While the loop holds events to coalesce writes, events do not wake
/// it at all (`eventsWakeTheLoop`); replies and shutdown always do.
final class BrokerInbox: Sendable {
    enum Item: Sendable {
        case event(BrokerEvent)
        case reply(ClientID, SocketReply)
    }

    private struct State {
        var items: [Item] = []
        /// A byte is in the pipe (or about to be): the loop will wake and take.
        var wakePending = false
        var eventsWake = true
        var shutdown = false
        var statistics = SocketBrokerStatistics()
    }

    /// The loop polls this end.
    let wakeFD: Int32
    private let signalFD: Int32
    private let state = Mutex(State())

    init(path: String) throws(SocketBrokerError) {
        var ends: [Int32] = [0, 0]
        try Posix.call("pipe", path: path) { pipe(&ends) }
        for fd in ends {
            try Posix.call("fcntl", path: path) { fcntl(fd, F_SETFL, O_NONBLOCK) }
            try Posix.call("fcntl", path: path) { fcntl(fd, F_SETFD, FD_CLOEXEC) }
        }
        wakeFD = ends[0]
        signalFD = ends[1]
    }

    deinit {
        close(wakeFD)
        close(signalFD)
    }

    /// Beyond this many unprocessed items, events that are not retained are dropped (and counted):
    /// a stalled loop must not let the manager grow memory without bound.
    static let capacity = 200_000

    func post(_ item: Item) {
        let wake = state.withLock { state -> Bool in
            if case .event(let event) = item {
                state.statistics.eventsPublished += 1
                if state.items.count >= Self.capacity, event.retain == .none {
                    state.statistics.eventsDropped += 1
                    return false
                }
            }
            state.items.append(item)
            if case .event = item, !state.eventsWake { return false }
            defer { state.wakePending = true }
            return !state.wakePending
        }
        if wake { signal() }
    }

    /// The loop says whether posting an event should wake it. Turning it back on with items
    /// waiting wakes the loop at once, so nothing posted meanwhile can wait for the next event.
    func eventsWakeTheLoop(_ wake: Bool) {
        let signalNow = state.withLock { state -> Bool in
            state.eventsWake = wake
            guard wake, !state.items.isEmpty, !state.wakePending else { return false }
            state.wakePending = true
            return true
        }
        if signalNow { signal() }
    }

    func requestShutdown() {
        state.withLock { $0.shutdown = true }
        signal()
    }

    /// Everything posted since the last call, and whether shutdown was asked.
    func take() -> (items: [Item], shutdown: Bool) {
        var drain = [UInt8](repeating: 0, count: 64)
        while read(wakeFD, &drain, drain.count) > 0 {}
        return state.withLock { state in
            state.wakePending = false
            defer { state.items = [] }
            return (state.items, state.shutdown)
        }
    }

    var statistics: SocketBrokerStatistics { state.withLock { $0.statistics } }

    func updateStatistics(_ body: (inout SocketBrokerStatistics) -> Void) {
        state.withLock { body(&$0.statistics) }
    }

    private func signal() {
        var one: UInt8 = 1
        _ = write(signalFD, &one, 1)   // EAGAIN means the pipe is full: the loop is being woken anyway
    }
}
