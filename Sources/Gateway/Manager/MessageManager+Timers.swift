import FoundationEssentials
import NearbyProtocol
import SystemCall

/// The manager's one timer, on the gateway's loop: lost entries, rotations, scan windows, ttls.
extension MessageManager {
    /// The next instant something must happen without outside input: a lost, a rotation, the end of
    /// a scan window or of a publication's ttl. One timer of the gateway's loop, re-armed only when
    /// the next instant moved earlier than the armed one (a timer that fires early finds nothing due
    /// and re-arms): a sighting that only pushes an entry's lost deadline later arms nothing.
    func reschedule() {
        let today = clockFollower.date(real: Date())
        var deadline = Self.nextRotation(after: epoch, codec: settings.codec).map { clock.now + .seconds(max(0, $0.timeIntervalSince(today))) }
        func consider(_ instant: ContinuousClock.Instant?) {
            guard let instant else { return }
            deadline = deadline.map { min($0, instant) } ?? instant
        }
        consider(inbound.nextDeadline())
        scanWindows.values.forEach(consider)
        publications.values.forEach { consider($0.expiry) }
        guard let deadline else { return disarm() }
        if timer != nil, let armed = armedDeadline, armed <= deadline { return }
        disarm()
        armedDeadline = deadline
        // The action runs on the loop, which is this actor's executor: the timer's work starts
        // there, without a hop through Swift's pool.
        timer = loop.schedule(at: deadline) { [self, loop] in
            Task(executorPreference: loop) { await self.timerFired() }
        }
    }

    func disarm() {
        if let timer { loop.cancel(timer) }
        timer = nil
        armedDeadline = nil
    }

    /// When `epoch` ends; nil for the last epoch a UInt32 holds (epochs wrap like every other
    /// counter here, and `epoch(at:)` clamps there, so there is no later one to wait for).
    static func nextRotation(after epoch: UInt32, codec: FrameCodec) -> Date? {
        let next = epoch &+ 1
        return next > epoch ? codec.start(of: next) : nil
    }

    func timerFired() async {
        timer = nil
        armedDeadline = nil
        let now = clock.now
        for entry in inbound.expireFound(now: now) { reportLost(entry) }
        for event in pendingPanelEvents { await panel?.handle(event) }
        pendingPanelEvents.removeAll()
        inbound.expireFrames(now: now)
        endExpiredPublications(now: now)
        await refreshKernelClock()
        await apply(rotatingAddress: followClock(clockFollower.date(real: Date())))
    }
}
