import NearbyProtocol
/// The LED patterns as a pure function of events and time: no clock, no I/O, so every timing is
/// unit-tested exactly. Times are offsets from the panel's start. `LEDPanel` drives it.
public struct LEDPatterns: Sendable, Equatable {
    /// What `status` shows.
    public enum StatusMode: Sendable, Equatable {
        /// Before `start` and after `stop`.
        case off
        /// Started, power state not told yet: 1 Hz blink.
        case starting
        case active
        case standby
    }

    public let timings: LEDTimings
    public private(set) var statusMode: StatusMode = .off
    /// When the current blink started; blinks are phase-locked to it.
    private var statusSince: Duration = .zero
    private var power: PowerState?
    private var foundTotal = 0
    private var lit: Set<String> = []
    private var errorSet = false
    private var winks: PulseTrain
    private var lostPulses: PulseTrain
    private var stopped = false

    public init(timings: LEDTimings = .standard) {
        self.timings = timings
        winks = PulseTrain(width: timings.foundWink, gap: timings.foundWinkGap, limit: timings.maxQueuedPulses)
        lostPulses = PulseTrain(width: timings.lostPulse, gap: timings.lostPulseGap, limit: timings.maxQueuedPulses)
    }

    /// The gateway is running: the heartbeat starts (or shows the power state already told).
    public mutating func start(at now: Duration) {
        guard !stopped, statusMode == .off else { return }
        setStatus(power.map(Self.mode(for:)) ?? .starting, at: now)
    }

    /// Everything off for good (shutdown).
    public mutating func stop() {
        stopped = true
        statusMode = .off
    }

    public mutating func apply(_ event: LEDEvent, at now: Duration) {
        guard !stopped else { return }
        switch event {
        case .power(let state):
            power = state
            if statusMode != .off { setStatus(Self.mode(for: state), at: now) }
        case .found(let total, let lit):
            // The first found just lights the LED; later ones wink it so each is visible.
            if foundTotal > 0 && total > 0 { winks.add(at: now) }
            foundTotal = max(0, total)
            self.lit = lit
        case .lost(let total, let lit):
            lostPulses.add(at: now)
            foundTotal = max(0, total)
            self.lit = lit
        case .errors(let errors):
            errorSet = !errors.isEmpty
        }
        winks.prune(at: now)
        lostPulses.prune(at: now)
    }

    /// Drops finished pulses; called by the panel on each timer so memory stays bounded.
    public mutating func prune(at now: Duration) {
        winks.prune(at: now)
        lostPulses.prune(at: now)
    }

    public func level(of led: String, at now: Duration) -> Bool {
        guard !stopped else { return false }
        switch led {
        case "status": return statusLevel(at: now)
        case "found": return foundTotal > 0 && !winks.isActive(at: now)
        case "lost": return lostPulses.isActive(at: now)
        case "error": return errorSet
        default: return lit.contains(led)
        }
    }

    /// The next instant after `now` at which some level may change; nil = nothing scheduled, so
    /// the panel sleeps until the next event (no polling).
    public func nextChange(after now: Duration) -> Duration? {
        guard !stopped else { return nil }
        let candidates = [statusNextChange(after: now), winks.nextChange(after: now), lostPulses.nextChange(after: now)]
        return candidates.compactMap { $0 }.min()
    }

    // MARK: status

    private static func mode(for power: PowerState) -> StatusMode {
        power == .active ? .active : .standby
    }

    private mutating func setStatus(_ mode: StatusMode, at now: Duration) {
        // The same mode again keeps its phase, so a repeated event does not stretch a blink.
        guard mode != statusMode else { return }
        statusMode = mode
        statusSince = now
    }

    private var blink: (period: Duration, on: Duration)? {
        switch statusMode {
        case .starting: (timings.startingPeriod, timings.startingOn)
        case .standby: (timings.standbyPeriod, timings.standbyOn)
        case .off, .active: nil
        }
    }

    private func statusLevel(at now: Duration) -> Bool {
        switch statusMode {
        case .off: return false
        case .active: return true
        case .starting, .standby:
            guard let blink, now >= statusSince else { return false }
            return Self.phase(of: now - statusSince, period: blink.period) < blink.on
        }
    }

    private func statusNextChange(after now: Duration) -> Duration? {
        guard let blink else { return nil }
        guard now >= statusSince else { return statusSince }
        let elapsed = now - statusSince
        let phase = Self.phase(of: elapsed, period: blink.period)
        let periodStart = now - phase
        return phase < blink.on ? periodStart + blink.on : periodStart + blink.period
    }

    /// `elapsed mod period`, exact (Duration's own `/` goes through Double).
    private static func phase(of elapsed: Duration, period: Duration) -> Duration {
        let e = nanoseconds(elapsed), p = nanoseconds(period)
        guard p > 0 else { return .zero }
        return .nanoseconds(e % p)
    }

    private static func nanoseconds(_ d: Duration) -> Int64 {
        let (seconds, attoseconds) = d.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
