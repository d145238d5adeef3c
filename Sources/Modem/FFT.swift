import Glibc

/// FFT of one frame (N = 1024 real samples), with its twiddles computed once: the N real samples go
/// in as N/2 = 512 complex ones (even samples real, odd imaginary), a radix-2 FFT of 512 points,
/// then one pass splits the even and odd halves' spectra apart.
///
/// The 512 points are held as 64 vectors of 8 lanes: lane k carries the 64-point block g = rev₃(k)
/// of the decimation-in-time order (point 64·g + p at vector p), which makes the input a run of
/// plain loads (the bit reversal of 9 bits is rev₃ of each 3-bit digit, and the block's digit
/// lands on the lane). The six stages within a block are then whole-vector butterflies, and the
/// last three pair lanes of the same vector. Every point goes through the butterflies of a plain
/// radix-2 FFT in the same order, so the results are those of the scalar loop, bit for bit.
struct FFT: Sendable {
    /// The one-frame transform, its tables made once for every decoder.
    static let frame = FFT()
    static let size = GGWave.samplesPerFrame
    private static let half = size / 2
    private let cosTable: [Float]
    private let sinTable: [Float]
    /// Twiddles of the 512-point stages: stage `half` at [half, 2·half), entry j = table[j·N/(2·half)].
    private let stageRe: [Float]
    private let stageIm: [Float]

    private init() {
        let size = Self.size
        cosTable = (0..<(size / 2)).map { Float(cos(2 * Double.pi * Double($0) / Double(size))) }
        sinTable = (0..<(size / 2)).map { Float(-sin(2 * Double.pi * Double($0) / Double(size))) }
        var (stageRe, stageIm) = ([Float](repeating: 0, count: size / 2), [Float](repeating: 0, count: size / 2))
        var half = 1
        while half < size / 2 {
            for j in 0..<half {
                (stageRe[half + j], stageIm[half + j]) = (cosTable[j * size / (2 * half)], sinTable[j * size / (2 * half)])
            }
            half *= 2
        }
        (self.stageRe, self.stageIm) = (stageRe, stageIm)
    }

    /// Power |X_k|² of a real signal at bins `range` (X_k = Σ x_n e^(−2πikn/N)).
    func power(of real: UnsafeBufferPointer<Float>, bins range: Range<Int>) -> [Float] {
        precondition(real.count == Self.size)
        return halfTransformed(real) { zr, zi in
            range.map { k in
                let (re, im) = split(zr, zi, k)
                return re * re + im * im
            }
        }
    }

    /// Complex X_k of a real signal at `bins`.
    func spectrum(of real: [Float], bins: [Int]) -> [(re: Float, im: Float)] {
        precondition(real.count == Self.size)
        return real.withUnsafeBufferPointer { real in halfTransformed(real) { zr, zi in bins.map { split(zr, zi, $0) } } }
    }

    /// The 512-point transform Z of `real` (even samples real, odd imaginary) in stack buffers (no
    /// array per frame), in the lane layout above, handed to `read`.
    private func halfTransformed<T>(_ real: UnsafeBufferPointer<Float>, _ read: (UnsafeMutableRawPointer, UnsafeMutableRawPointer) -> T) -> T {
        withUnsafeTemporaryAllocation(of: SIMD8<Float>.self, capacity: 2 * 64) { work in
            let re = UnsafeMutableRawPointer(work.baseAddress!), im = re + 64 * MemoryLayout<SIMD8<Float>>.stride
            transform(real, re, im)
            return read(re, im)
        }
    }

    /// X_k from Z, for the bins asked only (a chunk needs 96 of 1024): X_k = E_k + e^(−2πik/N)·O_k,
    /// with E_k = (Z_k + conj Z_(m−k))/2 the even samples' spectrum and O_k = (Z_k − conj Z_(m−k))/2i
    /// the odd ones'; above N/2 a real signal's spectrum is conjugate-symmetric.
    @inline(__always)
    private func split(_ zr: UnsafeMutableRawPointer, _ zi: UnsafeMutableRawPointer, _ k: Int) -> (re: Float, im: Float) {
        let m = Self.half
        if k > m {
            let mirrored = split(zr, zi, Self.size - k)
            return (mirrored.re, -mirrored.im)
        }
        // Z_(k mod m) and Z_((m − k) mod m), 0 ≤ k ≤ m, at their places in the lanes.
        let (low, high) = (Self.place(k == m ? 0 : k), Self.place(k == 0 ? 0 : m - k))
        let (a, b) = (zr.load(fromByteOffset: low, as: Float.self), zi.load(fromByteOffset: low, as: Float.self))
        let (c, d) = (zr.load(fromByteOffset: high, as: Float.self), zi.load(fromByteOffset: high, as: Float.self))
        let (er, ei, or, oi) = ((a + c) * 0.5, (b - d) * 0.5, (b + d) * 0.5, (c - a) * 0.5)
        let (cr, ci): (Float, Float) = k < m ? (cosTable[k], sinTable[k]) : (-1, 0)
        return (er + cr * or - ci * oi, ei + cr * oi + ci * or)
    }

    /// Byte offset of Z_i: vector i mod 64, lane of block g = i / 64, the last stage having left the
    /// blocks in lanes 0, 2, 1, 3, 4, 6, 5, 7 (bits 0 and 1 of g swapped).
    @inline(__always)
    private static func place(_ i: Int) -> Int {
        let g = i >> 6
        return ((i & 63) * 8 + (g & 4 | (g & 1) << 1 | (g >> 1) & 1)) * MemoryLayout<Float>.stride
    }

    @inline(__always)
    private static func reversed3(_ x: Int) -> Int { (x & 1) << 2 | x & 2 | x >> 2 }

    private func transform(_ real: UnsafeBufferPointer<Float>, _ re: UnsafeMutableRawPointer, _ im: UnsafeMutableRawPointer) {
        let vector = MemoryLayout<SIMD8<Float>>.stride
        // Z_i = x_(2·rev₉(i)) + i·x_(2·rev₉(i)+1); for i = 64·g + 8·l + e, rev₉(i) = 64·rev₃(e) + 8·rev₃(l) + rev₃(g):
        // vector 8·l + e takes the 16 floats from 2·(64·rev₃(e) + 8·rev₃(l)), lane k = rev₃(g).
        let x = UnsafeRawPointer(real.baseAddress!)
        for l in 0..<8 {
            for e in 0..<8 {
                let pair = x.loadUnaligned(fromByteOffset: 2 * (64 * Self.reversed3(e) + 8 * Self.reversed3(l)) * MemoryLayout<Float>.stride,
                                           as: SIMD16<Float>.self)
                re.storeBytes(of: pair.evenHalf, toByteOffset: (8 * l + e) * vector, as: SIMD8<Float>.self)
                im.storeBytes(of: pair.oddHalf, toByteOffset: (8 * l + e) * vector, as: SIMD8<Float>.self)
            }
        }
        stageRe.withUnsafeBufferPointer { wr in
            stageIm.withUnsafeBufferPointer { wi in
                // Stages 1…32: within each lane's block, vector p is the block's point p.
                var half = 1
                while half < 64 {
                    for start in stride(from: 0, to: 64, by: 2 * half) {
                        for j in 0..<half {
                            let (a, b) = ((start + j) * vector, (start + j + half) * vector)
                            let (ar, ai) = (re.load(fromByteOffset: a, as: SIMD8<Float>.self), im.load(fromByteOffset: a, as: SIMD8<Float>.self))
                            let (br, bi) = (re.load(fromByteOffset: b, as: SIMD8<Float>.self), im.load(fromByteOffset: b, as: SIMD8<Float>.self))
                            let (c, d) = (SIMD8<Float>(repeating: wr[half + j]), SIMD8<Float>(repeating: wi[half + j]))
                            let (tr, ti) = (br * c - bi * d, br * d + bi * c)
                            re.storeBytes(of: ar - tr, toByteOffset: b, as: SIMD8<Float>.self)
                            im.storeBytes(of: ai - ti, toByteOffset: b, as: SIMD8<Float>.self)
                            re.storeBytes(of: ar + tr, toByteOffset: a, as: SIMD8<Float>.self)
                            im.storeBytes(of: ai + ti, toByteOffset: a, as: SIMD8<Float>.self)
                        }
                    }
                    half *= 2
                }
                // Stages 64, 128, 256 pair blocks g and g + 1, g + 2, g + 4: lanes k and k + 4, k + 2, k + 1.
                for p in 0..<64 {
                    var (vr, vi) = (re.load(fromByteOffset: p * vector, as: SIMD8<Float>.self),
                                    im.load(fromByteOffset: p * vector, as: SIMD8<Float>.self))
                    // 64: a = lanes 0…3 (blocks 0, 4, 2, 6), twiddle 64 + p for all.
                    var (c, d) = (SIMD4<Float>(repeating: wr[64 + p]), SIMD4<Float>(repeating: wi[64 + p]))
                    var (a, b) = Self.butterfly((vr.lowHalf, vi.lowHalf), (vr.highHalf, vi.highHalf), c, d)
                    vr = SIMD8(lowHalf: a.re, highHalf: b.re)
                    vi = SIMD8(lowHalf: a.im, highHalf: b.im)
                    // 128: a = lanes 0, 1, 4, 5 (blocks 0, 4, 1, 5), twiddle 128 + 64·(g mod 2) + p.
                    (c, d) = (SIMD4(wr[128 + p], wr[128 + p], wr[192 + p], wr[192 + p]),
                              SIMD4(wi[128 + p], wi[128 + p], wi[192 + p], wi[192 + p]))
                    (a, b) = Self.butterfly((SIMD4(lowHalf: vr.lowHalf.lowHalf, highHalf: vr.highHalf.lowHalf),
                                             SIMD4(lowHalf: vi.lowHalf.lowHalf, highHalf: vi.highHalf.lowHalf)),
                                            (SIMD4(lowHalf: vr.lowHalf.highHalf, highHalf: vr.highHalf.highHalf),
                                             SIMD4(lowHalf: vi.lowHalf.highHalf, highHalf: vi.highHalf.highHalf)), c, d)
                    vr = SIMD8(lowHalf: SIMD4(lowHalf: a.re.lowHalf, highHalf: b.re.lowHalf),
                               highHalf: SIMD4(lowHalf: a.re.highHalf, highHalf: b.re.highHalf))
                    vi = SIMD8(lowHalf: SIMD4(lowHalf: a.im.lowHalf, highHalf: b.im.lowHalf),
                               highHalf: SIMD4(lowHalf: a.im.highHalf, highHalf: b.im.highHalf))
                    // 256: a = even lanes (blocks 0, 2, 1, 3), twiddle 256 + 64·g + p; out as `place` reads them.
                    (c, d) = (SIMD4(wr[256 + p], wr[384 + p], wr[320 + p], wr[448 + p]),
                              SIMD4(wi[256 + p], wi[384 + p], wi[320 + p], wi[448 + p]))
                    (a, b) = Self.butterfly((vr.evenHalf, vi.evenHalf), (vr.oddHalf, vi.oddHalf), c, d)
                    re.storeBytes(of: SIMD8(lowHalf: a.re, highHalf: b.re), toByteOffset: p * vector, as: SIMD8<Float>.self)
                    im.storeBytes(of: SIMD8(lowHalf: a.im, highHalf: b.im), toByteOffset: p * vector, as: SIMD8<Float>.self)
                }
            }
        }
    }

    /// One radix-2 butterfly per lane: (a + w·b, a − w·b), w = c + i·d.
    @inline(__always)
    private static func butterfly(_ a: (re: SIMD4<Float>, im: SIMD4<Float>), _ b: (re: SIMD4<Float>, im: SIMD4<Float>),
                                  _ c: SIMD4<Float>, _ d: SIMD4<Float>)
        -> ((re: SIMD4<Float>, im: SIMD4<Float>), (re: SIMD4<Float>, im: SIMD4<Float>))
    {
        let (tr, ti) = (b.re * c - b.im * d, b.re * d + b.im * c)
        return ((a.re + tr, a.im + ti), (a.re - tr, a.im - ti))
    }
}
