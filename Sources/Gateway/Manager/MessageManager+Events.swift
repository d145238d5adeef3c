import Glibc
import MQTT
import NearbyProtocol
import Radio
import SystemCall

/// How the manager's state becomes socket events (topics and one-line JSON, docs/socket-protocol.md).
extension MessageManager {
    /// Found events are retained per entry (several messages may share a topic). `suffix`: the
    /// key's `topicSuffix`, when the caller has spelt it already.
    func retainKey(_ key: DiscoveryKey, suffix: String? = nil) -> String {
        "found/" + (suffix ?? key.topicSuffix) + "#" + String(UInt(bitPattern: key.hashValue), radix: 36)
    }

    func eventJSON(_ entry: AirIngest.Entry, _ details: DiscoveryDetails, reason: String? = nil, suffix: String? = nil) -> String {
        let message: Message
        switch entry.key {
        case .message(let found): message = found
        default:
            let suffix = suffix ?? entry.key.topicSuffix
            // An iBeacon's and an Eddystone-UID's suffix is ASCII (hex, digits): a byte is a character,
            // so the byte search finds what the character search does, without grapheme breaking.
            let ascii = switch entry.key { case .iBeacon, .eddystoneUID: true; default: false }
            let slash = (ascii ? suffix.utf8.firstIndex(of: UInt8(ascii: "/")) : suffix.firstIndex(of: "/")) ?? suffix.endIndex
            message = Message(namespace: String(suffix[..<slash]), type: String(suffix[slash...].dropFirst()), content: Array(details.content))
        }
        return SightingEvent.json(message: message, medium: details.medium, rssi: entry.rssi, firstSeen: entry.firstSeen,
                                  lastSeen: entry.lastSeen) { writer in
            // Always present (null without an RSSI), so clients and Home Assistant templates can rely on them.
            writer.add("rssi_avg", fixed: entry.smoothedRSSI, digits: 1)
            let power = details.medium == .ble ? (details.powerAt1m ?? (details.beaconADType == nil ? settings.distance.ownPowerAt1m : nil)) : nil
            let metres = entry.smoothedRSSI.flatMap { rssi in power.map { settings.distance.metres(rssi: rssi, powerAt1m: $0) } }
            writer.add("distance_m", fixed: metres, digits: 2)
            for (name, value) in details.extraFields { writer.add(name, rawJSON: value) }
            if let reason { writer.add("reason", reason) }
        }
    }

    /// The retained `$SYS` state every new subscriber sees first.
    func publishSystemState(previous: GatewayState? = nil) {
        func value(_ topic: String, _ fill: (inout JSONObjectWriter) -> Void) {
            var json = JSONObjectWriter()
            fill(&json)
            events.publish(BrokerEvent(topic: topic, json: json.string, retain: .set(topic)))
        }
        // At start everything; afterwards only what changed (a SET of one value is one event).
        if previous?.permission != state.permission { value("$SYS/permission") { $0.add("permission", state.permission.rawValue) } }
        if previous?.backgroundMode != state.backgroundMode { value("$SYS/background") { $0.add("background", state.backgroundMode) } }
        if previous?.power != state.power { value("$SYS/power") { $0.add("power", state.power.rawValue) } }
        if previous == nil { publishDebug() }
        if state.permission == .undecided {
            if previous?.permission != .undecided { value("$SYS/permission/request") { _ in } }
        } else if previous?.permission == .undecided {
            // Answered: forget the retained request (late subscribers no longer see it).
            events.publish(BrokerEvent(topic: "$SYS/permission/request", json: "{\"answered\":\"\(state.permission.rawValue)\"}",
                                       retain: .clear("$SYS/permission/request")))
        }
    }

    /// `$SYS/debug`, state like `$SYS/power`: retained, at start and when `SET debug` changes it.
    func publishDebug() {
        var json = JSONObjectWriter()
        json.add("debug", isDebug)
        events.publish(BrokerEvent(topic: "$SYS/debug", json: json.string, retain: .set("$SYS/debug")))
    }

    func statsJSON(clients: Int) -> String {
        var json = JSONObjectWriter()
        json.add("uptime_s", Int((ContinuousClock.now - stats.started).components.seconds))
        json.add("adverts_seen", inbound.advertsSeen)
        json.add("audio_payloads_seen", inbound.audioPayloadsSeen)
        var capture = JSONObjectWriter()
        capture.add("overruns", stats.captureOverruns)
        capture.add("failures", stats.captureFailures)
        json.add("capture", rawJSON: capture.string)
        let counters = frameCounters
        var dropped = JSONObjectWriter()
        for (reason, count) in counters.dropped.sorted(by: { $0.key.rawValue < $1.key.rawValue }) { dropped.add(reason.rawValue, count) }
        dropped.add("timed_out", counters.timedOut)
        dropped.add("evicted", counters.evicted)
        json.add("frames_dropped", rawJSON: dropped.string)
        json.add("messages_decoded", counters.messages)
        if let radio = air?.statistics {
            json.add("hci_commands", radio.commandsSent)
            json.add("hci_commands_per_s", rawJSON: String(cFormat: "%.1f", radio.commandsPerSecond))
            json.add("radio_quiet_resets", radio.quietResets)
            // Input the radio lost or refused, by where (docs/reliability.md, "Adverts lost").
            var dropped = JSONObjectWriter()
            dropped.add("socket", radio.socketDrops)
            dropped.add("queue", radio.overflowed)
            dropped.add("stream_bytes", radio.droppedStreamBytes)
            dropped.add("malformed_events", radio.malformedEvents)
            dropped.add("malformed_adverts", radio.malformedAdverts)
            dropped.add("incomplete_reports", radio.incompleteReports)
            json.add("radio_dropped", rawJSON: dropped.string)
        }
        json.add("clients", clients)
        json.add("found", foundCount)
        json.add("found_evicted", inbound.foundEvicted)
        json.add("found_refused", inbound.foundRefused)
        // Resolvable private addresses (docs/identities.md): AES-128 encryptions, and the address cache.
        let identity = inbound.identityCounters ?? IdentityResolver.Counters()
        json.add("identity_resolutions", identity.resolutions)
        var cache = JSONObjectWriter()
        cache.add("hits", identity.cacheHits)
        cache.add("misses", identity.cacheMisses)
        cache.add("resolved", identity.resolved)
        cache.add("entries", inbound.identityCacheEntries)
        json.add("identity_cache", rawJSON: cache.string)
        json.add("publications", publicationCount)
        json.add("publications_refused", publicationsRefused)
        if let mqtt = mqttStatistics?() {
            var bridge = JSONObjectWriter()
            bridge.add("connected", mqtt.connected)
            bridge.add("queued", mqtt.queued)
            bridge.add("dropped", mqtt.dropped)
            bridge.add("published", mqtt.published)
            bridge.add("connect_attempts", mqtt.connectAttempts)
            if let messages = mqtt.roomMessages, let refused = mqtt.roomEvidenceRefused {
                bridge.add("rooms", rawJSON: "{\"messages\":\(messages),\"refused\":\(refused)}")
            }
            json.add("mqtt", rawJSON: bridge.string)
        }
        json.add("errors", rawJSON: "[" + errors.map(\.rawValue).sorted().map(JSONObjectWriter.quote).joined(separator: ",") + "]")
        return json.string
    }
}
