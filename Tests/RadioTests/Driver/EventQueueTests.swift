import Testing

@testable import Radio

/// The queues between the HCI socket and the manager (`EventQueue`): bounded like
/// `AsyncStream.bufferingNewest`, and giving their storage back once drained (an `AsyncStream`'s
/// buffer keeps the capacity of its fullest moment: issue 31, what stays after a flood expires).
@Suite struct EventQueueTests {
    @Test("A queue filled to its limit and drained keeps no more than its small reserve of slots")
    func drainedStorageIsGivenBack() async {
        let (queue, sink) = EventQueue<[UInt8]>.make(limit: 4_096)
        for n in 0..<4_096 { #expect(isEnqueued(sink.yield([UInt8(truncatingIfNeeded: n)]))) }
        #expect(queue.allocatedCapacity >= 4_096)
        var iterator = queue.makeAsyncIterator()
        for n in 0..<4_096 { #expect(await iterator.next() == [UInt8(truncatingIfNeeded: n)]) }
        #expect(queue.allocatedCapacity <= EventQueue<[UInt8]>.keptCapacity,
                "a drained queue still holds \(queue.allocatedCapacity) slots")
    }

    @Test("Full: the oldest entry is dropped and returned, the newest kept, in order")
    func fullDropsTheOldest() async {
        let (queue, sink) = EventQueue<Int>.make(limit: 3)
        let results = (1...5).map { sink.yield($0) }
        #expect(results.prefix(3).allSatisfy(isEnqueued))
        #expect(dropped(results[3]) == 1 && dropped(results[4]) == 2)
        sink.finish()
        var got: [Int] = []
        for await n in queue { got.append(n) }
        #expect(got == [3, 4, 5])
    }

    @Test("A steady flow with entries waiting never lets the array grow past twice what is queued")
    func steadyFlowStaysCompact() async {
        let (queue, sink) = EventQueue<Int>.make(limit: 4_096)
        var iterator = queue.makeAsyncIterator()
        for n in 0..<1_000 { sink.yield(n) }
        var expected = 0
        for n in 1_000..<50_000 {
            sink.yield(n)
            #expect(await iterator.next() == expected)
            expected += 1
        }
        #expect(queue.allocatedCapacity <= 4 * 1_000, "\(queue.allocatedCapacity) slots for 1,000 queued")
    }

    @Test("Finished: the consumer gets what is queued, then nil; later entries are refused")
    func finishEndsAfterTheQueued() async {
        let (queue, sink) = EventQueue<Int>.make(limit: 8)
        sink.yield(1)
        sink.yield(2)
        sink.finish()
        #expect(isTerminated(sink.yield(3)))
        var iterator = queue.makeAsyncIterator()
        #expect(await iterator.next() == 1)
        #expect(await iterator.next() == 2)
        #expect(await iterator.next() == nil)
        #expect(await iterator.next() == nil)
    }

    @Test("A waiting consumer is handed the next entry; finishing wakes it with nil")
    func waitingConsumerIsWoken() async {
        let (queue, sink) = EventQueue<Int>.make(limit: 128)
        let consumer = Task {
            var got: [Int] = []
            for await n in queue { got.append(n) }
            return got
        }
        // Whether the consumer is parked yet or not, each entry reaches it exactly once.
        for n in 0..<100 { sink.yield(n) }
        sink.finish()
        #expect(await consumer.value == Array(0..<100))
    }

    @Test("Cancelling the consumer ends the queue: it returns nil and later entries are refused")
    func cancellingTheConsumerEndsTheQueue() async {
        let (queue, sink) = EventQueue<Int>.make(limit: 8)
        let consumer = Task {
            var count = 0
            for await _ in queue { count += 1 }
            return count
        }
        consumer.cancel()
        #expect(await consumer.value == 0)
        #expect(isTerminated(sink.yield(1)))
    }

    private func isEnqueued<T>(_ result: EventQueue<T>.YieldResult) -> Bool {
        if case .enqueued = result { return true }
        return false
    }

    private func isTerminated<T>(_ result: EventQueue<T>.YieldResult) -> Bool {
        if case .terminated = result { return true }
        return false
    }

    private func dropped<T>(_ result: EventQueue<T>.YieldResult) -> T? {
        if case .dropped(let element) = result { return element }
        return nil
    }
}
