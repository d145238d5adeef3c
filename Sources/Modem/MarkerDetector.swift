import Foundation

/// Finds ggwave start markers in a stream and remembers, block by block, how much each 16-frame
/// window looks like a start or an end marker.
///
/// Every 64-sample block adds its partial DFT at the 32 marker bins (320…351) to a running sum
/// over the last 256 blocks, which is the DFT of the 16-frame window ending at that block (the
/// bins are whole, so partial sums of consecutive blocks add up coherently). Per pair of bins the
/// score is the share of the pair's energy in the bin a start marker uses: about 1 on a start
/// marker, 0 on an end marker, and uniform on [0, 1] with noise alone, whatever its level.
struct MarkerDetector: Sendable {
    static let blockSize = 64
    static let windowBlocks = GGWave.markerFrames * GGWave.samplesPerFrame / blockSize
    private static let bins = 2 * GGWave.markerPairs

    /// Mean start score that opens a candidate. With noise alone the mean of 16 uniform shares has
    /// a standard deviation of 0.072, so 0.75 is 3.5 σ; a real marker scores > 0.9 down to about
    /// −10 dB SNR.
    let threshold: Float = 0.75
    /// A candidate is settled once its alignment metric has not grown for 1.5 frames, or after
    /// 4 marker lengths at most.
    private static let settleBlocks = 96
    private static let maxTrackBlocks = 4 * windowBlocks
    private static let trimmedPairs = 12

    private let cosTable: [Float]
    private let sinTable: [Float]
    private var partial = [Float](repeating: 0, count: 2 * bins)
    private var filled = 0
    private var blockRing: [Float]
    private var windowSum = [Double](repeating: 0, count: 2 * bins)
    /// Blocks completed since the start.
    private(set) var blocks = 0
    private var startScores: [Float]
    private var endScores: [Float]
    /// Σ over pairs of (end-marker bin energy − start-marker bin energy): peaks where a window
    /// lines up exactly with an end marker, which tells a true end marker from one merely nearby.
    private var endEnergies: [Float]
    /// No new candidate while the window still overlaps the marker just reported.
    private var quietUntilBlock = 0
    private var tracking: (first: Int, best: Int, metric: Double)?

    /// `historyBlocks`: how many past scores `endScore(at:)` can still look up.
    init(historyBlocks: Int) {
        let n = GGWave.samplesPerFrame
        cosTable = (0..<n).map { Float(cos(2 * Double.pi * Double($0) / Double(n))) }
        sinTable = (0..<n).map { Float(sin(2 * Double.pi * Double($0) / Double(n))) }
        blockRing = [Float](repeating: 0, count: Self.windowBlocks * 2 * Self.bins)
        startScores = [Float](repeating: 0.5, count: historyBlocks)
        endScores = [Float](repeating: 0.5, count: historyBlocks)
        endEnergies = [Float](repeating: 0, count: historyBlocks)
    }

    /// Consumes samples; returns the first sample index of every start marker found.
    mutating func process(_ samples: some Collection<Float>) -> [Int] {
        var found: [Int] = []
        let mask = GGWave.samplesPerFrame - 1
        var n = blocks * Self.blockSize + filled
        for x in samples {
            let base = n & mask
            partial.withUnsafeMutableBufferPointer { acc in
                cosTable.withUnsafeBufferPointer { cosT in
                    sinTable.withUnsafeBufferPointer { sinT in
                        var idx = (GGWave.freqStart * base) & mask
                        for k in 0..<Self.bins {
                            acc[2 * k] += x * cosT[idx]
                            acc[2 * k + 1] -= x * sinT[idx]
                            idx = (idx + base) & mask   // bin k+1: one more turn of `base`
                        }
                    }
                }
            }
            filled += 1
            n += 1
            if filled == Self.blockSize, let start = finishBlock() { found.append(start) }
        }
        return found
    }

    /// Start score of the window beginning at sample `start` (nearest block, best within ± `slack`
    /// blocks), or nil when not computed yet or forgotten.
    func startScore(windowStart start: Int, slack: Int = 2) -> Float? { lookup(startScores, start, slack) }

    /// End score (1 − start score) of the window beginning at sample `start`.
    func endScore(windowStart start: Int, slack: Int = 2) -> Float? { lookup(endScores, start, slack) }

    /// End energy of the window beginning at sample `start` (best within ± `slack` blocks).
    func endEnergy(windowStart start: Int, slack: Int = 2) -> Float? { lookup(endEnergies, start, slack) }

    private func lookup(_ scores: [Float], _ start: Int, _ slack: Int) -> Float? {
        let center = Int((Double(start + GGWave.markerFrames * GGWave.samplesPerFrame) / Double(Self.blockSize)).rounded()) - 1
        guard center - slack >= 0, center + slack < blocks, center - slack > blocks - scores.count else { return nil }
        var best = -Float.greatestFiniteMagnitude
        for b in (center - slack)...(center + slack) { best = max(best, scores[b % scores.count]) }
        return best
    }

    private mutating func finishBlock() -> Int? {
        let slot = (blocks % Self.windowBlocks) * 2 * Self.bins
        for i in 0..<(2 * Self.bins) {
            windowSum[i] += Double(partial[i]) - Double(blockRing[slot + i])
            blockRing[slot + i] = partial[i]
            partial[i] = 0
        }
        filled = 0
        // Rounding in the running sum would build up over hours; re-add it exactly now and then.
        if blocks % (16 * Self.windowBlocks) == 0 {
            for i in 0..<(2 * Self.bins) {
                windowSum[i] = stride(from: i, to: blockRing.count, by: 2 * Self.bins).reduce(0) { $0 + Double(blockRing[$1]) }
            }
        }
        var share: Float = 0
        var differences = [Double](repeating: 0, count: GGWave.markerPairs)
        for pair in 0..<GGWave.markerPairs {
            let lower = energy(2 * pair), upper = energy(2 * pair + 1)
            let (on, off) = pair % 2 == 0 ? (lower, upper) : (upper, lower)
            share += Float((on + 1e-30) / (on + off + 2e-30))
            differences[pair] = on - off
        }
        // Alignment metrics that a few loud data tones (chunks put up to 2 tones, 7 times a marker
        // tone's power, into these bins) cannot steer: the sum of the 12 smallest differences.
        differences.sort()
        let metric = differences.prefix(Self.trimmedPairs).reduce(0, +)
        let endMetric = differences.suffix(Self.trimmedPairs).reduce(0, +) * -1
        share /= Float(GGWave.markerPairs)
        let b = blocks
        startScores[b % startScores.count] = share
        endScores[b % endScores.count] = 1 - share
        endEnergies[b % endEnergies.count] = Float(endMetric)
        blocks += 1
        guard b >= Self.windowBlocks - 1 else { return nil }

        if let t = tracking {
            if metric > t.metric { tracking = (t.first, b, metric) }
            // Follow the candidate while its metric still grows: noise can cross the threshold
            // just before a real marker, whose window energy then keeps rising for 16 frames.
            if let done = tracking, b - done.best >= Self.settleBlocks || b - done.first >= Self.maxTrackBlocks {
                tracking = nil
                quietUntilBlock = done.best + Self.windowBlocks
                return (done.best + 1) * Self.blockSize - Self.windowBlocks * Self.blockSize
            }
        } else if share < threshold - 0.1 {
            // Re-arm as soon as the last marker has clearly left the window.
            quietUntilBlock = min(quietUntilBlock, b)
        } else if share >= threshold && b >= quietUntilBlock {
            tracking = (b, b, metric)
        }
        return nil
    }

    private func energy(_ k: Int) -> Double {
        windowSum[2 * k] * windowSum[2 * k] + windowSum[2 * k + 1] * windowSum[2 * k + 1]
    }
}
