import Glibc

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

    /// Row n (a sample's position in its frame) holds e^(−2πi(320 + k)n/1024) for the 32 marker bins
    /// as (re, im) pairs, so that a sample goes into the block's partial DFT with one 64-wide
    /// multiply-add. Shared by every detector (256 KB).
    private static let sampleTwiddles: [Float] = {
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
    private var partial = [Float](repeating: 0, count: 2 * bins)
    private var filled = 0
    private var blockRing: [Float]
    /// Asleep, the detector keeps only the raw samples and, per whole frame, the marker bins of
    /// one real FFT; the per-sample partial DFTs and the per-block scores, most of its cost, run
    /// only while awake (`Wakefulness`).
    private var wake: Wakefulness
    /// The last 512 blocks' samples: on waking, the partial DFTs of the window behind the newest
    /// frame (256 + 16 blocks) are computed from them.
    private var sampleRing = [Float](repeating: 0, count: sampleRingCount)
    private static let sampleRingCount = 512 * blockSize
    private var samplesSeen = 0
    /// The marker bins' DFT of the last 32 whole frames ((re, im) × 32 per frame): the last 16
    /// summed are the 0 ppm window at a frame boundary, read while asleep, and with a few blocks'
    /// partial DFTs they give any window whose end scores the receiver reads after a sleep.
    private var frameSpectra = [Float](repeating: 0, count: spectrumFrames * 2 * bins)
    private static let spectrumFrames = 32
    private static let blocksPerFrame = GGWave.samplesPerFrame / blockSize
    /// Clock hypotheses: a clock off by ε shifts bin b by −εb, i.e. its phase by −2πεb/16 per
    /// block, and 16 frames summed coherently at +1000 ppm would cancel. Each hypothesis sums the
    /// window with each block's phase turned back by that drift; the hypotheses share the partial
    /// DFTs, so each costs 32 complex updates a block.
    static let hypothesesPPM: [Double] = Array(stride(from: -1200.0, through: 1200.0, by: 100.0))
    private static let zeroHypothesis = hypothesesPPM.firstIndex(of: 0)!
    /// Per hypothesis h and bin k (index 32h + k), T(b) = Σ over the window of p_m·e^(−iθ(b−m))
    /// (θ = 2π·ε·(320 + k)/16): the drift-corrected window sum seen from its newest block. It has
    /// the energy of Σ p_m·e^(iθm), and it slides with one rotation and no running phase:
    /// T(b) = e^(−iθ)·T(b − 1) + p_b − e^(−iθW)·p_(b−W).
    /// Single precision (four hypothesis-bins per vector register instead of two): rounding adds
    /// about 1e-7 of the loudest window's magnitude per block and is wiped by the exact redo every 16
    /// windows; the scores and metrics are then summed in double precision as before.
    private var sumRe: [Float]
    private var sumIm: [Float]
    /// Work arrays reused block after block: each hypothesis's 32 bin energies (index 32h + k); the
    /// block's partial DFT and the one leaving the window (re, im, re, im: 32 each); a sort buffer.
    private var energies = [Float](repeating: 0, count: hypothesesPPM.count * bins)
    private var incoming = [Float](repeating: 0, count: 4 * bins)
    private var d = [Double](repeating: 0, count: GGWave.markerPairs)
    /// e^(−iθ) and e^(−iθW) per hypothesis and bin, computed once for every detector (3,200 cos/sin
    /// pairs per decoder made were a tenth of a short beacon's decode cost).
    private static let rotations: (decayRe: [Float], decayIm: [Float], backRe: [Float], backIm: [Float]) = {
        let count = hypothesesPPM.count * bins
        var (dr, di, br, bi) = ([Float](repeating: 0, count: count), [Float](repeating: 0, count: count),
                                [Float](repeating: 0, count: count), [Float](repeating: 0, count: count))
        for (h, ppm) in hypothesesPPM.enumerated() {
            for k in 0..<bins {
                let theta = theta(ppm: ppm, bin: k)
                dr[h * bins + k] = Float(cos(-theta))
                di[h * bins + k] = Float(sin(-theta))
                br[h * bins + k] = Float(cos(-theta * Double(windowBlocks)))
                bi[h * bins + k] = Float(sin(-theta * Double(windowBlocks)))
            }
        }
        return (dr, di, br, bi)
    }()
    private let decayRe: [Float], decayIm: [Float]
    private let backRe: [Float], backIm: [Float]
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
    private struct TriggerRule {
        var frames: Int, share: Float, leaning: Int, both: Bool
    }
    private static let triggerRules = [
        TriggerRule(frames: 8, share: 0.64, leaning: 13, both: false),
        TriggerRule(frames: 16, share: 0.54, leaning: 11, both: true),
    ]
    private static let triggerFrames = 16
    private var frameEnergies = [Float](repeating: 0, count: triggerFrames * bins)
    private var offClockUntil = -1
    private var offClockLive = false
    /// Set by the receiver while a candidate whose clock is off waits for its end marker.
    var keepClockHypotheses = false

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
    /// Per frame (the last 32), whether the off-clock trigger fired and could switch anything on.
    private var fired = [Bool](repeating: false, count: 32)
    /// Blocks scored as they came (not slept through), for tests.
    private(set) var blocksAwake = 0

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
        let count = Self.hypothesesPPM.count * Self.bins
        (decayRe, decayIm, backRe, backIm) = Self.rotations
        sumRe = [Float](repeating: 0, count: count)
        sumIm = [Float](repeating: 0, count: count)
    }

    private static func theta(ppm: Double, bin k: Int) -> Double {
        2 * Double.pi * ppm * 1e-6 * Double(GGWave.freqStart + k) / Double(GGWave.samplesPerFrame / blockSize)
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

    /// Copies samples into the ring (never across its end: the ring holds whole frames).
    private mutating func keep(_ piece: UnsafeBufferPointer<Float>) {
        let at = samplesSeen % Self.sampleRingCount
        sampleRing.withUnsafeMutableBufferPointer { ring in
            _ = UnsafeMutableBufferPointer(rebasing: ring[at..<(at + piece.count)]).update(fromContentsOf: piece)
        }
    }

    /// Adds samples to a block's partial DFT, the first at row `firstRow` of its frame. Four 16-wide
    /// accumulators in registers: the same products and sums, in the same order, as bin by bin,
    /// so a block computed on waking equals the one summed as its samples came.
    private static func accumulate(_ samples: UnsafeBufferPointer<Float>, firstRow: Int, into partial: UnsafeMutableBufferPointer<Float>) {
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
    private mutating func skipFrame() {
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
    private mutating func wakeUp(replayingFrames replay: Int) -> [Detection] {
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
        rebuildZeroSum()
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

    /// Computes the end scores of blocks slept through around the window beginning at `start`;
    /// false when they can no longer be (their samples or frames have been forgotten).
    private mutating func scoreAsleep(around start: Int, slack: Int) -> Bool {
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
            let o = Self.zeroHypothesis * nb
            for k in 0..<nb { energies[o + k] = sum[2 * k] * sum[2 * k] + sum[2 * k + 1] * sum[2 * k + 1] }
            let endScore = 1 - share(Self.zeroHypothesis)
            let endMetric = Float(trimmedSums(Self.zeroHypothesis).largest * -1)
            endScores[b % endScores.count] = endScore
            shiftedEndScores[b % shiftedEndScores.count] = endScore
            endEnergies[b % endEnergies.count] = endMetric
            shiftedEndEnergies[b % shiftedEndEnergies.count] = endMetric
        }
        return true
    }

    private static func floorDivision(_ a: Int, _ b: Int) -> Int { a >= 0 ? a / b : -((-a + b - 1) / b) }

    /// The block at which the window beginning at sample `start` ends (nearest).
    private static func block(windowStart start: Int) -> Int {
        Int((Double(start + GGWave.markerFrames * GGWave.samplesPerFrame) / Double(blockSize)).rounded()) - 1
    }

    private func lookup(_ scores: [Float], _ start: Int, _ slack: Int) -> Float? {
        let center = Self.block(windowStart: start)
        guard center - slack >= 0, center + slack < blocks, center - slack > blocks - scores.count else { return nil }
        var best = -Float.greatestFiniteMagnitude
        for b in (center - slack)...(center + slack) { best = max(best, scores[b % scores.count]) }
        return best
    }

    private mutating func finishBlock(triggered: Bool) -> Detection? {
        let b = blocks
        blocksAwake += 1
        // A trigger while the marker just reported is still in the window (no candidate can open
        // there) keeps nothing on: that marker's own structure fires it for 16 more frames.
        if (triggered && b >= quietUntilBlock) || tracking != nil || keepClockHypotheses { offClockUntil = b + Self.windowBlocks }
        let live = b <= offClockUntil
        if live && !offClockLive && b > 0 { rebuildOffClockSums(through: b - 1) }
        offClockLive = live
        return scoreBlock(offClock: live)
    }

    /// At the end of a frame: its marker bins from one real FFT of its samples, kept for the 0 ppm
    /// window and the trigger; tells whether the last frames, powers summed, look like a start
    /// marker whatever the clock (`triggerRules`).
    private mutating func frameEnded() -> Bool {
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
    private mutating func wakeAfterFrame(triggered: Bool) -> Int? {
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
    private func maySleep() -> Bool {
        guard !wake.stayAwake, tracking == nil, !keepClockHypotheses else { return false }
        if blocks < quietUntilBlock { return true }
        return blocks > offClockUntil && startScores[(blocks - 1) % startScores.count] < Wakefulness.sleepShare
    }

    /// Nothing slides while asleep: the clock hypotheses' sums are rebuilt whenever they are next used.
    private mutating func fallAsleep() {
        wake.isAwake = false
        offClockLive = false
    }

    /// The 0 ppm window's sum from the ring (exactly; awake it slides with the blocks).
    private mutating func rebuildZeroSum() {
        let nb = Self.bins, o = Self.zeroHypothesis * nb
        for k in 0..<nb { (sumRe[o + k], sumIm[o + k]) = (0, 0) }
        for slot in 0..<Self.windowBlocks {
            for k in 0..<nb {
                sumRe[o + k] += blockRing[slot * 2 * nb + 2 * k]
                sumIm[o + k] += blockRing[slot * 2 * nb + 2 * k + 1]
            }
        }
    }

    private mutating func scoreBlock(offClock: Bool) -> Detection? {
        let zero = Self.zeroHypothesis
        let updated = offClock ? 0..<Self.hypothesesPPM.count : zero..<(zero + 1)
        let slot = (blocks % Self.windowBlocks) * 2 * Self.bins
        let nb = Self.bins
        blockRing.withUnsafeMutableBufferPointer { ring in
            for k in 0..<nb {
                incoming[k] = partial[2 * k]
                incoming[nb + k] = partial[2 * k + 1]
                incoming[2 * nb + k] = ring[slot + 2 * k]
                incoming[3 * nb + k] = ring[slot + 2 * k + 1]
            }
            for i in 0..<(2 * nb) { ring[slot + i] = partial[i] }
        }
        for i in 0..<(2 * nb) { partial[i] = 0 }
        filled = 0
        // Per hypothesis updated this block, its 32 bins in a row; the energies are all the scores
        // need.
        sumRe.withUnsafeMutableBufferPointer { sr in
            sumIm.withUnsafeMutableBufferPointer { si in
                energies.withUnsafeMutableBufferPointer { e in
                    decayRe.withUnsafeBufferPointer { dr in
                        decayIm.withUnsafeBufferPointer { di in
                            backRe.withUnsafeBufferPointer { br in
                                backIm.withUnsafeBufferPointer { bi in
                                    incoming.withUnsafeBufferPointer { p in
                                        // Eight bins a step, written out: with the range of
                                        // hypotheses decided per block the compiler no longer
                                        // vectorised the loop (scalar, 4× dearer per hypothesis).
                                        typealias V = SIMD8<Float>
                                        let (srp, sip, ep) = (UnsafeMutableRawPointer(sr.baseAddress!),
                                                              UnsafeMutableRawPointer(si.baseAddress!),
                                                              UnsafeMutableRawPointer(e.baseAddress!))
                                        let (drp, dip) = (UnsafeRawPointer(dr.baseAddress!), UnsafeRawPointer(di.baseAddress!))
                                        let (brp, bip) = (UnsafeRawPointer(br.baseAddress!), UnsafeRawPointer(bi.baseAddress!))
                                        let pp = UnsafeRawPointer(p.baseAddress!)
                                        let f = MemoryLayout<Float>.stride
                                        for h in updated {
                                            for k in stride(from: 0, to: nb, by: V.scalarCount) {
                                                let o = (h * nb + k) * f
                                                let pr = pp.loadUnaligned(fromByteOffset: k * f, as: V.self)
                                                let pi = pp.loadUnaligned(fromByteOffset: (nb + k) * f, as: V.self)
                                                let qr = pp.loadUnaligned(fromByteOffset: (2 * nb + k) * f, as: V.self)
                                                let qi = pp.loadUnaligned(fromByteOffset: (3 * nb + k) * f, as: V.self)
                                                let tr = srp.loadUnaligned(fromByteOffset: o, as: V.self)
                                                let ti = sip.loadUnaligned(fromByteOffset: o, as: V.self)
                                                let cr = drp.loadUnaligned(fromByteOffset: o, as: V.self)
                                                let ci = dip.loadUnaligned(fromByteOffset: o, as: V.self)
                                                let wr = brp.loadUnaligned(fromByteOffset: o, as: V.self)
                                                let wi = bip.loadUnaligned(fromByteOffset: o, as: V.self)
                                                let backR: V = qr * wr - qi * wi
                                                let backI: V = qr * wi + qi * wr
                                                let turnedR: V = tr * cr - ti * ci
                                                let turnedI: V = tr * ci + ti * cr
                                                let nr: V = turnedR + pr - backR
                                                let ni: V = turnedI + pi - backI
                                                srp.storeBytes(of: nr, toByteOffset: o, as: V.self)
                                                sip.storeBytes(of: ni, toByteOffset: o, as: V.self)
                                                let energy: V = nr * nr + ni * ni
                                                ep.storeBytes(of: energy, toByteOffset: o, as: V.self)
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        // Rounding in the running sums would build up over hours; redo them exactly now and then
        // (not at the first block: the sums are that block alone, exactly, and the 25,600 cos/sin
        // pairs of a redo were paid by every decoder made).
        // Only the hypotheses updated this block: the others are rebuilt when switched on.
        if blocks % (16 * Self.windowBlocks) == 0 && blocks > 0 {
            recomputeSums(through: blocks, hypotheses: updated)
            for o in (updated.lowerBound * nb)..<(updated.upperBound * nb) {
                energies[o] = sumRe[o] * sumRe[o] + sumIm[o] * sumIm[o]
            }
        }

        // The hypothesis is the one whose marker bins hold the most energy (start) or the most
        // end-marker energy (end). Not the best share: on a clean marker every hypothesis scores
        // near 1, and a wrong one would misplace the start.
        // The energy differences pick the hypotheses; the shares (a division per pair) are needed
        // only for the three that are used.
        var bestStart = (difference: -Double.greatestFiniteMagnitude, h: 0)
        var bestEnd = (difference: Double.greatestFiniteMagnitude, h: 0)
        var zeroDifference = 0.0
        // Two pairs a step (even pairs start on the lower bin, odd ones on the upper): the same
        // subtractions and additions in the same order as pair by pair, without a branch per pair.
        energies.withUnsafeBufferPointer { e in
            for h in updated {
                var difference = 0.0
                for pair in stride(from: 0, to: GGWave.markerPairs, by: 2) {
                    let o = h * nb + 2 * pair
                    difference += Double(e[o]) - Double(e[o + 1])
                    difference += Double(e[o + 3]) - Double(e[o + 2])
                }
                if difference > bestStart.difference { bestStart = (difference, h) }
                if difference < bestEnd.difference { bestEnd = (difference, h) }
                if h == Self.zeroHypothesis { zeroDifference = difference }
            }
        }
        // Matched clocks keep exactly the single-hypothesis detector: another hypothesis takes over
        // only where it holds twice the marker energy (3 dB), i.e. where the clocks really differ.
        if !(bestStart.difference > 2 * max(zeroDifference, 0)) { bestStart = (zeroDifference, zero) }
        let zeroShare = share(zero)
        let bestEndShare = bestEnd.h == zero ? zeroShare : share(bestEnd.h)
        // Alignment metrics that a few loud data tones (chunks put up to 2 tones, 7 times a marker
        // tone's power, into these bins) cannot steer: the sum of the 12 smallest differences.
        // One sort of the matched-clock hypothesis serves its end metric and, usually, the start
        // metric, which is needed only while a candidate is tracked or opens.
        let zeroSums = trimmedSums(zero)
        let zeroEndMetric = zeroSums.largest * -1
        let endMetric = bestEnd.h == zero ? zeroEndMetric : trimmedSums(bestEnd.h).largest * -1
        let share = bestStart.h == zero ? zeroShare : self.share(bestStart.h)
        let b = blocks
        startScores[b % startScores.count] = share
        endScores[b % endScores.count] = 1 - zeroShare
        endEnergies[b % endEnergies.count] = Float(zeroEndMetric)
        shiftedEndScores[b % endScores.count] = 1 - bestEndShare
        shiftedEndEnergies[b % endEnergies.count] = Float(endMetric)
        blocks += 1
        guard b >= Self.windowBlocks - 1 else { return nil }

        let ppm = Self.hypothesesPPM[bestStart.h]
        if let t = tracking {
            let metric = bestStart.h == zero ? zeroSums.smallest : trimmedSums(bestStart.h).smallest
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
            tracking = (b, b, bestStart.h == zero ? zeroSums.smallest : trimmedSums(bestStart.h).smallest, ppm)
        }
        return nil
    }

    /// Mean over pairs of the start-marker bin's share of the pair's energy, for hypothesis `h`.
    private func share(_ h: Int) -> Float {
        energies.withUnsafeBufferPointer { e in
            var share: Float = 0
            for pair in stride(from: 0, to: GGWave.markerPairs, by: 2) {
                let o = h * Self.bins + 2 * pair
                let (lo, hi, lo2, hi2) = (Double(e[o]), Double(e[o + 1]), Double(e[o + 2]), Double(e[o + 3]))
                share += Float((lo + 1e-30) / (lo + hi + 2e-30))
                share += Float((hi2 + 1e-30) / (hi2 + lo2 + 2e-30))
            }
            return share / Float(GGWave.markerPairs)
        }
    }

    /// Per pair, start-marker bin energy minus end-marker bin energy, sorted ascending (in the
    /// reused buffer `d`); the sums (in that order) of the `trimmedPairs` smallest and largest.
    private mutating func trimmedSums(_ h: Int) -> (smallest: Double, largest: Double) {
        energies.withUnsafeBufferPointer { e in
            d.withUnsafeMutableBufferPointer { d in
                for pair in stride(from: 0, to: GGWave.markerPairs, by: 2) {
                    let o = h * Self.bins + 2 * pair
                    d[pair] = Double(e[o]) - Double(e[o + 1])
                    d[pair + 1] = Double(e[o + 3]) - Double(e[o + 2])
                }
                // Batcher's odd–even merge network: 63 compare-exchanges without a branch, the same
                // sorted values as an insertion sort (whose mispredicted branches cost more).
                Self.sortingNetwork.withUnsafeBufferPointer { network in
                    for pair in network {
                        let (i, j) = (Int(pair.0), Int(pair.1))
                        let (a, b) = (d[i], d[j])
                        d[i] = min(a, b)
                        d[j] = max(a, b)
                    }
                }
                var smallest = 0.0, largest = 0.0
                for i in 0..<Self.trimmedPairs { smallest += d[i] }
                for i in (GGWave.markerPairs - Self.trimmedPairs)..<GGWave.markerPairs { largest += d[i] }
                return (smallest, largest)
            }
        }
    }

    /// Sorts 16 values (the marker's pairs) ascending, compare-exchange by compare-exchange.
    private static let sortingNetwork: [(UInt8, UInt8)] = {
        func merge(_ lo: Int, _ hi: Int, _ r: Int) -> [(UInt8, UInt8)] {
            let step = 2 * r
            guard step < hi - lo else { return [(UInt8(lo), UInt8(lo + r))] }
            // Three typed parts: Swift 6.2.3 cannot type-check the one-expression sum in time.
            let evens: [(UInt8, UInt8)] = merge(lo, hi, step)
            let odds: [(UInt8, UInt8)] = merge(lo + r, hi, step)
            let across: [(UInt8, UInt8)] = stride(from: lo + r, to: hi - r, by: step).map { (UInt8($0), UInt8($0 + r)) }
            return evens + odds + across
        }
        func sort(_ lo: Int, _ hi: Int) -> [(UInt8, UInt8)] {
            guard hi - lo >= 1 else { return [] }
            let mid = lo + (hi - lo) / 2
            return sort(lo, mid) + sort(mid + 1, hi) + merge(lo, hi, 1)
        }
        return sort(0, GGWave.markerPairs - 1)
    }()

    /// The off-clock hypotheses' sums from the ring after block `last` went in, oldest block first:
    /// T ← e^(−iθ)·T + p_m, the same recurrence as the sliding update. Block by block over all
    /// hypotheses and bins (the loop vectorises like the update): bin by bin, each sum's 256 steps
    /// wait on each other, and a rebuild cost as much as thousands of blocks.
    private mutating func rebuildOffClockSums(through last: Int) {
        let nb = Self.bins
        let zero = Self.zeroHypothesis
        for h in Self.hypothesesPPM.indices where h != zero {
            for k in 0..<nb { (sumRe[h * nb + k], sumIm[h * nb + k]) = (0, 0) }
        }
        sumRe.withUnsafeMutableBufferPointer { sr in
            sumIm.withUnsafeMutableBufferPointer { si in
                decayRe.withUnsafeBufferPointer { dr in
                    decayIm.withUnsafeBufferPointer { di in
                        blockRing.withUnsafeBufferPointer { ring in
                            // The ring holds (re, im) pairs: de-interleaved once per block.
                            var pr = [Float](repeating: 0, count: nb), pi = [Float](repeating: 0, count: nb)
                            for m in max(0, last - Self.windowBlocks + 1)...last {
                                let slot = (m % Self.windowBlocks) * 2 * nb
                                for k in 0..<nb { (pr[k], pi[k]) = (ring[slot + 2 * k], ring[slot + 2 * k + 1]) }
                                for h in Self.hypothesesPPM.indices where h != zero {
                                    for k in 0..<nb {
                                        let o = h * nb + k
                                        let tr = sr[o], ti = si[o]
                                        sr[o] = tr * dr[o] - ti * di[o] + pr[k]
                                        si[o] = tr * di[o] + ti * dr[o] + pi[k]
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// The sums of `hypotheses` exactly from the ring, after block `last` went in.
    private mutating func recomputeSums(through last: Int, hypotheses: Range<Int>) {
        for h in hypotheses {
            let ppm = Self.hypothesesPPM[h]
            for k in 0..<Self.bins {
                let theta = Self.theta(ppm: ppm, bin: k)
                // e^(−iθj) for j = 16a + b as e^(−iθ·16a)·e^(−iθb): 32 cos/sin pairs, not 256
                // (each exact to an ulp, so the product is within a few ulps).
                func turn(_ j: Int) -> (c: Double, s: Double) {
                    let phase = (-theta * Double(j)).truncatingRemainder(dividingBy: 2 * Double.pi)
                    return (cos(phase), sin(phase))
                }
                let fine = (0..<16).map { turn($0) }, coarse = (0..<(Self.windowBlocks / 16)).map { turn(16 * $0) }
                var sr = 0.0, si = 0.0
                for m in max(0, last - Self.windowBlocks + 1)...last {
                    let (a, b) = coarse[(last - m) / 16], (f, g) = fine[(last - m) % 16]
                    let (c, s) = (a * f - b * g, a * g + b * f)
                    let slot = (m % Self.windowBlocks) * 2 * Self.bins
                    let pr = Double(blockRing[slot + 2 * k]), pi = Double(blockRing[slot + 2 * k + 1])
                    sr += pr * c - pi * s
                    si += pr * s + pi * c
                }
                sumRe[h * Self.bins + k] = Float(sr)
                sumIm[h * Self.bins + k] = Float(si)
            }
        }
    }
}
