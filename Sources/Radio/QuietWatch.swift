import Synchronization

/// When advertising reports last arrived on the current connection, and the back-off between
/// quiet resets (issue 28: controllers that keep answering commands but stop reporting, fixed in
/// the field only by a power cycle). Written by the sightings task on every report batch, read by
/// the watchdog: a lock is the honest tool for a timestamp shared by two tasks.
///
/// Rules (docs/radio.md, "A controller that goes quiet"):
/// - only a connection that has delivered a report can be quiet: a quiet room, where nothing was
///   ever heard since the (re)connect, never causes a reset, so resets cannot loop there;
/// - silence counts while scanning is on, from the last report or from the scan's enable;
/// - after each quiet reset the next one needs twice the silence (up to 16 × the timeout); the
///   streak ends once a connection has served reports for 10 × the timeout.
final class QuietWatch: Sendable {
    private struct State {
        var lastReport: ContinuousClock.Instant?
        var connectedAt = ContinuousClock.now
        var streak = 0
    }
    private let state = Mutex(State())
    let timeout: Duration

    init(timeout: Duration) { self.timeout = timeout }

    static let maximumFactor = 16

    /// A new connection: nothing heard on it yet.
    func connected(now: ContinuousClock.Instant = .now) {
        state.withLock {
            $0.lastReport = nil
            $0.connectedAt = now
        }
    }

    func heard(now: ContinuousClock.Instant = .now) {
        state.withLock { $0.lastReport = now }
    }

    /// Scanning was just enabled: silence before it does not count.
    func scanningStarted(now: ContinuousClock.Instant = .now) {
        state.withLock { if $0.lastReport != nil { $0.lastReport = now } }
    }

    /// The silence that resets now: the timeout, doubled per reset of the current streak.
    var bound: Duration { state.withLock { Self.bound(timeout: timeout, streak: $0.streak) } }

    static func bound(timeout: Duration, streak: Int) -> Duration {
        timeout * min(1 << min(streak, 8), maximumFactor)
    }

    enum Verdict: Equatable {
        /// Check again after this long.
        case wait(Duration)
        /// Silent for `silence`: reset the controller.
        case quiet(silence: Duration)
    }

    /// What the watchdog does now, while scanning is on (`scanning`).
    func check(scanning: Bool, now: ContinuousClock.Instant = .now) -> Verdict {
        state.withLock { state in
            guard scanning, let last = state.lastReport else { return .wait(Self.bound(timeout: timeout, streak: state.streak)) }
            let silence = now - last
            // Heard for long enough on this connection: the next quiet spell is reset after the plain timeout again.
            if state.streak > 0, silence < Self.bound(timeout: timeout, streak: state.streak), now - state.connectedAt >= timeout * 10 {
                state.streak = 0
            }
            let bound = Self.bound(timeout: timeout, streak: state.streak)
            if silence >= bound {
                state.streak += 1
                return .quiet(silence: silence)
            }
            return .wait(bound - silence)
        }
    }
}
