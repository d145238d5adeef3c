/// HCI commands per second over the last `window` whole seconds: per-second buckets in a ring, so
/// recording is O(1) and the rate needs no timer. Pure; the caller passes monotonic seconds.
struct CommandRate: Sendable, Equatable {
    static let window = 10
    private var seconds = [Int64](repeating: -1, count: window + 1)
    private var counts = [Int](repeating: 0, count: window + 1)

    mutating func record(atSecond second: Int64) {
        let slot = Int(second % Int64(seconds.count))
        if seconds[slot] != second {
            seconds[slot] = second
            counts[slot] = 0
        }
        counts[slot] += 1
    }

    /// Commands a second, averaged over the `window` whole seconds before `second`.
    func perSecond(atSecond second: Int64) -> Double {
        var total = 0
        for (slot, bucket) in seconds.enumerated() where bucket >= second - Int64(Self.window) && bucket < second {
            total += counts[slot]
        }
        return Double(total) / Double(Self.window)
    }
}
