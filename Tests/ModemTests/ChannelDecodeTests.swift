import Foundation
import ModemTestSupport
import SplitMix
import Testing
@testable import Modem

/// Issue 16: the receiver in the simulator's rooms, with fixed seeds (success counts, no timings).
@Suite struct ChannelDecodeTests {
    static func successes(cell: String, protocol proto: GGWaveProtocol, trials: Int) throws -> Int {
        let channel = try #require(ChannelCells.named(cell))
        var ok = 0
        for trial in 0..<trials {
            let seed = ChannelCells.seed(base: 1, cell: cell, protocol: proto, trial: trial)
            var random = SeededGenerator(seed: seed)
            let payload = random.bytes(16)
            if try decoded(payload, protocol: proto, channel: channel, seed: seed) == [payload] { ok += 1 }
        }
        return ok
    }

    /// Every payload the receiver reports from `payload` sent through `channel`.
    static func decoded(_ payload: [UInt8], protocol proto: GGWaveProtocol, channel: Channel, seed: UInt64) throws -> [[UInt8]] {
        let t = ChannelSimulator.trial(try GGWaveEncoder.encode(payload, protocol: proto, volume: 50), channel: channel, seed: seed)
        return GGWaveDecoder.payloads(in: t.samples)
    }

    @Test(arguments: ["clock+1000ppm", "clock-1000ppm", "clock+200ppm"], GGWaveProtocol.allCases)
    func clockOffset(cell: String, proto: GGWaveProtocol) throws {
        #expect(try Self.successes(cell: cell, protocol: proto, trials: 4) == 4)
    }

    /// Offsets between those: read without resampling, a chunk folded onto one frame cancels where
    /// its tones drift a whole turn over the chunk (about 300 ppm for [U] Normal, 450 for [U] Fast,
    /// 900 for [U] Fastest). Before the coarse timing search read a resampled span, the receiver
    /// took a timing 2 frames off there and missed, or reported a longer payload (the true one and
    /// its first check bytes, which the code accepts). Never a wrong payload.
    @Test(arguments: [300.0, -400, 600, -700, 900], GGWaveProtocol.allCases)
    func clockOffsetBetween(ppm: Double, proto: GGWaveProtocol) throws {
        let cell = "clock\(ppm)ppm-32B"
        for trial in 0..<2 {
            let seed = ChannelCells.seed(base: 1, cell: cell, protocol: proto, trial: trial)
            var random = SeededGenerator(seed: seed)
            let payload = random.bytes(32)
            let found = try Self.decoded(payload, protocol: proto, channel: Channel(clockPPM: ppm, snrDB: 10), seed: seed)
            #expect(found == [payload], "trial \(trial): \(found.map { $0.count }) bytes found")
        }
    }
}

/// Rooms (issue 16): a living room's RT60 at 0 dB SNR, fixed seeds.
@Suite struct RoomDecodeTests {
    @Test(arguments: [GGWaveProtocol.ultrasoundNormal, .ultrasoundFast])
    func livingRoom(proto: GGWaveProtocol) throws {
        let ok = try ChannelDecodeTests.successes(cell: "rt60-0.5s", protocol: proto, trials: 5)
        #expect(ok == 5, "\(ok)/5")
    }

    /// The benchmark's 20 [U] Fastest files of the cell (same seeds): ≥ 95 % is the target. The
    /// receiver before the wide timing search and the room readings decoded 16 of them (the
    /// marker's echo put its timing 1–2 frames late, and echoes cost more symbols than the code
    /// could fix).
    @Test func livingRoomFastest() throws {
        let ok = try ChannelDecodeTests.successes(cell: "rt60-0.5s", protocol: .ultrasoundFastest, trials: 20)
        #expect(ok >= 19, "\(ok)/20")
    }

    /// A TV speaker's roll-off at 16 kHz weakens the upper nibbles' tones: the same 20 seeds as the
    /// benchmark, where ggwave decodes 19 (the receiver before the Chase search: 18).
    @Test func speakerLowPassFastest() throws {
        let ok = try ChannelDecodeTests.successes(cell: "lowpass-16kHz", protocol: .ultrasoundFastest, trials: 20)
        #expect(ok >= 19, "\(ok)/20")
    }
}
