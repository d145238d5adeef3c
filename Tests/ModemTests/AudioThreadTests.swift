import Foundation
import Synchronization
import Testing
@testable import Modem

/// A playback device that keeps what it is given.
final class RecordingDevice: PCMDevice, @unchecked Sendable {
    private let written = Mutex([Float]())
    var samples: [Float] { written.withLock { $0 } }
    func write(_ samples: [Float]) throws(ALSAError) { written.withLock { $0 += samples } }
    func drain() throws(ALSAError) {}
    func read(_ count: Int) throws(ALSAError) -> [Float] { [Float](repeating: 0, count: count) }
    func takeOverruns() -> Int { 0 }
    func close() {}
}

/// A capture device that overruns, then stalls (as a paused snd-aloop does), then works again.
final class TroubledCaptureDevice: PCMDevice, @unchecked Sendable {
    private let reads = Mutex(0)
    let stallAt: Int
    init(stallAt: Int) { self.stallAt = stallAt }
    func write(_ samples: [Float]) throws(ALSAError) {}
    func drain() throws(ALSAError) {}
    func read(_ count: Int) throws(ALSAError) -> [Float] {
        let n = reads.withLock { $0 += 1; return $0 }
        if n == stallAt { throw ALSAError(device: "mic", call: "snd_pcm_wait", code: -ETIMEDOUT) }
        return [Float](repeating: 0, count: count)
    }
    func takeOverruns() -> Int { reads.withLock { $0 } == 2 ? 3 : 0 }
    func close() {}
}

/// A clock the test moves by hand: stands for the monotonic clock, so a test can let an hour pass.
final class ManualClock: AudioClock, @unchecked Sendable {
    private let seconds = Mutex(1000.0)
    func now() -> Double { seconds.withLock { $0 } }
    func advance(_ by: Double) { seconds.withLock { $0 += by } }
}

/// Issue 13: the audio threads' error reporting and pacing.
@Suite(.timeLimit(.minutes(1))) struct AudioThreadTests {
    @Test func renderFailureIsReportedAndNothingPlays() throws {
        let log = EventLog()
        let device = RecordingDevice()
        let tx = AudioTransmitter(opener: { _, _ throws(ALSAError) in device },
                                  render: { _, _, _ throws(GGWaveEncoderError) in throw .volumeOutOfRange(101) },
                                  onEvent: log.record)
        try tx.start(.init(device: "fake", interval: .seconds(3600), volume: 40, protocol: .ultrasoundFast))
        try tx.setPayloads([[1, 2, 3]])
        let reported = log.wait { $0.contains { if case .beaconFailed = $0 { true } else { false } } }
        tx.stop()
        #expect(reported, "events: \(log.events)")
        #expect(log.events.contains(.beaconFailed(.volumeOutOfRange(101))))
        #expect(!log.events.contains { if case .beaconPlayed = $0 { true } else { false } })
        #expect(device.samples.isEmpty)
    }

    /// The beacon is paced by the monotonic clock alone: an hour on it is an hour, whatever the wall
    /// clock does (with `Date()` pacing the second beacon would wait an hour of wall time).
    @Test func beaconIsPacedByTheMonotonicClock() throws {
        let log = EventLog()
        let clock = ManualClock()
        let device = RecordingDevice()
        let tx = AudioTransmitter(opener: { _, _ throws(ALSAError) in device }, clock: clock, onEvent: log.record)
        try tx.start(.init(device: "fake", interval: .seconds(3600), volume: 40, protocol: .ultrasoundFastest))
        let payloads: [[UInt8]] = [[9, 8, 7]]
        try tx.setPayloads(payloads)
        func played(_ n: Int) -> Bool {
            log.wait { $0.filter { if case .beaconPlayed = $0 { true } else { false } }.count >= n }
        }
        #expect(played(1), "events: \(log.events)")
        clock.advance(3599)
        try tx.setPayloads(payloads)   // wakes the thread, which re-reads the clock: not due yet
        #expect(!log.wait(seconds: 0.3) { $0.filter { if case .beaconPlayed = $0 { true } else { false } }.count >= 2 })
        clock.advance(1)
        try tx.setPayloads(payloads)
        #expect(played(2), "events: \(log.events)")
        tx.stop()
    }

    /// ConditionBox's timed wait runs on CLOCK_MONOTONIC: it neither returns early nor oversleeps.
    @Test func timedWaitFollowsTheMonotonicClock() {
        let box = ConditionBox(0)
        let start = box.clock.now()
        let deadline = start + 0.2
        let woke = box.next { _ in box.clock.now() >= deadline ? .proceed(box.clock.now()) : .sleep(until: deadline) }
        #expect(woke - start >= 0.2 && woke - start < 5)
    }

    /// Issue 16: capture never silently stops. Overruns are reported with their count; a stalled
    /// device is an error (the gateway's microphone error) and is reopened without a restart.
    @Test func captureOverrunsAndStallsAreReportedAndRecovered() {
        let log = EventLog()
        let opened = Mutex(0)
        let rx = AudioReceiver(opener: { _, _ throws(ALSAError) in
            let n = opened.withLock { $0 += 1; return $0 }
            return TroubledCaptureDevice(stallAt: n == 1 ? 5 : 0)
        }, onEvent: log.record)
        rx.start(.init(device: "mic", protocols: [.ultrasoundFastest]))
        let recovered = log.wait { $0.filter { $0 == .ready(device: "mic") }.count >= 2 }
        rx.stop()
        #expect(recovered, "events: \(log.events.prefix(10))")
        #expect(log.events.contains(.captureOverrun(count: 3)))
        let failure = log.events.compactMap { if case .failed(let e, _) = $0 { e } else { nil } }.first
        #expect(failure?.call == "snd_pcm_wait" && failure?.errno == ETIMEDOUT)
        #expect(opened.withLock { $0 } >= 2)
    }

    /// A stalled card opens fine and then delivers nothing: it fails at every retry and is never
    /// reported ready (which would clear the gateway's microphone error at each reopen).
    @Test func deviceStalledFromTheStartIsNeverReady() {
        let log = EventLog()
        let rx = AudioReceiver(opener: { _, _ throws(ALSAError) in TroubledCaptureDevice(stallAt: 1) }, onEvent: log.record)
        rx.start(.init(device: "mic", protocols: [.ultrasoundFastest]))
        let retried = log.wait { $0.filter { if case .failed = $0 { true } else { false } }.count >= 2 }
        rx.stop()
        #expect(retried, "events: \(log.events.prefix(10))")
        #expect(!log.events.contains(.ready(device: "mic")), "events: \(log.events.prefix(10))")
    }
}
