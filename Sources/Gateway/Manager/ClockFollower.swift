import FoundationEssentials
import NearbyProtocol
import SystemCall

/// The clock the manager's epochs run on: the wall clock, plus an offset while it follows a peer whose
/// clock is ahead (docs/protocol.md, "Clocks that disagree"). A value with one owner, the manager; its
/// decisions are pure, so tests drive them with dates and instants of their own.
struct ClockFollower: Sendable {
    /// Seconds added to the wall clock: 0, or how far behind the peer we follow we are.
    private(set) var offset: Double = 0
    /// False from a search's find until that peer's next rotation shows where in the epoch its clock is.
    private(set) var phaseKnown = true
    /// The kernel's view, read with every timer (`KernelClock.read`).
    private(set) var kernel: KernelClock
    /// Wall clock minus monotonic clock at the last look, to notice a step (NTP's first sync, `date -s`).
    private var wallMinusMonotonic: Double?
    private let reference: ContinuousClock.Instant

    /// A step smaller than this is not one (NTP slews by at most 0.5 ms a second).
    static let stepSeconds: Double = 5
    /// Never further ahead than the search looks, and one epoch more (3 days at `rotate_s = 600`).
    let horizon: Double

    /// `kernel` is what `KernelClock.read` said; unsynchronised until the owner's first reading.
    init(kernel: KernelClock = .unsynchronised, rotateSeconds: Int, reference: ContinuousClock.Instant) {
        self.kernel = kernel
        self.reference = reference
        horizon = Double((EpochSearch.Policy(rotateSeconds: rotateSeconds).range + 1) * max(1, rotateSeconds))
    }

    /// Only a clock that the kernel does not say is synchronised follows peers: a synchronised one is right.
    var follows: Bool { kernel != .synchronised }

    func date(real: Date) -> Date { offset == 0 ? real : real.addingTimeInterval(offset) }

    /// A message authenticated under `ahead`, later than our `current` epoch, at wall-clock time `real`,
    /// by the search or while we do not know the followed peer's phase (`Reassembler.takeEpochAhead`).
    /// Our clock is set to the start of `ahead`: never later than the peer's, so two followers never
    /// leapfrog. The next epoch while the phase is unknown is that peer's rotation: now its phase is
    /// known to within a frame. True when the offset changed.
    mutating func heard(epochAhead ahead: UInt32, current: UInt32, real: Date, codec: FrameCodec) -> Bool {
        guard follows, ahead > current else { return false }
        let rotated = offset > 0 && !phaseKnown && ahead - current == 1
        let wanted = codec.start(of: ahead).timeIntervalSince(real)
        guard wanted > offset, wanted <= horizon else { return false }
        offset = wanted
        phaseKnown = rotated
        return true
    }

    /// Notices a step of the wall clock; true (and the offset dropped: it was relative to the old
    /// clock) when there was one.
    mutating func observe(real: Date, now: ContinuousClock.Instant) -> Bool {
        let elapsed = now - reference
        let monotonic = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let difference = real.timeIntervalSince1970 - monotonic
        defer { wallMinusMonotonic = difference }
        guard let previous = wallMinusMonotonic, abs(difference - previous) > Self.stepSeconds else { return false }
        drop()
        return true
    }

    /// A new reading of the kernel's clock state; true when the clock has just become synchronised
    /// (the offset is dropped: the clock is right now, and peers ahead of it are wrong).
    mutating func kernelSays(_ state: KernelClock) -> Bool {
        let synced = state == .synchronised && kernel != .synchronised
        kernel = state
        if synced { drop() }
        return synced
    }

    private mutating func drop() {
        offset = 0
        phaseKnown = true
    }

    /// `$SYS/error/clock`'s cause while we follow a peer's clock, nil while we run on our own.
    var errorCause: String? {
        guard offset > 0 else { return nil }
        let state = switch kernel {
        case .synchronised: "synchronised"
        case .unsynchronised: "not synchronised"
        case .unknown(let errno): "unknown: adjtimex failed: \(errno)"
        }
        return "this clock is \(Self.text(offset)) behind a peer's (kernel clock \(state)): frames follow the peer's epochs"
    }

    /// "3 d 0 h 0 min 12 s"-like, to the second.
    static func text(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        let d = s / 86_400, h = s % 86_400 / 3600, m = s % 3600 / 60, r = s % 60
        return d > 0 ? "\(d) d \(h) h \(m) min \(r) s" : h > 0 ? "\(h) h \(m) min \(r) s" : m > 0 ? "\(m) min \(r) s" : "\(r) s"
    }
}
