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
    /// Per clock hypothesis, the window's DFT at the marker bins with each block's phase turned
    /// back by what that clock offset makes a tone drift: a clock off by ε shifts bin b by −εb,
    /// i.e. its phase by −2πεb/16 per block, and 16 frames summed coherently at +1000 ppm would
    /// cancel. The hypotheses' sums share the partial DFTs, so each costs 32 complex updates a block.
    static let hypothesesPPM: [Double] = Array(stride(from: -1200.0, through: 1200.0, by: 100.0))
    private var windowSums: [Double]
    private static let zeroHypothesis = hypothesesPPM.firstIndex(of: 0)!
    /// e^{iθ·block} per hypothesis and bin (θ = 2π·ε·(320 + k)/16), its step, and e^{−iθ·W}.
    private var rotation: [Double]
    private let rotationStep: [Double]
    private let rotationBack: [Double]
    /// Blocks completed since the start.
    private(set) var blocks = 0
    private var startScores: [Float]
    private var endScores: [Float]
    /// The same with the clock hypothesis that holds the most end-marker energy, for candidates
    /// whose clock is off (matched clocks use the single-hypothesis arrays, whose "exactly there"
    /// test a hypothesis riding changing data tones could otherwise blur).
    private var shiftedEndScores: [Float]
    private var shiftedEndEnergies: [Float]
    /// Σ over pairs of (end-marker bin energy − start-marker bin energy): peaks where a window
    /// lines up exactly with an end marker, which tells a true end marker from one merely nearby.
    private var endEnergies: [Float]
    /// No new candidate while the window still overlaps the marker just reported.
    private var quietUntilBlock = 0
    private var tracking: (first: Int, best: Int, metric: Double, ppm: Double)?

    /// A start marker: its first sample and the clock hypothesis it matched best.
    struct Detection: Equatable {
        var start: Int
        var ppm: Double
    }

    /// `historyBlocks`: how many past scores `endScore(at:)` can still look up.
    init(historyBlocks: Int) {
        let n = GGWave.samplesPerFrame
        cosTable = (0..<n).map { Float(cos(2 * Double.pi * Double($0) / Double(n))) }
        sinTable = (0..<n).map { Float(sin(2 * Double.pi * Double($0) / Double(n))) }
        blockRing = [Float](repeating: 0, count: Self.windowBlocks * 2 * Self.bins)
        startScores = [Float](repeating: 0.5, count: historyBlocks)
        endScores = [Float](repeating: 0.5, count: historyBlocks)
        endEnergies = [Float](repeating: 0, count: historyBlocks)
        shiftedEndScores = [Float](repeating: 0.5, count: historyBlocks)
        shiftedEndEnergies = [Float](repeating: 0, count: historyBlocks)
        let h = Self.hypothesesPPM.count
        windowSums = [Double](repeating: 0, count: h * 2 * Self.bins)
        var step = [Double](repeating: 0, count: h * 2 * Self.bins)
        var back = step
        for (i, ppm) in Self.hypothesesPPM.enumerated() {
            for k in 0..<Self.bins {
                let theta = Self.theta(ppm: ppm, bin: k)
                let o = (i * Self.bins + k) * 2
                step[o] = cos(theta)
                step[o + 1] = sin(theta)
                back[o] = cos(-theta * Double(Self.windowBlocks))
                back[o + 1] = sin(-theta * Double(Self.windowBlocks))
            }
        }
        rotationStep = step
        rotationBack = back
        rotation = [Double](repeating: 0, count: h * 2 * Self.bins)
        for i in 0..<(h * Self.bins) { rotation[2 * i] = 1 }
    }

    private static func theta(ppm: Double, bin k: Int) -> Double {
        2 * Double.pi * ppm * 1e-6 * Double(GGWave.freqStart + k) / Double(GGWave.samplesPerFrame / blockSize)
    }

    /// Consumes samples; returns every start marker found.
    mutating func process(_ samples: some Collection<Float>) -> [Detection] {
        var found: [Detection] = []
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
    func endScore(windowStart start: Int, slack: Int = 2, shifted: Bool = false) -> Float? {
        lookup(shifted ? shiftedEndScores : endScores, start, slack)
    }

    /// End energy of the window beginning at sample `start` (best within ± `slack` blocks).
    func endEnergy(windowStart start: Int, slack: Int = 2, shifted: Bool = false) -> Float? {
        lookup(shifted ? shiftedEndEnergies : endEnergies, start, slack)
    }

    private func lookup(_ scores: [Float], _ start: Int, _ slack: Int) -> Float? {
        let center = Int((Double(start + GGWave.markerFrames * GGWave.samplesPerFrame) / Double(Self.blockSize)).rounded()) - 1
        guard center - slack >= 0, center + slack < blocks, center - slack > blocks - scores.count else { return nil }
        var best = -Float.greatestFiniteMagnitude
        for b in (center - slack)...(center + slack) { best = max(best, scores[b % scores.count]) }
        return best
    }

    private mutating func finishBlock() -> Detection? {
        let slot = (blocks % Self.windowBlocks) * 2 * Self.bins
        let hypotheses = Self.hypothesesPPM.count
        windowSums.withUnsafeMutableBufferPointer { sums in
            rotation.withUnsafeMutableBufferPointer { rot in
                rotationStep.withUnsafeBufferPointer { step in
                    rotationBack.withUnsafeBufferPointer { back in
                        blockRing.withUnsafeBufferPointer { ring in
                            partial.withUnsafeBufferPointer { part in
                                for h in 0..<hypotheses {
                                    for k in 0..<Self.bins {
                                        let o = (h * Self.bins + k) * 2
                                        let cr = rot[o], ci = rot[o + 1]
                                        let or = cr * back[o] - ci * back[o + 1], oi = cr * back[o + 1] + ci * back[o]
                                        let pr = Double(part[2 * k]), pi = Double(part[2 * k + 1])
                                        let qr = Double(ring[slot + 2 * k]), qi = Double(ring[slot + 2 * k + 1])
                                        sums[o] += pr * cr - pi * ci - (qr * or - qi * oi)
                                        sums[o + 1] += pr * ci + pi * cr - (qr * oi + qi * or)
                                        rot[o] = cr * step[o] - ci * step[o + 1]
                                        rot[o + 1] = cr * step[o + 1] + ci * step[o]
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        for i in 0..<(2 * Self.bins) {
            blockRing[slot + i] = partial[i]
            partial[i] = 0
        }
        filled = 0
        // Rounding in the running sums and rotations would build up over hours; redo them exactly
        // now and then.
        if blocks % (16 * Self.windowBlocks) == 0 { recomputeSums(through: blocks) }

        // The hypothesis is the one whose marker bins hold the most energy (start) or the most
        // end-marker energy (end). Not the best share: on a clean marker every hypothesis scores
        // near 1, and a wrong one would misplace the start.
        var bestStart = (share: Float(0), difference: -Double.greatestFiniteMagnitude, h: 0)
        var bestEnd = (share: Float(0), difference: Double.greatestFiniteMagnitude, h: 0)
        var zero = bestStart
        for h in 0..<hypotheses {
            var share: Float = 0
            var difference = 0.0
            for pair in 0..<GGWave.markerPairs {
                let lower = energy(h, 2 * pair), upper = energy(h, 2 * pair + 1)
                let (on, off) = pair % 2 == 0 ? (lower, upper) : (upper, lower)
                share += Float((on + 1e-30) / (on + off + 2e-30))
                difference += on - off
            }
            share /= Float(GGWave.markerPairs)
            if difference > bestStart.difference { bestStart = (share, difference, h) }
            if difference < bestEnd.difference { bestEnd = (share, difference, h) }
            if h == Self.zeroHypothesis { zero = (share, difference, h) }
        }
        // Matched clocks keep exactly the single-hypothesis detector: another hypothesis takes over
        // only where it holds twice the marker energy (3 dB), i.e. where the clocks really differ.
        if !(bestStart.difference > 2 * max(zero.difference, 0)) { bestStart = zero }
        // Alignment metrics that a few loud data tones (chunks put up to 2 tones, 7 times a marker
        // tone's power, into these bins) cannot steer: the sum of the 12 smallest differences.
        let metric = differences(bestStart.h).prefix(Self.trimmedPairs).reduce(0, +)
        let endMetric = differences(bestEnd.h).suffix(Self.trimmedPairs).reduce(0, +) * -1
        let share = bestStart.share
        let b = blocks
        startScores[b % startScores.count] = share
        endScores[b % endScores.count] = 1 - zero.share
        endEnergies[b % endEnergies.count] = Float(differences(zero.h).suffix(Self.trimmedPairs).reduce(0, +) * -1)
        shiftedEndScores[b % endScores.count] = 1 - bestEnd.share
        shiftedEndEnergies[b % endEnergies.count] = Float(endMetric)
        blocks += 1
        guard b >= Self.windowBlocks - 1 else { return nil }

        let ppm = Self.hypothesesPPM[bestStart.h]
        if let t = tracking {
            if metric > t.metric { tracking = (t.first, b, metric, ppm) }
            // Follow the candidate while its metric still grows: noise can cross the threshold
            // just before a real marker, whose window energy then keeps rising for 16 frames.
            if let done = tracking, b - done.best >= Self.settleBlocks || b - done.first >= Self.maxTrackBlocks {
                tracking = nil
                quietUntilBlock = done.best + Self.windowBlocks
                return Detection(start: (done.best + 1) * Self.blockSize - Self.windowBlocks * Self.blockSize, ppm: done.ppm)
            }
        } else if share < threshold - 0.1 {
            // Re-arm as soon as the last marker has clearly left the window.
            quietUntilBlock = min(quietUntilBlock, b)
        } else if share >= threshold && b >= quietUntilBlock {
            tracking = (b, b, metric, ppm)
        }
        return nil
    }

    /// Per pair, start-marker bin energy minus end-marker bin energy, sorted.
    private func differences(_ h: Int) -> [Double] {
        var out = [Double](repeating: 0, count: GGWave.markerPairs)
        for pair in 0..<GGWave.markerPairs {
            let lower = energy(h, 2 * pair), upper = energy(h, 2 * pair + 1)
            out[pair] = pair % 2 == 0 ? lower - upper : upper - lower
        }
        return out.sorted()
    }

    /// Sums and rotations exactly from the ring, after block `last` went in.
    private mutating func recomputeSums(through last: Int) {
        for (h, ppm) in Self.hypothesesPPM.enumerated() {
            for k in 0..<Self.bins {
                let theta = Self.theta(ppm: ppm, bin: k)
                let o = (h * Self.bins + k) * 2
                var sr = 0.0, si = 0.0
                for m in max(0, last - Self.windowBlocks + 1)...last {
                    let phase = (theta * Double(m)).truncatingRemainder(dividingBy: 2 * Double.pi)
                    let slot = (m % Self.windowBlocks) * 2 * Self.bins
                    let pr = Double(blockRing[slot + 2 * k]), pi = Double(blockRing[slot + 2 * k + 1])
                    sr += pr * cos(phase) - pi * sin(phase)
                    si += pr * sin(phase) + pi * cos(phase)
                }
                windowSums[o] = sr
                windowSums[o + 1] = si
                let next = (theta * Double(last + 1)).truncatingRemainder(dividingBy: 2 * Double.pi)
                rotation[o] = cos(next)
                rotation[o + 1] = sin(next)
            }
        }
    }

    private func energy(_ h: Int, _ k: Int) -> Double {
        let o = (h * Self.bins + k) * 2
        return windowSums[o] * windowSums[o] + windowSums[o + 1] * windowSums[o + 1]
    }
}
