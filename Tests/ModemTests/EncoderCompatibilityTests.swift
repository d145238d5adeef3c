import Foundation
import Testing
@testable import Modem

@Suite struct EncoderCompatibilityTests {
    @Test(arguments: GGWaveProtocol.allCases)
    func samplesEqualGGWavesOwnWaveform(proto: GGWaveProtocol) throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var random = TestRandom(seed: UInt64(proto.ggwaveID))
        for (payload, volume) in [(Array("hello".utf8), 10), (random.bytes(37), 50)] {
            let ours = try GGWaveEncoder.encode(payload, protocol: proto, volume: volume)
            let theirs = try GGWavePeer.encode(payload, protocol: proto, volume: volume, in: dir)
            #expect(ours.count == theirs.count)
            #expect(ours.count == proto.sampleCount(payloadLength: payload.count))
            let worst = zip(ours, theirs).map { abs($0 - $1) }.max() ?? .infinity
            #expect(worst < 1e-5, "largest sample difference \(worst)")
        }
    }

    /// The contract: whatever we transmit, ggwave's receiver gets our exact bytes back.
    @Test func ggwaveDecodesOurBeacons() throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var random = TestRandom(seed: 42)
        var cases: [(path: String, payload: [UInt8])] = []
        for proto in GGWaveProtocol.allCases {
            for length in [1, 16, 64, 140] {
                let payload = random.bytes(length)
                // Silence around the beacon, with a start that is not a whole frame.
                let lead = [Float](repeating: 0, count: 3000 + 517 * length)
                let samples = lead + (try GGWaveEncoder.encode(payload, protocol: proto, volume: 25)) + lead
                let path = dir.appendingPathComponent("ours-\(proto)-\(length).wav").path
                try WAVFile.write(samples, format: .float32, to: path)
                cases.append((path, payload))
            }
        }
        let decoded = try GGWavePeer.decode(files: cases.map(\.path))
        for (c, found) in zip(cases, decoded) {
            #expect(found == [c.payload], "\(c.path)")
        }
    }

    @Test func refusesWhatGGWaveCannotCarry() {
        #expect(throws: GGWaveEncoderError.emptyPayload) { try GGWaveEncoder.encode([], protocol: .ultrasoundFast, volume: 10) }
        #expect(throws: GGWaveEncoderError.payloadTooLong(length: 141, maximum: 140)) {
            try GGWaveEncoder.encode([UInt8](repeating: 1, count: 141), protocol: .ultrasoundFast, volume: 10)
        }
        #expect(throws: GGWaveEncoderError.volumeOutOfRange(101)) {
            try GGWaveEncoder.encode([1], protocol: .ultrasoundFast, volume: 101)
        }
    }

    @Test func durationsFollowTheChunkCount() {
        // 1 byte: 3 + 1 + 2 = 6 bytes → 2 chunks; 140 bytes: 3 + 140 + 56 = 199 → 67 chunks.
        #expect(GGWaveProtocol.ultrasoundFastest.sampleCount(payloadLength: 1) == (32 + 2 * 3) * 1024)
        #expect(GGWaveProtocol.ultrasoundNormal.sampleCount(payloadLength: 140) == (32 + 67 * 9) * 1024)
    }
}
