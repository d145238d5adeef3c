import Synchronization

/// A bounded queue from a producer (a loop thread, an actor) to one async consumer: what
/// `AsyncStream(bufferingPolicy: .bufferingNewest(limit))` does, except that its storage is given
/// back once the consumer has drained it.
///
/// An `AsyncStream`'s buffer keeps the capacity its fullest moment gave it. Between the HCI socket
/// and the manager there were three queues of 4,096 entries (now a read's sightings reach the manager
/// in one call, and these queues carry only what no owner takes itself); a flood on a busy machine
/// filled them, and ~0.75 MB of drained buffers then stayed after every found entry had expired
/// (docs/footprint-found.md, "What stays after expiry"). Here a drained queue keeps at most
/// `keptCapacity` slots, and a taken entry's slot is cleared at once, so nothing it refers to (a
/// packet's bytes) outlives its turn.
///
/// Like `AsyncStream`: when full, the oldest entry is dropped (and returned by `yield`); after
/// `finish()` the consumer gets what is left, then nil; cancelling the consumer's task ends the
/// queue. One consumer at a time.
public struct EventQueue<Element: Sendable>: AsyncSequence, Sendable {
    public typealias Failure = Never

    public enum YieldResult {
        case enqueued
        /// The queue was full: this, the oldest entry, made room.
        case dropped(Element)
        /// The queue was finished or its consumer cancelled: the element was not kept.
        case terminated
    }

    /// The producer's side.
    public struct Sink: Sendable {
        fileprivate let storage: Storage

        @discardableResult
        public func yield(_ element: Element) -> YieldResult { storage.yield(element) }

        /// The consumer gets what is queued, then nil. Idempotent.
        public func finish() { storage.finish() }
    }

    /// Slots a drained queue keeps, so a steady trickle does not allocate for every entry.
    static var keptCapacity: Int { 64 }

    private let storage: Storage

    public static func make(limit: Int) -> (queue: EventQueue, sink: Sink) {
        let storage = Storage(limit: limit)
        return (EventQueue(storage: storage), Sink(storage: storage))
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(storage: storage) }

    public struct AsyncIterator: AsyncIteratorProtocol {
        fileprivate let storage: Storage

        public mutating func next() async -> Element? { await storage.next() }
    }

    /// Slots allocated now, for tests of what a drained queue keeps.
    var allocatedCapacity: Int { storage.allocatedCapacity }

    fileprivate final class Storage: Sendable {
        private struct State {
            /// Entries from `head` on are queued; the slots before it have been taken (nil).
            var slots: [Element?] = []
            var head = 0
            var ended = false
            var waiter: CheckedContinuation<Element?, Never>?

            var count: Int { slots.count - head }

            mutating func takeFirst() -> Element? {
                guard head < slots.count else { return nil }
                let element = slots[head].take()
                head += 1
                if head == slots.count {
                    slots.removeAll(keepingCapacity: slots.capacity <= keptCapacity)
                    head = 0
                } else if head >= keptCapacity, head * 2 >= slots.count {
                    // The taken half goes, so the array never grows past twice what is queued.
                    slots.removeFirst(head)
                    head = 0
                }
                return element
            }
        }

        private let limit: Int
        private let state = Mutex(State())

        init(limit: Int) {
            precondition(limit > 0, "an EventQueue holds at least one entry")
            self.limit = limit
        }

        var allocatedCapacity: Int { state.withLock { $0.slots.capacity } }

        private enum Outcome { case resume(CheckedContinuation<Element?, Never>), result(YieldResult) }

        func yield(_ element: Element) -> YieldResult {
            let outcome = state.withLock { state -> Outcome in
                if state.ended { return .result(.terminated) }
                if let waiter = state.waiter {
                    state.waiter = nil
                    return .resume(waiter)
                }
                var dropped: Element?
                if state.count >= limit { dropped = state.takeFirst() }
                state.slots.append(element)
                return .result(dropped.map { .dropped($0) } ?? .enqueued)
            }
            switch outcome {
            case .resume(let waiter):
                waiter.resume(returning: element)
                return .enqueued
            case .result(let result):
                return result
            }
        }

        func finish() {
            let waiter = state.withLock { state in
                state.ended = true
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: nil)
        }

        func next() async -> Element? {
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Element?, Never>) in
                    let ready = state.withLock { state -> Element?? in
                        if let element = state.takeFirst() { return .some(element) }
                        if state.ended || Task.isCancelled { return .some(nil) }
                        precondition(state.waiter == nil, "an EventQueue has one consumer")
                        state.waiter = continuation
                        return nil
                    }
                    if let ready { continuation.resume(returning: ready) }
                }
            } onCancel: {
                // As with AsyncStream, a cancelled consumer ends the queue: nothing more is kept.
                let waiter = state.withLock { state in
                    state.ended = true
                    state.slots = []
                    state.head = 0
                    defer { state.waiter = nil }
                    return state.waiter
                }
                waiter?.resume(returning: nil)
            }
        }
    }
}
