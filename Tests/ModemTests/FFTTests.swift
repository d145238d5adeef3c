import Glibc
import Testing
@testable import Modem

/// The frame FFT against the plain scalar radix-2 it replaces (bit for bit: the decoder's decisions
/// must not move) and against a direct DFT (the transform itself).
@Suite struct FFTTests {
    /// Reproducible noise with tones on a few bins, like a chunk's fold.
    static func frame(seed: UInt64) -> [Float] {
        var state = seed
        return (0..<FFT.size).map { n in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            let noise = Float(Int64(bitPattern: state) >> 40) / Float(1 << 23)
            return noise + 3 * Float(sin(2 * Double.pi * 347 * Double(n) / 1024)) + Float(cos(2 * Double.pi * 400.5 * Double(n) / 1024))
        }
    }

    /// The transform as it was: bit-reversed copy, in-place radix-2 over 512 points with the 1024-point
    /// table at stride, then the split.
    static func scalarPower(_ x: [Float], bins: Range<Int>) -> [Float] {
        let size = FFT.size, m = size / 2
        let wr = (0..<m).map { Float(cos(2 * Double.pi * Double($0) / Double(size))) }
        let wi = (0..<m).map { Float(-sin(2 * Double.pi * Double($0) / Double(size))) }
        var (re, im) = ([Float](repeating: 0, count: m), [Float](repeating: 0, count: m))
        for n in 0..<m {
            var r = 0
            for b in 0..<9 where n & (1 << b) != 0 { r |= 1 << (8 - b) }
            (re[r], im[r]) = (x[2 * n], x[2 * n + 1])
        }
        var half = 1
        while half < m {
            for start in stride(from: 0, to: m, by: 2 * half) {
                for j in 0..<half {
                    let w = j * size / (2 * half), a = start + j, b = a + half
                    let tr = re[b] * wr[w] - im[b] * wi[w]
                    let ti = re[b] * wi[w] + im[b] * wr[w]
                    (re[b], im[b]) = (re[a] - tr, im[a] - ti)
                    re[a] += tr
                    im[a] += ti
                }
            }
            half *= 2
        }
        return bins.map { k in
            let (a, b, c, d) = (re[k % m], im[k % m], re[(m - k) % m], im[(m - k) % m])
            let (er, ei, or, oi) = ((a + c) * 0.5, (b - d) * 0.5, (b + d) * 0.5, (c - a) * 0.5)
            let (cr, ci): (Float, Float) = k < m ? (wr[k], wi[k]) : (-1, 0)
            let (xr, xi) = (er + cr * or - ci * oi, ei + cr * oi + ci * or)
            return xr * xr + xi * xi
        }
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func tonesBinsMatchTheScalarTransformBitForBit(seed: UInt64) {
        let x = Self.frame(seed: seed)
        let bins = GGWave.freqStart..<(GGWave.freqStart + GGWave.dataBins)
        let fast = x.withUnsafeBufferPointer { FFT.frame.power(of: $0, bins: bins) }
        let scalar = Self.scalarPower(x, bins: bins)
        let differing = fast.indices.filter { fast[$0].bitPattern != scalar[$0].bitPattern }.map { bins.lowerBound + $0 }
        #expect(differing.isEmpty, "bins \(differing) differ from the scalar transform")
    }

    @Test func everyBinMatchesADirectDFT() {
        let x = Self.frame(seed: 7)
        let fast = x.withUnsafeBufferPointer { FFT.frame.power(of: $0, bins: 0..<FFT.size) }
        let energy = x.reduce(0) { $0 + Double($1) * Double($1) } * Double(FFT.size)
        for k in 0..<FFT.size {
            var (re, im) = (0.0, 0.0)
            for (n, v) in x.enumerated() {
                let phase = -2 * Double.pi * Double(k * n % FFT.size) / Double(FFT.size)
                (re, im) = (re + Double(v) * cos(phase), im + Double(v) * sin(phase))
            }
            #expect(abs(Double(fast[k]) - (re * re + im * im)) <= 1e-5 * energy, "bin \(k)")
        }
    }
}
