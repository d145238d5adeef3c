/// Latencies in 1 µs buckets up to 100 ms, then 1 ms buckets up to 100 s (beyond: the last bucket),
/// plus the exact maximum. Percentiles report a bucket's upper edge.
struct LatencyHistogram {
    private static let fineBuckets = 100_000          // 0 ..< 100 ms by 1 µs
    private static let coarseBuckets = 100_000        // 100 ms ..< 100.1 s by 1 ms
    private(set) var buckets = [Int](repeating: 0, count: fineBuckets + coarseBuckets)
    private(set) var count = 0
    private(set) var maxNanoseconds: UInt64 = 0

    @inline(__always)
    mutating func record(nanoseconds: UInt64) {
        let us = Int(nanoseconds / 1000)
        let index = us < Self.fineBuckets ? us : min(Self.fineBuckets + (us - Self.fineBuckets) / 1000, buckets.count - 1)
        buckets[index] += 1
        count += 1
        if nanoseconds > maxNanoseconds { maxNanoseconds = nanoseconds }
    }

    /// The latency (µs) below which `fraction` of the samples lie.
    func percentileMicroseconds(_ fraction: Double) -> Double {
        guard count > 0 else { return 0 }
        let rank = Int((Double(count) * fraction).rounded(.up))
        var seen = 0
        for (i, n) in buckets.enumerated() {
            seen += n
            if seen >= rank {
                return i < Self.fineBuckets ? Double(i + 1) : Double(Self.fineBuckets + (i - Self.fineBuckets + 1) * 1000)
            }
        }
        return Double(maxNanoseconds) / 1000
    }
}
