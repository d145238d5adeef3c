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
        return transformed(real) { re, im in range.map { re[$0] * re[$0] + im[$0] * im[$0] } }
    }

    /// Complex X_k of a real signal at `bins`.
    func spectrum(of real: [Float], bins: [Int]) -> [(re: Float, im: Float)] {
        precondition(real.count == size)
        return transformed(real) { re, im in bins.map { (re[$0], im[$0]) } }
    }

    /// The transform of `real` in stack buffers (no array per frame), handed to `read`.
    private func transformed<T>(_ real: [Float], _ read: (UnsafeMutableBufferPointer<Float>, UnsafeMutableBufferPointer<Float>) -> T) -> T {
        withUnsafeTemporaryAllocation(of: Float.self, capacity: 2 * size) { work in
            let re = UnsafeMutableBufferPointer(rebasing: work[0..<size])
            let im = UnsafeMutableBufferPointer(rebasing: work[size..<(2 * size)])
            im.initialize(repeating: 0)
            bitReversed.withUnsafeBufferPointer { rev in
                for i in 0..<size { re[rev[i]] = real[i] }
            }
            transform(re, im)
            return read(re, im)
        }
    }

    private func transform(_ re: UnsafeMutableBufferPointer<Float>, _ im: UnsafeMutableBufferPointer<Float>) {
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
