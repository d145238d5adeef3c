import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A descriptor the loop polls besides its own wake-up pipe: the HCI transport's, the socket
/// broker's listener and clients, the MQTT connection's. Its callbacks run on the loop's thread.
public protocol LoopWatch: AnyObject, Sendable {
    /// The descriptor and poll(2) events wanted now, or nil once finished (the loop drops the watch).
    func interest() -> (fd: Int32, events: Int16)?
    /// poll(2) reported `revents` for the descriptor.
    func ready(_ revents: Int16)
    /// poll(2) itself failed (ENOMEM): the watch ends with this error.
    func pollFailed(_ error: Errno)
}

/// The gateway's one event loop (docs/architecture.md, "Concurrency"): one thread that is the serial
/// executor of the actors that see every advert (`Radio`, `HCIController`, the `MessageManager`),
/// the task executor of their child tasks, the poller of every descriptor they own and the clock of
/// their timers. A repeat advert that changes nothing a client sees then costs one wake of this
/// thread: poll returns, every waiting report is read, the found set's entry is updated, poll again.
/// No dispatch timer, no hop through Swift's cooperative pool, no reader thread handing packets over.
///
/// The thread blocks in poll(2) on a wake-up pipe and the watched descriptors, with the next timer's
/// deadline as the timeout. Work enqueued from another thread writes a byte to the pipe; work
/// enqueued on the thread itself does not, the loop looks at its queue before it polls again (and
/// while that queue never empties, polls without waiting at least every `maxPollGap`, 10 ms).
///
/// A loop without its thread is no loop: should the pipe or pthread_create fail, `init` throws.
public final class EventLoop: SerialExecutor, TaskExecutor, Sendable {
    public typealias TimerID = Int
    /// Why a loop could not start: the call that failed and its errno.
    public struct StartFailure: Error, Equatable, Sendable, CustomStringConvertible {
        /// "pipe" (the wake-up pipe) or "pthread_create".
        public let call: String
        public let errno: Errno
        public init(call: String, errno: Errno) {
            self.call = call
            self.errno = errno
        }
        public var description: String { "\(call): \(errno)" }
    }

    public let name: String

    private enum Work { case job(UnownedJob), call(@Sendable () -> Void) }
    private struct Timer {
        var id: TimerID
        var deadline: ContinuousClock.Instant
        var action: @Sendable () -> Void
    }
    private struct State {
        var work: [Work] = []
        /// Earliest deadline first; equal deadlines in the order they were scheduled.
        var timers: [Timer] = []
        var nextTimerID = 0
        var watches: [any LoopWatch] = []
        var stopping = false
        var thread: OSThread.Joinable?
    }
    private let state = Mutex(State())
    /// The wake-up pipe; its descriptors close with the loop.
    private let wakePipe: WakePipe
    /// The end of `wakePipe` the loop polls.
    private let wakeFD: Int32
    /// pthread_self() of the loop thread while it runs, 0 before and after.
    private let runner = Atomic<UInt>(0)
    /// Called on the thread just before it polls, its queue found empty (tests wait for it).
    private let willPoll: (@Sendable () -> Void)?

    /// Starts the loop's thread, named `name`. `wakePipe` opens the wake-up pipe: pipe(2), unless a
    /// test makes it fail. Throws the call that failed ("pipe" or "pthread_create") and its errno.
    public init(name: String, willPoll: (@Sendable () -> Void)? = nil,
         wakePipe: () throws(Errno) -> WakePipe = { () throws(Errno) in try WakePipe() }) throws(StartFailure) {
        self.name = name
        self.willPoll = willPoll
        do throws(Errno) {
            let pipe = try wakePipe()
            wakeFD = pipe.fd
            self.wakePipe = consume pipe
        } catch {
            throw StartFailure(call: "pipe", errno: error)
        }
        do throws(Errno) {
            // The thread holds the loop until it ends (`shutdown`), so it never outlives it.
            let thread = try OSThread.spawn(name: name) { [self] in loop() }
            state.withLock { $0.thread = thread }
        } catch {
            throw StartFailure(call: "pthread_create", errno: error)
        }
    }

    /// Whether the caller runs on the loop's thread.
    public var isCurrent: Bool { runner.load(ordering: .acquiring) == UInt(pthread_self()) }

    /// Timers scheduled so far (for tests of who waits on the loop).
    var timersScheduled: Int { state.withLock { $0.nextTimerID } }

    // MARK: executors

    public func enqueue(_ job: consuming ExecutorJob) { submit(.job(UnownedJob(job))) }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }

    public func checkIsolated() {
        precondition(isCurrent, "not on the radio loop \(name)")
    }

    public func isIsolatingCurrentContext() -> Bool? { isCurrent }

    /// Runs `action` on the loop, after the work already queued.
    public func execute(_ action: @escaping @Sendable () -> Void) { submit(.call(action)) }

    // MARK: timers

    /// Runs `action` on the loop at `deadline` (or soon after: poll(2) counts whole milliseconds).
    @discardableResult
    public func schedule(at deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> TimerID {
        let id = state.withLock { state in
            let id = state.nextTimerID
            state.nextTimerID += 1
            let index = state.timers.firstIndex { $0.deadline > deadline } ?? state.timers.endIndex
            state.timers.insert(Timer(id: id, deadline: deadline, action: action), at: index)
            return id
        }
        if !isCurrent { wake() }   // the loop may be polling with a later deadline
        return id
    }

    /// A timer that has not fired yet never will.
    public func cancel(_ id: TimerID) {
        state.withLock { $0.timers.removeAll { $0.id == id } }
    }

    /// Suspends until `deadline` by a loop timer, resuming on the loop; throws CancellationError
    /// when the task is cancelled first.
    public func sleep(until deadline: ContinuousClock.Instant) async throws {
        let sleeper = Sleeper()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                guard sleeper.install(continuation) else { return }
                let id = schedule(at: deadline) { sleeper.resume(with: .success(())) }
                if !sleeper.setTimer(id) { cancel(id) }
            }
        } onCancel: {
            if let id = sleeper.resume(with: .failure(CancellationError())) { cancel(id) }
        }
    }

    public func sleep(for duration: Duration) async throws {
        try await sleep(until: .now + duration)
    }

    // MARK: the watched descriptor

    /// Polls `watch`'s descriptor from now on, until its `interest()` answers nil.
    public func watch(_ watch: any LoopWatch) {
        state.withLock { $0.watches.append(watch) }
        if !isCurrent { wake() }
    }

    /// Makes the loop ask its watch for its interest again (a closing transport, bytes to write).
    public func wake() { wakePipe.wake() }

    // MARK: lifetime

    /// Stops the loop once the work queued so far has run, and waits for its thread, unless called
    /// on that thread (it then ends after the current turn).
    public func shutdown() {
        guard let thread = stop() else { return }
        if isCurrent {
            thread.detach()
        } else {
            wake()
            thread.join()
        }
    }

    /// Marks the loop stopping and hands over its thread to end (nil: none, or already handed over).
    private func stop() -> OSThread.Joinable? {
        state.withLock { state in
            state.stopping = true
            defer { state.thread = nil }
            return state.thread
        }
    }

    // MARK: internals

    private func submit(_ item: Work) {
        state.withLock { $0.work.append(item) }
        if !isCurrent { wake() }
    }

    private func run(_ item: Work) {
        switch item {
        case .job(let job):
            job.runSynchronously(isolatedTo: asUnownedSerialExecutor(), taskExecutor: asUnownedTaskExecutor())
        case .call(let action):
            action()
        }
    }

    /// The loop thread: runs what is queued and due, then polls until more is.
    private func loop() {
        runner.store(UInt(pthread_self()), ordering: .releasing)
        // Kept across turns (capacity and all), so a wake-up allocates nothing.
        var fds: [pollfd] = []
        var interests: [(fd: Int32, events: Int16)?] = []
        // A timer is due once the loop has polled after its deadline: what arrived before it (a
        // Command Complete the command timer waits for) is read first. A thread that was not
        // scheduled for longer than a timeout (a starved Pi) would otherwise time out an answer
        // already in the socket.
        var polledAt = ContinuousClock.now
        while true {
            let (work, due, watches, timeout, stopping) = state.withLock { state in
                let work = state.work
                state.work = []
                let dueCount = state.timers.prefix { $0.deadline <= polledAt }.count
                let due = state.timers.prefix(dueCount).map(\.action)
                state.timers.removeFirst(dueCount)
                return (work, due, state.watches, state.timers.first.map { Self.milliseconds(until: $0.deadline) } ?? -1,
                        state.stopping)
            }
            for item in work { run(item) }
            for action in due { action() }
            // What ran may have queued more or armed an earlier timer: look again before sleeping.
            // But poll (without waiting) at least every `maxPollGap`: work that keeps queueing more
            // (the manager draining a backlog one await at a time) kept the loop from its descriptors
            // for seconds, the HCI socket's reports and a command's answer behind them unread, and
            // the answer's timeout took the link down (the Theengs bench's guest at 1,000 adverts/s).
            let busy = !work.isEmpty || !due.isEmpty
            if busy, stopping || ContinuousClock.now - polledAt < Self.maxPollGap { continue }
            if stopping { break }
            interests.removeAll(keepingCapacity: true)
            for watch in watches { interests.append(watch.interest()) }
            if interests.contains(where: { $0 == nil }) {
                let finished = zip(watches, interests).filter { $0.1 == nil }.map(\.0)
                state.withLock { state in state.watches.removeAll { watch in finished.contains { $0 === watch } } }
                continue
            }
            fds.removeAll(keepingCapacity: true)
            fds.append(pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0))
            for interest in interests { fds.append(pollfd(fd: interest!.fd, events: interest!.events, revents: 0)) }
            if !busy { willPoll?() }
            do throws(Errno) {
                try SystemCall.retrying { poll(&fds, nfds_t(fds.count), busy ? 0 : timeout) }
                polledAt = .now
            } catch {
                polledAt = .now
                for watch in watches { watch.pollFailed(error) }
                continue
            }
            if fds[0].revents != 0 { wakePipe.drain() }
            for (watch, polled) in zip(watches, fds.dropFirst()) where polled.revents != 0 { watch.ready(polled.revents) }
        }
        runner.store(0, ordering: .releasing)
    }

    /// The longest the loop runs queued work without looking at its descriptors.
    static let maxPollGap: Duration = .milliseconds(10)

    /// poll(2)'s timeout for `deadline`, rounded up so the loop never wakes just before it.
    private static func milliseconds(until deadline: ContinuousClock.Instant) -> Int32 {
        let left = deadline - .now
        guard left > .zero else { return 0 }
        let (seconds, attoseconds) = left.components
        return Int32(clamping: seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }
}

/// One `sleep`'s continuation, resumed exactly once: by its timer or by cancellation, whichever
/// comes first, on whatever thread.
private final class Sleeper: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Void, any Error>?
        var timer: EventLoop.TimerID?
        var done = false
    }
    private let state = Mutex(State())

    /// False (and the continuation resumed) when cancelled before it got here.
    func install(_ continuation: CheckedContinuation<Void, any Error>) -> Bool {
        let cancelled = state.withLock { state in
            if state.done { return true }
            state.continuation = continuation
            return false
        }
        if cancelled { continuation.resume(throwing: CancellationError()) }
        return !cancelled
    }

    /// False when already resumed (the caller cancels the timer).
    func setTimer(_ id: EventLoop.TimerID) -> Bool {
        state.withLock { state in
            if state.done { return false }
            state.timer = id
            return true
        }
    }

    /// Resumes once; returns the timer to cancel, if any.
    @discardableResult
    func resume(with result: Result<Void, any Error>) -> EventLoop.TimerID? {
        let (continuation, timer) = state.withLock { state in
            state.done = true
            defer { state.continuation = nil }
            return (state.continuation, state.timer)
        }
        continuation?.resume(with: result)
        return timer
    }
}
