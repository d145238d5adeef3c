import Logging
import SystemCall

/// The box's front panel: turns gateway events into LED patterns on an `LEDOutput`, with timers
/// from an injected clock (a manual one in tests), and owns the input watchers so that `shutdown`
/// releases every line.
///
/// Timers exist only while a pattern is moving (a blink, a pulse); with the box active and nothing
/// pulsing the panel schedules nothing and only wakes for the next event.
///
/// The panel runs on an event loop (the gateway's: the manager's found and lost reach it without
/// a thread switch), and with the real clock its timers are that loop's: a wink wakes the loop's
/// thread alone, not Dispatch's timer thread and a pool worker.
public actor LEDPanel {
    private let output: any LEDOutput
    /// The output's LEDs in the order they are written (sorted once: a found renders them all).
    private let names: [String]
    private let inputs: [InputWatcher]
    private let clock: PanelClock
    private let logger: Logger
    private var patterns: LEDPatterns
    /// What the output shows; only differences are written.
    private var shown: [String: Bool] = [:]
    /// LEDs whose last write failed, so a vanished chip is logged once per LED, not per blink.
    private var failing: Set<String> = []
    private var timer: Task<Void, Never>?
    private var timerDeadline: Duration?
    /// Tells a timer that fired after being replaced to do nothing.
    private var timerGeneration = 0
    private var isShutDown = false
    /// This actor's executor: the gateway's loop.
    nonisolated let loop: EventLoop
    public nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    public init(
        output: any LEDOutput,
        inputs: [InputWatcher] = [],
        clock: any Clock<Duration> = ContinuousClock(),
        timings: LEDTimings = .standard,
        logger: Logger,
        loop: EventLoop
    ) {
        self.output = output
        self.inputs = inputs
        self.loop = loop
        self.clock = PanelClock(clock, loop: loop)
        self.logger = logger
        self.patterns = LEDPatterns(timings: timings)
        // Lines are requested off and the sim starts dark.
        names = output.ledNames.sorted()
        for name in names { shown[name] = false }
    }

    /// Starts the heartbeat and the input threads.
    public func start() {
        guard !isShutDown else { return }
        for input in inputs { input.start() }
        let now = clock.now()
        patterns.start(at: now)
        update(at: now)
    }

    public func handle(_ event: LEDEvent) {
        guard !isShutDown else { return }
        let now = clock.now()
        patterns.apply(event, at: now)
        update(at: now)
    }

    /// Whether the caller runs on this panel's loop, where `handleNow` may be called.
    public nonisolated var isCurrent: Bool { loop.isCurrent }

    /// `handle` in this call, from code already on the panel's loop (the gateway's manager): a found
    /// lights its LEDs without a task. Traps on any other thread (check `isCurrent`).
    public nonisolated func handleNow(_ event: LEDEvent) {
        assumeIsolated { $0.handle(event) }
    }

    /// All LEDs off, input threads stopped, every line released. Idempotent; the gateway calls it
    /// on SIGTERM before exiting.
    public func shutdown() async {
        guard !isShutDown else { return }
        isShutDown = true
        timer?.cancel()
        timer = nil
        patterns.stop()
        render(at: clock.now())
        for input in inputs { await input.stop() }
        output.releaseAll()
        logger.debug("LEDs off and GPIO lines released")
    }

    /// What the output shows now (for `GET`-style diagnostics and tests).
    public var levels: [String: Bool] { shown }

    private func update(at now: Duration) {
        render(at: now)
        schedule(after: now)
    }

    private func render(at now: Duration) {
        // Read once: asked per LED, the stored patterns were copied for each call.
        let patterns = self.patterns
        for name in names {
            let wanted = patterns.level(of: name, at: now)
            guard shown[name] != wanted else { continue }
            do throws(GPIOError) {
                try output.set(name, on: wanted)
                shown[name] = wanted
                failing.remove(name)
            } catch {
                // `shown` keeps the old value, so the next change retries the write.
                if failing.insert(name).inserted {
                    logger.error("cannot set LED: \(error)", metadata: [
                        "led": "\(name)", "chip": "\(error.chip)",
                        "line": "\(error.line.map(String.init) ?? "-")", "errno": "\(error.errno.rawValue)",
                    ])
                }
            }
        }
    }

    private func schedule(after now: Duration) {
        let next = patterns.nextChange(after: now)
        guard next != timerDeadline || timer == nil else { return }
        timer?.cancel()
        timerDeadline = next
        timerGeneration &+= 1
        guard let next else {
            timer = nil
            return
        }
        let generation = timerGeneration
        let clock = self.clock
        // On the loop from the start: the wait and the wake-up never touch Swift's pool.
        timer = Task(executorPreference: loop) { [weak self] in
            do { try await clock.sleep(until: next) } catch { return }
            await self?.timerFired(generation: generation, deadline: next)
        }
    }

    private func timerFired(generation: Int, deadline: Duration) {
        guard !isShutDown, generation == timerGeneration else { return }
        timer = nil
        timerDeadline = nil
        // A clock never wakes early, but render at the deadline at least so a rounding clock
        // cannot make the panel reschedule the same instant forever.
        let now = max(clock.now(), deadline)
        patterns.prune(at: now)
        update(at: now)
    }
}

/// `any Clock<Duration>` opened once into closures over offsets from the panel's start, because an
/// existential clock's `Instant` cannot be stored or compared without knowing its type. The real
/// clock sleeps by the loop's timers; any other (a test's manual clock) by its own `sleep`.
struct PanelClock: Sendable {
    let now: @Sendable () -> Duration
    let sleep: @Sendable (_ until: Duration) async throws -> Void

    init<C: Clock>(_ clock: C, loop: EventLoop) where C.Duration == Duration {
        let origin = clock.now
        now = { origin.duration(to: clock.now) }
        if let start = origin as? ContinuousClock.Instant {
            sleep = { try await loop.sleep(until: start.advanced(by: $0)) }
        } else {
            sleep = { try await clock.sleep(until: origin.advanced(by: $0), tolerance: nil) }
        }
    }

    func sleep(until deadline: Duration) async throws {
        try await sleep(deadline)
    }
}
