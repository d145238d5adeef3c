/// Which subscribers an event's topic reaches. Clients are grouped by filter, so every distinct
/// filter is matched once per topic instead of once per client; and the answer is kept per topic
/// until the subscriptions change, so a steady stream of events on a few topics costs one
/// dictionary lookup per event. (Every client subscribing `found/#` is the common case: one match.)
///
/// A subscriber reached by several of its filters is listed once, as MQTT delivers one copy.
struct SubscriptionIndex<Subscriber: Hashable> {
    private var byFilter: [TopicFilter: [Subscriber]] = [:]
    private var byTopic: [String: [Subscriber]] = [:]

    /// Topics remembered at most; past it the cache starts over (topics carry namespaces and types,
    /// which a client may invent, so the set of topics is not bounded by the gateway). 512, not the
    /// found set's 4,096: a flood of distinct beacons gives every entry a found and a lost topic, and
    /// ~200 bytes each stayed cached after the entries expired (docs/footprint.md); the few topics a
    /// steady stream of events repeats fit either way.
    static var topicCacheLimit: Int { 512 }

    /// Number of distinct filters.
    var filterCount: Int { byFilter.count }

    mutating func subscribe(_ subscriber: Subscriber, to filter: TopicFilter) {
        if byFilter[filter, default: []].contains(subscriber) { return }
        byFilter[filter, default: []].append(subscriber)
        byTopic.removeAll(keepingCapacity: true)
    }

    mutating func unsubscribe(_ subscriber: Subscriber, from filter: TopicFilter) {
        guard var subscribers = byFilter[filter], let index = subscribers.firstIndex(of: subscriber) else { return }
        subscribers.remove(at: index)
        byFilter[filter] = subscribers.isEmpty ? nil : subscribers
        byTopic.removeAll(keepingCapacity: true)
    }

    /// Everything a departing subscriber had, given its filters.
    mutating func remove(_ subscriber: Subscriber, filters: some Sequence<TopicFilter>) {
        for filter in filters { unsubscribe(subscriber, from: filter) }
    }

    /// Every subscriber with at least one filter matching `topic`, each once.
    mutating func subscribers(of topic: String) -> [Subscriber] {
        // Without subscriptions there is nothing to match, nor to remember: a flood of distinct
        // found and lost topics would otherwise fill the cache for nobody.
        if byFilter.isEmpty { return [] }
        if let known = byTopic[topic] { return known }
        var found: [Subscriber] = []
        var matchedFilters = 0
        for (filter, subscribers) in byFilter where filter.matches(topic) {
            found += subscribers
            matchedFilters += 1
        }
        if matchedFilters > 1 {
            var seen = Set<Subscriber>()
            found = found.filter { seen.insert($0).inserted }
        }
        if byTopic.count >= Self.topicCacheLimit { byTopic.removeAll(keepingCapacity: true) }
        byTopic[topic] = found
        return found
    }
}
