/// Messages already authenticated, by message id and medium (the chunks, so the tags, differ per medium:
/// a message heard on both keeps one entry for each), with the exact bytes of their frames (ciphertext and
/// chunk tags), so every later chunk of the same frame is a sighting that costs a dictionary lookup and a
/// byte comparison instead of a tag check, decryption and reassembly. Bounded: the least recently seen
/// entry goes when it is full. Only exact bytes of authenticated frames hit, so the cache never accepts
/// anything the HMACs would not. Near a rotation a message may also be entered under a neighbour
/// epoch's key (`Reassembler.copyVerified`): the frames its sender sends once it rotates.
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

    /// Enters `message` as the frames it has on `medium` under `key` (what its sender sends in that epoch):
    /// id, ciphertext and chunk tags computed from its plaintext `body` as the sender does. `id`, when
    /// given, is the one already checked. A copy (`copy`) keeps an entry already there (it is fresher)
    /// and, unless `evicting`, only takes free room; returns false when it found none.
    @discardableResult
    mutating func enter(_ message: Message, body: [UInt8], id: UInt32? = nil, key: EpochKey, medium: Medium,
                        now: ContinuousClock.Instant, copy: Bool = false, evicting: Bool = true) -> Bool {
        let id = id ?? body.withUnsafeBytes { key.messageID(body: $0) }
        let cacheKey = Key(id: id, medium: medium)
        if copy, entries[cacheKey] != nil { return true }
        if entries[cacheKey] == nil, entries.count >= capacity {
            guard evicting, let oldest = entries.min(by: { $0.value.lastUsed < $1.value.lastUsed })?.key else { return false }
            entries[oldest] = nil
        }
        var ciphertext = body
        ciphertext.withUnsafeMutableBufferPointer { key.applyKeystream($0, id: id, offset: 0) }
        let capacity = medium.chunkCapacity, count = (ciphertext.count + capacity - 1) / capacity
        let tags = (0..<count).map { index in
            ciphertext[(index * capacity)..<min(ciphertext.count, (index + 1) * capacity)].withUnsafeBytes {
                key.chunkTag(sequence: UInt8(index << 4 | (count - 1)), id: id, ciphertext: $0)
            }
        }
        entries[cacheKey] = Entry(ciphertext: ciphertext, tags: tags, message: message, epoch: key.epoch, lastUsed: now)
        return true
    }

    /// Forgets entries authenticated under an epoch no longer accepted.
    mutating func removeAll(keepingEpochs accepted: (UInt32) -> Bool) {
        entries = entries.filter { accepted($0.value.epoch) }
    }
}
