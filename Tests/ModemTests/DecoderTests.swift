import Foundation
import Testing
@testable import Modem

/// Feeds `samples` in irregular blocks, as a capture device would deliver them.
func decodeStreaming(_ samples: [Float], protocols: [GGWaveProtocol] = GGWaveProtocol.allCases,
                     blocks: [Int] = [1024, 333, 4800, 97, 2048]) -> [GGWaveReception] {
    var decoder = GGWaveDecoder(protocols: protocols)
    var found: [GGWaveReception] = []
    var i = 0, k = 0
    while i < samples.count {
        let n = min(blocks[k % blocks.count], samples.count - i)
        found += decoder.feedReceptions(Array(samples[i..<(i + n)]))
        i += n
        k += 1
    }
    // A little silence after the end marker lets the decoder confirm where that marker ends.
    found += decoder.feedReceptions([Float](repeating: 0, count: 12_000))
    return found
}

/// White Gaussian noise (Box–Muller) from a seeded generator.
func gaussianNoise(count: Int, sigma: Float, using random: inout TestRandom) -> [Float] {
    (0..<count).map { _ in
        let u1 = Float.random(in: Float.ulpOfOne..<1, using: &random), u2 = Float.random(in: 0..<1, using: &random)
        return sigma * (-2 * logf(u1)).squareRoot() * cosf(2 * .pi * u2)
    }
}

@Suite struct DecoderTests {
    /// The contract the other way round: what PyPI ggwave transmits, we receive exactly.
    @Test func decodesGGWavesOwnBeacons() throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var random = TestRandom(seed: 9)
        var items: [(payload: [UInt8], protocol: GGWaveProtocol)] = []
        for proto in GGWaveProtocol.allCases {
            for length in [1, 16, 64, 140] { items.append((random.bytes(length), proto)) }
        }
        let waves = try GGWavePeer.encode(items, volume: 10, in: dir)
        for (item, wave) in zip(items, waves) {
            let lead = Int.random(in: 1...30_000, using: &random)
            let samples = [Float](repeating: 0, count: lead) + wave + [Float](repeating: 0, count: 5000)
            let found = decodeStreaming(samples)
            #expect(found.map(\.payload) == [item.payload], "\(item.protocol), \(item.payload.count) bytes")
            #expect(found.first?.protocol == item.protocol)
            if let start = found.first?.startSample { #expect(abs(start - lead) <= 256, "start \(start), true \(lead)") }
        }
    }

    @Test(arguments: GGWaveProtocol.allCases)
    func decodesOurOwnBeaconsBackToBackInNoise(proto: GGWaveProtocol) throws {
        var random = TestRandom(seed: UInt64(100 + proto.ggwaveID))
        let payloads = [Array("first".utf8), random.bytes(40), [0x00], Array("last one".utf8)]
        let beacon = try GGWaveBeacon.render(payloads: payloads, protocol: proto, volume: 30)
        var samples = [Float](repeating: 0, count: 7_777) + beacon + [Float](repeating: 0, count: 7_777)
        let noise = gaussianNoise(count: samples.count, sigma: 0.02, using: &random)
        for i in samples.indices { samples[i] += noise[i] }
        #expect(decodeStreaming(samples).map(\.payload) == payloads)
        // Listening for this protocol only changes nothing.
        #expect(decodeStreaming(samples, protocols: [proto]).map(\.payload) == payloads)
    }

    /// A recording that begins right on the start marker (as `beacon --out` files do) has nothing
    /// before sample 0 to search timing in.
    @Test(arguments: GGWaveProtocol.allCases)
    func decodesABeaconStartingAtTheFirstSample(proto: GGWaveProtocol) throws {
        let payload = Array("starts at zero, 33 bytes of text".utf8)
        let found = decodeStreaming(try GGWaveEncoder.encode(payload, protocol: proto, volume: 50))
        #expect(found.map(\.payload) == [payload])
        #expect(found.first?.startSample == 0)
    }

    @Test func listeningForAnotherProtocolFindsNothing() throws {
        let beacon = try GGWaveEncoder.encode(Array("normal".utf8), protocol: .ultrasoundNormal, volume: 30)
        let samples = [Float](repeating: 0, count: 5000) + beacon
        #expect(decodeStreaming(samples, protocols: [.ultrasoundFastest]).isEmpty)
        #expect(decodeStreaming(samples, protocols: [.ultrasoundFast]).isEmpty)
    }

    /// Noise alone never produces a payload, and the decoder's state stays within its fixed bounds.
    @Test func pureNoiseForMinutesDecodesNothing() {
        var random = TestRandom(seed: 77)
        var decoder = GGWaveDecoder()
        let block = 4800
        var found: [[UInt8]] = []
        var maxPending = 0
        // Two minutes, in levels from faint to clipping-loud.
        for second in 0..<120 {
            let sigma: Float = [0.001, 0.05, 0.3][second % 3]
            for _ in 0..<(GGWave.sampleRate / block) {
                found += decoder.feed(gaussianNoise(count: block, sigma: sigma, using: &random))
                maxPending = max(maxPending, decoder.pendingCandidates)
            }
        }
        #expect(found.isEmpty)
        #expect(maxPending <= GGWaveDecoder.maxCandidates)
        #expect(decoder.retainedSamples == GGWaveDecoder().retainedSamples)
    }

    @Test func silenceAndGarbageValuesAreHarmless() {
        var decoder = GGWaveDecoder()
        #expect(decoder.feed([]).isEmpty)
        #expect(decoder.feed([Float](repeating: 0, count: 100_000)).isEmpty)
        #expect(decoder.feed([Float](repeating: 1, count: 50_000)).isEmpty)
        #expect(decoder.feed((0..<50_000).map { $0 % 2 == 0 ? 1 : -1 }).isEmpty)
    }
}
