/// The sleep/wake front end of `MarkerDetector`: the samples and whole frames kept while asleep,
/// the off-clock trigger, when to wake and what to score again on waking, and the end scores of
/// blocks slept through, computed when the receiver reads them.
extension MarkerDetector {
    /// The 24 off-clock hypotheses are updated only while a start marker may be arriving, while a
    /// candidate is tracked, or while the receiver says a candidate whose clock is off waits for
    /// its end marker (`keepClockHypotheses`), and for a window after; off, the 0 ppm hypothesis
    /// stands in for them, and switched on, their sums are rebuilt from the ring (exactly what the
    /// sliding update would hold). "May be arriving" is read from the marker's own structure,
    /// whatever the clock, per pair of bins with the powers of the last whole frames summed (a frame
    /// is short enough for the drift at ±1000 ppm not to cancel it, and powers add whatever the
    /// phase). Over the last 8 frames: the start-marker bin's mean share ≥ 0.64, or that bin louder
    /// in ≥ 13 of the 16 pairs; over the last 16: a mean share ≥ 0.54 with ≥ 11 pairs leaning.
    /// A marker at ±1000 ppm has a share of only 0.65–0.67 at +5 … 0 dB (its tones are a third of a
    /// bin off, and half the pairs lose energy to their partner bin) and 0.55–0.56 at −10 dB, where
    /// the 16 frames' lower noise separates it. Chosen on the traces of the SNR, channel and ±1000 /
    /// +600 ppm corpora (every marker the detector decodes fires it) and of clean beacons, whose
    /// loud data tones push the 8-frame share of a few pairs to 1 (the old single test, a share
    /// ≥ 0.58 over 8 frames or ≥ 12 pairs, kept the hypotheses on for 40 % of a clean 140-byte
    /// beacon, this for 16 %, the markers alone for 8 %; in white noise 34 % → 19 %).
    struct TriggerRule {
        var frames: Int, share: Float, leaning: Int, both: Bool
    }
    static let triggerRules = [
        TriggerRule(frames: 8, share: 0.64, leaning: 13, both: false),
        TriggerRule(frames: 16, share: 0.54, leaning: 11, both: true),
    ]
    static let triggerFrames = 16

    /// Whether the per-block work runs. The 0 ppm window at frame boundaries wakes the detector
    /// from 0.65 (a start marker opens a candidate at 0.75, anywhere in the frame, and the frame is
    /// then scored again block by block); it sleeps below 0.6 with nothing tracked or awaited.
    /// With noise alone the share is 0.5 ± 0.072, above 0.65 about 2 % of the time.
    struct Wakefulness {
        static let wakeShare: Float = 0.65
        static let sleepShare: Float = 0.6
        /// A matched-clock marker waits for its peak this many frames at most (it lasts 16).
        static let maxPendingFrames = 20
        var isAwake = false
        /// For tests: never sleep (the detector as it was before it slept).
        var stayAwake = false
        /// While waiting for a marker's peak: the last frame's window marker energy.
        var pendingDifference: Float?
        var pendingFrames = 0
    }

    /// Copies samples into the ring (never across its end: the ring holds whole frames).
    mutating func keep(_ piece: UnsafeBufferPointer<Float>) {
        let at = samplesSeen % Self.sampleRingCount
        sampleRing.withUnsafeMutableBufferPointer { ring in
            _ = UnsafeMutableBufferPointer(rebasing: ring[at..<(at + piece.count)]).update(fromContentsOf: piece)
        }
    }

    /// Adds samples to a block's partial DFT, the first at row `firstRow` of its frame. Four 16-wide
    /// accumulators in registers: the same products and sums, in the same order, as bin by bin,
    /// so a block computed on waking equals the one summed as its samples came.
    static func accumulate(_ samples: UnsafeBufferPointer<Float>, firstRow: Int, into partial: UnsafeMutableBufferPointer<Float>) {
        let acc = UnsafeMutableRawPointer(partial.baseAddress!)
        var s0 = acc.loadUnaligned(fromByteOffset: 0, as: SIMD16<Float>.self)
        var s1 = acc.loadUnaligned(fromByteOffset: 64, as: SIMD16<Float>.self)
        var s2 = acc.loadUnaligned(fromByteOffset: 128, as: SIMD16<Float>.self)
        var s3 = acc.loadUnaligned(fromByteOffset: 192, as: SIMD16<Float>.self)
        sampleTwiddles.withUnsafeBytes { rows in
            for t in 0..<samples.count {
                let x = SIMD16<Float>(repeating: samples[t]), row = (firstRow + t) * 2 * bins * 4
                s0 += x * rows.loadUnaligned(fromByteOffset: row, as: SIMD16<Float>.self)
                s1 += x * rows.loadUnaligned(fromByteOffset: row + 64, as: SIMD16<Float>.self)
                s2 += x * rows.loadUnaligned(fromByteOffset: row + 128, as: SIMD16<Float>.self)
                s3 += x * rows.loadUnaligned(fromByteOffset: row + 192, as: SIMD16<Float>.self)
            }
        }
        acc.storeBytes(of: s0, toByteOffset: 0, as: SIMD16<Float>.self)
        acc.storeBytes(of: s1, toByteOffset: 64, as: SIMD16<Float>.self)
        acc.storeBytes(of: s2, toByteOffset: 128, as: SIMD16<Float>.self)
        acc.storeBytes(of: s3, toByteOffset: 192, as: SIMD16<Float>.self)
    }

    /// The partial DFT of block `m` from the sample ring (zero before the stream began).
    private static func partialDFT(ofBlock m: Int, ring: UnsafeBufferPointer<Float>, into out: UnsafeMutableBufferPointer<Float>) {
        out.update(repeating: 0)
        guard m >= 0 else { return }
        let at = (m * blockSize) % sampleRingCount
        accumulate(UnsafeBufferPointer(rebasing: ring[at..<(at + blockSize)]),
                   firstRow: (m * blockSize) & (GGWave.samplesPerFrame - 1), into: out)
    }

    /// Asleep through a frame: its blocks get a neutral start score, and end scores only if read.
    mutating func skipFrame() {
        for _ in 0..<Self.blocksPerFrame {
            let b = blocks
            startScores[b % startScores.count] = 0.5
            // Not computed: scored on demand if the receiver reads them (`scoreAsleep`).
            endScores[b % endScores.count] = .nan
            shiftedEndScores[b % shiftedEndScores.count] = .nan
            endEnergies[b % endEnergies.count] = .nan
            shiftedEndEnergies[b % shiftedEndEnergies.count] = .nan
            blocks += 1
        }
    }

    /// Wakes at the end of a frame slept through: the ring of partial DFTs is filled with the 256
    /// blocks before that frame, the sums are rebuilt from it, and the frame's 16 blocks are then
    /// scored as if the detector had been awake all along (a marker crossing the threshold inside
    /// the frame is found at the same block).
    mutating func wakeUp(replayingFrames replay: Int) -> [Detection] {
        // The frames before the one just ended were skipped: score them again.
        blocks -= (replay - 1) * Self.blocksPerFrame
        let first = blocks, last = first + replay * Self.blocksPerFrame - 1
        let nb = Self.bins
        // What the trigger switched on before the replay, as if awake all along.
        for f in (first / Self.blocksPerFrame - Self.windowBlocks / Self.blocksPerFrame)..<(first / Self.blocksPerFrame)
        where f >= 0 && fired[f % fired.count] {
            offClockUntil = max(offClockUntil, (f + 1) * Self.blocksPerFrame - 1 + Self.windowBlocks)
        }
        sampleRing.withUnsafeBufferPointer { samples in
            blockRing.withUnsafeMutableBufferPointer { ring in
                for m in (first - Self.windowBlocks)..<first {
                    let slot = (m % Self.windowBlocks + Self.windowBlocks) % Self.windowBlocks * 2 * nb
                    Self.partialDFT(ofBlock: m, ring: samples, into: UnsafeMutableBufferPointer(rebasing: ring[slot..<(slot + 2 * nb)]))
                }
            }
        }
        hypotheses.rebuildZeroSum(ring: blockRing)
        wake.isAwake = true
        var found: [Detection] = []
        for m in first...last {
            sampleRing.withUnsafeBufferPointer { samples in
                partial.withUnsafeMutableBufferPointer { Self.partialDFT(ofBlock: m, ring: samples, into: $0) }
            }
            filled = Self.blockSize
            let frameLast = (m + 1) % Self.blocksPerFrame == 0
            if let start = finishBlock(triggered: frameLast && fired[m / Self.blocksPerFrame % fired.count]) { found.append(start) }
        }
        if maySleep() { fallAsleep() }
        return found
    }

    /// Computes the end scores of blocks slept through around the window beginning at `start`;
    /// false when they can no longer be (their samples or frames have been forgotten).
    mutating func scoreAsleep(around start: Int, slack: Int) -> Bool {
        let center = Self.block(windowStart: start)
        guard center - slack >= 0, center + slack < blocks else { return true }   // `lookup` says nil
        let range = (center - slack)...(center + slack)
        guard let firstMissing = range.first(where: { endScores[$0 % endScores.count].isNaN }) else { return true }
        return scoreAsleep(blocks: firstMissing...range.upperBound)
    }

    /// The 0 ppm windows ending at blocks `range` that were slept through: the first from the whole
    /// frames in it (their spectra) and the blocks at its two ends (their samples), the next ones
    /// slid from it a block at a time; scored as `scoreBlock` scores a block with the clock
    /// hypotheses off. (Sums in another order than the streamed window's, so equal to it to
    /// rounding: ~1e-7 of the window's energy.)
    private mutating func scoreAsleep(blocks range: ClosedRange<Int>) -> Bool {
        let bpf = Self.blocksPerFrame, nb = Self.bins
        let c = range.lowerBound, first = c - Self.windowBlocks + 1
        // Whole frames f in the window: first ≤ 16f and 16f + 15 ≤ c (floor division, first may be < 0).
        let firstFrame = -Self.floorDivision(-first, bpf), lastFrame = (c + 1) / bpf - 1
        let newestFrame = samplesSeen / GGWave.samplesPerFrame - 1
        guard newestFrame - max(firstFrame, 0) < Self.spectrumFrames,
              max(first, 0) * Self.blockSize >= samplesSeen - Self.sampleRingCount
        else { return false }
        // Arrays (a read is rare), so that no access to the ring overlaps the scoring below.
        var sum = [Float](repeating: 0, count: 2 * nb), block = [Float](repeating: 0, count: 2 * nb)
        for f in firstFrame...lastFrame where f >= 0 {
            let slot = f % Self.spectrumFrames * 2 * nb
            for i in 0..<(2 * nb) { sum[i] += frameSpectra[slot + i] }
        }
        func add(_ m: Int, _ sign: Float) {
            guard m >= 0 else { return }
            sampleRing.withUnsafeBufferPointer { samples in
                block.withUnsafeMutableBufferPointer { Self.partialDFT(ofBlock: m, ring: samples, into: $0) }
            }
            for i in 0..<(2 * nb) { sum[i] += sign * block[i] }
        }
        for m in first..<(firstFrame * bpf) { add(m, 1) }
        for m in ((lastFrame + 1) * bpf)..<(c + 1) { add(m, 1) }
        for b in range {
            if b > c {
                add(b, 1)
                add(b - Self.windowBlocks, -1)
            }
            guard endScores[b % endScores.count].isNaN else { continue }
            hypotheses.setZeroEnergies(fromSum: sum)
            let endScore = 1 - hypotheses.share(ClockHypotheses.zero)
            let endMetric = Float(hypotheses.trimmedSums(ClockHypotheses.zero).largest * -1)
            endScores[b % endScores.count] = endScore
            shiftedEndScores[b % shiftedEndScores.count] = endScore
            endEnergies[b % endEnergies.count] = endMetric
            shiftedEndEnergies[b % shiftedEndEnergies.count] = endMetric
        }
        return true
    }

    private static func floorDivision(_ a: Int, _ b: Int) -> Int { a >= 0 ? a / b : -((-a + b - 1) / b) }

    /// At the end of a frame: its marker bins from one real FFT of its samples, kept for the 0 ppm
    /// window and the trigger; tells whether the last frames, powers summed, look like a start
    /// marker whatever the clock (`triggerRules`).
    mutating func frameEnded() -> Bool {
        let newest = samplesSeen / GGWave.samplesPerFrame - 1
        let spectrumSlot = newest % Self.spectrumFrames * 2 * Self.bins
        let at = (newest * GGWave.samplesPerFrame) % Self.sampleRingCount
        sampleRing.withUnsafeBufferPointer { ring in
            frameSpectra.withUnsafeMutableBufferPointer { spectra in
                FFT.frame.spectrum(of: UnsafeBufferPointer(rebasing: ring[at..<(at + GGWave.samplesPerFrame)]),
                                   bins: GGWave.freqStart..<(GGWave.freqStart + Self.bins),
                                   into: UnsafeMutableBufferPointer(rebasing: spectra[spectrumSlot..<(spectrumSlot + 2 * Self.bins)]))
            }
        }
        let row = (newest % Self.triggerFrames) * Self.bins
        for k in 0..<Self.bins {
            let (re, im) = (frameSpectra[spectrumSlot + 2 * k], frameSpectra[spectrumSlot + 2 * k + 1])
            frameEnergies[row + k] = re * re + im * im
        }
        let fires = Self.triggerRules.contains { rule in
            var share: Float = 0
            var leaning = 0
            for pair in 0..<GGWave.markerPairs {
                var lo: Float = 0, hi: Float = 0
                for age in 0..<rule.frames {
                    let r = ((newest - age) % Self.triggerFrames + Self.triggerFrames) % Self.triggerFrames * Self.bins
                    lo += frameEnergies[r + 2 * pair]
                    hi += frameEnergies[r + 2 * pair + 1]
                }
                let (on, off) = pair % 2 == 0 ? (lo, hi) : (hi, lo)
                share += (on + 1e-30) / (on + off + 2e-30)
                if on > off { leaning += 1 }
            }
            let shareMet = share / Float(GGWave.markerPairs) >= rule.share, leaningMet = leaning >= rule.leaning
            return rule.both ? shareMet && leaningMet : shareMet || leaningMet
        }
        // A trigger while the marker just reported still fills the window keeps nothing on.
        fired[newest % fired.count] = fires && (newest + 1) * Self.blocksPerFrame - 1 >= quietUntilBlock
        return fires
    }

    /// Asleep, at a frame's end (`blocks` is its first block): how many frames to score again on
    /// waking, or nil to sleep on. The detector wakes when the off-clock trigger fires (the 0 ppm
    /// window cancels at those clocks: at once), while the receiver keeps the clock hypotheses, and
    /// for a start marker on the matched clock, seen as the 0 ppm window ending at this frame
    /// having a start share ≥ 0.65: then not before the window has passed it, when its marker
    /// energy stops growing (the candidate's best block is where the window lines up with the
    /// marker, within half a frame of the best frame boundary), scoring the last two frames again.
    /// Every block a candidate could open, be tracked or peak at is scored, as if awake all along.
    mutating func wakeAfterFrame(triggered: Bool) -> Int? {
        if keepClockHypotheses { return pendingWake() ?? 1 }
        // No candidate can open before `quietUntilBlock`: the marker just reported fills the window.
        guard blocks + Self.blocksPerFrame > quietUntilBlock else { return pendingWake() }
        let window = alignedWindow()
        guard window.share >= Wakefulness.wakeShare else {
            return triggered ? pendingWake() ?? 1 : pendingWake()
        }
        if let previous = wake.pendingDifference,
           window.difference < previous || wake.pendingFrames >= Wakefulness.maxPendingFrames {
            return pendingWake()
        }
        wake.pendingDifference = window.difference
        wake.pendingFrames += 1
        return nil
    }

    /// Ends a wait for a marker's peak: the two frames around it are scored again.
    private mutating func pendingWake() -> Int? {
        guard wake.pendingDifference != nil else { return nil }
        wake.pendingDifference = nil
        wake.pendingFrames = 0
        return 2
    }

    /// The 0 ppm window ending at the last frame boundary (the last 16 frames' spectra summed): its
    /// start share, and its start-marker energy minus end-marker energy over the pairs.
    private func alignedWindow() -> (share: Float, difference: Float) {
        withUnsafeTemporaryAllocation(of: Float.self, capacity: 2 * Self.bins) { sums in
            sums.update(repeating: 0)
            let newest = samplesSeen / GGWave.samplesPerFrame - 1
            for age in 0..<GGWave.markerFrames where newest - age >= 0 {
                let slot = (newest - age) % Self.spectrumFrames * 2 * Self.bins
                for i in 0..<(2 * Self.bins) { sums[i] += frameSpectra[slot + i] }
            }
            var share: Float = 0, difference: Float = 0
            for pair in 0..<GGWave.markerPairs {
                let (lo, hi) = (sums[4 * pair] * sums[4 * pair] + sums[4 * pair + 1] * sums[4 * pair + 1],
                                sums[4 * pair + 2] * sums[4 * pair + 2] + sums[4 * pair + 3] * sums[4 * pair + 3])
                let (on, off) = pair % 2 == 0 ? (lo, hi) : (hi, lo)
                share += (on + 1e-30) / (on + off + 2e-30)
                difference += on - off
            }
            return (share / Float(GGWave.markerPairs), difference)
        }
    }

    /// Awake, after a frame's last block: sleep when nothing is tracked or waited for and the
    /// window no longer looks like a start marker.
    /// While the marker just reported is still in the window no candidate can open, so neither the
    /// window's share nor the clock hypotheses (rebuilt on waking) matter there.
    func maySleep() -> Bool {
        guard !wake.stayAwake, tracking == nil, !keepClockHypotheses else { return false }
        if blocks < quietUntilBlock { return true }
        return blocks > offClockUntil && startScores[(blocks - 1) % startScores.count] < Wakefulness.sleepShare
    }

    /// Nothing slides while asleep: the clock hypotheses' sums are rebuilt whenever they are next used.
    mutating func fallAsleep() {
        wake.isAwake = false
        offClockLive = false
    }
}
