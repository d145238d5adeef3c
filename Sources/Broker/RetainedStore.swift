import NearbyProtocol
/// Retained events by the manager's key, replayed in the order they were first set.
struct RetainedStore {
    private var entries: [String: (sequence: UInt64, event: BrokerEvent)] = [:]
    private var nextSequence: UInt64 = 0

    var count: Int { entries.count }

    mutating func apply(_ event: BrokerEvent) {
        switch event.retain {
        case .none: break
        case .set(let key):
            let sequence = entries[key]?.sequence ?? nextSequence
            if entries[key] == nil { nextSequence += 1 }
            entries[key] = (sequence, event)
        case .clear(let key):
            entries[key] = nil
        }
    }

    func matching(_ filter: TopicFilter) -> [BrokerEvent] {
        entries.values.filter { filter.matches($0.event.topic) }.sorted { $0.sequence < $1.sequence }.map(\.event)
    }
}
