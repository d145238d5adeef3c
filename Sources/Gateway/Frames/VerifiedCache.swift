/// Messages already authenticated, by message id, so every later chunk of the same frame is a sighting
/// that costs a dictionary lookup and a byte comparison instead of a reassembly and three HMACs.
/// Bounded: the least recently seen entry goes when it is full. Only exact bytes of an authenticated
/// body hit, so the cache never accepts anything the HMAC would not.
struct VerifiedCache: Sendable {
    struct Entry: Sendable {
        var body: [UInt8]
        var message: Message
        var epoch: UInt32
        var lastUsed: ContinuousClock.Instant
    }

    let capacity: Int
    private(set) var entries: [UInt64: Entry] = [:]

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        entries.reserveCapacity(self.capacity)
    }

    /// The message if chunk `chunkIndex` of `lastIndex` under `id` is exactly a chunk of a verified body.
    mutating func lookup(id: UInt64, chunk chunkIndex: Int, lastIndex: Int, data: UnsafeBufferPointer<UInt8>,
                         medium: Medium, now: ContinuousClock.Instant) -> Message? {
        guard let i = entries.index(forKey: id) else { return nil }
        let matches = entries.values[i].body.withUnsafeBufferPointer { body -> Bool in
            let capacity = medium.chunkCapacity
            guard (body.count - 1) / capacity == lastIndex else { return false }
            let start = chunkIndex * capacity
            guard min(body.count, start + capacity) - start == data.count else { return false }
            for k in 0..<data.count where body[start + k] != data[k] { return false }
            return true
        }
        guard matches else { return nil }
        entries.values[i].lastUsed = now
        return entries.values[i].message
    }

    mutating func insert(id: UInt64, _ entry: Entry) {
        if entries[id] == nil, entries.count >= capacity,
           let oldest = entries.min(by: { $0.value.lastUsed < $1.value.lastUsed })?.key {
            entries[oldest] = nil
        }
        entries[id] = entry
    }

    /// Forgets entries authenticated under an epoch no longer accepted.
    mutating func removeAll(keepingEpochs accepted: (UInt32) -> Bool) {
        entries = entries.filter { accepted($0.value.epoch) }
    }
}
