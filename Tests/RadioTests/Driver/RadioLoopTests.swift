import Synchronization
import SystemCall
import Testing
import TestSupport

@testable import Radio

#if canImport(Glibc)
import Glibc
#endif

/// An actor on a given loop, as `Radio` and `HCIController` are.
private actor OnLoop {
    nonisolated let loop: RadioLoop
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }
    init(_ loop: RadioLoop) { self.loop = loop }
    func runsOnLoop() -> Bool { loop.isCurrent }
}

/// The radio's own thread: its timers, its wake-ups from other threads and its shutdown.
@Suite struct RadioLoopTests {
    @Test func timersFireInDeadlineOrderOnTheLoopThread() async throws {
        let loop = RadioLoop(name: "loop-timers")
        defer { loop.shutdown() }
        #expect(loop.failure == nil)
        let (fired, sink) = AsyncStream<(Int, Bool)>.makeStream()
        let now = ContinuousClock.now
        // Scheduled out of order, from this (pool) thread.
        for milliseconds in [30, 10, 20] {
            loop.schedule(at: now + .milliseconds(milliseconds)) { sink.yield((milliseconds, loop.isCurrent)) }
        }
        let cancelled = loop.schedule(at: now + .milliseconds(15)) { sink.yield((15, loop.isCurrent)) }
        loop.cancel(cancelled)
        let order = try await withDeadline(.seconds(10), waitingFor: { "three timers" }) {
            var order: [(Int, Bool)] = []
            for await item in fired {
                order.append(item)
                if order.count == 3 { break }
            }
            return order
        }
        #expect(order.map(\.0) == [10, 20, 30])
        #expect(order.allSatisfy { $0.1 })
    }

    @Test func workEnqueuedFromAnotherThreadWakesThePollingLoop() async throws {
        let loop = RadioLoop(name: "loop-wake")
        defer { loop.shutdown() }
        let actor = OnLoop(loop)
        // No timer is armed: once parked, the loop sleeps in poll(2) until the enqueue's write to
        // its pipe wakes it.
        try await parked("loop-wake")
        let onLoop = try await withDeadline(.seconds(10), waitingFor: { "the actor's job to run" }) { await actor.runsOnLoop() }
        #expect(onLoop)
        #expect(!loop.isCurrent)
        let slept = try await withDeadline(.seconds(10), waitingFor: { "a loop sleep" }) {
            do {
                try await loop.sleep(for: .milliseconds(5))
                return true
            } catch {
                return false
            }
        }
        #expect(slept)
    }

    /// Waits until the thread called `name` sleeps (state S in /proc): a loop with nothing to do
    /// sleeps only in poll(2).
    func parked(_ name: String) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            for task in threadIDs() {
                let comm = (try? SystemCall.readFile("/proc/self/task/\(task)/comm")).map { String(decoding: $0, as: UTF8.self) }
                guard comm == name + "\n", let stat = try? SystemCall.readFile("/proc/self/task/\(task)/stat") else { continue }
                // "TID (comm) S ...": the state follows the last ')'.
                let text = String(decoding: stat, as: UTF8.self)
                if let close = text.lastIndex(of: ")"), text[text.index(after: close)...].hasPrefix(" S") { return }
            }
            await Task.yield()
        }
        throw DeadlineExceeded(what: "the thread \(name) to sleep in poll(2)")
    }

    func threadIDs() -> [String] {
        guard let directory = opendir("/proc/self/task") else { return [] }
        defer { closedir(directory) }
        var ids: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.first?.isNumber == true { ids.append(name) }
        }
        return ids
    }

    @Test func aCancelledSleepThrowsAtOnce() async throws {
        let loop = RadioLoop(name: "loop-cancel")
        defer { loop.shutdown() }
        let sleeper = Task { try await loop.sleep(for: .seconds(3600)) }
        sleeper.cancel()
        let outcome = try await withDeadline(.seconds(10), waitingFor: { "the cancelled sleep" }) { await sleeper.result }
        #expect(throws: CancellationError.self) { try outcome.get() }
    }

    @Test func shutdownRunsWhatIsQueuedAndJoinsTheThread() throws {
        let loop = RadioLoop(name: "loop-join")
        let ran = Atomic<Bool>(false)
        loop.execute {
            // Slow on purpose: a shutdown that did not wait for the thread would return first.
            usleep(50_000)
            ran.store(true, ordering: .releasing)
        }
        loop.shutdown()
        let ranBeforeShutdownReturned = ran.load(ordering: .acquiring)
        #expect(ranBeforeShutdownReturned)
    }

    @Test func shutdownFromTheLoopItselfDoesNotWaitForItself() async throws {
        let loop = RadioLoop(name: "loop-self")
        let (done, sink) = AsyncStream<Void>.makeStream()
        loop.execute {
            loop.shutdown()
            sink.yield()
        }
        try await withDeadline(.seconds(10), waitingFor: { "the loop's own shutdown to return" }) {
            for await _ in done { return () }
            return nil
        }
    }
}
