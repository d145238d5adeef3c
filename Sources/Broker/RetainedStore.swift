import NearbyProtocol
/// Retained events by the manager's key, replayed in the order they were first set.
///
/// Kept compactly: a found set at its limit (4,096 by default) has one retained event per entry, so
/// each event is one array: its key, then its topic (only where the key does not begin with it: a
/// found event's key is its topic with `#` and a hash after it, a `$SYS` event's key is its topic),
/// then its JSON, in `RetainedCodec`'s lossless form (about a third of the text for a found event).
/// The table is rebuilt smaller once most of it was cleared (docs/footprint-found.md).
struct RetainedStore {
    /// 16 bytes in the table's slot (32 with the lengths as fields: docs/footprint-found.md).
    private struct Kept: Hashable {
        /// Key, topic and JSON, encoded one after the other; then the key's and the topic's decoded
        /// lengths and where the topic is (`Trailer`), read only to replay.
        var text: [UInt8]
        /// Where the encoded key ends in `text` (a key always encodes to the same bytes).
        var keyEnd: UInt32
        var sequence: UInt32

        init(key: String, topic: String, json: String, sequence: UInt32) {
            let inKey = Self.starts(key, with: topic)
            let segments = inKey ? [Substring(key).utf8, Substring(json).utf8]
                                 : [Substring(key).utf8, Substring(topic).utf8, Substring(json).utf8]
            let (bytes, ends) = RetainedCodec.encode(segments, reserving: Trailer.maximumBytes)
            text = bytes
            Trailer(keyBytes: key.utf8.count, topicBytes: topic.utf8.count, topicAfterKey: !inKey).append(to: &text)
            keyEnd = UInt32(ends[0])
            self.sequence = sequence
        }

        /// `text` begins with `prefix`, byte for byte (compared at once when both are contiguous).
        private static func starts(_ text: String, with prefix: String) -> Bool {
            let fast = text.utf8.withContiguousStorageIfAvailable { text in
                prefix.utf8.withContiguousStorageIfAvailable { prefix in
                    prefix.count <= text.count && UnsafeBufferPointer(rebasing: text[..<prefix.count]).elementsEqual(prefix)
                }
            }
            return (fast ?? nil) ?? text.utf8.starts(with: prefix.utf8)
        }

        /// A value to look `key` up by (equal and hashed by the key alone).
        init(probe key: String) {
            text = RetainedCodec.encode([Substring(key).utf8]).bytes
            (keyEnd, sequence) = (UInt32(text.count), 0)
        }

        private var key: ArraySlice<UInt8> { text[..<Int(keyEnd)] }

        /// The topic and the JSON, decoded.
        var event: (topic: String, json: String) {
            let (trailer, encodedEnd) = Trailer.read(text)
            let decoded = RetainedCodec.decode(text[..<encodedEnd])
            let topicStart = trailer.topicAfterKey ? trailer.keyBytes : 0
            let topic = decoded[topicStart..<(topicStart + trailer.topicBytes)]
            let json = decoded[max(trailer.keyBytes, topicStart + trailer.topicBytes)...]
            return (String(decoding: topic, as: UTF8.self), String(decoding: json, as: UTF8.self))
        }

        static func == (a: Kept, b: Kept) -> Bool { a.key.elementsEqual(b.key) }
        func hash(into hasher: inout Hasher) {
            key.withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }

    /// The lengths an event's text ends with: LEB128 numbers, then their byte count.
    private struct Trailer {
        var keyBytes: Int
        var topicBytes: Int
        var topicAfterKey: Bool
        /// Two numbers below 2^28 and the count (longer ones make the array grow once).
        static let maximumBytes = 9

        func append(to text: inout [UInt8]) {
            let start = text.count
            for var value in [keyBytes, topicBytes << 1 | (topicAfterKey ? 1 : 0)] {
                repeat {
                    text.append(UInt8(value & 0x7F) | (value > 0x7F ? 0x80 : 0))
                    value >>= 7
                } while value > 0
            }
            text.append(UInt8(text.count - start))
        }

        /// The trailer of `text` and where the encoded text before it ends.
        static func read(_ text: [UInt8]) -> (Trailer, Int) {
            let end = text.count - 1 - Int(text[text.count - 1])
            var values: [Int] = []
            var (value, shift) = (0, 0)
            for byte in text[end..<(text.count - 1)] {
                value |= Int(byte & 0x7F) << shift
                shift += 7
                if byte & 0x80 == 0 {
                    values.append(value)
                    (value, shift) = (0, 0)
                }
            }
            return (Trailer(keyBytes: values[0], topicBytes: values[1] >> 1, topicAfterKey: values[1] & 1 == 1), end)
        }
    }

    private var entries = Set<Kept>()
    private var nextSequence: UInt32 = 0

    var count: Int { entries.count }

    /// Heap bytes the store takes (`HeapBytes`): its table and each event's array.
    var allocatedBytes: Int {
        HeapBytes.table(capacity: entries.capacity, keyStride: MemoryLayout<Kept>.stride)
            + entries.reduce(0) { $0 + HeapBytes.array(capacity: $1.text.capacity, of: UInt8.self) }
    }

    /// Applies `event`; returns true when clearing left the table sparse and it was rebuilt smaller:
    /// a large release of memory, after which the owner may hand free pages back to the kernel.
    @discardableResult
    mutating func apply(_ event: BrokerEvent) -> Bool {
        switch event.retain {
        case .none: return false
        case .set(let key):
            // The new copy is its own probe (equal and hashed by the key alone): one encoding a set.
            var kept = Kept(key: key, topic: event.topic, json: event.json, sequence: 0)
            if let old = entries.remove(kept) {
                kept.sequence = old.sequence
            } else {
                if nextSequence == .max { renumber() }
                kept.sequence = nextSequence
                nextSequence += 1
            }
            entries.insert(kept)
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
        matching { filter.matches($0) }
    }

    /// The events whose topic `includes` says, in the order first set.
    func matching(_ includes: (String) -> Bool) -> [BrokerEvent] {
        entries.compactMap { kept in
            let event = kept.event
            return includes(event.topic) ? (kept.sequence, BrokerEvent(topic: event.topic, json: event.json)) : nil
        }.sorted { $0.0 < $1.0 }.map(\.1)
    }
}
