import Synchronization
import SystemCall
import Testing
import TestSupport



#if canImport(Glibc)
import Glibc
#endif

/// An actor on a given loop, as `Radio` and `HCIController` are.
private actor OnLoop {
    nonisolated let loop: EventLoop
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }
    init(_ loop: EventLoop) { self.loop = loop }
    func runsOnLoop() -> Bool { loop.isCurrent }
}

/// A pipe's read end on the loop: reads a byte when poll(2) says so, and reports it.
private final class PipeWatch: LoopWatch {
    let fd: Int32
    let onRead: @Sendable () -> Void
    private let finished = Atomic<Bool>(false)

    init(fd: Int32, onRead: @escaping @Sendable () -> Void) {
        self.fd = fd
        self.onRead = onRead
    }

    func interest() -> (fd: Int32, events: Int16)? { finished.load(ordering: .acquiring) ? nil : (fd, Int16(POLLIN)) }

    func ready(_ revents: Int16) {
        var byte: UInt8 = 0
        _ = read(fd, &byte, 1)
        finished.store(true, ordering: .releasing)
        onRead()
    }

    func pollFailed(_ error: Errno) {}
}

/// A job that queues itself again on its loop until stopped: a queue that never empties.
private final class Requeueing: Sendable {
    let loop: EventLoop
    private let count = Atomic<Int>(0)
    private let stopped = Atomic<Bool>(false)
    var turns: Int { count.load(ordering: .relaxed) }

    init(_ loop: EventLoop) { self.loop = loop }

    func turn() {
        guard !stopped.load(ordering: .acquiring) else { return }
        count.add(1, ordering: .relaxed)
        loop.execute { self.turn() }
    }

    func stop() { stopped.store(true, ordering: .releasing) }
}

/// The radio's own thread: its timers, its wake-ups from other threads and its shutdown.
@Suite struct EventLoopTests {
    /// A loop thread that ran again only after a timer's deadline (a starved Pi, a loaded emulated
    /// guest) first reads what its descriptor got before the deadline, then fires the timer: a
    /// Command Complete already in the socket is not timed out.
    @Test func aTimerDueAfterAStallFiresOnceTheDescriptorIsRead() async throws {
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        defer { for fd in ends { close(fd) } }
        let loop = try EventLoop(name: "loop-stall")
        defer { loop.shutdown() }
        let (order, sink) = AsyncStream<String>.makeStream()
        loop.watch(PipeWatch(fd: ends[0]) { sink.yield("read") })
        let writeEnd = ends[1]
        // All on the loop thread, so that nothing the loop does can come between: the timer is
        // armed, the answer arrives, and the thread is held past the deadline.
        loop.execute {
            let deadline = ContinuousClock.now + .milliseconds(1)
            loop.schedule(at: deadline) { sink.yield("timer") }
            var byte: UInt8 = 1
            _ = write(writeEnd, &byte, 1)
            while ContinuousClock.now < deadline { usleep(2_000) }
        }
        let seen = try await withDeadline(.seconds(10), waitingFor: { "the read and the timer" }) {
            var seen: [String] = []
            for await item in order {
                seen.append(item)
                if seen.count == 2 { break }
            }
            return seen
        }
        #expect(seen == ["read", "timer"])
    }

    /// Work that keeps queueing more (the manager draining its backlog one await at a time) does not
    /// keep the loop from its descriptors: it polls, without waiting, between turns of such work.
    /// Before, it polled only once its queue was empty, and the HCI socket's reports, and a command's
    /// answer behind them, waited until the backlog was gone.
    @Test func workThatKeepsQueueingMoreStillLetsTheLoopReadItsDescriptors() async throws {
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        defer { for fd in ends { close(fd) } }
        let loop = try EventLoop(name: "loop-busy")
        defer { loop.shutdown() }
        let (reads, sink) = AsyncStream<Void>.makeStream()
        loop.watch(PipeWatch(fd: ends[0]) { sink.yield() })
        let work = Requeueing(loop)
        defer { work.stop() }
        // From the loop itself, so the queue is never empty from here on, then the byte arrives.
        loop.execute { work.turn() }
        var byte: UInt8 = 1
        #expect(write(ends[1], &byte, 1) == 1)
        try await withDeadline(.seconds(10), waitingFor: { "the read while the queue never empties" }) {
            for await _ in reads { return }
        }
        #expect(work.turns > 0)
    }

    @Test func timersFireInDeadlineOrderOnTheLoopThread() async throws {
        let loop = try EventLoop(name: "loop-timers")
        defer { loop.shutdown() }
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
        let loop = try EventLoop(name: "loop-wake", willPoll: { sink.yield() })
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
        let loop = try EventLoop(name: "loop-cancel")
        defer { loop.shutdown() }
        let sleeper = Task { try await loop.sleep(for: .seconds(3600)) }
        sleeper.cancel()
        let outcome = try await withDeadline(.seconds(10), waitingFor: { "the cancelled sleep" }) { await sleeper.result }
        #expect(throws: CancellationError.self) { try outcome.get() }
    }

    @Test func shutdownRunsWhatIsQueuedAndJoinsTheThread() throws {
        let loop = try EventLoop(name: "loop-join")
        let ran = Atomic<Bool>(false)
        loop.execute {
            // Slow on purpose, not to synchronise: a shutdown that waits for the thread passes
            // however long this takes; one that did not wait would return first and fail.
            usleep(50_000)
            ran.store(true, ordering: .releasing)
        }
        loop.shutdown()
        let ranBeforeShutdownReturned = ran.load(ordering: .acquiring)
        #expect(ranBeforeShutdownReturned)
    }

    /// Issue 38: a loop without its thread used to run its jobs on Swift's pool instead. Now it is
    /// no loop: the init throws the call that failed and its errno (pipe: pthread_create never ran).
    @Test func aLoopWhoseWakePipeFailsIsNotMade() {
        let error = #expect(throws: EventLoop.StartFailure.self) {
            _ = try EventLoop(name: "no-pipe", wakePipe: { () throws(Errno) in throw Errno(rawValue: EMFILE) })
        }
        #expect(error == EventLoop.StartFailure(call: "pipe", errno: Errno(rawValue: EMFILE)))
        #expect(error?.description == "pipe: Too many open files (errno 24)")
    }

    @Test func shutdownFromTheLoopItselfDoesNotWaitForItself() async throws {
        let loop = try EventLoop(name: "loop-self")
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
