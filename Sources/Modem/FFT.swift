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
    /// Twiddles of the N/2-point stages: stage `half` at [half, 2·half), entry j = table[j·N/(2·half)].
    private let stageRe: [Float]
    private let stageIm: [Float]

    init(size: Int) {
        precondition(size > 1 && size & (size - 1) == 0, "FFT size must be a power of two")
        self.size = size
        cosTable = (0..<(size / 2)).map { Float(cos(2 * Double.pi * Double($0) / Double(size))) }
        sinTable = (0..<(size / 2)).map { Float(-sin(2 * Double.pi * Double($0) / Double(size))) }
        precondition(size >= 4, "FFT size must be at least 4")
        let bits = size.trailingZeroBitCount - 1
        var (stageRe, stageIm) = ([Float](repeating: 0, count: size / 2), [Float](repeating: 0, count: size / 2))
        var half = 1
        while half < size / 2 {
            for j in 0..<half {
                (stageRe[half + j], stageIm[half + j]) = (cosTable[j * size / (2 * half)], sinTable[j * size / (2 * half)])
            }
            half *= 2
        }
        (self.stageRe, self.stageIm) = (stageRe, stageIm)
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
        return withUnsafeTemporaryAllocation(of: Float.self, capacity: 2 * size) { work in
            let zr = UnsafeMutableBufferPointer(rebasing: work[0..<m])
            let zi = UnsafeMutableBufferPointer(rebasing: work[m..<size])
            if m >= 64 {
                firstStages(real, UnsafeMutableRawPointer(work.baseAddress! + size), zr, zi)
                transform(zr, zi, fromHalf: 8)
            } else {
                bitReversed.withUnsafeBufferPointer { rev in
                    for n in 0..<m {
                        zr[rev[n]] = real[2 * n]
                        zi[rev[n]] = real[2 * n + 1]
                    }
                }
                transform(zr, zi, fromHalf: 1)
            }
            return read(zr, zi)
        }
    }

    /// The bit-reversed copy and the three stages that work within blocks of 8 points, 8 blocks at a
    /// time: `scratch` (N floats) holds them transposed (lane l = block l, one vector per point of a
    /// block), so each butterfly is one SIMD step with the scalar loop's arithmetic; then back to Z.
    private func firstStages(_ real: UnsafeBufferPointer<Float>, _ scratch: UnsafeMutableRawPointer,
                             _ zr: UnsafeMutableBufferPointer<Float>, _ zi: UnsafeMutableBufferPointer<Float>) {
        let m = size / 2
        let vector = MemoryLayout<SIMD8<Float>>.stride
        let (tr, ti) = (scratch, scratch + m * MemoryLayout<Float>.stride)
        bitReversed.withUnsafeBufferPointer { rev in
            for group in 0..<(m / 64) {
                for e in 0..<8 {
                    var (vr, vi) = (SIMD8<Float>(), SIMD8<Float>())
                    for l in 0..<8 {
                        let n = rev[64 * group + 8 * l + e]
                        (vr[l], vi[l]) = (real[2 * n], real[2 * n + 1])
                    }
                    tr.storeBytes(of: vr, toByteOffset: (8 * group + e) * vector, as: SIMD8<Float>.self)
                    ti.storeBytes(of: vi, toByteOffset: (8 * group + e) * vector, as: SIMD8<Float>.self)
                }
            }
        }
        stageRe.withUnsafeBufferPointer { wr in
            stageIm.withUnsafeBufferPointer { wi in
                for group in 0..<(m / 64) {
                    var half = 1
                    while half < 8 {
                        for start in stride(from: 0, to: 8, by: 2 * half) {
                            for j in 0..<half {
                                let a = (8 * group + start + j) * vector, b = a + half * vector
                                let (c, d) = (SIMD8<Float>(repeating: wr[half + j]), SIMD8<Float>(repeating: wi[half + j]))
                                let (ar, ai) = (tr.loadUnaligned(fromByteOffset: a, as: SIMD8<Float>.self), ti.loadUnaligned(fromByteOffset: a, as: SIMD8<Float>.self))
                                let (br, bi) = (tr.loadUnaligned(fromByteOffset: b, as: SIMD8<Float>.self), ti.loadUnaligned(fromByteOffset: b, as: SIMD8<Float>.self))
                                let xr = br * c - bi * d
                                let xi = br * d + bi * c
                                tr.storeBytes(of: ar - xr, toByteOffset: b, as: SIMD8<Float>.self)
                                ti.storeBytes(of: ai - xi, toByteOffset: b, as: SIMD8<Float>.self)
                                tr.storeBytes(of: ar + xr, toByteOffset: a, as: SIMD8<Float>.self)
                                ti.storeBytes(of: ai + xi, toByteOffset: a, as: SIMD8<Float>.self)
                            }
                        }
                        half *= 2
                    }
                }
            }
        }
        for group in 0..<(m / 64) {
            for e in 0..<8 {
                let (vr, vi) = (tr.loadUnaligned(fromByteOffset: (8 * group + e) * vector, as: SIMD8<Float>.self),
                                ti.loadUnaligned(fromByteOffset: (8 * group + e) * vector, as: SIMD8<Float>.self))
                for l in 0..<8 { (zr[64 * group + 8 * l + e], zi[64 * group + 8 * l + e]) = (vr[l], vi[l]) }
            }
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
        // k % m and (m − k) % m for 0 ≤ k ≤ m, without a division.
        let (low, high) = (k == m ? 0 : k, k == 0 ? 0 : m - k)
        let (a, b) = (zr[low], zi[low]), (c, d) = (zr[high], zi[high])
        let (er, ei, or, oi) = ((a + c) * 0.5, (b - d) * 0.5, (b + d) * 0.5, (c - a) * 0.5)
        let (cr, ci): (Float, Float) = k < m ? (cosTable[k], sinTable[k]) : (-1, 0)
        return (er + cr * or - ci * oi, ei + cr * oi + ci * or)
    }

    /// Radix-2 butterflies over the N/2 points. Each stage reads its twiddles from `stageRe`/`stageIm`
    /// in order (the same values as the N-point table at stride N/(2·half)), so from 8 butterflies
    /// on a stage runs 8 at a time in SIMD with exactly the arithmetic of the scalar loop.
    private func transform(_ re: UnsafeMutableBufferPointer<Float>, _ im: UnsafeMutableBufferPointer<Float>, fromHalf: Int) {
        stageRe.withUnsafeBufferPointer { wr in
            stageIm.withUnsafeBufferPointer { wi in
                let n = size / 2
                var half = fromHalf
                while half < min(8, n) {
                    var start = 0
                    while start < n {
                        for j in 0..<half {
                            let a = start + j, b = a + half
                            let (cr, ci) = (wr[half + j], wi[half + j])
                            let tr = re[b] * cr - im[b] * ci
                            let ti = re[b] * ci + im[b] * cr
                            re[b] = re[a] - tr
                            im[b] = im[a] - ti
                            re[a] += tr
                            im[a] += ti
                        }
                        start += 2 * half
                    }
                    half *= 2
                }
                let (r, i) = (UnsafeMutableRawPointer(re.baseAddress!), UnsafeMutableRawPointer(im.baseAddress!))
                let (cr, ci) = (UnsafeRawPointer(wr.baseAddress!), UnsafeRawPointer(wi.baseAddress!))
                let lane = MemoryLayout<Float>.stride
                while half < n {
                    var start = 0
                    while start < n {
                        var j = 0
                        while j < half {
                            let a = (start + j) * lane, b = a + half * lane, w = (half + j) * lane
                            let (ar, ai) = (r.loadUnaligned(fromByteOffset: a, as: SIMD8<Float>.self),
                                            i.loadUnaligned(fromByteOffset: a, as: SIMD8<Float>.self))
                            let (br, bi) = (r.loadUnaligned(fromByteOffset: b, as: SIMD8<Float>.self),
                                            i.loadUnaligned(fromByteOffset: b, as: SIMD8<Float>.self))
                            let (c, d) = (cr.loadUnaligned(fromByteOffset: w, as: SIMD8<Float>.self),
                                          ci.loadUnaligned(fromByteOffset: w, as: SIMD8<Float>.self))
                            let tr = br * c - bi * d
                            let ti = br * d + bi * c
                            r.storeBytes(of: ar - tr, toByteOffset: b, as: SIMD8<Float>.self)
                            i.storeBytes(of: ai - ti, toByteOffset: b, as: SIMD8<Float>.self)
                            r.storeBytes(of: ar + tr, toByteOffset: a, as: SIMD8<Float>.self)
                            i.storeBytes(of: ai + ti, toByteOffset: a, as: SIMD8<Float>.self)
                            j += 8
                        }
                        start += 2 * half
                    }
                    half *= 2
                }
            }
        }
    }
}
