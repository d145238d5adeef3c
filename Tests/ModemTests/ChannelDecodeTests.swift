import Foundation
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
            let t = ChannelSimulator.trial(try GGWaveEncoder.encode(payload, protocol: proto, volume: 50), channel: channel, seed: seed)
            var decoder = GGWaveDecoder()
            var found: [[UInt8]] = []
            var i = 0
            while i < t.samples.count {
                found += decoder.feed(Array(t.samples[i..<min(i + 1024, t.samples.count)]))
                i += 1024
            }
            if found == [payload] { ok += 1 }
        }
        return ok
    }

    @Test(arguments: ["clock+1000ppm", "clock-1000ppm", "clock+200ppm"], GGWaveProtocol.allCases)
    func clockOffset(cell: String, proto: GGWaveProtocol) throws {
        #expect(try Self.successes(cell: cell, protocol: proto, trials: 4) == 4)
    }
}

/// Rooms (issue 16): a living room's RT60 at 0 dB SNR, fixed seeds.
@Suite struct RoomDecodeTests {
    @Test(arguments: GGWaveProtocol.allCases)
    func livingRoom(proto: GGWaveProtocol) throws {
        let ok = try ChannelDecodeTests.successes(cell: "rt60-0.5s", protocol: proto, trials: 5)
        #expect(ok >= (proto == .ultrasoundFastest ? 4 : 5), "\(ok)/5")
    }
}
