import NearbyProtocol

/// What the bridge keeps of the retained events the socket broker holds (`MQTTOutbox` with
/// `retainedElsewhere`): which keys are set, and how many set keys each topic has, both by hash.
/// At a `lost` the bridge must know whether its `found` topic falls back to another key's event
/// (several messages of one namespace and type share a topic) or is emptied; the event itself is
/// then read from the broker. Two keys (or topics) with the same 64-bit hash would be counted as
/// one: with a few thousand keys, a chance of about 10^-12 per run, and the cost a topic emptied
/// while another message holds it until that one's next event.
struct KeysElsewhere {
    private var keys = Set<Int>()
    private var topics: [Int: UInt32] = [:]

    var count: Int { keys.count }

    /// Heap bytes (`HeapBytes`): the two tables.
    var allocatedBytes: Int {
        HeapBytes.table(capacity: keys.capacity, keyStride: MemoryLayout<Int>.stride)
            + HeapBytes.table(capacity: topics.capacity, keyStride: MemoryLayout<Int>.stride, valueStride: MemoryLayout<UInt32>.stride)
    }

    mutating func set(key: String, topic: String) {
        if keys.insert(key.hashValue).inserted { topics[topic.hashValue, default: 0] += 1 }
    }

    /// nil when `key` was not set; otherwise whether another set key still has `topic`.
    mutating func clear(key: String, topic: String) -> Bool? {
        guard keys.remove(key.hashValue) != nil else { return nil }
        let hash = topic.hashValue
        let left = (topics[hash] ?? 1) - 1
        topics[hash] = left == 0 ? nil : left
        return left > 0
    }

    /// Tables keep their capacity when emptied: rebuilt once a quarter of them is used.
    mutating func shrinkIfSparse() -> Bool {
        guard keys.capacity > 4 * max(keys.count, 64) else { return false }
        var fewer = Set<Int>(minimumCapacity: keys.count)   // `Set(keys)` would keep the same storage
        for key in keys { fewer.insert(key) }
        keys = fewer
        var smaller = [Int: UInt32](minimumCapacity: topics.count)
        for (topic, count) in topics { smaller[topic] = count }
        topics = smaller
        return true
    }
}
