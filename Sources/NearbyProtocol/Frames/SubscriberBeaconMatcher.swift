/// Answers "which of my scan-mode publications does this subscriber beacon ask for?".
///
/// A broadcast subscription transmits the keyed hash of its namespace and type (type may be "*"), under
/// the key of the epoch it is in. For each publication the matcher precomputes the hashes a matching
/// subscriber could send — (namespace, type) and (namespace, "*"), under the previous, current and next
/// epoch's keys — so matching a received beacon is one dictionary lookup. Rebuild it at every rotation
/// and whenever publications change.
public struct SubscriberBeaconMatcher<Key: Hashable & Sendable>: Sendable {
    public struct Publication: Sendable {
        public var key: Key
        public var namespace: String
        public var type: String
        public init(key: Key, namespace: String, type: String) {
            self.key = key
            self.namespace = namespace
            self.type = type
        }
    }

    public let epoch: UInt32
    private var table: [SubscriberBeaconID: [Key]] = [:]

    public init(codec: FrameCodec, epoch: UInt32, publications: [Publication]) {
        self.epoch = epoch
        let epochs = epoch > 0 ? [epoch - 1, epoch, epoch &+ 1] : [epoch, epoch &+ 1]
        let keys = epochs.map { EpochKey(apiKey: codec.apiKeyMaterial, epoch: $0) }
        for publication in publications {
            for key in keys {
                var ids = [key.subscriberBeacon(namespace: publication.namespace, type: publication.type)]
                if publication.type != "*" { ids.append(key.subscriberBeacon(namespace: publication.namespace, type: "*")) }
                for id in ids where !(table[id]?.contains(publication.key) ?? false) {
                    table[id, default: []].append(publication.key)
                }
            }
        }
    }

    /// The publications `id` asks for (empty when it asks for none of ours, or is from another api_key).
    public func matches(_ id: SubscriberBeaconID) -> [Key] {
        table[id] ?? []
    }

    /// Every beacon id that would match, for tests and debug output.
    public var knownIDs: Set<SubscriberBeaconID> { Set(table.keys) }
}
