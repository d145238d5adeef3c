import Testing
@testable import Modem

/// The marker detector sleeps between markers (only a frame FFT per 1024 samples) and scores blocks
/// only around them: these check that sleeping changes nothing it reports, and that it does sleep.
@Suite struct MarkerDetectorSleepTests {
    /// Two beacons in noise, fed in irregular pieces to a sleeping detector and to one kept awake.
    private func stream(seed: UInt64) throws -> [Float] {
        var random = TestRandom(seed: seed)
        let first = try GGWaveEncoder.encode(Array("sleeping detector".utf8), protocol: .ultrasoundFast, volume: 30)
        let second = try GGWaveEncoder.encode(random.bytes(24), protocol: .ultrasoundNormal, volume: 30)
        var samples = [Float](repeating: 0, count: 30_011) + first + [Float](repeating: 0, count: 48_000) + second
            + [Float](repeating: 0, count: 30_000)
        let noise = gaussianNoise(count: samples.count, sigma: 0.03, using: &random)
        for i in samples.indices { samples[i] += noise[i] }
        return samples
    }

    private func run(_ samples: [Float], stayAwake: Bool) -> (detector: MarkerDetector, found: [MarkerDetector.Detection]) {
        var detector = MarkerDetector(historyBlocks: 8192, stayAwake: stayAwake)
        var found: [MarkerDetector.Detection] = []
        var i = 0, k = 0
        let pieces = [1024, 333, 4800, 97, 2048]
        while i < samples.count {
            let n = min(pieces[k % pieces.count], samples.count - i)
            found += detector.process(samples[i..<(i + n)])
            i += n
            k += 1
        }
        return (detector, found)
    }

    @Test func asleepItFindsTheSameMarkersAtTheSameSamples() throws {
        let samples = try stream(seed: 41)
        let awake = run(samples, stayAwake: true), asleep = run(samples, stayAwake: false)
        #expect(awake.found.count == 2)
        #expect(asleep.found == awake.found)
    }

    /// End scores of windows slept through are computed when read, from the frames' spectra and the
    /// blocks at the window's ends: equal, to rounding, to the sliding window's.
    @Test func endScoresReadAfterASleepEqualTheSlidingWindows() throws {
        let samples = try stream(seed: 42)
        var (awake, _) = run(samples, stayAwake: true)
        var (asleep, _) = run(samples, stayAwake: false)
        #expect(asleep.blocksAwake < awake.blocksAwake / 2)
        // Window starts (whole blocks and not) whose samples the detector still holds (the last
        // 32,768), ending before the last whole frame (asleep, blocks are counted frame by frame):
        // a receiver reads an end marker's scores within 64 blocks of its window's end.
        for start in stride(from: samples.count - 32_000, to: samples.count - 18_500, by: 331) {
            let a = awake.endScore(windowStart: start, slack: 0), b = asleep.endScore(windowStart: start, slack: 0)
            let ea = awake.endEnergy(windowStart: start, slack: 0), eb = asleep.endEnergy(windowStart: start, slack: 0)
            guard let a, let b, let ea, let eb else {
                Issue.record("no end score at \(start)")
                return
            }
            #expect(abs(a - b) < 1e-3, "end score at \(start): \(a) awake, \(b) asleep")
            #expect(abs(ea - eb) <= 1e-3 * max(abs(ea), 1), "end energy at \(start): \(ea) awake, \(eb) asleep")
        }
    }

    @Test func noiseAloneKeepsItAsleepMostOfTheTime() {
        var random = TestRandom(seed: 43)
        let noise = gaussianNoise(count: 20 * GGWave.sampleRate, sigma: 0.05, using: &random)
        var detector = MarkerDetector(historyBlocks: 8192)
        _ = detector.process(noise)   // a few candidates by chance, which the receiver rejects
        // 28 % here (always awake before); a detector that never fell asleep would be at 100 %.
        #expect(detector.blocksAwake * 2 < detector.blocks, "awake \(detector.blocksAwake) of \(detector.blocks) blocks")
    }
}
