/// One event for socket clients: `<topic> <json>` on the wire.
public struct BrokerEvent: Sendable, Equatable {
    /// Whether the broker keeps the event to replay it to later subscribers.
    public enum Retain: Sendable, Equatable, Hashable {
        /// Deliver only.
        case none
        /// Deliver and keep under `key`, replacing what was kept there (several found messages may
        /// share one topic, so the key is the caller's, not the topic).
        case set(String)
        /// Deliver and forget what was kept under `key` (a `lost` event clears its `found`).
        case clear(String)
    }

    public var topic: String
    /// A one-line JSON object; the broker adds `"retained":true|false` as its last member.
    public var json: String
    public var retain: Retain
    /// For a `signal/…` event, the retain key of its entry's `found` event (the MQTT bridge's Home
    /// Assistant states follow the entry by it); nil otherwise.
    public var entry: String?

    public init(topic: String, json: String, retain: Retain = .none, entry: String? = nil) {
        self.topic = topic
        self.json = json
        self.retain = retain
        self.entry = entry
    }
}
