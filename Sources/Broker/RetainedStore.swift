import NearbyProtocol
/// Retained events by the manager's key, replayed in the order they were first set.
///
/// Kept compactly: a found set at its limit (4,096 by default) has one retained event per entry, so
/// each event is one string, its key, then its topic (only where the key does not begin with it: a
/// found event's key is its topic with `#` and a hash after it, a `$SYS` event's key is its topic),
/// then its JSON: one allocation per event, not three. The table is rebuilt smaller once most of it
/// was cleared (docs/footprint.md).
struct RetainedStore {
    private struct Kept: Hashable {
        var text: String
        var keyBytes: UInt32
        /// Where the topic is in `text`: at 0 (the key's start) or right after the key.
        var topicStart: UInt32
        var topicBytes: UInt32
        var sequence: UInt32

        init(key: String, topic: String, json: String, sequence: UInt32) {
            let inKey = key.utf8.starts(with: topic.utf8)
            var text = ""
            text.reserveCapacity(key.utf8.count + (inKey ? 0 : topic.utf8.count) + json.utf8.count)
            text += key
            if !inKey { text += topic }
            text += json
            self.text = text
            (keyBytes, topicBytes) = (UInt32(key.utf8.count), UInt32(topic.utf8.count))
            topicStart = inKey ? 0 : keyBytes
            self.sequence = sequence
        }

        /// A value to look `key` up by (equal and hashed by the key alone).
        init(probe key: String) {
            (text, keyBytes, topicStart, topicBytes, sequence) = (key, UInt32(key.utf8.count), 0, 0, 0)
        }

        private var key: Substring.UTF8View { text.utf8.prefix(Int(keyBytes)) }
        var topic: String {
            let utf8 = text.utf8.dropFirst(Int(topicStart)).prefix(Int(topicBytes))
            return String(Substring(utf8))
        }
        var json: String { String(Substring(text.utf8.dropFirst(Int(max(keyBytes, topicStart + topicBytes))))) }

        static func == (a: Kept, b: Kept) -> Bool { a.key.elementsEqual(b.key) }
        func hash(into hasher: inout Hasher) {
            hasher.combine(keyBytes)
            for byte in key { hasher.combine(byte) }
        }
    }

    private var entries = Set<Kept>()
    private var nextSequence: UInt32 = 0

    var count: Int { entries.count }

    /// Heap bytes the store takes (`HeapBytes`): its table and each event's string.
    var allocatedBytes: Int {
        HeapBytes.table(capacity: entries.capacity, keyStride: MemoryLayout<Kept>.stride)
            + entries.reduce(0) { $0 + HeapBytes.string($1.text) }
    }

    /// Applies `event`; returns true when clearing left the table sparse and it was rebuilt smaller:
    /// a large release of memory, after which the owner may hand free pages back to the kernel.
    @discardableResult
    mutating func apply(_ event: BrokerEvent) -> Bool {
        switch event.retain {
        case .none: return false
        case .set(let key):
            let sequence: UInt32
            if let old = entries.remove(Kept(probe: key)) {
                sequence = old.sequence
            } else {
                if nextSequence == .max { renumber() }
                sequence = nextSequence
                nextSequence += 1
            }
            entries.insert(Kept(key: key, topic: event.topic, json: event.json, sequence: sequence))
            return false
        case .clear(let key):
            guard entries.remove(Kept(probe: key)) != nil else { return false }
            return shrinkIfSparse()
        }
    }

    /// Sequences are 32 bits (4 bytes less in each of the table's slots): after 4 billion events set,
    /// they are numbered again from 0, in the same order.
    private mutating func renumber() {
        var renumbered = Set<Kept>(minimumCapacity: entries.count)
        for (k, var kept) in entries.sorted(by: { $0.sequence < $1.sequence }).enumerated() {
            kept.sequence = UInt32(k)
            renumbered.insert(kept)
        }
        entries = renumbered
        nextSequence = UInt32(entries.count)
    }

    /// A set keeps its capacity when emptied: rebuilt once a quarter of it is used.
    private mutating func shrinkIfSparse() -> Bool {
        guard entries.capacity > 4 * max(entries.count, 64) else { return false }
        var shrunk = Set<Kept>(minimumCapacity: entries.count)
        for kept in entries { shrunk.insert(kept) }
        entries = shrunk
        return true
    }

    func matching(_ filter: TopicFilter) -> [BrokerEvent] {
        entries.compactMap { kept in
            let topic = kept.topic
            return filter.matches(topic) ? (kept.sequence, BrokerEvent(topic: topic, json: kept.json)) : nil
        }.sorted { $0.0 < $1.0 }.map(\.1)
    }
}
