/// Turns the samples of one chunk (framesPerTx frames) into the energies of its 96 tone bins.
///
/// The frames of a chunk carry the same tones on whole bins, so they are weighted by ggwave's
/// edge envelope (a matched filter: it also damps the neighbouring chunks when the timing is a
/// little off), folded onto one frame and transformed once.
struct ChunkDemodulator: Sendable {
    private let fft = FFT.frame
    /// The envelope weights per protocol (plain and late), made once for every decoder; indexed by
    /// `table(_:)` (a dictionary keyed by the protocol hashed its raw-value string on every chunk).
    private static let tables: (weights: [[Float]], late: [[Float]]) = {
        var weights: [[Float]] = Array(repeating: [], count: GGWaveProtocol.allCases.count), late = weights
        for proto in GGWaveProtocol.allCases {
            let envelope = Envelope(cycleFrames: proto.framesPerTx, samplesPerFrame: GGWave.samplesPerFrame)
            weights[table(proto)] = (0..<proto.samplesPerTx).map { envelope.weight($0) }
            late[table(proto)] = (0..<proto.samplesPerTx).map { $0 < Self.echoSkip ? 0 : envelope.weight($0) }
        }
        return (weights, late)
    }()
    private let weights = Self.tables.weights
    private let lateWeights = Self.tables.late
    /// Per protocol, whether each run of 16 samples has weight 1 throughout (the middle 70 % of the
    /// envelope): there the fold adds the samples as they are (x · 1 = x, so the sums are the same).
    private static let unitRuns: [[Bool]] = tables.weights.map { w in
        stride(from: 0, to: w.count, by: 16).map { i in w[i..<(i + 16)].allSatisfy { $0 == 1 } }
    }
    private let unitRuns = Self.unitRuns

    private static func table(_ proto: GGWaveProtocol) -> Int {
        switch proto {
        case .ultrasoundNormal: 0
        case .ultrasoundFast: 1
        case .ultrasoundFastest: 2
        }
    }
    /// Samples a late reading leaves out at the start of a chunk (16 ms): where a room's echo of
    /// the chunk before is loudest, and the chunk's own tone has not yet built up its echo.
    static let echoSkip = 768

    /// `samples` must hold exactly `proto.samplesPerTx` samples aligned on the chunk. `late`: read
    /// without the chunk's first `echoSkip` samples (a second reading, for rooms; in white noise it
    /// loses a quarter of a [U] Fastest chunk's energy).
    func spectrum(_ samples: [Float], protocol proto: GGWaveProtocol, late: Bool = false) -> ChunkSpectrum {
        samples.withUnsafeBufferPointer { spectrum($0, protocol: proto, late: late) }
    }

    /// The same, read in place (from the history's ring: no copy of the chunk, no array for the fold).
    func spectrum(_ samples: UnsafeBufferPointer<Float>, protocol proto: GGWaveProtocol, late: Bool = false) -> ChunkSpectrum {
        precondition(samples.count == proto.samplesPerTx)
        let n = GGWave.samplesPerFrame
        let w = late ? lateWeights[Self.table(proto)] : weights[Self.table(proto)]
        let units = unitRuns[Self.table(proto)]
        return withUnsafeTemporaryAllocation(of: Float.self, capacity: n) { folded in
            // 16 samples at a time, the frames added in order (the sums of the scalar fold, bit for bit).
            w.withUnsafeBufferPointer { w in units.withUnsafeBufferPointer { units in
                let (x, w, out) = (UnsafeRawPointer(samples.baseAddress!), UnsafeRawPointer(w.baseAddress!),
                                   UnsafeMutableRawPointer(folded.baseAddress!))
                let size = MemoryLayout<Float>.stride
                for i in stride(from: 0, to: n, by: 16) {
                    var acc = SIMD16<Float>(repeating: 0)
                    for f in 0..<proto.framesPerTx {
                        let at = (f * n + i) * size
                        if !late && units[(f * n + i) / 16] {
                            acc += x.loadUnaligned(fromByteOffset: at, as: SIMD16<Float>.self)
                        } else {
                            acc += x.loadUnaligned(fromByteOffset: at, as: SIMD16<Float>.self)
                                * w.loadUnaligned(fromByteOffset: at, as: SIMD16<Float>.self)
                        }
                    }
                    out.storeBytes(of: acc, toByteOffset: i * size, as: SIMD16<Float>.self)
                }
            } }
            let bins = GGWave.freqStart..<(GGWave.freqStart + GGWave.dataBins)
            return ChunkSpectrum(power: fft.power(of: UnsafeBufferPointer(folded), bins: bins))
        }
    }
}

/// Energies of the 6 nibble groups (16 bins each) of one chunk.
struct ChunkSpectrum: Sendable {
    let power: [Float]

    struct Byte: Equatable {
        var value: UInt8
        /// min over its two nibbles of (best energy / second energy); 1 means a coin toss.
        var confidence: Float
    }

    /// The chunks with each one's echo of the chunk before taken out. A room's tail decays
    /// exponentially, so what chunk c − 1 (itself holding the tail of c − 2) leaves in chunk c is
    /// about α times its spectrum; α is measured on the message itself: the median, over nibbles
    /// whose tone changed, of the energy left at the old tone's bin over what it had.
    static func dereverberated(_ chunks: [ChunkSpectrum]) -> [ChunkSpectrum] {
        guard chunks.count > 2 else { return chunks }
        var ratios: [Float] = []
        for c in 1..<chunks.count {
            let before = chunks[c - 1].power, now = chunks[c].power
            for g in 0..<GGWave.nibblesPerTx {
                let old = Self.loudest(before, group: g), new = Self.loudest(now, group: g)
                if old != new && before[g * 16 + old] > 0 { ratios.append(now[g * 16 + old] / before[g * 16 + old]) }
            }
        }
        guard !ratios.isEmpty else { return chunks }
        let alpha = min(ratios.sorted()[ratios.count / 2], 0.9)
        var out = [chunks[0]]
        for c in 1..<chunks.count {
            let before = chunks[c - 1].power
            out.append(ChunkSpectrum(power: chunks[c].power.indices.map { max(0, chunks[c].power[$0] - alpha * before[$0]) }))
        }
        return out
    }

    private static func loudest(_ power: [Float], group g: Int) -> Int {
        var best = 0
        for v in 1..<16 where power[g * 16 + v] > power[g * 16 + best] { best = v }
        return best
    }

    /// Hard decisions: each nibble is the loudest of its 16 bins.
    var bytes: [Byte] {
        (0..<GGWave.bytesPerTx).map { j in
            let low = nibble(group: 2 * j), high = nibble(group: 2 * j + 1)
            return Byte(value: low.value | high.value << 4, confidence: min(low.confidence, high.confidence))
        }
    }

    /// The 6 nibbles (low nibble of byte 0 first): the loudest bin, the runner-up, and their
    /// energy ratio (1 means a coin toss).
    var nibbles: [(value: UInt8, runnerUp: UInt8, confidence: Float)] {
        (0..<GGWave.nibblesPerTx).map { nibble(group: $0) }
    }

    /// Σ over groups of the loudest bin's energy: largest when the chunk boundaries are where we
    /// think (a window straddling two chunks splits each tone's energy between them).
    var alignment: Float { loudest(groups: 0..<GGWave.nibblesPerTx) }

    /// The same over the groups above the marker's bins (groups 2…5): nothing there while a marker
    /// sounds, not even its echo.
    var alignmentAboveMarker: Float { loudest(groups: 2..<GGWave.nibblesPerTx) }

    private func loudest(groups: Range<Int>) -> Float {
        var sum: Float = 0
        for g in groups {
            var best: Float = 0
            for v in 0..<16 { best = max(best, power[g * 16 + v]) }
            sum += best
        }
        return sum
    }

    /// Log-likelihood-like score of the chunk carrying exactly `bytes`: Σ log of each expected
    /// bin's share of its group's energy (scale-free, so it needs no noise estimate).
    /// The chunk's `logShares` are taken once and scored against many words.
    static func score(of bytes: [UInt8], logShares: [Float]) -> Float {
        var s: Float = 0
        for (j, byte) in bytes.enumerated() {
            s += logShares[2 * j * 16 + Int(byte & 0x0f)]
            s += logShares[(2 * j + 1) * 16 + Int(byte >> 4)]
        }
        return s
    }

    /// Per bin, the log of its share of its group's energy (+ 1e−3), the terms of `score(of:)`.
    var logShares: [Float] {
        var out = [Float](repeating: 0, count: power.count)
        for g in 0..<GGWave.nibblesPerTx {
            var total: Float = 0
            for k in 0..<16 { total += power[g * 16 + k] }
            for v in 0..<16 {
                let share = total > 0 ? power[g * 16 + v] / total : 1.0 / 16
                out[g * 16 + v] = logf(share + 1e-3)
            }
        }
        return out
    }

    private func nibble(group: Int) -> (value: UInt8, runnerUp: UInt8, confidence: Float) {
        var best = 0, bestPower: Float = -1, runnerUp = 0, second: Float = -1
        for v in 0..<16 {
            let p = power[group * 16 + v]
            if p > bestPower {
                (runnerUp, second) = (best, bestPower)
                best = v
                bestPower = p
            } else if p > second {
                (runnerUp, second) = (v, p)
            }
        }
        return (UInt8(best), UInt8(runnerUp), second > 0 ? bestPower / second : .greatestFiniteMagnitude)
    }
}

#if canImport(Glibc)
import Glibc
#endif
