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
        let (polls, sink) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let loop = RadioLoop(name: "loop-wake", willPoll: { sink.yield() })
        defer { loop.shutdown() }
        let actor = OnLoop(loop)
        // No timer is armed: once the loop has found its queue empty it polls with no timeout, and
        // only the enqueue's write to its pipe can wake it (without it this wait never ends).
        try await withDeadline(.seconds(10), waitingFor: { "the loop to poll" }) {
            for await _ in polls { break }
        }
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
