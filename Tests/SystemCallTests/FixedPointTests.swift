import SystemCall
import Testing

/// `FixedPoint` must write what `String(cFormat: "%.Nf")` (glibc) writes, byte for byte: the events'
/// `rssi_avg` and `distance_m` were written by it.
@Suite struct FixedPointTests {
    static func same(_ value: Double, _ digits: Int) -> Bool {
        FixedPoint.string(value, digits: digits) == String(cFormat: "%.\(digits)f", value)
    }

    @Test(arguments: 0...3)
    func roundsHalfToEvenOnTheExactBinaryValue(_ digits: Int) {
        // Ties that are exact in binary (0.125, 2.5), near-ties that are not (0.35 is 0.34999…),
        // negative zero, values rounding to a negative zero, subnormals, and the fallback's range.
        let edges: [Double] = [0, -0.0, 0.5, 1.5, 2.5, -2.5, 0.125, 0.375, -0.125, 0.35, 0.45, 1.005, 2.675, 0.0005,
                               0.0015, -0.01, -0.0004, 9.995, 99.95, 999.9995, -63.05, -66.25, 1e-300, -1e-300,
                               .leastNonzeroMagnitude, .leastNormalMagnitude, 0x1p50 - 1, 0x1p50, 1e20,
                               .greatestFiniteMagnitude, .infinity, -.infinity, .nan]
        for value in edges { #expect(Self.same(value, digits), "\(value)") }
    }

    @Test(arguments: 0...3)
    func agreesWithPrintfOnRandomValues(_ digits: Int) {
        var generator = SystemRandomNumberGenerator()
        var differing: [Double] = []
        for k in 0..<20_000 {
            // RSSIs, distances, and exact multiples of 1/2^n (the ties).
            let value: Double = switch k % 4 {
            case 0: Double.random(in: -120...20, using: &generator)
            case 1: Double.random(in: 0...100_000, using: &generator)
            case 2: Double(Int.random(in: -100_000...100_000, using: &generator)) / Double(1 << Int.random(in: 0...12, using: &generator))
            default: Double(bitPattern: UInt64.random(in: 0...UInt64.max, using: &generator))
            }
            if !Self.same(value, digits) { differing.append(value) }
        }
        #expect(differing.isEmpty, "\(differing.prefix(5))")
    }
}
