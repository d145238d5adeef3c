import Glibc

/// FFT of a real signal of a fixed power-of-two size N, with its twiddles computed once: the N real
/// samples go in as N/2 complex ones (even samples real, odd imaginary), an in-place radix-2 FFT of
/// N/2 points, then one pass splits the even and odd halves' spectra apart.
struct FFT: Sendable {
    /// The one-frame transform (1024 points), its tables made once for every decoder.
    static let frame = FFT(size: GGWave.samplesPerFrame)
    let size: Int
    private let cosTable: [Float]
    private let sinTable: [Float]
    private let bitReversed: [Int]

    init(size: Int) {
        precondition(size > 1 && size & (size - 1) == 0, "FFT size must be a power of two")
        self.size = size
        cosTable = (0..<(size / 2)).map { Float(cos(2 * Double.pi * Double($0) / Double(size))) }
        sinTable = (0..<(size / 2)).map { Float(-sin(2 * Double.pi * Double($0) / Double(size))) }
        precondition(size >= 4, "FFT size must be at least 4")
        let bits = size.trailingZeroBitCount - 1
        bitReversed = (0..<(size / 2)).map { i in
            var r = 0
            for b in 0..<bits where i & (1 << b) != 0 { r |= 1 << (bits - 1 - b) }
            return r
        }
    }

    /// Power |X_k|² of a real signal at bins `range` (X_k = Σ x_n e^(−2πikn/N)).
    func power(of real: UnsafeBufferPointer<Float>, bins range: Range<Int>) -> [Float] {
        precondition(real.count == size)
        return halfTransformed(real) { zr, zi in
            range.map { k in
                let (re, im) = split(zr, zi, k)
                return re * re + im * im
            }
        }
    }

    /// Complex X_k of a real signal at `bins`.
    func spectrum(of real: [Float], bins: [Int]) -> [(re: Float, im: Float)] {
        precondition(real.count == size)
        return real.withUnsafeBufferPointer { real in halfTransformed(real) { zr, zi in bins.map { split(zr, zi, $0) } } }
    }

    /// The N/2-point transform Z of `real` (even samples real, odd imaginary) in stack buffers (no
    /// array per frame), handed to `read`.
    private func halfTransformed<T>(_ real: UnsafeBufferPointer<Float>, _ read: (UnsafeMutableBufferPointer<Float>, UnsafeMutableBufferPointer<Float>) -> T) -> T {
        let m = size / 2
        return withUnsafeTemporaryAllocation(of: Float.self, capacity: size) { work in
            let zr = UnsafeMutableBufferPointer(rebasing: work[0..<m])
            let zi = UnsafeMutableBufferPointer(rebasing: work[m..<size])
            bitReversed.withUnsafeBufferPointer { rev in
                for n in 0..<m {
                    zr[rev[n]] = real[2 * n]
                    zi[rev[n]] = real[2 * n + 1]
                }
            }
            transform(zr, zi)
            return read(zr, zi)
        }
    }

    /// X_k from Z, for the bins asked only (a chunk needs 96 of 1024): X_k = E_k + e^(−2πik/N)·O_k,
    /// with E_k = (Z_k + conj Z_(m−k))/2 the even samples' spectrum and O_k = (Z_k − conj Z_(m−k))/2i
    /// the odd ones'; above N/2 a real signal's spectrum is conjugate-symmetric.
    @inline(__always)
    private func split(_ zr: UnsafeMutableBufferPointer<Float>, _ zi: UnsafeMutableBufferPointer<Float>, _ k: Int) -> (re: Float, im: Float) {
        let m = size / 2
        if k > m {
            let mirrored = split(zr, zi, size - k)
            return (mirrored.re, -mirrored.im)
        }
        let (a, b) = (zr[k % m], zi[k % m]), (c, d) = (zr[(m - k) % m], zi[(m - k) % m])
        let (er, ei, or, oi) = ((a + c) * 0.5, (b - d) * 0.5, (b + d) * 0.5, (c - a) * 0.5)
        let (cr, ci): (Float, Float) = k < m ? (cosTable[k], sinTable[k]) : (-1, 0)
        return (er + cr * or - ci * oi, ei + cr * oi + ci * or)
    }

    private func transform(_ re: UnsafeMutableBufferPointer<Float>, _ im: UnsafeMutableBufferPointer<Float>) {
        cosTable.withUnsafeBufferPointer { wr in
            sinTable.withUnsafeBufferPointer { wi in
                var half = 1
                // N/2 points: the N-point table read at every other entry.
                let n = size / 2
                while half < n {
                    let stride = size / (2 * half)
                    var start = 0
                    while start < n {
                        for j in 0..<half {
                            let w = j * stride
                            let a = start + j, b = a + half
                            let tr = re[b] * wr[w] - im[b] * wi[w]
                            let ti = re[b] * wi[w] + im[b] * wr[w]
                            re[b] = re[a] - tr
                            im[b] = im[a] - ti
                            re[a] += tr
                            im[a] += ti
                        }
                        start += 2 * half
                    }
                    half *= 2
                }
            }
        }
    }
}
