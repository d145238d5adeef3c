import FoundationEssentials
import Logging
import NearbyProtocol
import SystemCall

/// The clock the epochs run on (`ClockFollower`): steps of the wall clock, the kernel's sync state,
/// and peers whose clock is ahead (docs/protocol.md, "Clocks that disagree").
extension MessageManager {
    /// The date the epochs follow now; a step of the wall clock, or a new epoch, rotates at once
    /// instead of at the next timer (a Pi's first NTP sync moves it by days or decades).
    func clockDate() async -> Date {
        await settleClock(observeClock())
    }

    /// `clockDate`'s reading of the wall clock, without its awaited steps (`settleClock`), which are
    /// needed only when `observation.needsSettling(epoch:)`.
    func observeClock() -> ClockObservation {
        let real = Date()
        let stepped = clockFollower.observe(real: real, now: clock.now)
        if stepped {
            logger.notice("wall clock stepped: epochs follow it", metadata: ["date": "\(real)"])
            inbound.resetSearch()
        }
        let date = clockFollower.date(real: real)
        return ClockObservation(date: date, stepped: stepped, epoch: settings.codec.epoch(at: date))
    }

    /// What a step of the clock or a new epoch changes (error state, air): the rest of `clockDate`.
    func settleClock(_ observation: ClockObservation) async -> Date {
        if observation.stepped { await clockChanged() }
        if observation.epoch != epoch, followClock(observation.date) { await apply(rotatingAddress: true) }
        return observation.date
    }

    /// Moves to the epoch of `date`; true when it changed.
    func followClock(_ date: Date) -> Bool {
        let current = settings.codec.epoch(at: date)
        guard current != epoch else { return false }
        epoch = current
        inbound.setEpoch(epoch)
        logger.info("rotation: new message ids and address", metadata: ["epoch": "\(epoch)"])
        return true
    }

    /// After a message: a peer ahead of our clock is followed (only while the kernel does not say
    /// our clock is synchronised).
    func followPeers() async {
        guard let ahead = inbound.takeEpochAhead() else { return }
        await follow(epochAhead: ahead)
    }

    /// A message from a peer whose epoch is ahead of ours (`followPeers`).
    func follow(epochAhead ahead: UInt32) async {
        let wasFollowing = clockFollower.offset > 0
        guard clockFollower.heard(epochAhead: ahead, current: epoch, real: Date(), codec: settings.codec) else { return }
        if !wasFollowing || !clockFollower.phaseKnown {
            logger.notice("a peer's clock is ahead of ours: following it", metadata: [
                "epoch": "\(ahead)", "offset_s": "\(Int(clockFollower.offset.rounded()))"])
        }
        inbound.setPhaseUnknown(!clockFollower.phaseKnown)
        inbound.resetSearch()
        _ = followClock(clockFollower.date(real: Date()))
        await clockChanged()
        await apply(rotatingAddress: true)
    }

    /// Reads the kernel's clock state (each timer): searching follows it, and a clock that has just
    /// become synchronised drops the peer it followed.
    func refreshKernelClock() async {
        let state = KernelClock.read()
        let previous = clockFollower.kernel
        if clockFollower.kernelSays(state) {
            logger.notice("kernel clock synchronised: epochs follow it")
            inbound.resetSearch()
            await clockChanged()
            if followClock(clockFollower.date(real: Date())) { await apply(rotatingAddress: true) }
        } else if state != previous {
            logger.info("kernel clock \(state == .synchronised ? "synchronised" : "not synchronised")", metadata: ["state": "\(state)"])
        }
        inbound.setSearchesAhead(clockFollower.follows)
    }

    /// `$SYS/error/clock` follows the offset: raised while we run on a peer's clock.
    private func clockChanged() async {
        inbound.setPhaseUnknown(!clockFollower.phaseKnown)
        if let cause = clockFollower.errorCause {
            await setError(.clock, true, cause: cause)
        } else {
            await setError(.clock, false, cause: "epochs follow this gateway's own clock")
        }
    }
}

/// One reading of the wall clock for an advert (`MessageManager.observeClock`).
struct ClockObservation {
    var date: Date
    /// The wall clock stepped: `$SYS/error/clock` and the air follow (awaited).
    var stepped: Bool
    /// The epoch `date` is in.
    var epoch: UInt32

    /// Whether `settleClock` has anything to do, the manager being in `current`.
    func needsSettling(epoch current: UInt32) -> Bool { stepped || epoch != current }
}
