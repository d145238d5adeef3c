import NearbyProtocol
/// One MQTT message as the bridge sends it.
struct MQTTMessage: Sendable, Equatable {
    var topic: String
    var payload: String
    var retain: Bool
    /// Set on a retained message whose payload is read when it is sent: the latest retained event
    /// on this socket topic in the `RetainedEventSource` (empty when none is left).
    var latestOf: String? = nil
}

/// What the bridge sends for the socket's events, decided without I/O (unit-tested): each event goes
/// to `<prefix>/<topic>` with the same JSON; retained events are kept per the manager's key to be
/// sent again after a reconnect; a bounded queue holds what the broker has not taken yet.
///
/// `retainedElsewhere`: the manager's retained events (`add`) are kept by the socket broker, which
/// the bridge asks at a reconnect (`RetainedEventSource`), so they are not copied here; only the
/// bridge's own (`addOwn`: Home Assistant's states) are. What a clear needs is kept instead: which
/// keys are set and how many keys each topic has (`KeysElsewhere`), a few dozen bytes per entry.
struct MQTTOutbox {
    let prefix: String
    let limit: Int
    let retainedElsewhere: Bool
    private var queue: [MQTTMessage] = []
    private var head = 0
    /// Messages dropped (oldest first) because the queue was full.
    private(set) var dropped = 0
    /// By the manager's key: when first and last set (order of replay, and which one a topic shows),
    /// and its topic and JSON in `RetainedCodec`'s form (a found set at its limit has one per entry).
    private var retained: [String: Retained] = [:]
    private var nextSequence: UInt64 = 0
    /// Whether the retained copies' table was rebuilt smaller since `takeShrunk` last asked.
    private var shrunk = false

    private var elsewhere = KeysElsewhere()

    init(prefix: String, limit: Int, retainedElsewhere: Bool = false) {
        self.prefix = prefix
        self.limit = limit
        self.retainedElsewhere = retainedElsewhere
    }

    var queued: Int { queue.count - head }
    /// Slots the queue keeps after `takeAll`, so steady traffic does not allocate at every flush.
    static let keptQueueCapacity = 256
    /// Slots allocated now, for tests of what an emptied queue keeps.
    var queueCapacity: Int { queue.capacity }

    /// True once after a large expiry rebuilt the retained table smaller: the owner may then hand
    /// free pages back to the kernel (on its own thread).
    mutating func takeShrunk() -> Bool {
        defer { shrunk = false }
        return shrunk
    }

    /// A dictionary keeps its capacity when emptied: rebuilt once a quarter of it is used.
    private mutating func shrinkIfSparse() {
        if elsewhere.shrinkIfSparse() { shrunk = true }
        guard retained.capacity > 4 * max(retained.count, 64) else { return }
        var smaller = [String: Retained](minimumCapacity: retained.count)
        for (key, kept) in retained { smaller[key] = kept }
        retained = smaller
        shrunk = true
    }

    private struct Retained {
        var first: UInt64
        var last: UInt64
        /// Where the encoded topic ends in `packed` (a topic always encodes to the same bytes).
        var topicEnd: Int
        var packed: [UInt8]

        init(first: UInt64, last: UInt64, topic: String, json: String) {
            let (bytes, ends) = RetainedCodec.encode([Substring(topic).utf8, Substring(json).utf8])
            (self.first, self.last, topicEnd, packed) = (first, last, ends[0], bytes)
        }

        func has(topic encoded: [UInt8]) -> Bool { packed[..<topicEnd].elementsEqual(encoded) }

        var event: (topic: String, json: String) {
            let text = RetainedCodec.decode(packed[...])
            let topicBytes = RetainedCodec.decode(packed[..<topicEnd]).count
            return (String(decoding: text[..<topicBytes], as: UTF8.self), String(decoding: text[topicBytes...], as: UTF8.self))
        }
    }

    /// Heap bytes the retained copies take (`HeapBytes`): the table, each key and its encoded event,
    /// and what is kept of the events retained elsewhere.
    var retainedBytes: Int {
        HeapBytes.table(capacity: retained.capacity, keyStride: MemoryLayout<String>.stride, valueStride: MemoryLayout<Retained>.stride)
            + retained.reduce(0) { $0 + HeapBytes.string($1.key) + HeapBytes.array(capacity: $1.value.packed.capacity, of: UInt8.self) }
            + elsewhere.allocatedBytes
    }

    /// An event of the manager's (also published to the socket broker).
    mutating func add(_ event: BrokerEvent) {
        let messages = retainedElsewhere ? messagesKeptElsewhere(for: event) : messages(for: event)
        for message in messages { enqueue(message) }
    }

    /// An event of the bridge's own (Home Assistant's states): always kept here.
    mutating func addOwn(_ event: BrokerEvent) {
        for message in messages(for: event) { enqueue(message) }
    }

    /// Everything queued, oldest first; the queue is empty afterwards, and keeps the capacity of a
    /// trickle, not of a flood's burst.
    mutating func takeAll() -> [MQTTMessage] {
        defer { queue.removeAll(keepingCapacity: queue.capacity <= Self.keptQueueCapacity); head = 0 }
        return Array(queue[head...])
    }

    /// The retained state now, with the events the source keeps (`retainedElsewhere`; in the order
    /// first set, nil when it could not answer) first, then the copies kept here: per topic, the latest.
    func retainedState(with kept: [BrokerEvent]?) -> [MQTTMessage] {
        var latest: [String: Int] = [:]
        var state: [MQTTMessage] = []
        for event in kept ?? [] {
            let message = MQTTMessage(topic: topic(event.topic), payload: event.json, retain: true)
            if let at = latest[event.topic] { state[at] = message } else { latest[event.topic] = state.count; state.append(message) }
        }
        return state + retainedState
    }

    /// The retained copies kept here: per topic, the latest event kept for it (in the order first set).
    var retainedState: [MQTTMessage] {
        var latest: [String: (last: UInt64, json: String, first: UInt64)] = [:]
        for kept in retained.values {
            let (topic, json) = kept.event
            let entry = (first: kept.first, last: kept.last, topic: topic, json: json)
            let current = latest[entry.topic]
            let first = min(current?.first ?? entry.first, entry.first)
            if let current, current.last > entry.last {
                latest[entry.topic]!.first = first
            } else {
                latest[entry.topic] = (entry.last, entry.json, first)
            }
        }
        return latest.sorted { $0.value.first < $1.value.first }.map { MQTTMessage(topic: topic($0.key), payload: $0.value.json, retain: true) }
    }

    /// The retained `state` less the topics whose last retained message in `sent` already carried
    /// their current payload (the queue flushed at a connect holds the states set since the last one).
    static func replay(_ state: [MQTTMessage], after sent: [MQTTMessage]) -> [MQTTMessage] {
        var last: [String: String] = [:]
        for message in sent where message.retain { last[message.topic] = message.payload }
        return state.filter { last[$0.topic] != $0.payload }
    }

    mutating func enqueue(_ message: MQTTMessage) {
        if queued >= limit {
            head += 1
            dropped += 1
            if head > 1024, head * 2 > queue.count { queue.removeFirst(head); head = 0 }
        }
        queue.append(message)
    }

    private func topic(_ socketTopic: String) -> String { "\(prefix)/\(socketTopic)" }

    /// The manager's rule: `lost/…` clears `found/…`; any other clear (`$SYS/error/…`) its own topic.
    static func topicCleared(by eventTopic: String) -> String {
        eventTopic.hasPrefix("lost/") ? "found/" + eventTopic.dropFirst("lost/".count) : eventTopic
    }

    /// `messages(for:)` without a copy: the socket broker has the events, this outbox only the keys.
    private mutating func messagesKeptElsewhere(for event: BrokerEvent) -> [MQTTMessage] {
        switch event.retain {
        case .none:
            return [MQTTMessage(topic: topic(event.topic), payload: event.json, retain: false)]
        case .set(let key):
            elsewhere.set(key: key, topic: event.topic)
            return [MQTTMessage(topic: topic(event.topic), payload: event.json, retain: true)]
        case .clear(let key):
            let cleared = Self.topicCleared(by: event.topic)
            guard let others = elsewhere.clear(key: key, topic: cleared) else {
                return [MQTTMessage(topic: topic(event.topic), payload: event.json, retain: event.topic.hasPrefix("$SYS/"))]
            }
            shrinkIfSparse()
            if cleared == event.topic { return [MQTTMessage(topic: topic(event.topic), payload: event.json, retain: true)] }
            // Another key still has this topic: its event is read from the source when sent.
            return [MQTTMessage(topic: topic(event.topic), payload: event.json, retain: false),
                    MQTTMessage(topic: topic(cleared), payload: "", retain: true, latestOf: others ? cleared : nil)]
        }
    }

    private mutating func messages(for event: BrokerEvent) -> [MQTTMessage] {
        switch event.retain {
        case .none:
            return [MQTTMessage(topic: topic(event.topic), payload: event.json, retain: false)]
        case .set(let key):
            retained[key] = Retained(first: retained[key]?.first ?? nextSequence, last: nextSequence, topic: event.topic, json: event.json)
            nextSequence += 1
            return [MQTTMessage(topic: topic(event.topic), payload: event.json, retain: true)]
        case .clear(let key):
            guard let removed = retained.removeValue(forKey: key) else {
                return [MQTTMessage(topic: topic(event.topic), payload: event.json, retain: event.topic.hasPrefix("$SYS/"))]
            }
            shrinkIfSparse()
            let removedTopic = removed.event.topic
            if removedTopic == event.topic {
                // `$SYS/error/…` cleared: the clearing event itself is the state now.
                return [MQTTMessage(topic: topic(event.topic), payload: event.json, retain: true)]
            }
            // `lost/…` clears `found/…`: the broker keeps one message per topic, so the topic goes
            // back to another message still found under it, or is emptied (an empty retained
            // payload deletes it).
            let encoded = RetainedCodec.encode([Substring(removedTopic).utf8]).bytes
            let other = retained.values.filter { $0.has(topic: encoded) }.max { $0.last < $1.last }
            return [MQTTMessage(topic: topic(event.topic), payload: event.json, retain: false),
                    MQTTMessage(topic: topic(removedTopic), payload: other?.event.json ?? "", retain: true)]
        }
    }
}
