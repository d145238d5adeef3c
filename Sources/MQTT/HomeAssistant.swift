import NearbyProtocol
/// Home Assistant MQTT discovery (docs/mqtt.md): the gateway is one device with a binary_sensor per
/// `[[subscription]]` (on while a matching message is found), a sensor for the found count and one for
/// the raised error states. Configs go to `<discovery_prefix>/<component>/<node>/<object>/config`
/// (retained, sent after every connect); states to `<prefix>/ha/…` (retained, kept like the found set).
struct HomeAssistant {
    let settings: MQTTSettings
    let subscriptions: [BridgedSubscription]
    let model: String
    /// Found entries by the manager's retain key: the subscriptions each one matches, its latest
    /// smoothed RSSI and distance (from its found and signal events), and per subscription the count
    /// and the nearest, kept as entries come and go.
    private(set) var found: HomeAssistantPresence
    private var errors: Set<String> = []
    private var published: [String: String] = [:]

    init(settings: MQTTSettings, subscriptions: [BridgedSubscription], model: String) {
        self.settings = settings
        self.subscriptions = subscriptions
        self.model = model
        self.found = HomeAssistantPresence(subscriptions: subscriptions.count)
    }

    /// The node id: the client id with what HA allows in a topic level and an id (`[a-zA-Z0-9_-]`).
    var node: String { Self.topicSafe(settings.clientID) }

    /// `text` with every character but `[a-zA-Z0-9_-]` replaced by `_`.
    static func topicSafe(_ text: String) -> String {
        String(text.unicodeScalars.map { scalar -> Character in
            scalar.properties.isASCIIHexDigit || ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || scalar == "_" || scalar == "-"
                ? Character(scalar) : "_"
        })
    }

    func subscriptionStateTopic(_ index: Int) -> String { "ha/subscription/\(index + 1)" }

    // MARK: discovery configs

    var configs: [MQTTMessage] {
        var messages: [MQTTMessage] = []
        for (index, subscription) in subscriptions.enumerated() {
            messages.append(config("binary_sensor", "subscription_\(index + 1)", name: "\(subscription.namespace)/\(subscription.type)",
                                   state: subscriptionStateTopic(index), value: "{{ value_json.presence }}") {
                $0.add("payload_on", "ON")
                $0.add("payload_off", "OFF")
                $0.add("device_class", "presence")
            })
        }
        messages.append(config("sensor", "found", name: "Found", state: "ha/found", value: "{{ value_json.found }}") {
            $0.add("state_class", "measurement")
            $0.add("icon", "mdi:radar")
        })
        messages.append(config("sensor", "errors", name: "Errors", state: "ha/errors", value: "{{ value_json.count }}") {
            $0.add("entity_category", "diagnostic")
            $0.add("icon", "mdi:alert-circle-outline")
        })
        // With commands on, background mode and permission are switches: HA sends the socket's SET
        // line to `<prefix>/cmd` and reads the state from the bridged `$SYS` topic.
        if settings.commands {
            messages.append(config("switch", "background", name: "Background mode", state: "$SYS/background",
                                   value: "{{ 'ON' if value_json.background else 'OFF' }}") {
                $0.add("command_topic", "\(settings.prefix)/cmd")
                $0.add("payload_on", "SET background on")
                $0.add("payload_off", "SET background off")
                $0.add("state_on", "ON")
                $0.add("state_off", "OFF")
                $0.add("entity_category", "config")
            })
            messages.append(config("switch", "permission", name: "Permission", state: "$SYS/permission",
                                   value: "{{ 'ON' if value_json.permission == 'granted' else 'OFF' }}") {
                $0.add("command_topic", "\(settings.prefix)/cmd")
                $0.add("payload_on", "SET permission granted")
                $0.add("payload_off", "SET permission denied")
                $0.add("state_on", "ON")
                $0.add("state_off", "OFF")
                $0.add("entity_category", "config")
            })
        }
        return messages
    }

    private func config(_ component: String, _ object: String, name: String, state: String, value: String,
                        extra: (inout JSONObjectWriter) -> Void) -> MQTTMessage {
        var device = JSONObjectWriter()
        device.add("identifiers", rawJSON: "[\(JSONObjectWriter.quote("nearby_gateway_\(node)"))]")
        device.add("name", "Nearby Gateway \(settings.clientID)")
        device.add("manufacturer", "Nearby Gateway")
        device.add("model", model)
        var json = JSONObjectWriter()
        json.add("name", name)
        json.add("unique_id", "\(node)_\(object)")
        // `default_entity_id` since HA 2025.10 (its `object_id` stops working in 2026.4); `object_id`
        // for the releases before, which drop the key they do not know.
        json.add("object_id", "\(node)_\(object)")
        json.add("default_entity_id", "\(component).\(node)_\(object)")
        json.add("state_topic", "\(settings.prefix)/\(state)")
        json.add("value_template", value)
        json.add("json_attributes_topic", "\(settings.prefix)/\(state)")
        json.add("availability_topic", settings.availabilityTopic)
        json.add("payload_available", "online")
        json.add("payload_not_available", "offline")
        extra(&json)
        json.add("device", rawJSON: device.string)
        return MQTTMessage(topic: "\(settings.discoveryPrefix)/\(component)/\(node)/\(object)/config", payload: json.string, retain: true)
    }

    // MARK: states

    /// The states before any event: every subscription off, nothing found, no error.
    mutating func initialStates() -> [BrokerEvent] { states() }

    /// The state events (to the bridge only, retained under their topic) that `event` changes.
    mutating func apply(_ event: BrokerEvent) -> [BrokerEvent] {
        switch event.retain {
        case .set(let key) where event.topic.hasPrefix("found/"):
            guard !found.contains(key) else { return states() }   // a refresh of an entry already counted
            let signal = Self.signal(event.json)
            let parts = event.topic.dropFirst("found/".count).split(separator: "/", maxSplits: 1)
            let (namespace, type) = (String(parts.first ?? ""), parts.count > 1 ? String(parts[1]) : "")
            // A beacon (its namespace is reserved: `ibeacon`, `eddystone`, `eddystone-url`) matches the
            // subscriptions that include its family, as on the air.
            // An identity (`identity/<name>`) matches those that include every identity or it by name.
            let family: BeaconFilter? = switch namespace {
            case "ibeacon": .iBeacon
            case "eddystone": .eddystoneUID
            case "eddystone-url": .eddystoneURL
            case "identity": .identity
            default: nil
            }
            let indices = subscriptions.indices.filter {
                if family == .identity { return subscriptions[$0].include.contains(.identity) || subscriptions[$0].identities.contains(type) }
                if let family { return subscriptions[$0].include.contains(family) }
                return subscriptions[$0].namespace == namespace && (subscriptions[$0].type == "*" || subscriptions[$0].type == type)
            }
            found.add(key, indices: indices, rssi: signal.rssi, distance: signal.distance)
        case .none where event.topic.hasPrefix("signal/"):
            guard let key = event.entry, found.contains(key) else { return [] }
            let signal = Self.signal(event.json)
            _ = found.update(key, rssi: signal.rssi, distance: signal.distance)
        case .clear(let key) where event.topic.hasPrefix("lost/"):
            found.remove(key)
        case .set where event.topic.hasPrefix("$SYS/error/"):
            errors.insert(String(event.topic.dropFirst("$SYS/error/".count)))
        case .clear where event.topic.hasPrefix("$SYS/error/"):
            errors.remove(String(event.topic.dropFirst("$SYS/error/".count)))
        default:
            return []
        }
        return states()
    }

    /// `rssi_avg` and `distance_m` of one of the manager's event lines. Our own JSON: a member's
    /// `,"name":` cannot occur inside a string (quotes there are escaped), so a search finds it.
    /// Searched as bytes: `firstRange(of:)` on characters built a search table each call, ~190,000
    /// instructions a found event. The member names and the numbers are ASCII, so a byte is a character.
    static func signal(_ json: String) -> (rssi: Double?, distance: Double?) {
        var json = json
        json.makeContiguousUTF8()   // a no-op for the manager's lines; then the bytes are always there
        return json.utf8.withContiguousStorageIfAvailable { bytes in
            func value(_ member: [UInt8]) -> Double? {
                valueRange(after: member, in: bytes).flatMap { Double(String(decoding: UnsafeBufferPointer(rebasing: bytes[$0]), as: UTF8.self)) }
            }
            return (value(rssiMember), value(distanceMember))
        } ?? (nil, nil)
    }

    private static let rssiMember = Array(#","rssi_avg":"#.utf8), distanceMember = Array(#","distance_m":"#.utf8)

    /// The byte offsets of the value after the first `member` in `bytes`, up to the next `,` or `}`.
    private static func valueRange(after member: [UInt8], in bytes: UnsafeBufferPointer<UInt8>) -> Range<Int>? {
        guard bytes.count >= member.count else { return nil }
        var start: Int?
        for i in 0...(bytes.count - member.count) where bytes[i] == member[0] {
            if UnsafeBufferPointer(rebasing: bytes[i..<(i + member.count)]).elementsEqual(member) {
                start = i + member.count
                break
            }
        }
        guard let start else { return nil }
        let end = bytes[start...].firstIndex { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "}") } ?? bytes.count
        return start..<end
    }

    /// Every state whose JSON differs from the last one sent.
    private mutating func states() -> [BrokerEvent] {
        var events: [BrokerEvent] = []
        func emit(_ topic: String, _ json: String) {
            guard published[topic] != json else { return }
            published[topic] = json
            events.append(BrokerEvent(topic: topic, json: json, retain: .set(topic)))
        }
        for (index, subscription) in subscriptions.enumerated() {
            let count = found.matching[index]
            var json = JSONObjectWriter()
            // Not `state`: the same JSON is the entity's attributes, and HA drops an attribute by that name.
            json.add("presence", count > 0 ? "ON" : "OFF")
            json.add("found", count)
            json.add("namespace", subscription.namespace)
            json.add("type", subscription.type)
            // The nearest matching message: the strongest smoothed RSSI and the shortest distance.
            let nearest = found.nearest(index)
            json.add("rssi", nearest.rssi.map { Int($0.rounded()) })
            json.add("distance_m", rawJSON: nearest.distance.map { "\(($0 * 10).rounded() / 10)" } ?? "null")
            emit(subscriptionStateTopic(index), json.string)
        }
        emit("ha/found", "{\"found\":\(found.count)}")
        let names = errors.sorted().map(JSONObjectWriter.quote).joined(separator: ",")
        emit("ha/errors", "{\"count\":\(errors.count),\"errors\":[\(names)]}")
        return events
    }
}
