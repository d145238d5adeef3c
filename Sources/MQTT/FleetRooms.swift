import FoundationEssentials
import NearbyProtocol

/// Rooms across gateways (docs/mqtt.md, "Rooms"), decided without I/O: this gateway's evidence from
/// its own found, signal and lost events; the other gateways' from `<fleet>/evidence/…`; the room of
/// each message by `RoomDecider`, published retained to `<fleet>/room/<message>` when it changes, with
/// a Home Assistant sensor per message. Owned by the bridge, under its lock: events arrive on the
/// manager's side, broker messages and the clock on the bridge's thread.
struct FleetRooms {
    let fleet: String
    let room: String
    /// This gateway in evidence topics: the Home Assistant node id (the client id, topic-safe).
    let gateway: String
    let discoveryPrefix: String?
    /// Own evidence is republished this often, so the others' copies never expire while we have it.
    static let refresh: Duration = .seconds(5)

    private(set) var decider: RoomDecider<String>
    /// Own found entries by the manager's retain key: the message's topic levels, RSSI, audio.
    private var own: [String: OwnEntry] = [:]
    /// The retain keys of `own` by message topic: an event costs a look at its message's entries only.
    private var ownByKey: [String: Set<String>] = [:]
    private struct OwnEntry {
        var key: String
        var rssi: Double?
        /// When an event last said the message was heard over audio: it counts as audio for the
        /// evidence's expiry after that (BLE sightings in between do not undo it).
        var audioAt: ContinuousClock.Instant?
    }
    private var nextRefresh: ContinuousClock.Instant?
    /// `decide` looks at every message: at most four times a second, however often the bridge's
    /// thread wakes for events (decisions take seconds anyway).
    private var nextDecide: ContinuousClock.Instant?
    static let decidePeriod: Duration = .milliseconds(250)
    /// Messages whose Home Assistant sensor was announced on this connection.
    private var announced: Set<String> = []
    private(set) var refused = 0

    init(settings: MQTTSettings, room: String, gateway: String, rule: RoomRule = RoomRule()) {
        self.fleet = settings.fleet
        self.room = room
        self.gateway = gateway
        self.discoveryPrefix = settings.discovery ? settings.discoveryPrefix : nil
        self.decider = RoomDecider(rule: rule)
    }

    var subscriptions: [String] { ["\(fleet)/evidence/#", "\(fleet)/room/#"] }

    func evidenceTopic(_ key: String) -> String { "\(fleet)/evidence/\(gateway)/\(key)" }
    func decisionTopic(_ key: String) -> String { "\(fleet)/room/\(key)" }

    // MARK: own evidence, from the manager's events

    /// The evidence messages `event` changes (found, signal, lost of a found entry).
    mutating func apply(_ event: BrokerEvent, now: ContinuousClock.Instant, date: Date) -> [MQTTMessage] {
        let key: String
        switch event.retain {
        case .set(let entry) where event.topic.hasPrefix("found/"):
            key = String(event.topic.dropFirst("found/".count))
            own[entry] = OwnEntry(key: key, rssi: HomeAssistant.signal(event.json).rssi, audioAt: Self.heardOverAudio(event) ? now : nil)
            ownByKey[key, default: []].insert(entry)
        case .none where event.topic.hasPrefix("signal/"):
            guard let entry = event.entry, own[entry] != nil else { return [] }
            key = own[entry]!.key
            own[entry]!.rssi = HomeAssistant.signal(event.json).rssi
            if Self.heardOverAudio(event) { own[entry]!.audioAt = now }
        case .clear(let entry) where event.topic.hasPrefix("lost/"):
            guard let removed = own.removeValue(forKey: entry) else { return [] }
            key = removed.key
            ownByKey[key]?.remove(entry)
            if ownByKey[key]?.isEmpty == true { ownByKey[key] = nil }
        default:
            return []
        }
        guard FleetEvidence.keyIsValid(key) else { return [] }
        return ownEvidence(key, now: now, date: date)
    }

    /// This gateway's evidence for one message: the best of its found entries under that topic (several
    /// messages may share one), or an empty retained payload once none is left.
    private mutating func ownEvidence(_ key: String, now: ContinuousClock.Instant, date: Date) -> [MQTTMessage] {
        let entries = (ownByKey[key] ?? []).compactMap { own[$0] }
        guard !entries.isEmpty else {
            decider.withdraw(key, gateway: gateway)
            return [MQTTMessage(topic: evidenceTopic(key), payload: "", retain: true)]
        }
        let audio = entries.contains { $0.audioAt.map { now - $0 < decider.rule.expiry } ?? false }
        let evidence = RoomEvidence(room: room, rssi: entries.compactMap(\.rssi).max(), audio: audio)
        guard decider.record(key, gateway: gateway, evidence: evidence, now: now) else { return [] }
        return [MQTTMessage(topic: evidenceTopic(key), payload: FleetEvidence.payload(gateway: gateway, evidence: evidence, at: date), retain: true)]
            + announce(key)
    }

    /// The event's `medium` is audio (our own JSON: the member is written as `,"medium":"audio"`).
    static func heardOverAudio(_ event: BrokerEvent) -> Bool { event.json.contains(",\"medium\":\"audio\"") }

    // MARK: the broker's side

    /// (Re)connected: listen, announce nothing yet, send every piece of own evidence at once.
    mutating func connected(now: ContinuousClock.Instant, date: Date) -> [MQTTMessage] {
        decider.listen(now: now)
        announced.removeAll()
        nextRefresh = now + Self.refresh
        var messages: [MQTTMessage] = []
        for key in ownByKey.keys { messages += ownEvidence(key, now: now, date: date) }
        return messages
    }

    /// A message on a fleet topic; a reason when it was refused.
    mutating func received(topic: String, payload: [UInt8], now: ContinuousClock.Instant, date: Date) -> String? {
        // For the log (its handler escapes control characters); an outside topic may be 64 KiB long.
        let shown = topic.utf8.count > 160 ? String(topic.prefix(160)) + "…" : topic
        switch FleetEvidence.parse(topic: topic, payload: payload, fleet: fleet, now: date, maxAge: decider.rule.expiry) {
        case .evidence(_, let from, _) where from == gateway:
            return nil   // our own, back from the broker: we already have it
        case .evidence(let key, let from, let evidence?):
            guard decider.record(key, gateway: from, evidence: evidence, now: now) else {
                refused += 1
                return "\(shown): too many messages or gateways (at most \(decider.maxKeys), \(decider.maxGateways) each)"
            }
        case .evidence(let key, let from, nil):
            decider.withdraw(key, gateway: from)
        case .decision(let key, let room):
            decider.adopt(key, room: room)
        case .refused(let reason):
            refused += 1
            return "\(shown): \(reason)"
        case .ignored:
            break
        }
        return nil
    }

    /// What is due at `now`: own evidence refreshed, and the decisions that changed.
    mutating func tick(now: ContinuousClock.Instant, date: Date) -> [MQTTMessage] {
        var messages: [MQTTMessage] = []
        if let due = nextRefresh, now >= due {
            nextRefresh = now + Self.refresh
            for key in ownByKey.keys { messages += ownEvidence(key, now: now, date: date) }
        }
        if let due = nextDecide, now < due { return messages }
        nextDecide = now + Self.decidePeriod
        for (key, room) in decider.decide(now: now) {
            messages.append(MQTTMessage(topic: decisionTopic(key), payload: FleetEvidence.decision(room), retain: true))
            messages += announce(key)
        }
        return messages
    }

    /// A clean stop: every piece of own evidence withdrawn (the others decide without us at once).
    mutating func stopping() -> [MQTTMessage] {
        defer { own.removeAll(); ownByKey.removeAll() }
        return ownByKey.keys.sorted().map { MQTTMessage(topic: evidenceTopic($0), payload: "", retain: true) }
    }

    // MARK: Home Assistant

    /// The message's room sensor, once per connection. Every gateway of the fleet sends the very same
    /// config (its topic and content depend only on the fleet and the message), so they never disagree.
    private mutating func announce(_ key: String) -> [MQTTMessage] {
        guard let discoveryPrefix, !announced.contains(key), announced.count < decider.maxKeys else { return [] }
        announced.insert(key)
        let node = HomeAssistant.topicSafe(fleet)
        let object = "room_" + HomeAssistant.topicSafe(String(key.suffix(48))) + "_" + FleetEvidence.stableHash(key)
        var device = JSONObjectWriter()
        device.add("identifiers", rawJSON: "[\(JSONObjectWriter.quote("nearby_fleet_\(node)"))]")
        device.add("name", "Nearby rooms \(fleet)")
        device.add("manufacturer", "Nearby Gateway")
        device.add("model", "room decisions")
        var json = JSONObjectWriter()
        json.add("name", "Room of \(key)")
        json.add("unique_id", "\(node)_\(object)")
        json.add("object_id", "\(node)_\(object)")
        json.add("default_entity_id", "sensor.\(node)_\(object)")   // as HomeAssistant.swift: object_id ends in HA 2026.4
        json.add("state_topic", decisionTopic(key))
        json.add("value_template", "{{ value_json.room or 'none' }}")
        json.add("json_attributes_topic", decisionTopic(key))
        json.add("icon", "mdi:map-marker")
        json.add("device", rawJSON: device.string)
        return [MQTTMessage(topic: "\(discoveryPrefix)/sensor/\(node)/\(object)/config", payload: json.string, retain: true)]
    }
}
