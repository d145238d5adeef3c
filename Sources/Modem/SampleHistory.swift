import Glibc

/// The most recent `capacity` samples of a stream, addressed by their absolute index since the
/// stream began, so that decoding can look back at a transmission once its end has arrived.
struct SampleHistory: Sendable {
    let capacity: Int
    /// The ring, filled up to `capacity` as samples arrive (then overwritten in turn): its memory is
    /// reserved at construction but not cleared, so a decoder costs nothing for history it never uses.
    private var buffer: [Float]
    /// Samples received since the start.
    private(set) var total = 0

    init(capacity: Int) {
        self.capacity = capacity
        buffer = []
        buffer.reserveCapacity(capacity)
    }

    /// Index of the oldest sample still held.
    var oldest: Int { max(0, total - capacity) }

    mutating func append(_ samples: some Collection<Float>) {
        if samples.withContiguousStorageIfAvailable({ append(contiguous: $0) }) == nil {
            Array(samples).withUnsafeBufferPointer { append(contiguous: $0) }
        }
    }

    /// Copied in at most three runs: the rest of the first fill, then up to the ring's end, then from its start.
    private mutating func append(contiguous samples: UnsafeBufferPointer<Float>) {
        var rest = samples[...]
        if buffer.count < capacity {
            let take = min(capacity - buffer.count, rest.count)
            buffer.append(contentsOf: rest.prefix(take))
            rest = rest.dropFirst(take)
            total += take
        }
        while !rest.isEmpty {
            let pos = total % capacity, take = min(capacity - pos, rest.count)
            buffer.withUnsafeMutableBufferPointer { ring in
                _ = UnsafeMutableBufferPointer(rebasing: ring[pos..<(pos + take)]).update(fromContentsOf: rest.prefix(take))
            }
            rest = rest.dropFirst(take)
            total += take
        }
    }

    /// Samples [start, start + count), or nil when part of it is gone or has not arrived yet.
    func slice(from start: Int, count: Int) -> [Float]? {
        guard start >= oldest, start + count <= total, count >= 0 else { return nil }
        // At most two runs of the ring, copied whole.
        let pos = start % capacity, first = min(count, capacity - pos)
        return buffer.withUnsafeBufferPointer { buf in
            [Float](unsafeUninitializedCapacity: count) { out, initialized in
                _ = out.initialize(fromContentsOf: buf[pos..<(pos + first)])
                _ = UnsafeMutableBufferPointer(rebasing: out[first...]).initialize(fromContentsOf: buf[0..<(count - first)])
                initialized = count
            }
        }
    }

    /// Samples [start, start + count) handed to `body` in place when they lie in one run of the ring
    /// (else as a copy), or nil when part of it is gone or has not arrived yet.
    func withSlice<T>(from start: Int, count: Int, _ body: (UnsafeBufferPointer<Float>) -> T) -> T? {
        guard start >= oldest, start + count <= total, count >= 0 else { return nil }
        let pos = start % capacity
        guard pos + count <= capacity else { return slice(from: start, count: count)?.withUnsafeBufferPointer(body) }
        return buffer.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[pos..<(pos + count)])) }
    }

    /// `count` samples at positions start, start + step, … (a stream read with another clock),
    /// interpolated with a Kaiser-windowed sinc of `Interpolator.taps` taps; nil when part of it is
    /// gone or has not arrived yet.
    func interpolated(from start: Double, count: Int, step: Double) -> [Float]? {
        let half = Interpolator.taps / 2
        let first = Int(start.rounded(.down)) - half + 1
        let last = Int((start + Double(count - 1) * step).rounded(.down)) + half
        guard count > 0, first >= oldest, last < total else { return nil }
        var out = [Float](repeating: 0, count: count)
        buffer.withUnsafeBufferPointer { buf in
            Interpolator.table.withUnsafeBufferPointer { table in
                for i in 0..<count {
                    let t = start + Double(i) * step
                    let k0 = Int(t.rounded(.down))
                    let phase = Int(((t - Double(k0)) * Double(Interpolator.phases)).rounded())
                    let row = phase * Interpolator.taps
                    var pos = (k0 - half + 1) % capacity
                    var acc: Float = 0
                    for j in 0..<Interpolator.taps {
                        acc += buf[pos] * table[row + j]
                        pos += 1
                        if pos == capacity { pos = 0 }
                    }
                    out[i] = acc
                }
            }
        }
        return out
    }
}

/// Kaiser-windowed sinc (β 6, cut at 0.95 × Nyquist), `phases` + 1 fractional delays of `taps` taps:
/// flat within a fraction of a dB up to 20 kHz at 48 kHz, where ggwave's tones are.
enum Interpolator {
    static let taps = 32
    static let phases = 128
    static let table: [Float] = {
        func bessel0(_ x: Double) -> Double {
            var sum = 1.0, term = 1.0
            for k in 1..<30 {
                term *= (x / (2 * Double(k))) * (x / (2 * Double(k)))
                sum += term
            }
            return sum
        }
        let beta = 6.0, cutoff = 0.95, half = taps / 2
        var out: [Float] = []
        for p in 0...phases {
            let frac = Double(p) / Double(phases)
            var row: [Double] = []
            for j in 0..<taps {
                let d = Double(j - half + 1) - frac   // tap position relative to t
                let x = cutoff * d
                let sinc = x == 0 ? 1 : sin(Double.pi * x) / (Double.pi * x)
                let r = d / Double(half)
                let w = abs(r) >= 1 ? 0 : bessel0(beta * (1 - r * r).squareRoot()) / bessel0(beta)
                row.append(cutoff * sinc * w)
            }
            let gain = row.reduce(0, +)
            out += row.map { Float($0 / gain) }
        }
        return out
    }()
}
