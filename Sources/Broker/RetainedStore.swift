import NearbyProtocol
/// Retained events by the manager's key, replayed in the order they were first set.
///
/// Kept compactly: a found set at its limit (4,096 by default) has one retained event per entry, so
/// only the topic and the JSON are held (the event's retain key is the dictionary's key already),
/// and the table is rebuilt smaller once most of it was cleared (docs/footprint.md).
struct RetainedStore {
    private struct Kept {
        var sequence: UInt64
        /// The topic, or empty when it is the first `topicBytes` of the key: a found event's key is its
        /// topic with `#` and a hash after it, and a `$SYS` event's key is its topic, so the topic
        /// costs no string of its own (an empty String allocates nothing; an optional one would make
        /// every slot of the table larger).
        var topic: String
        var topicBytes: Int
        var json: String

        func topic(key: String) -> String { topic.isEmpty ? String(Substring(key.utf8.prefix(topicBytes))) : topic }
    }

    private var entries: [String: Kept] = [:]
    private var nextSequence: UInt64 = 0

    var count: Int { entries.count }

    /// Applies `event`; returns true when clearing left the table sparse and it was rebuilt smaller:
    /// a large release of memory, after which the owner may hand free pages back to the kernel.
    @discardableResult
    mutating func apply(_ event: BrokerEvent) -> Bool {
        switch event.retain {
        case .none: return false
        case .set(let key):
            let sequence = entries[key]?.sequence ?? nextSequence
            if entries[key] == nil { nextSequence += 1 }
            let inKey = key.utf8.starts(with: event.topic.utf8)
            entries[key] = Kept(sequence: sequence, topic: inKey ? "" : event.topic, topicBytes: event.topic.utf8.count, json: event.json)
            return false
        case .clear(let key):
            guard entries.removeValue(forKey: key) != nil else { return false }
            return shrinkIfSparse()
        }
    }

    /// A dictionary keeps its capacity when emptied: rebuilt once a quarter of it is used.
    private mutating func shrinkIfSparse() -> Bool {
        guard entries.capacity > 4 * max(entries.count, 64) else { return false }
        var shrunk = [String: Kept](minimumCapacity: entries.count)
        for (key, kept) in entries { shrunk[key] = kept }
        entries = shrunk
        return true
    }

    func matching(_ filter: TopicFilter) -> [BrokerEvent] {
        entries.compactMap { key, kept in
            let topic = kept.topic(key: key)
            return filter.matches(topic) ? (kept.sequence, BrokerEvent(topic: topic, json: kept.json)) : nil
        }.sorted { $0.0 < $1.0 }.map(\.1)
    }
}
