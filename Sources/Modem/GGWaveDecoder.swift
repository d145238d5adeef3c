import Glibc

/// One payload found by `GGWaveDecoder`.
public struct GGWaveReception: Sendable, Equatable {
    public var payload: [UInt8]
    public var `protocol`: GGWaveProtocol
    /// Index (in samples fed since the decoder was made) of the first sample of the start marker.
    public var startSample: Int
    /// Bytes the Reed–Solomon code had to repair.
    public var corrected: Int
}

/// Streaming receiver for ggwave's ultrasound protocols: feed it capture blocks of any size as they
/// arrive; it returns each payload once the end marker after it has been heard.
///
/// A start marker opens a candidate. For each protocol the chunk timing is taken where the first
/// two chunks look cleanest, and the length block is read by likelihood (the few most likely
/// lengths are kept, not only what a hard decision gives). Each (protocol, length) then waits for
/// the end of its message: the end marker must be exactly where the length puts it, and the payload
/// must pass the Reed–Solomon code. Memory is fixed at construction (about 2.7 MB of samples for
/// `[U] Normal`'s longest message); noise costs only the marker search.
public struct GGWaveDecoder: Sendable {
    public let protocols: [GGWaveProtocol]
    private var history: SampleHistory
    private var detector: MarkerDetector
    private let demodulator = ChunkDemodulator()
    private let frameFFT = FFT.frame
    private var candidates: [Candidate] = []
    /// Samples before this index belong to a payload already reported.
    private var consumedUntil = 0

    /// At most this many candidate markers wait for their data; noise rarely opens even one.
    static let maxCandidates = 8
    /// End score the end marker must reach where the length says it is.
    static let endThreshold: Float = 0.7
    /// Chunk timings tried around the detected marker start (samples): coarsely over ±2.25 frames,
    /// then finely around the best. The detector's timing is off by up to ±1.5 frames at −15 dB,
    /// and late by up to 2.2 frames in a room (the marker's reverberant tail prolongs the window it
    /// fills best). The finer search once the whole message has arrived.
    static let coarseSearch = Array(stride(from: -2304, through: 2304, by: 256))
    static let fineSearch = Array(stride(from: -128, through: 128, by: 32))
    static let refineSearch = Array(stride(from: -96, through: 96, by: 32))
    private static let maxTimingOffset = coarseSearch.map(abs).max()! + fineSearch.map(abs).max()!
    /// Lengths kept per protocol from the length block, most likely first.
    static let lengthsKept = 3
    /// How far past the expected end marker its energy is compared (4 frames).
    static let peakCheckSamples = 4 * GGWave.samplesPerFrame
    private static let markerSamples = GGWave.markerFrames * GGWave.samplesPerFrame
    /// The 3 bytes of the length block for every possible length, index = length − 1.
    private static let lengthBlocks: [[UInt8]] = (1...GGWave.maxPayloadLength).map {
        ReedSolomon(messageLength: 1, eccLength: 2).encode([UInt8($0)])
    }

    private struct Hypothesis {
        var proto: GGWaveProtocol
        var length: Int
        var offset: Int
    }

    private struct Candidate {
        var start: Int
        /// Receiver samples per transmitter sample (1 + clock offset), estimated from the marker.
        var ratio: Double = 1
        var lengthsTried: Set<GGWaveProtocol> = []
        var hypotheses: [Hypothesis] = []
    }

    public init(protocols: [GGWaveProtocol] = GGWaveProtocol.allCases) {
        self.protocols = protocols.isEmpty ? GGWaveProtocol.allCases : protocols
        let longest = self.protocols.map { $0.sampleCount(payloadLength: GGWave.maxPayloadLength) }.max()!
        // The longest message, the detector's lag behind the marker start, and timing slack.
        let capacity = longest + 4 * Self.markerSamples
        history = SampleHistory(capacity: capacity)
        detector = MarkerDetector(historyBlocks: capacity / MarkerDetector.blockSize + 1)
    }

    /// Candidate markers waiting for their data (for tests: bounded by `maxCandidates`).
    var pendingCandidates: Int { candidates.count }
    /// Samples of history kept, fixed at construction.
    var retainedSamples: Int { history.capacity }

    /// Payloads completed by these samples.
    public mutating func feed(_ samples: [Float]) -> [[UInt8]] {
        feedReceptions(samples).map(\.payload)
    }

    public mutating func feedReceptions(_ samples: [Float]) -> [GGWaveReception] {
        var found: [GGWaveReception] = []
        // Small steps, so a long buffer cannot push a pending message out of the history.
        let step = 4096
        var i = 0
        while i < samples.count {
            let piece = samples[i..<min(i + step, samples.count)]
            history.append(piece)
            // The clock hypotheses' end scores are read for candidates whose clock is off.
            detector.keepClockHypotheses = candidates.contains { abs($0.ratio - 1) >= Self.shiftedEndTolerance }
            for d in detector.process(piece) where d.start >= consumedUntil {
                candidates.append(Candidate(start: d.start, ratio: estimateRatio(start: d.start, coarsePPM: d.ppm)))
            }
            if candidates.count > Self.maxCandidates { candidates.removeFirst(candidates.count - Self.maxCandidates) }
            found += advanceCandidates()
            i += step
        }
        return found
    }

    private mutating func advanceCandidates() -> [GGWaveReception] {
        var found: [GGWaveReception] = []
        var index = 0
        while index < candidates.count {
            var c = candidates[index]
            // Gone when reported already, or when its first samples have left the history (a stream
            // that starts with a marker has nothing before sample 0, which is fine).
            if c.start < consumedUntil || max(0, c.start - Self.maxTimingOffset) < history.oldest {
                candidates.remove(at: index)
                continue
            }
            readLengths(&c)
            var remaining: [Hypothesis] = []
            var reception: GGWaveReception?
            for h in c.hypotheses where reception == nil {
                switch attempt(h, start: c.start, ratio: c.ratio) {
                case .waiting: remaining.append(h)
                case .failed: break
                case .decoded(let r): reception = r
                }
            }
            c.hypotheses = remaining
            if let r = reception {
                found.append(r)
                consumedUntil = r.startSample + Int(Double(r.protocol.sampleCount(payloadLength: r.payload.count)) * c.ratio)
                candidates.remove(at: index)
            } else if c.lengthsTried.count == protocols.count && c.hypotheses.isEmpty {
                candidates.remove(at: index)
            } else {
                candidates[index] = c
                index += 1
            }
        }
        candidates.removeAll { $0.start < consumedUntil }
        return found
    }

    /// The chunk's samples as the transmitter's clock had them: read straight from the history when
    /// the clocks agree within `plainRatioTolerance`, else resampled by the candidate's ratio (which
    /// also puts the tones back on their bins). `coarse` (the coarse timing search): read from
    /// `span`, resampled once for all offsets, when the clock is off, else placed by the ratio.
    private func spectrum(start: Int, offset: Int, chunk: Int, protocol proto: GGWaveProtocol, ratio: Double,
                          late: Bool = false, coarse: Bool = false, span: ResampledSpan? = nil) -> ChunkSpectrum? {
        let nominal = offset + Self.markerSamples + chunk * proto.samplesPerTx
        let first: Int
        if let span, coarse {
            let from = nominal - span.first
            guard from >= 0, from + proto.samplesPerTx <= span.samples.count else { return nil }
            return span.samples.withUnsafeBufferPointer {
                demodulator.spectrum(UnsafeBufferPointer(rebasing: $0[from..<(from + proto.samplesPerTx)]), protocol: proto)
            }
        } else if coarse {
            first = start + Int((Double(nominal) * ratio).rounded())
        } else if abs(ratio - 1) < Self.plainRatioTolerance {
            first = start + nominal
        } else {
            let samples = history.interpolated(from: Double(start) + Double(nominal) * ratio, count: proto.samplesPerTx, step: ratio)
            return samples.map { demodulator.spectrum($0, protocol: proto, late: late) }
        }
        return history.withSlice(from: first, count: proto.samplesPerTx) { demodulator.spectrum($0, protocol: proto, late: late) }
    }

    /// Below this clock offset (40 ppm: under 30 samples over the longest message, 0.014 of a bin at
    /// 19.5 kHz) chunks are read as they are.
    static let plainRatioTolerance = 40e-6
    /// Blocks either side of where a hypothesis puts the end marker's window that its score is read from.
    static let endSlack = 3
    /// From this clock offset on, the end marker is looked for with the detector's clock
    /// hypotheses: at 60 ppm a tone drifts a quarter turn over the 16-frame window, beyond it the
    /// plain window loses the marker fast.
    static let shiftedEndTolerance = 60e-6

    /// The clock ratio from the start marker's own tones: from one frame to the next each tone's
    /// phase turns by −2π·ε·bin (ε = ratio − 1), unambiguous within ±1400 ppm; `coarsePPM`, the
    /// detector's best hypothesis, unwraps it. Frames 2…13 stay clear of the marker's edges.
    private func estimateRatio(start: Int, coarsePPM: Double) -> Double {
        let coarse = coarsePPM * 1e-6
        let bins = GGWaveSymbols.markerTones(start: true).map { $0 + GGWave.freqStart }
        let n = GGWave.samplesPerFrame
        var previous: [(re: Float, im: Float)]?
        var sums = [(re: Double, im: Double)](repeating: (0, 0), count: bins.count)
        for f in 2...13 {
            let at = start + f * n   // exactly a frame apart: the phase step is then the tone's offset alone
            guard let frame = history.slice(from: at, count: n) else { return 1 + coarse }
            let x = frameFFT.spectrum(of: frame, bins: bins)
            if let p = previous {
                for i in bins.indices {   // x · conj(p)
                    sums[i].re += Double(x[i].re * p[i].re + x[i].im * p[i].im)
                    sums[i].im += Double(x[i].im * p[i].re - x[i].re * p[i].im)
                }
            }
            previous = x
        }
        var estimate = 0.0, weight = 0.0
        for (i, b) in bins.enumerated() {
            // Turn back what the coarse offset predicts, then read the residual.
            let expected = -2 * Double.pi * coarse * Double(b)
            let (re, im) = (sums[i].re * cos(expected) + sums[i].im * sin(expected),
                            sums[i].im * cos(expected) - sums[i].re * sin(expected))
            let magnitude = (re * re + im * im).squareRoot()
            estimate += magnitude * (coarse - atan2(im, re) / (2 * Double.pi * Double(b)))
            weight += magnitude
        }
        guard weight > 0 else { return 1 + coarse }
        return 1 + estimate / weight
    }

    /// The offset among `offsets` where chunks `chunks` look cleanest. With `coarse`, weighted
    /// by how empty the chunk before the first is above the marker's bins compared with the first
    /// (the end of the start marker has nothing there, not even an echo): a [U] Fastest chunk is
    /// shorter than the coarse search is wide, and one chunk late reads chunks 1 and 2 about as
    /// cleanly as 0 and 1 — in a room even more cleanly, their echoes having built up.
    /// Returns the best offset with its chunks' spectra (the plain reading there, reused by callers).
    private func bestTiming(start: Int, offsets: [Int], chunks: Range<Int>, protocol proto: GGWaveProtocol, ratio: Double,
                            coarse: Bool = false, span: ResampledSpan? = nil) -> (offset: Int, spectra: [ChunkSpectrum])? {
        var best: (offset: Int, score: Float, spectra: [ChunkSpectrum])?
        // Coarse steps are whole multiples of 256 samples, and a [U] Fastest chunk is 12 of them:
        // offset o's chunk c is offset o + 3072's chunk c − 1, read once (by its place in the message).
        var read: [Int: (alignment: Float, above: Float)] = [:]
        for offset in offsets {
            var sum: Float = 0
            var complete = true
            var above: (before: Float, first: Float) = (0, 0)
            var spectra: [ChunkSpectrum] = []
            if !coarse { spectra.reserveCapacity(chunks.count) }
            for c in coarse ? (chunks.lowerBound - 1)..<chunks.upperBound : chunks {
                let alignment: Float, aboveMarker: Float
                let key = offset + c * proto.samplesPerTx
                if coarse, let known = read[key] {
                    (alignment, aboveMarker) = known
                } else {
                    // Offsets reaching before the stream began are simply not candidates.
                    guard let s = spectrum(start: start, offset: offset, chunk: c, protocol: proto, ratio: ratio, coarse: coarse,
                                           span: span)
                    else {
                        complete = false
                        break
                    }
                    (alignment, aboveMarker) = (s.alignment, s.alignmentAboveMarker)
                    if coarse { read[key] = (alignment, aboveMarker) } else { spectra.append(s) }
                }
                if c < chunks.lowerBound {
                    above.before = aboveMarker
                } else {
                    if c == chunks.lowerBound { above.first = aboveMarker }
                    sum += alignment
                }
            }
            if coarse && above.first > 0 { sum *= above.first / (above.first + above.before) }
            if complete && (best == nil || sum > best!.score) { best = (offset, sum, spectra) }
        }
        return best.map { ($0.offset, $0.spectra) }
    }

    /// Samples resampled to the transmitter's clock; `first` is the nominal offset (from the marker
    /// start, transmitter samples) of `samples[0]`.
    private struct ResampledSpan {
        var first: Int
        var samples: [Float]
    }

    /// The chunk timing around the detected marker start: coarse, then fine around the best. The
    /// coarse offsets read one span resampled once for all of them when the clock is off: read as
    /// they are, a chunk folded onto one frame cancels where its tones drift a whole turn over the
    /// chunk (a tone moves by −ε·bin: at ~300 ppm for `[U] Normal`'s 9 frames, ~450 ppm for
    /// `[U] Fast`'s 6, ~900 ppm for `[U] Fastest`'s 3), and the search then prefers an edge offset
    /// that reads only part of each tone (2 frames off: the wrong lengths' end markers pass).
    private func initialTiming(start: Int, protocol proto: GGWaveProtocol, ratio: Double) -> (offset: Int, spectra: [ChunkSpectrum])? {
        var span: ResampledSpan?
        if abs(ratio - 1) >= Self.plainRatioTolerance {
            let first = Self.coarseSearch.min()! + Self.markerSamples - proto.samplesPerTx
            let count = Self.coarseSearch.max()! + Self.markerSamples + 2 * proto.samplesPerTx - first
            span = history.interpolated(from: Double(start) + Double(first) * ratio, count: count, step: ratio)
                .map { ResampledSpan(first: first, samples: $0) }
        }
        guard let coarse = bestTiming(start: start, offsets: Self.coarseSearch, chunks: 0..<2, protocol: proto, ratio: ratio,
                                      coarse: true, span: span)?.offset
        else { return nil }
        return bestTiming(start: start, offsets: Self.fineSearch.map { coarse + $0 }, chunks: 0..<2, protocol: proto, ratio: ratio)
    }

    /// Reads the length block for every protocol whose first two chunks have arrived.
    private func readLengths(_ c: inout Candidate) {
        let maxOffset = Self.maxTimingOffset
        for proto in protocols where !c.lengthsTried.contains(proto) {
            let needed = Double(Self.markerSamples + maxOffset + 2 * proto.samplesPerTx) * c.ratio + Double(Interpolator.taps)
            guard history.total >= c.start + Int(needed) else { continue }
            c.lengthsTried.insert(proto)
            guard let (offset, spectra) = initialTiming(start: c.start, protocol: proto, ratio: c.ratio) else { continue }
            let shares = spectra[0].logShares
            let ranked = Self.lengthBlocks.indices
                .map { (length: $0 + 1, score: ChunkSpectrum.score(of: Self.lengthBlocks[$0], logShares: shares)) }
                .sorted { $0.score > $1.score }
            for candidate in ranked.prefix(Self.lengthsKept) {
                c.hypotheses.append(Hypothesis(proto: proto, length: candidate.length, offset: offset))
            }
        }
    }

    private enum Attempt {
        case waiting, failed
        case decoded(GGWaveReception)
    }

    /// Where hypothesis `h` puts its end marker's window, and the window four frames past it (that
    /// one must be computed too: see `attempt`).
    private static func endWindows(_ h: Hypothesis, start: Int, ratio: Double) -> (endMarker: Int, later: Int) {
        let total = h.proto.sampleCount(payloadLength: h.length)
        let endMarker = start + Int((Double(h.offset + total - markerSamples) * ratio).rounded())
        return (endMarker, endMarker + Int((Double(peakCheckSamples) * ratio).rounded()))
    }

    private mutating func attempt(_ h: Hypothesis, start: Int, ratio: Double) -> Attempt {
        let (endMarker, later) = Self.endWindows(h, start: start, ratio: ratio)
        let shifted = abs(ratio - 1) >= Self.shiftedEndTolerance
        guard let endScore = detector.endScore(windowStart: endMarker, slack: Self.endSlack, shifted: shifted),
              let energy = detector.endEnergy(windowStart: endMarker, slack: Self.endSlack, shifted: shifted),
              let laterEnergy = detector.endEnergy(windowStart: later, slack: Self.endSlack, shifted: shifted),
              let earlierEnergy = detector.endEnergy(windowStart: 2 * endMarker - later, slack: Self.endSlack, shifted: shifted)
        else {
            return detector.blocks * MarkerDetector.blockSize < later + Self.markerSamples + 8 * MarkerDetector.blockSize
                ? .waiting : .failed
        }
        // The end marker must be there, and exactly there: reading a slower protocol's message at a
        // faster rate repeats chunks and can pass the code (a 1-byte payload then reads as its own
        // length block), but it puts the end marker some frames before the real one, where the
        // marker energy still grows further on.
        // Nor a chunk later than it is: a length that adds a chunk reads the true codeword shifted
        // with the end marker's first tones after it, which the code takes for a few errors (the
        // payload plus its first check bytes), so the energy must not grow earlier on either.
        guard endScore >= Self.endThreshold, energy >= laterEnergy, energy >= earlierEnergy else { return .failed }

        let chunks = GGWave.txCount(payloadLength: h.length)
        // The search reads every chunk plainly at each offset: the best one's reading is the message as heard.
        guard let (offset, heard) = bestTiming(start: start, offsets: Self.refineSearch.map { h.offset + $0 },
                                               chunks: 0..<chunks, protocol: h.proto, ratio: ratio)
        else { return .failed }
        // Short payloads have only 2 check bytes (one correctable error), too weak to stand on
        // their own: their length block, read hard, must agree too.
        if h.length < 4 {
            let mismatches = zip(heard[0].bytes.map(\.value), Self.lengthBlocks[h.length - 1]).filter { $0 != $1 }.count
            guard mismatches <= 1 else { return .failed }
        }
        func readLate() -> [ChunkSpectrum]? {
            var spectra: [ChunkSpectrum] = []
            for c in 0..<chunks {
                guard let s = spectrum(start: start, offset: offset, chunk: c, protocol: h.proto, ratio: ratio, late: true) else {
                    return nil
                }
                spectra.append(s)
            }
            return spectra
        }
        guard let decoded = Self.decode(heard, payloadLength: h.length, lateReading: readLate) else { return .failed }
        return .decoded(GGWaveReception(payload: decoded.message, protocol: h.proto,
                                        startSample: start + Int((Double(offset) * ratio).rounded()),
                                        corrected: decoded.corrected))
    }
}
