import Foundation
import NearbyProtocol
import SystemCall
import Testing
@testable import Gateway

/// Issue 28 item 3: when the gateway follows a peer's clock, and when it stops (docs/protocol.md,
/// "Clocks that disagree"), with dates and instants of the test's own.
@Suite struct ClockFollowerTests {
    let codec = FrameCodec(apiKey: "clock-follower", rotateSeconds: 600)
    let t0 = ContinuousClock.now
    /// 100 s into epoch 2,900,000.
    let real = Date(timeIntervalSince1970: 2_900_000 * 600 + 100)
    let current: UInt32 = 2_900_000

    func follower(_ kernel: KernelClock = .unsynchronised) -> ClockFollower {
        ClockFollower(kernel: kernel, rotateSeconds: 600, reference: t0)
    }

    @Test func anUnsynchronisedClockFollowsAPeerThreeDaysAhead() {
        var f = follower()
        #expect(f.errorCause == nil)
        let moved22 = f.heard(epochAhead: current + 432, current: current, real: real, codec: codec)
        #expect(moved22)
        #expect(f.offset == 432 * 600 - 100, "to the start of the peer's epoch: never ahead of the peer")
        #expect(codec.epoch(at: f.date(real: real)) == current + 432)
        #expect(!f.phaseKnown)
        #expect(f.errorCause?.contains("2 d 23 h 58 min 20 s behind a peer") == true, "\(f.errorCause ?? "nil")")
        // The peer rotates 7 minutes later by our clock: now we know its phase.
        let later = real.addingTimeInterval(420)
        let moved30 = f.heard(epochAhead: current + 433, current: codec.epoch(at: f.date(real: later)), real: later, codec: codec)
        #expect(moved30)
        #expect(f.phaseKnown)
        #expect(f.offset == 433 * 600 - 520)
    }

    @Test func aSynchronisedClockNeverFollows() {
        var f = follower(.synchronised)
        #expect(!f.follows)
        let moved39 = f.heard(epochAhead: current + 432, current: current, real: real, codec: codec)
        #expect(!moved39)
        #expect(f.offset == 0 && f.errorCause == nil)
        var unknown = follower(.unknown(Errno(rawValue: 1)))
        #expect(unknown.follows, "adjtimex refused (ProtectClock=): the clock may be wrong")
        let moved44 = unknown.heard(epochAhead: current + 2, current: current, real: real, codec: codec)
        #expect(moved44)
    }

    @Test func aPeerOneEpochAheadIsFollowedAndBeyondTheHorizonIsNot() {
        var f = follower()
        let moved52 = f.heard(epochAhead: current, current: current, real: real, codec: codec)
        #expect(!moved52)
        let moved54 = f.heard(epochAhead: current + 433, current: current, real: real.addingTimeInterval(-700), codec: codec)
        #expect(f.offset == 0)
        // The search found it one epoch ahead (outside the window): a peer 5 minutes ahead.
        let moved50 = f.heard(epochAhead: current + 1, current: current, real: real, codec: codec)
        #expect(moved50 && !f.phaseKnown && f.offset == 500)
        #expect(!moved54, "beyond the horizon")
    }

    @Test func neverMovesBack() {
        var f = follower()
        let moved62 = f.heard(epochAhead: current + 10, current: current, real: real, codec: codec)
        #expect(moved62)
        let offset = f.offset
        let moved65 = f.heard(epochAhead: current + 10, current: current + 10, real: real, codec: codec)
        #expect(!moved65)
        let moved67 = f.heard(epochAhead: current + 2, current: current, real: real, codec: codec)
        #expect(!moved67, "a peer behind the one followed")
        #expect(f.offset == offset)
    }

    @Test func aStepOrASyncDropsThePeersClock() {
        var f = follower()
        let moved74 = f.observe(real: real, now: t0)
        #expect(!moved74)
        let moved76 = f.heard(epochAhead: current + 432, current: current, real: real, codec: codec)
        #expect(moved76)
        let moved78 = f.observe(real: real.addingTimeInterval(60), now: t0 + .seconds(60))
        #expect(!moved78, "time passing is no step")
        let moved80 = f.observe(real: real.addingTimeInterval(122), now: t0 + .seconds(120))
        #expect(!moved80, "nor is a slew of 2 s")
        #expect(f.offset > 0)
        let moved83 = f.observe(real: real.addingTimeInterval(3 * 86_400), now: t0 + .seconds(121))
        #expect(moved83, "NTP's first sync steps 3 days")
        #expect(f.offset == 0 && f.errorCause == nil)

        let moved87 = f.heard(epochAhead: current + 500, current: current + 432, real: real.addingTimeInterval(3 * 86_400), codec: codec)
        #expect(moved87)
        let moved89 = f.kernelSays(.unsynchronised)
        #expect(!moved89)
        #expect(f.offset > 0)
        let moved92 = f.kernelSays(.synchronised)
        #expect(moved92, "the kernel now says the clock is right")
        #expect(f.offset == 0 && f.errorCause == nil && !f.follows)
    }
}
