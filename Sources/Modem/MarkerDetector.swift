import Glibc

/// Finds ggwave start markers in a stream and remembers, block by block, how much each 16-frame
/// window looks like a start or an end marker.
///
/// Every 64-sample block adds its partial DFT at the 32 marker bins (320…351) to a running sum
/// over the last 256 blocks, which is the DFT of the 16-frame window ending at that block (the
/// bins are whole, so partial sums of consecutive blocks add up coherently). Per pair of bins the
/// score is the share of the pair's energy in the bin a start marker uses: about 1 on a start
/// marker, 0 on an end marker, and uniform on [0, 1] with noise alone, whatever its level.
///
/// Three parts, one file each: the sleep/wake front end (`MarkerDetector+Wake.swift`: samples,
/// frame spectra, the off-clock trigger), the clock hypotheses (`ClockHypotheses.swift`: the
/// window's sums per clock), and the scoring (`MarkerDetector+Scoring.swift`: per block, the
/// scores kept and the candidate tracked). The state stays here, owned by the one detector; the
/// parts' members are internal only because Swift's `private` stops at the file.
struct MarkerDetector: Sendable {
    static let blockSize = 64
    static let windowBlocks = GGWave.markerFrames * GGWave.samplesPerFrame / blockSize
    static let bins = 2 * GGWave.markerPairs

    /// Mean start score that opens a candidate. With noise alone the mean of 16 uniform shares has
    /// a standard deviation of 0.072, so 0.75 is 3.5 σ; a real marker scores > 0.9 down to about
    /// −10 dB SNR.
    let threshold: Float = 0.75
    /// A candidate is settled once its alignment metric has not grown for 1.5 frames, or after
    /// 4 marker lengths at most.
    static let settleBlocks = 96
    static let maxTrackBlocks = 4 * windowBlocks

    /// Row n (a sample's position in its frame) holds e^(−2πi(320 + k)n/1024) for the 32 marker bins
    /// as (re, im) pairs, so that a sample goes into the block's partial DFT with one 64-wide
    /// multiply-add. Shared by every detector (256 KB).
    static let sampleTwiddles: [Float] = {
        let n = GGWave.samplesPerFrame
        let cosT = (0..<n).map { Float(cos(2 * Double.pi * Double($0) / Double(n))) }
        let sinT = (0..<n).map { Float(sin(2 * Double.pi * Double($0) / Double(n))) }
        var out = [Float](repeating: 0, count: n * 2 * bins)
        for base in 0..<n {
            for k in 0..<bins {
                let idx = ((GGWave.freqStart + k) * base) & (n - 1)
                out[base * 2 * bins + 2 * k] = cosT[idx]
                out[base * 2 * bins + 2 * k + 1] = -sinT[idx]
            }
        }
        return out
    }()
    var partial = [Float](repeating: 0, count: 2 * bins)
    var filled = 0
    /// The last 256 blocks' partial DFTs ((re, im) × 32 per block), the window the sums slide over.
    var blockRing: [Float]
    /// Asleep, the detector keeps only the raw samples and, per whole frame, the marker bins of
    /// one real FFT; the per-sample partial DFTs and the per-block scores, most of its cost, run
    /// only while awake (`Wakefulness`).
    var wake: Wakefulness
    /// The last 512 blocks' samples: on waking, the partial DFTs of the window behind the newest
    /// frame (256 + 16 blocks) are computed from them.
    var sampleRing = [Float](repeating: 0, count: sampleRingCount)
    static let sampleRingCount = 512 * blockSize
    var samplesSeen = 0
    /// The marker bins' DFT of the last 32 whole frames ((re, im) × 32 per frame): the last 16
    /// summed are the 0 ppm window at a frame boundary, read while asleep, and with a few blocks'
    /// partial DFTs they give any window whose end scores the receiver reads after a sleep.
    var frameSpectra = [Float](repeating: 0, count: spectrumFrames * 2 * bins)
    static let spectrumFrames = 32
    static let blocksPerFrame = GGWave.samplesPerFrame / blockSize
    /// The window's sums and bin energies per clock hypothesis.
    var hypotheses = ClockHypotheses()
    /// Blocks completed since the start.
    var blocks = 0
    var startScores: [Float]
    var endScores: [Float]
    /// The same with the clock hypothesis that holds the most end-marker energy, for candidates
    /// whose clock is off (matched clocks use the single-hypothesis arrays, whose "exactly there"
    /// test a hypothesis riding changing data tones could otherwise blur).
    var shiftedEndScores: [Float]
    var shiftedEndEnergies: [Float]
    /// Σ over pairs of (end-marker bin energy − start-marker bin energy): peaks where a window
    /// lines up exactly with an end marker, which tells a true end marker from one merely nearby.
    var endEnergies: [Float]
    /// No new candidate while the window still overlaps the marker just reported.
    var quietUntilBlock = 0
    var tracking: (first: Int, best: Int, metric: Double, ppm: Double)?
    /// The last 16 frames' marker-bin powers, for the off-clock trigger (`triggerRules`).
    var frameEnergies = [Float](repeating: 0, count: triggerFrames * bins)
    /// The off-clock hypotheses are updated through this block (`finishBlock`), and were at the last.
    var offClockUntil = -1
    var offClockLive = false
    /// Set by the receiver while a candidate whose clock is off waits for its end marker.
    var keepClockHypotheses = false
    /// Per frame (the last 32), whether the off-clock trigger fired and could switch anything on.
    var fired = [Bool](repeating: false, count: 32)
    /// Blocks scored as they came (not slept through), for tests.
    var blocksAwake = 0

    /// A start marker: its first sample and the clock hypothesis it matched best.
    struct Detection: Equatable {
        var start: Int
        var ppm: Double
    }

    /// `historyBlocks`: how many past scores `endScore(at:)` can still look up.
    /// `stayAwake`: never sleep (for tests comparing a sleeping detector with one always awake).
    init(historyBlocks: Int, stayAwake: Bool = false) {
        wake = Wakefulness(isAwake: stayAwake, stayAwake: stayAwake)
        blockRing = [Float](repeating: 0, count: Self.windowBlocks * 2 * Self.bins)
        startScores = [Float](repeating: 0.5, count: historyBlocks)
        endScores = [Float](repeating: 0.5, count: historyBlocks)
        endEnergies = [Float](repeating: 0, count: historyBlocks)
        shiftedEndScores = [Float](repeating: 0.5, count: historyBlocks)
        shiftedEndEnergies = [Float](repeating: 0, count: historyBlocks)
    }

    /// Consumes samples; returns every start marker found.
    mutating func process(_ samples: some Collection<Float>) -> [Detection] {
        if let found = samples.withContiguousStorageIfAvailable({ process(contiguous: $0) }) { return found }
        return Array(samples).withUnsafeBufferPointer { process(contiguous: $0) }
    }

    private mutating func process(contiguous samples: UnsafeBufferPointer<Float>) -> [Detection] {
        var found: [Detection] = []
        var i = 0
        let frameMask = GGWave.samplesPerFrame - 1
        while i < samples.count {
            let inFrame = samplesSeen & frameMask
            // Awake, block by block (a block never crosses a frame boundary: 64 divides 1024); asleep,
            // frame by frame.
            let take = min(wake.isAwake ? Self.blockSize - filled : GGWave.samplesPerFrame - inFrame, samples.count - i)
            let piece = UnsafeBufferPointer(rebasing: samples[i..<(i + take)])
            keep(piece)
            if wake.isAwake {
                partial.withUnsafeMutableBufferPointer { Self.accumulate(piece, firstRow: inFrame, into: $0) }
                filled += take
            }
            i += take
            samplesSeen += take
            let frameEnds = samplesSeen & frameMask == 0
            if wake.isAwake {
                guard filled == Self.blockSize else { continue }
                let triggered = frameEnds && frameEnded()
                if let start = finishBlock(triggered: triggered) { found.append(start) }
                if frameEnds && maySleep() { fallAsleep() }
            } else if frameEnds {
                // The trigger keeps nothing on while the marker just reported fills the window (as
                // in `finishBlock`), so it wakes nothing there either.
                let triggered = frameEnded()
                if let replay = wakeAfterFrame(triggered: triggered) {
                    found += wakeUp(replayingFrames: replay)
                } else {
                    skipFrame()
                }
            }
        }
        return found
    }

    /// Start score of the window beginning at sample `start` (nearest block, best within ± `slack`
    /// blocks), or nil when not computed yet or forgotten.
    func startScore(windowStart start: Int, slack: Int = 2) -> Float? { lookup(startScores, start, slack) }

    /// End score (1 − start score) of the window beginning at sample `start`.
    mutating func endScore(windowStart start: Int, slack: Int = 2, shifted: Bool = false) -> Float? {
        guard scoreAsleep(around: start, slack: slack) else { return nil }
        return lookup(shifted ? shiftedEndScores : endScores, start, slack)
    }

    /// End energy of the window beginning at sample `start` (best within ± `slack` blocks).
    mutating func endEnergy(windowStart start: Int, slack: Int = 2, shifted: Bool = false) -> Float? {
        guard scoreAsleep(around: start, slack: slack) else { return nil }
        return lookup(shifted ? shiftedEndEnergies : endEnergies, start, slack)
    }

    /// The block at which the window beginning at sample `start` ends (nearest).
    static func block(windowStart start: Int) -> Int {
        Int((Double(start + GGWave.markerFrames * GGWave.samplesPerFrame) / Double(blockSize)).rounded()) - 1
    }

    private func lookup(_ scores: [Float], _ start: Int, _ slack: Int) -> Float? {
        let center = Self.block(windowStart: start)
        guard center - slack >= 0, center + slack < blocks, center - slack > blocks - scores.count else { return nil }
        var best = -Float.greatestFiniteMagnitude
        for b in (center - slack)...(center + slack) { best = max(best, scores[b % scores.count]) }
        return best
    }
}
