/// The scoring of `MarkerDetector`: per block, the window slides, the scores the receiver reads
/// are kept, and a start-marker candidate is opened, followed and reported.
extension MarkerDetector {
    /// What one block's window reads under the clock hypotheses.
    struct BlockReading {
        /// The hypothesis with the most start-marker energy, or 0 ppm (`read`).
        var startHypothesis: Int
        /// Start shares under that hypothesis and under 0 ppm.
        var startShare: Float
        var zeroShare: Float
        /// End share and end metric under the hypothesis with the most end-marker energy.
        var shiftedEndShare: Float
        var shiftedEndMetric: Double
        /// The 0 ppm hypothesis's trimmed sums (`ClockHypotheses.trimmedSums`).
        var zeroSums: (smallest: Double, largest: Double)
    }

    mutating func finishBlock(triggered: Bool) -> Detection? {
        let b = blocks
        blocksAwake += 1
        // A trigger while the marker just reported is still in the window (no candidate can open
        // there) keeps nothing on: that marker's own structure fires it for 16 more frames.
        if (triggered && b >= quietUntilBlock) || tracking != nil || keepClockHypotheses { offClockUntil = b + Self.windowBlocks }
        let live = b <= offClockUntil
        if live && !offClockLive && b > 0 { hypotheses.rebuildOffClockSums(through: b - 1, ring: blockRing) }
        offClockLive = live
        return scoreBlock(offClock: live)
    }

    /// One block's partial DFT is complete: slide the window, read it, keep its scores, and follow
    /// the candidate. The off-clock hypotheses are updated only when `offClock`.
    private mutating func scoreBlock(offClock: Bool) -> Detection? {
        let zero = ClockHypotheses.zero
        let updated = offClock ? ClockHypotheses.ppm.indices : zero..<(zero + 1)
        slideWindow(updated)
        // Rounding in the running sums would build up over hours; redo them exactly now and then
        // (not at the first block: the sums are that block alone, exactly, and the 25,600 cos/sin
        // pairs of a redo were paid by every decoder made).
        // Only the hypotheses updated this block: the others are rebuilt when switched on.
        if blocks % (16 * Self.windowBlocks) == 0 && blocks > 0 {
            hypotheses.recomputeSums(through: blocks, hypotheses: updated, ring: blockRing)
        }
        let reading = read(updated)
        let b = blocks
        keepScores(reading, at: b)
        blocks += 1
        guard b >= Self.windowBlocks - 1 else { return nil }
        return track(reading, at: b)
    }

    /// The block's partial DFT enters the ring and the windows of `updated`, the one 256 blocks
    /// older leaves them; the partial DFT starts again from zero.
    private mutating func slideWindow(_ updated: Range<Int>) {
        let nb = Self.bins, slot = (blocks % Self.windowBlocks) * 2 * nb
        blockRing.withUnsafeMutableBufferPointer { ring in
            partial.withUnsafeBufferPointer { entering in
                let leaving = UnsafeMutableBufferPointer(rebasing: ring[slot..<(slot + 2 * nb)])
                hypotheses.slide(updated, entering: entering, leaving: UnsafeBufferPointer(leaving))
                _ = leaving.update(fromContentsOf: entering)
            }
        }
        for i in 0..<(2 * nb) { partial[i] = 0 }
        filled = 0
    }

    /// The hypothesis is the one whose marker bins hold the most energy (start) or the most
    /// end-marker energy (end). Not the best share: on a clean marker every hypothesis scores
    /// near 1, and a wrong one would misplace the start.
    /// The energy differences pick the hypotheses; the shares (a division per pair) are needed
    /// only for the three that are used.
    private mutating func read(_ updated: Range<Int>) -> BlockReading {
        let zero = ClockHypotheses.zero
        let differences = hypotheses.differences(updated)
        // Matched clocks keep exactly the single-hypothesis detector: another hypothesis takes over
        // only where it holds twice the marker energy (3 dB), i.e. where the clocks really differ.
        let startH = differences.start.difference > 2 * max(differences.zero, 0) ? differences.start.h : zero
        let endH = differences.end.h
        let zeroShare = hypotheses.share(zero)
        let endShare = endH == zero ? zeroShare : hypotheses.share(endH)
        // Alignment metrics that a few loud data tones (chunks put up to 2 tones, 7 times a marker
        // tone's power, into these bins) cannot steer: the sum of the 12 smallest differences.
        // One sort of the matched-clock hypothesis serves its end metric and, usually, the start
        // metric, which is needed only while a candidate is tracked or opens (`startMetric`).
        let zeroSums = hypotheses.trimmedSums(zero)
        let endMetric = endH == zero ? zeroSums.largest * -1 : hypotheses.trimmedSums(endH).largest * -1
        let startShare = startH == zero ? zeroShare : hypotheses.share(startH)
        return BlockReading(startHypothesis: startH, startShare: startShare, zeroShare: zeroShare,
                            shiftedEndShare: endShare, shiftedEndMetric: endMetric, zeroSums: zeroSums)
    }

    /// The scores of block `b`, which the receiver looks up by window (`startScore`, `endScore`…).
    private mutating func keepScores(_ reading: BlockReading, at b: Int) {
        startScores[b % startScores.count] = reading.startShare
        endScores[b % endScores.count] = 1 - reading.zeroShare
        endEnergies[b % endEnergies.count] = Float(reading.zeroSums.largest * -1)
        shiftedEndScores[b % endScores.count] = 1 - reading.shiftedEndShare
        shiftedEndEnergies[b % endEnergies.count] = Float(reading.shiftedEndMetric)
    }

    /// The start hypothesis's alignment metric: the sum of its 12 smallest pair differences.
    private mutating func startMetric(_ reading: BlockReading) -> Double {
        reading.startHypothesis == ClockHypotheses.zero
            ? reading.zeroSums.smallest : hypotheses.trimmedSums(reading.startHypothesis).smallest
    }

    /// Opens a candidate where the start score crosses the threshold, follows it while its metric
    /// grows, and reports it once settled.
    private mutating func track(_ reading: BlockReading, at b: Int) -> Detection? {
        let ppm = ClockHypotheses.ppm[reading.startHypothesis]
        if let t = tracking {
            let metric = startMetric(reading)
            if metric > t.metric { tracking = (t.first, b, metric, ppm) }
            // Follow the candidate while its metric still grows: noise can cross the threshold
            // just before a real marker, whose window energy then keeps rising for 16 frames.
            if let done = tracking, b - done.best >= Self.settleBlocks || b - done.first >= Self.maxTrackBlocks {
                tracking = nil
                quietUntilBlock = done.best + Self.windowBlocks
                return Detection(start: (done.best + 1) * Self.blockSize - Self.windowBlocks * Self.blockSize, ppm: done.ppm)
            }
        } else if reading.startShare < threshold - 0.1 {
            // Re-arm as soon as the last marker has clearly left the window.
            quietUntilBlock = min(quietUntilBlock, b)
        } else if reading.startShare >= threshold && b >= quietUntilBlock {
            tracking = (b, b, startMetric(reading), ppm)
        }
        return nil
    }
}
