/// Messages already authenticated, by message id and medium (the chunks, so the tags, differ per medium:
/// a message heard on both keeps one entry for each), with the exact bytes of their frames (ciphertext and
/// chunk tags), so every later chunk of the same frame is a sighting that costs a dictionary lookup and a
/// byte comparison instead of a tag check, decryption and reassembly. Bounded: the least recently seen
/// entry goes when it is full. Only exact bytes of authenticated frames hit, so the cache never accepts
/// anything the HMACs would not.
struct VerifiedCache: Sendable {
    struct Key: Hashable, Sendable {
        var id: UInt32
        var medium: Medium
    }

    struct Entry: Sendable {
        var ciphertext: [UInt8]
        var tags: [UInt16]
        var message: Message
        var epoch: UInt32
        var lastUsed: ContinuousClock.Instant
    }

    let capacity: Int
    private(set) var entries: [Key: Entry] = [:]

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        entries.reserveCapacity(self.capacity)
    }

    /// The message if chunk `chunkIndex` of `lastIndex` under `id` is exactly a frame of a verified message.
    mutating func lookup(id: UInt32, chunk chunkIndex: Int, lastIndex: Int, data: UnsafeBufferPointer<UInt8>, tag: UInt16,
                         medium: Medium, now: ContinuousClock.Instant) -> Message? {
        guard let i = entries.index(forKey: Key(id: id, medium: medium)) else { return nil }
        let entry = entries.values[i]
        guard entry.tags.count == lastIndex + 1, entry.tags[chunkIndex] == tag else { return nil }
        let matches = entry.ciphertext.withUnsafeBufferPointer { body -> Bool in
            let start = chunkIndex * medium.chunkCapacity
            guard min(body.count, start + medium.chunkCapacity) - start == data.count else { return false }
            for k in 0..<data.count where body[start + k] != data[k] { return false }
            return true
        }
        guard matches else { return nil }
        entries.values[i].lastUsed = now
        return entry.message
    }

    mutating func insert(_ key: Key, _ entry: Entry) {
        if entries[key] == nil, entries.count >= capacity,
           let oldest = entries.min(by: { $0.value.lastUsed < $1.value.lastUsed })?.key {
            entries[oldest] = nil
        }
        entries[key] = entry
    }

    /// Forgets entries authenticated under an epoch no longer accepted.
    mutating func removeAll(keepingEpochs accepted: (UInt32) -> Bool) {
        entries = entries.filter { accepted($0.value.epoch) }
    }
}
