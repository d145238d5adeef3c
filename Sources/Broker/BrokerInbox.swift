#if canImport(Glibc)
import Glibc
#endif
import NearbyProtocol
import Synchronization
import SystemCall

/// What other threads hand to the broker's loop: events from the manager, replies from handler
/// tasks, shutdown. A non-blocking pipe wakes the loop's poll(2) (eventfd is not visible to Swift's
/// Glibc module); it is written only when the inbox goes from empty to non-empty, so a burst of
/// events costs one wake-up. While the loop holds events to coalesce writes, events do not wake
/// it at all (`eventsWakeTheLoop`); replies and shutdown always do.
final class BrokerInbox: Sendable {
    enum Item: Sendable {
        case event(BrokerEvent)
        case reply(ClientID, SocketReply)
        /// Another part asks for the retained events (`RetainedEventSource`), answered in order.
        case retained(topics: Set<String>?, answer: @Sendable ([BrokerEvent]?) -> Void)
    }

    private struct State {
        var items: [Item] = []
        /// A byte is in the pipe (or about to be): the loop will wake and take.
        var wakePending = false
        var eventsWake = true
        var shutdown = false
        /// The loop has ended (or never ran): nothing posted from now on is handled.
        var closed = false
        var statistics = SocketBrokerStatistics()
        /// Liveness probes waiting for the loop's next turn (`probe`), by id.
        var probes: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextProbe = 0
        /// Probes cancelled before they were parked: they must not park.
        var cancelledProbes: Set<Int> = []
    }

    private let wakePipe: WakePipe
    /// The loop polls this end.
    var wakeFD: Int32 { wakePipe.fd }
    private let state = Mutex(State())

    init(path: String) throws(SocketBrokerError) {
        do throws(Errno) {
            wakePipe = try WakePipe()
        } catch {
            throw SocketBrokerError(path: path, kind: .system(call: "pipe", errno: error))
        }
    }

    /// Beyond this many unprocessed items, events that are not retained are dropped (and counted):
    /// a stalled loop must not let the manager grow memory without bound.
    static let capacity = 200_000

    func post(_ item: Item) {
        let wake = state.withLock { state -> Bool? in
            if state.closed { return nil }
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
        guard let wake else { return Self.refuse([item]) }
        if wake { signal() }
    }

    /// The loop has ended, or will never run: what is still waiting is not handled, and a request
    /// for the retained events is answered with nil rather than left waiting for ever.
    func close() {
        let left = state.withLock { state in
            state.closed = true
            defer { state.items = [] }
            return state.items
        }
        Self.refuse(left)
    }

    private static func refuse(_ items: [Item]) {
        for case .retained(_, let answer) in items { answer(nil) }
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

    /// Everything posted since the last call, and whether shutdown was asked. Taking the inbox is
    /// the loop's proof of life: every waiting `probe` is answered.
    func take() -> (items: [Item], shutdown: Bool) {
        wakePipe.drain()
        let (taken, probes) = state.withLock { state in
            state.wakePending = false
            defer { state.items = []; state.probes = [:] }
            return ((state.items, state.shutdown), Array(state.probes.values))
        }
        probes.forEach { $0.resume() }
        return taken
    }

    /// Returns once the loop has taken the inbox after this call (it wakes the loop): the loop turns.
    /// A stuck loop never answers; cancelling the caller ends the wait.
    func probe() async {
        let id = state.withLock { state -> Int in
            state.nextProbe += 1
            return state.nextProbe
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let action = state.withLock { state -> (resume: Bool, wake: Bool) in
                    if state.cancelledProbes.remove(id) != nil { return (true, false) }
                    state.probes[id] = continuation
                    defer { state.wakePending = true }
                    return (false, !state.wakePending)
                }
                if action.resume { continuation.resume() }
                if action.wake { signal() }
            }
        } onCancel: {
            let parked = state.withLock { state -> CheckedContinuation<Void, Never>? in
                if let parked = state.probes.removeValue(forKey: id) { return parked }
                state.cancelledProbes.insert(id)
                return nil
            }
            parked?.resume()
        }
        state.withLock { _ = $0.cancelledProbes.remove(id) }
    }

    /// Probes parked until the loop's next turn (what a test of a stopped loop waits for).
    var waitingProbes: Int { state.withLock { $0.probes.count } }

    var statistics: SocketBrokerStatistics { state.withLock { $0.statistics } }

    func updateStatistics(_ body: (inout SocketBrokerStatistics) -> Void) {
        state.withLock { body(&$0.statistics) }
    }

    private func signal() { wakePipe.wake() }
}
