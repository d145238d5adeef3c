import Glibc

/// The marker window's DFT under 25 clock hypotheses, for `MarkerDetector`.
///
/// A clock off by ε shifts bin b by −εb, i.e. its phase by −2πεb/16 per block, and 16 frames
/// summed coherently at +1000 ppm would cancel. Each hypothesis sums the window with each block's
/// phase turned back by that drift; the hypotheses share the partial DFTs, so each costs 32
/// complex updates a block.
struct ClockHypotheses: Sendable {
    static let ppm: [Double] = Array(stride(from: -1200.0, through: 1200.0, by: 100.0))
    static let zero = ppm.firstIndex(of: 0)!
    private static let bins = MarkerDetector.bins
    private static let windowBlocks = MarkerDetector.windowBlocks
    private static let trimmedPairs = 12

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
    private var energies = [Float](repeating: 0, count: ppm.count * bins)
    private var incoming = [Float](repeating: 0, count: 4 * bins)
    private var d = [Double](repeating: 0, count: GGWave.markerPairs)
    /// e^(−iθ) and e^(−iθW) per hypothesis and bin, computed once for every detector (3,200 cos/sin
    /// pairs per decoder made were a tenth of a short beacon's decode cost).
    private static let rotations: (decayRe: [Float], decayIm: [Float], backRe: [Float], backIm: [Float]) = {
        let count = ppm.count * bins
        var (dr, di, br, bi) = ([Float](repeating: 0, count: count), [Float](repeating: 0, count: count),
                                [Float](repeating: 0, count: count), [Float](repeating: 0, count: count))
        for (h, ppm) in ppm.enumerated() {
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

    init() {
        let count = Self.ppm.count * Self.bins
        (decayRe, decayIm, backRe, backIm) = Self.rotations
        sumRe = [Float](repeating: 0, count: count)
        sumIm = [Float](repeating: 0, count: count)
    }

    private static func theta(ppm: Double, bin k: Int) -> Double {
        2 * Double.pi * ppm * 1e-6 * Double(GGWave.freqStart + k) / Double(GGWave.samplesPerFrame / MarkerDetector.blockSize)
    }

    /// Slides the windows of `hypotheses` by one block: `entering` is the block's partial DFT and
    /// `leaving` the one leaving the window ((re, im) per bin). Then their bin energies, all the
    /// scores need.
    mutating func slide(_ hypotheses: Range<Int>, entering: UnsafeBufferPointer<Float>, leaving: UnsafeBufferPointer<Float>) {
        let nb = Self.bins
        for k in 0..<nb {
            incoming[k] = entering[2 * k]
            incoming[nb + k] = entering[2 * k + 1]
            incoming[2 * nb + k] = leaving[2 * k]
            incoming[3 * nb + k] = leaving[2 * k + 1]
        }
        sumRe.withUnsafeMutableBufferPointer { sr in
            sumIm.withUnsafeMutableBufferPointer { si in
                energies.withUnsafeMutableBufferPointer { e in
                    decayRe.withUnsafeBufferPointer { dr in
                        decayIm.withUnsafeBufferPointer { di in
                            backRe.withUnsafeBufferPointer { br in
                                backIm.withUnsafeBufferPointer { bi in
                                    incoming.withUnsafeBufferPointer { p in
                                        Self.slide(hypotheses, sums: (sr, si), energies: e, incoming: p,
                                                   decay: (dr, di), back: (br, bi))
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// T ← T·e^(−iθ) + p_b − p_(b−W)·e^(−iθW) per hypothesis and bin, eight bins a step, written
    /// out: with the range of hypotheses decided per block the compiler no longer vectorised the
    /// loop (scalar, 4× dearer per hypothesis).
    private static func slide(_ hypotheses: Range<Int>,
                              sums: (re: UnsafeMutableBufferPointer<Float>, im: UnsafeMutableBufferPointer<Float>),
                              energies e: UnsafeMutableBufferPointer<Float>, incoming p: UnsafeBufferPointer<Float>,
                              decay: (re: UnsafeBufferPointer<Float>, im: UnsafeBufferPointer<Float>),
                              back: (re: UnsafeBufferPointer<Float>, im: UnsafeBufferPointer<Float>)) {
        typealias V = SIMD8<Float>
        let nb = bins
        let (srp, sip, ep) = (UnsafeMutableRawPointer(sums.re.baseAddress!), UnsafeMutableRawPointer(sums.im.baseAddress!),
                              UnsafeMutableRawPointer(e.baseAddress!))
        let (drp, dip) = (UnsafeRawPointer(decay.re.baseAddress!), UnsafeRawPointer(decay.im.baseAddress!))
        let (brp, bip) = (UnsafeRawPointer(back.re.baseAddress!), UnsafeRawPointer(back.im.baseAddress!))
        let pp = UnsafeRawPointer(p.baseAddress!)
        let f = MemoryLayout<Float>.stride
        for h in hypotheses {
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

    /// The 0 ppm hypothesis's bin energies from a window sum ((re, im) per bin) computed elsewhere.
    mutating func setZeroEnergies(fromSum sum: [Float]) {
        let o = Self.zero * Self.bins
        for k in 0..<Self.bins { energies[o + k] = sum[2 * k] * sum[2 * k] + sum[2 * k + 1] * sum[2 * k + 1] }
    }

    /// Mean over pairs of the start-marker bin's share of the pair's energy, for hypothesis `h`.
    func share(_ h: Int) -> Float {
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

    /// Per hypothesis updated, Σ over pairs of (start-marker bin energy − end-marker bin energy):
    /// the one with the largest (start) and the smallest (end), and the 0 ppm one's.
    func differences(_ hypotheses: Range<Int>) -> (start: (difference: Double, h: Int), end: (difference: Double, h: Int), zero: Double) {
        var bestStart = (difference: -Double.greatestFiniteMagnitude, h: 0)
        var bestEnd = (difference: Double.greatestFiniteMagnitude, h: 0)
        var zeroDifference = 0.0
        // Two pairs a step (even pairs start on the lower bin, odd ones on the upper): the same
        // subtractions and additions in the same order as pair by pair, without a branch per pair.
        energies.withUnsafeBufferPointer { e in
            for h in hypotheses {
                var difference = 0.0
                for pair in stride(from: 0, to: GGWave.markerPairs, by: 2) {
                    let o = h * Self.bins + 2 * pair
                    difference += Double(e[o]) - Double(e[o + 1])
                    difference += Double(e[o + 3]) - Double(e[o + 2])
                }
                if difference > bestStart.difference { bestStart = (difference, h) }
                if difference < bestEnd.difference { bestEnd = (difference, h) }
                if h == Self.zero { zeroDifference = difference }
            }
        }
        return (bestStart, bestEnd, zeroDifference)
    }

    /// Per pair, start-marker bin energy minus end-marker bin energy, sorted ascending (in the
    /// reused buffer `d`); the sums (in that order) of the `trimmedPairs` smallest and largest.
    mutating func trimmedSums(_ h: Int) -> (smallest: Double, largest: Double) {
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
            let lower: [(UInt8, UInt8)] = sort(lo, mid)
            let upper: [(UInt8, UInt8)] = sort(mid + 1, hi)
            return lower + upper + merge(lo, hi, 1)
        }
        return sort(0, GGWave.markerPairs - 1)
    }()

    /// The 0 ppm window's sum from the ring of partial DFTs (exactly; awake it slides with the blocks).
    mutating func rebuildZeroSum(ring: [Float]) {
        let nb = Self.bins, o = Self.zero * nb
        for k in 0..<nb { (sumRe[o + k], sumIm[o + k]) = (0, 0) }
        for slot in 0..<Self.windowBlocks {
            for k in 0..<nb {
                sumRe[o + k] += ring[slot * 2 * nb + 2 * k]
                sumIm[o + k] += ring[slot * 2 * nb + 2 * k + 1]
            }
        }
    }

    /// The off-clock hypotheses' sums from the ring after block `last` went in, oldest block first:
    /// T ← e^(−iθ)·T + p_m, the same recurrence as the sliding update. Block by block over all
    /// hypotheses and bins (the loop vectorises like the update): bin by bin, each sum's 256 steps
    /// wait on each other, and a rebuild cost as much as thousands of blocks.
    mutating func rebuildOffClockSums(through last: Int, ring: [Float]) {
        let nb = Self.bins
        let zero = Self.zero
        for h in Self.ppm.indices where h != zero {
            for k in 0..<nb { (sumRe[h * nb + k], sumIm[h * nb + k]) = (0, 0) }
        }
        sumRe.withUnsafeMutableBufferPointer { sr in
            sumIm.withUnsafeMutableBufferPointer { si in
                decayRe.withUnsafeBufferPointer { dr in
                    decayIm.withUnsafeBufferPointer { di in
                        ring.withUnsafeBufferPointer { ring in
                            // The ring holds (re, im) pairs: de-interleaved once per block.
                            var pr = [Float](repeating: 0, count: nb), pi = [Float](repeating: 0, count: nb)
                            for m in max(0, last - Self.windowBlocks + 1)...last {
                                let slot = (m % Self.windowBlocks) * 2 * nb
                                for k in 0..<nb { (pr[k], pi[k]) = (ring[slot + 2 * k], ring[slot + 2 * k + 1]) }
                                for h in Self.ppm.indices where h != zero {
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

    /// The sums of `hypotheses` exactly from the ring, after block `last` went in, and their
    /// energies. Rounding in the running sums would build up over hours.
    mutating func recomputeSums(through last: Int, hypotheses: Range<Int>, ring: [Float]) {
        for h in hypotheses {
            let ppm = Self.ppm[h]
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
                    let pr = Double(ring[slot + 2 * k]), pi = Double(ring[slot + 2 * k + 1])
                    sr += pr * c - pi * s
                    si += pr * s + pi * c
                }
                sumRe[h * Self.bins + k] = Float(sr)
                sumIm[h * Self.bins + k] = Float(si)
            }
        }
        for o in (hypotheses.lowerBound * Self.bins)..<(hypotheses.upperBound * Self.bins) {
            energies[o] = sumRe[o] * sumRe[o] + sumIm[o] * sumIm[o]
        }
    }
}
