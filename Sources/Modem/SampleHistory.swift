/// The most recent `capacity` samples of a stream, addressed by their absolute index since the
/// stream began, so that decoding can look back at a transmission once its end has arrived.
struct SampleHistory: Sendable {
    let capacity: Int
    private var buffer: [Float]
    /// Samples received since the start.
    private(set) var total = 0

    init(capacity: Int) {
        self.capacity = capacity
        buffer = [Float](repeating: 0, count: capacity)
    }

    /// Index of the oldest sample still held.
    var oldest: Int { max(0, total - capacity) }

    mutating func append(_ samples: some Collection<Float>) {
        for s in samples {
            buffer[total % capacity] = s
            total += 1
        }
    }

    /// Samples [start, start + count), or nil when part of it is gone or has not arrived yet.
    func slice(from start: Int, count: Int) -> [Float]? {
        guard start >= oldest, start + count <= total, count >= 0 else { return nil }
        var out = [Float](repeating: 0, count: count)
        var pos = start % capacity
        for i in 0..<count {
            out[i] = buffer[pos]
            pos += 1
            if pos == capacity { pos = 0 }
        }
        return out
    }
}
