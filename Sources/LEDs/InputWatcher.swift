import Glibc
import Logging
import NearbyProtocol
import SystemCall
import Synchronization

/// Watches one input line on its own thread (a blocking edge wait must not sit on
/// Swift's two-thread cooperative pool) and turns debounced changes into `PowerRequest`s.
///
/// The wait has a timeout (`pollInterval`) only so that `stop` is prompt; between edges the thread
/// sleeps in the kernel.
public final class InputWatcher: Sendable {
    public let name: String
    public let input: InputLine
    private let source: any GPIOEventSource
    private let logger: Logger
    private let pollInterval: Duration
    private let onRequest: @Sendable (PowerRequest) -> Void
    private let state = Mutex(State())

    private struct State {
        var started = false
        var stopRequested = false
        var finished = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    public init(
        name: String, input: InputLine, source: any GPIOEventSource, logger: Logger,
        pollInterval: Duration = .milliseconds(100),
        onRequest: @escaping @Sendable (PowerRequest) -> Void
    ) {
        self.name = name
        self.input = input
        self.source = source
        self.logger = logger
        self.pollInterval = pollInterval
        self.onRequest = onRequest
    }

    public func start() {
        let first = state.withLock { state -> Bool in
            defer { state.started = true }
            return !state.started && !state.stopRequested
        }
        guard first else { return }
        do throws(Errno) {
            try OSThread.start(name: "gpio-\(name)") { [self] in
                run()
                finish()
            }
        } catch {
            logger.error("input \(name) not watched: pthread_create failed: \(error)")
            finish()
        }
    }

    /// Ends the thread (within `pollInterval`) and releases the line; returns when both are done.
    public func stop() async {
        let mustWait = state.withLock { state -> Bool in
            state.stopRequested = true
            return state.started && !state.finished
        }
        if mustWait {
            await withCheckedContinuation { continuation in
                let done = state.withLock { state -> Bool in
                    if state.finished { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if done { continuation.resume() }
            }
        } else {
            source.release()
        }
    }

    /// For a watcher that never started (start-up failed later): hand its line back.
    func releaseUnstarted() {
        source.release()
    }

    private var stopRequested: Bool { state.withLock { $0.stopRequested } }

    private func finish() {
        source.release()
        let waiters = state.withLock { state in
            state.finished = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    private func run() {
        let start = ContinuousClock.now
        func now() -> Duration { start.duration(to: .now) }
        var debouncer = Debouncer(hold: input.debounce)
        do throws(GPIOError) {
            let initial = try source.level()
            debouncer.reset(to: initial)
            // A power-level line is the truth about the TV, so it wins over the saved state at boot.
            if input.kind == .powerLevel { onRequest(.set(initial ? .active : .standby)) }
            while !stopRequested {
                let untilSettled = debouncer.deadline.map { max(.zero, $0 - now()) }
                let timeout = min(untilSettled ?? pollInterval, pollInterval)
                let edge = try source.waitForEdge(timeout: timeout)
                // After an edge the level may still bounce; after a timeout with a change pending,
                // this sample confirms the level held.
                guard edge || debouncer.deadline != nil else { continue }
                if let settled = debouncer.observe(try source.level(), at: now()) {
                    report(settled)
                }
            }
        } catch {
            logger.error("input line stopped: \(error)", metadata: [
                "input": "\(name)", "chip": "\(error.chip)",
                "line": "\(error.line.map(String.init) ?? "-")", "errno": "\(error.errno.rawValue)",
            ])
        }
    }

    private func report(_ level: Bool) {
        switch input.kind {
        case .button:
            // A press toggles; the release that follows is not a second request.
            guard level else {
                logger.debug("power button released", metadata: ["input": "\(name)"])
                return
            }
            logger.info("power button pressed", metadata: ["input": "\(name)"])
            onRequest(.toggle)
        case .powerLevel:
            logger.info("power line \(level ? "asserted" : "released")", metadata: ["input": "\(name)"])
            onRequest(.set(level ? .active : .standby))
        }
    }
}
