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
    private var candidates: [Candidate] = []
    /// Samples before this index belong to a payload already reported.
    private var consumedUntil = 0

    /// At most this many candidate markers wait for their data; noise rarely opens even one.
    static let maxCandidates = 8
    /// End score the end marker must reach where the length says it is.
    static let endThreshold: Float = 0.7
    /// Chunk timings tried around the detected marker start (samples), and the finer search once
    /// the whole message has arrived.
    static let timingSearch = Array(stride(from: -320, through: 320, by: 32))
    static let refineSearch = Array(stride(from: -96, through: 96, by: 32))
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
            for start in detector.process(piece) where start >= consumedUntil {
                candidates.append(Candidate(start: start))
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
            if c.start < consumedUntil || max(0, c.start - Self.timingSearch.map(abs).max()!) < history.oldest {
                candidates.remove(at: index)
                continue
            }
            readLengths(&c)
            var remaining: [Hypothesis] = []
            var reception: GGWaveReception?
            for h in c.hypotheses where reception == nil {
                switch attempt(h, start: c.start) {
                case .waiting: remaining.append(h)
                case .failed: break
                case .decoded(let r): reception = r
                }
            }
            c.hypotheses = remaining
            if let r = reception {
                found.append(r)
                consumedUntil = r.startSample + r.protocol.sampleCount(payloadLength: r.payload.count)
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

    private func spectrum(start: Int, offset: Int, chunk: Int, protocol proto: GGWaveProtocol) -> ChunkSpectrum? {
        let from = start + offset + Self.markerSamples + chunk * proto.samplesPerTx
        guard let samples = history.slice(from: from, count: proto.samplesPerTx) else { return nil }
        return demodulator.spectrum(samples, protocol: proto)
    }

    /// The offset among `offsets` where chunks `chunks` look cleanest.
    private func bestTiming(start: Int, offsets: [Int], chunks: Range<Int>, protocol proto: GGWaveProtocol) -> Int? {
        var best: (offset: Int, score: Float)?
        for offset in offsets {
            var sum: Float = 0
            var complete = true
            for c in chunks {
                // Offsets reaching before the stream began are simply not candidates.
                guard let s = spectrum(start: start, offset: offset, chunk: c, protocol: proto) else {
                    complete = false
                    break
                }
                sum += s.alignment
            }
            if complete && (best == nil || sum > best!.score) { best = (offset, sum) }
        }
        return best?.offset
    }

    /// Reads the length block for every protocol whose first two chunks have arrived.
    private func readLengths(_ c: inout Candidate) {
        let maxOffset = Self.timingSearch.map(abs).max()!
        for proto in protocols where !c.lengthsTried.contains(proto) {
            guard history.total >= c.start + Self.markerSamples + maxOffset + 2 * proto.samplesPerTx else { continue }
            c.lengthsTried.insert(proto)
            guard let offset = bestTiming(start: c.start, offsets: Self.timingSearch, chunks: 0..<2, protocol: proto),
                  let block = spectrum(start: c.start, offset: offset, chunk: 0, protocol: proto)
            else { continue }
            let ranked = Self.lengthBlocks.indices
                .map { (length: $0 + 1, score: block.score(of: Self.lengthBlocks[$0])) }
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

    private func attempt(_ h: Hypothesis, start: Int) -> Attempt {
        let total = h.proto.sampleCount(payloadLength: h.length)
        let endMarker = start + h.offset + total - Self.markerSamples
        // The window four frames past the end marker must be computed too (see below).
        let later = endMarker + Self.peakCheckSamples
        guard let endScore = detector.endScore(windowStart: endMarker, slack: 3),
              let energy = detector.endEnergy(windowStart: endMarker, slack: 3),
              let laterEnergy = detector.endEnergy(windowStart: later, slack: 3)
        else {
            return detector.blocks * MarkerDetector.blockSize < later + Self.markerSamples + 8 * MarkerDetector.blockSize
                ? .waiting : .failed
        }
        // The end marker must be there, and exactly there: reading a slower protocol's message at a
        // faster rate repeats chunks and can pass the code (a 1-byte payload then reads as its own
        // length block), but it puts the end marker some frames before the real one, where the
        // marker energy still grows further on.
        guard endScore >= Self.endThreshold, energy >= laterEnergy else { return .failed }

        let chunks = GGWave.txCount(payloadLength: h.length)
        guard let offset = bestTiming(start: start, offsets: Self.refineSearch.map { h.offset + $0 },
                                      chunks: 0..<chunks, protocol: h.proto)
        else { return .failed }
        // Short payloads have only 2 check bytes (one correctable error), too weak to stand on
        // their own: their length block, read hard, must agree too.
        if h.length < 4 {
            guard let block = spectrum(start: start, offset: offset, chunk: 0, protocol: h.proto) else { return .failed }
            let mismatches = zip(block.bytes.map(\.value), Self.lengthBlocks[h.length - 1]).filter { $0 != $1 }.count
            guard mismatches <= 1 else { return .failed }
        }
        var bytes: [ChunkSpectrum.Byte] = []
        for c in 1..<chunks {
            guard let s = spectrum(start: start, offset: offset, chunk: c, protocol: h.proto) else { return .failed }
            bytes += s.bytes
        }
        let ecc = GGWave.eccBytes(length: h.length)
        guard let decoded = Self.correct(Array(bytes[0..<(h.length + ecc)]), messageLength: h.length, ecc: ecc) else {
            return .failed
        }
        return .decoded(GGWaveReception(payload: decoded.message, protocol: h.proto, startSample: start + offset,
                                        corrected: decoded.corrected))
    }

    /// Errors-only first, as ggwave does. Then, when that fails and the code is long enough, the
    /// least confident bytes as erasures — but only accepted when nothing outside them needed
    /// fixing and at least `spareCheckBytes` check bytes were left over to confirm it, so that the
    /// chance of noise passing is about 256^−spareCheckBytes per try.
    static func correct(_ word: [ChunkSpectrum.Byte], messageLength: Int, ecc: Int) -> ReedSolomon.Decoded? {
        let rs = ReedSolomon(messageLength: messageLength, eccLength: ecc)
        let values = word.map(\.value)
        if let d = rs.decode(values) { return d }
        let spareCheckBytes = 6
        guard ecc > spareCheckBytes else { return nil }
        let byConfidence = word.indices.sorted { word[$0].confidence < word[$1].confidence }
        for erasures in stride(from: 2, through: ecc - spareCheckBytes, by: 2) {
            if let d = rs.decode(values, erasures: Array(byConfidence.prefix(erasures))), d.errorsOutsideErasures == 0 {
                return d
            }
        }
        return nil
    }
}
