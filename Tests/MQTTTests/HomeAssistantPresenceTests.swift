@testable import Config
import Foundation
@testable import NearbyProtocol
import Testing
@testable import MQTT

/// Home Assistant's per-entry state (issue 31, item 4): what it keeps per found entry, and that its
/// subscription states follow the found set without walking it for every event.
@Suite struct HomeAssistantPresenceTests {
    static let settings = MQTTSettings(url: "mqtt://b", transport: .tcp(host: "b", port: 1883), clientID: "gw", prefix: "nb")

    /// A found event like the manager's: a 70-byte retain key, the signal members HA reads.
    static func found(_ k: Int, rssi: Double?) -> BrokerEvent {
        let topic = "found/ibeacon/f100d500-0000-0000-0000-\(String(format: "%012x", k))/\(k >> 8)/\(k & 0xFF)"
        let signal = rssi.map { #","rssi_avg":\#($0),"distance_m":\#(-$0 / 10)"# } ?? #","rssi_avg":null,"distance_m":null"#
        return BrokerEvent(topic: topic, json: #"{"namespace":"ibeacon","rssi":null"# + signal + "}",
                           retain: .set(topic + "#" + String(UInt64(k) &* 0x9E37_79B9_7F4A_7C15, radix: 36)))
    }

    static func lost(_ found: BrokerEvent) -> BrokerEvent {
        guard case .set(let key) = found.retain else { fatalError("not a found event") }
        return BrokerEvent(topic: "lost" + found.topic.dropFirst("found".count), json: "{}", retain: .clear(key))
    }

    /// 4,096 found events, then every one lost (a flood and its expiry, with `[mqtt]` and discovery):
    /// counted, not timed. Each event looked at every entry before (`states()` filtered the whole set
    /// per subscription per event: 4,096 × 4,096 / 2 per subscription for the flood alone); now only
    /// a lost entry that held a subscription's nearest value makes it look again.
    @Test("a flood of found entries and their expiry: Home Assistant keeps ≤ 72 B per entry and walks the set rarely")
    func perEntryStateAndWalks() throws {
        let n = 4096
        var ha = HomeAssistant(settings: Self.settings,
                               subscriptions: [BridgedSubscription(namespace: "room", type: "*", include: [.iBeacon]),
                                               BridgedSubscription(namespace: "flood", type: "*", include: [.iBeacon])], model: "sim")
        _ = ha.initialStates()
        let events = (0..<n).map { Self.found($0, rssi: $0 % 3 == 0 ? nil : -40 - Double($0 % 50)) }
        for event in events { _ = ha.apply(event) }
        #expect(ha.found.count == n && ha.found.matching == [n, n])
        // 8,192 slots of 32 B (the key's hash, a group index and two doubles): 64. Before: the key itself,
        // 8,192 slots of 40 B and the 70-byte key's 112 B, 192 (the test fails there); before that
        // 8,192 slots of 56 B, the key, and an array of subscription indices (48 B): 272.
        let perEntry = ha.found.allocatedBytes / n
        print("Home Assistant state: \(perEntry) B per found entry; \(ha.found.walked) entries walked for \(n) found events")
        #expect(perEntry <= 72)
        for event in events { _ = ha.apply(Self.lost(event)) }
        #expect(ha.found.count == 0 && ha.found.matching == [0, 0])
        // Expiring in found order, the nearest is lost ~50 times per subscription (RSSIs cycle over 50
        // values), each costing one walk of what is left.
        #expect(ha.found.walked <= 200 * n, "\(ha.found.walked) entries walked")
    }

    /// The subscription states after every event equal the old way's: the nearest found over the whole
    /// set, for a seeded run of found, signal and lost events over a few entries and subscriptions.
    @Test func nearestFollowsTheFoundSetExactly() throws {
        let subscriptions = [BridgedSubscription(namespace: "room", type: "*"), BridgedSubscription(namespace: "room", type: "door"),
                             BridgedSubscription(namespace: "hall", type: "*")]
        var ha = HomeAssistant(settings: Self.settings, subscriptions: subscriptions, model: "sim")
        var states: [String: String] = [:]
        for state in ha.initialStates() { states[state.topic] = state.json }
        let topics = ["found/room/door", "found/room/window", "found/hall/lamp", "found/other/x"]
        var reference: [String: (topic: String, rssi: Double?, distance: Double?)] = [:]
        var seed: UInt64 = 0x5EED
        func next(_ bound: Int) -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((seed >> 33) % UInt64(bound))
        }
        for step in 0..<3000 {
            let key = "k\(next(12))"
            let rssi: Double? = next(5) == 0 ? nil : -30 - Double(next(40))
            let distance: Double? = next(5) == 0 ? nil : Double(next(200)) / 10
            let signal = #"{"rssi_avg":\#(rssi.map { "\($0)" } ?? "null"),"distance_m":\#(distance.map { "\($0)" } ?? "null")}"#
            let events: [BrokerEvent]
            switch next(3) {
            case 0:
                let topic = reference[key]?.topic ?? topics[next(topics.count)]
                events = ha.apply(BrokerEvent(topic: topic, json: "{\"x\":0," + signal.dropFirst(), retain: .set(key)))
                if reference[key] == nil { reference[key] = (topic, rssi, distance) }
            case 1:
                events = ha.apply(BrokerEvent(topic: "signal/x", json: "{\"x\":0," + signal.dropFirst(), entry: key))
                if reference[key] != nil { reference[key]?.rssi = rssi; reference[key]?.distance = distance }
            default:
                events = ha.apply(BrokerEvent(topic: "lost/x", json: "{}", retain: .clear(key)))
                reference[key] = nil
            }
            for event in events { states[event.topic] = event.json }
            for (index, subscription) in subscriptions.enumerated() {
                let matching = reference.values.filter {
                    let parts = $0.topic.dropFirst("found/".count).split(separator: "/")
                    return parts[0] == subscription.namespace && (subscription.type == "*" || parts[1] == subscription.type)
                }
                let state = try #require(try JSONSerialization.jsonObject(with: Data(states["ha/subscription/\(index + 1)"]!.utf8))
                    as? [String: Any])
                #expect(state["found"] as? Int == matching.count, "step \(step)")
                let strongest = matching.compactMap(\.rssi).max().map { Int($0.rounded()) }
                #expect(state["rssi"] as? Int == strongest, "step \(step), subscription \(index)")
                let nearest = matching.compactMap(\.distance).min().map { ($0 * 10).rounded() / 10 }
                #expect(state["distance_m"] as? Double == nearest, "step \(step), subscription \(index)")
            }
        }
    }
}
