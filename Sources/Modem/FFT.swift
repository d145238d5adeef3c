import Foundation

/// In-place radix-2 complex FFT of a fixed power-of-two size, with its twiddles computed once.
struct FFT: Sendable {
    let size: Int
    private let cosTable: [Float]
    private let sinTable: [Float]
    private let bitReversed: [Int]

    init(size: Int) {
        precondition(size > 1 && size & (size - 1) == 0, "FFT size must be a power of two")
        self.size = size
        cosTable = (0..<(size / 2)).map { Float(cos(2 * Double.pi * Double($0) / Double(size))) }
        sinTable = (0..<(size / 2)).map { Float(-sin(2 * Double.pi * Double($0) / Double(size))) }
        let bits = size.trailingZeroBitCount
        bitReversed = (0..<size).map { i in
            var r = 0
            for b in 0..<bits where i & (1 << b) != 0 { r |= 1 << (bits - 1 - b) }
            return r
        }
    }

    /// Power |X_k|² of a real signal at bins `range` (X_k = Σ x_n e^(−2πikn/N)).
    func power(of real: [Float], bins range: Range<Int>) -> [Float] {
        precondition(real.count == size)
        var re = [Float](repeating: 0, count: size)
        var im = [Float](repeating: 0, count: size)
        for i in 0..<size { re[bitReversed[i]] = real[i] }
        transform(&re, &im)
        return range.map { re[$0] * re[$0] + im[$0] * im[$0] }
    }

    /// Complex X_k of a real signal at `bins`.
    func spectrum(of real: [Float], bins: [Int]) -> [(re: Float, im: Float)] {
        precondition(real.count == size)
        var re = [Float](repeating: 0, count: size)
        var im = [Float](repeating: 0, count: size)
        for i in 0..<size { re[bitReversed[i]] = real[i] }
        transform(&re, &im)
        return bins.map { (re[$0], im[$0]) }
    }

    private func transform(_ re: inout [Float], _ im: inout [Float]) {
        re.withUnsafeMutableBufferPointer { re in
            im.withUnsafeMutableBufferPointer { im in
                cosTable.withUnsafeBufferPointer { wr in
                    sinTable.withUnsafeBufferPointer { wi in
                        var half = 1
                        while half < size {
                            let stride = size / (2 * half)
                            var start = 0
                            while start < size {
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
    }
}
