@testable import Config
import Foundation
@testable import NearbyProtocol
import Testing
@testable import MQTT

/// Issue 29 item 5, the bridge's side without a broker: own evidence from the manager's events, the
/// other gateways' evidence read (hostile payloads refused), decisions published (docs/mqtt.md, "Rooms").
@Suite struct FleetRoomsTests {
    static let settings: MQTTSettings = {
        var settings = MQTTSettings(url: "mqtt://b", transport: .tcp(host: "b", port: 1883), clientID: "gw-kitchen", prefix: "nb")
        settings.room = "kitchen"
        return settings
    }()
    let start = ContinuousClock.now
    let date = Date(timeIntervalSince1970: 1_800_000_000)
    func at(_ seconds: Double) -> ContinuousClock.Instant { start + .milliseconds(Int(seconds * 1000)) }

    static func found(_ key: String, rssi: String = "-61.0", medium: String = "ble") -> BrokerEvent {
        BrokerEvent(topic: "found/\(key)", json: "{\"namespace\":\"x\",\"type\":\"y\",\"content\":\"\",\"text\":\"\",\"medium\":\"\(medium)\",\"rssi\":-61,\"first_seen\":\"t\",\"last_seen\":\"t\",\"rssi_avg\":\(rssi),\"distance_m\":null}",
                    retain: .set("found/\(key)#1"))
    }

    func peer(_ gateway: String, room: String, rssi: Double, key: String = "den/door", at seconds: Double = 0) -> (String, [UInt8]) {
        let payload = FleetEvidence.payload(gateway: gateway, evidence: RoomEvidence(room: room, rssi: rssi, audio: false),
                                            at: date + seconds)
        return ("nearby/fleet/evidence/\(gateway)/\(key)", Array(payload.utf8))
    }

    @Test("found publishes retained evidence under the fleet and announces the room sensor; signal updates it; lost empties it")
    func ownEvidence() throws {
        var fleet = FleetRooms(settings: Self.settings, room: "kitchen", gateway: "gw-kitchen")
        let found = fleet.apply(Self.found("den/door"), now: at(0), date: date)
        #expect(found.map(\.topic) == ["nearby/fleet/evidence/gw-kitchen/den/door", "homeassistant/sensor/nearby_fleet/room_den_door_\(FleetEvidence.stableHash("den/door"))/config"])
        #expect(found.allSatisfy { $0.retain })
        let evidence = try #require(JSONSerialization.jsonObject(with: Data(found[0].payload.utf8)) as? [String: Any])
        #expect(evidence["room"] as? String == "kitchen" && evidence["rssi_avg"] as? Double == -61 && evidence["audio"] as? Bool == false)
        #expect(evidence["gateway"] as? String == "gw-kitchen" && evidence["at"] as? String == "2027-01-15T08:00:00.000Z")
        let sensor = try #require(JSONSerialization.jsonObject(with: Data(found[1].payload.utf8)) as? [String: Any])
        #expect(sensor["state_topic"] as? String == "nearby/fleet/room/den/door")
        #expect(sensor["value_template"] as? String == "{{ value_json.room or 'none' }}")

        let signal = BrokerEvent(topic: "signal/den/door", json: Self.found("den/door", rssi: "-70.5").json, entry: "found/den/door#1")
        let moved = fleet.apply(signal, now: at(1), date: date)
        #expect(moved.map(\.topic) == ["nearby/fleet/evidence/gw-kitchen/den/door"], "the sensor is announced once a connection")
        #expect(moved[0].payload.contains("\"rssi_avg\":-70.5"))
        let lost = fleet.apply(BrokerEvent(topic: "lost/den/door", json: "{}", retain: .clear("found/den/door#1")), now: at(2), date: date)
        #expect(lost == [MQTTMessage(topic: "nearby/fleet/evidence/gw-kitchen/den/door", payload: "", retain: true)])
        #expect(fleet.apply(BrokerEvent(topic: "$SYS/power", json: "{}", retain: .set("$SYS/power")), now: at(3), date: date).isEmpty)
    }

    @Test("heard over audio counts until the evidence's expiry after the last audio event, whatever BLE signal events come between")
    func audioEvidence() {
        var fleet = FleetRooms(settings: Self.settings, room: "kitchen", gateway: "gw-kitchen")
        _ = fleet.connected(now: at(0), date: date)
        #expect(fleet.apply(Self.found("den/door", medium: "audio"), now: at(0), date: date)[0].payload.contains("\"audio\":true"))
        let ble = BrokerEvent(topic: "signal/den/door", json: Self.found("den/door", rssi: "-70.0").json, entry: "found/den/door#1")
        #expect(fleet.apply(ble, now: at(1), date: date)[0].payload.contains("\"audio\":true"))
        let refreshed = fleet.tick(now: at(21), date: date + 21).first { $0.topic.hasPrefix("nearby/fleet/evidence/") }
        #expect(refreshed?.payload.contains("\"audio\":false") == true, "20 s after the last audio event")
        let audio = BrokerEvent(topic: "signal/den/door", json: Self.found("den/door", medium: "audio").json, entry: "found/den/door#1")
        #expect(fleet.apply(audio, now: at(22), date: date)[0].payload.contains("\"audio\":true"))
    }

    @Test("decisions: none before the settle time, then the strongest room, retained; a stronger peer takes it after the dwell")
    func decisions() {
        var fleet = FleetRooms(settings: Self.settings, room: "kitchen", gateway: "gw-kitchen")
        _ = fleet.connected(now: at(0), date: date)
        _ = fleet.apply(Self.found("den/door", rssi: "-60.0"), now: at(0), date: date)
        let (topic, payload) = peer("gw-hall", room: "hall", rssi: -75)
        #expect(fleet.received(topic: topic, payload: payload, now: at(0.1), date: date) == nil)
        #expect(fleet.tick(now: at(1), date: date).filter { $0.topic.contains("/room/") }.isEmpty, "settling")
        let first = fleet.tick(now: at(6), date: date + 6)
        #expect(first.contains(MQTTMessage(topic: "nearby/fleet/room/den/door", payload: "{\"room\":\"kitchen\"}", retain: true)))
        #expect(first.contains { $0.topic == "nearby/fleet/evidence/gw-kitchen/den/door" }, "refreshed every 5 s")
        // Our own decision comes back from the broker: not a change.
        _ = fleet.received(topic: "nearby/fleet/room/den/door", payload: Array("{\"room\":\"kitchen\"}".utf8), now: at(6.1), date: date)
        var t = 7.0
        var decided: [String] = []
        while t < 20 {
            let (topic, payload) = peer("gw-hall", room: "hall", rssi: -50, at: t)
            _ = fleet.received(topic: topic, payload: payload, now: at(t), date: date + t)
            decided += fleet.tick(now: at(t), date: date + t).filter { $0.topic.contains("/room/") }.map(\.payload)
            t += 1
        }
        #expect(decided == ["{\"room\":\"hall\"}"])
        // Our own evidence coming back is ignored, a peer's withdrawal counts.
        let echo = FleetEvidence.payload(gateway: "gw-kitchen", evidence: RoomEvidence(room: "attic", rssi: -10, audio: true), at: date + 20)
        #expect(fleet.received(topic: "nearby/fleet/evidence/gw-kitchen/den/door", payload: Array(echo.utf8), now: at(20), date: date + 20) == nil)
        #expect(fleet.received(topic: "nearby/fleet/evidence/gw-hall/den/door", payload: [], now: at(20), date: date + 20) == nil)
        #expect(fleet.tick(now: at(21), date: date + 21).contains(MQTTMessage(topic: "nearby/fleet/room/den/door", payload: "{\"room\":\"kitchen\"}", retain: true)))
        #expect(fleet.stopping() == [MQTTMessage(topic: "nearby/fleet/evidence/gw-kitchen/den/door", payload: "", retain: true)])
    }

    @Test("decisions are made at most every 250 ms, however often the bridge's thread ticks")
    func decidePeriod() {
        var fleet = FleetRooms(settings: Self.settings, room: "kitchen", gateway: "gw-kitchen")
        _ = fleet.connected(now: at(0), date: date)
        _ = fleet.apply(Self.found("den/door"), now: at(0), date: date)
        #expect(fleet.tick(now: at(6), date: date).contains { $0.payload == "{\"room\":\"kitchen\"}" })
        _ = fleet.received(topic: "nearby/fleet/room/den/door", payload: Array("{\"room\":\"garage\"}".utf8), now: at(6.05), date: date)
        #expect(!fleet.tick(now: at(6.1), date: date).contains { $0.topic.contains("/room/") })
        #expect(fleet.tick(now: at(6.25), date: date).contains { $0.payload == "{\"room\":\"kitchen\"}" }, "the forged room is replaced")
    }

    @Test("hostile evidence is refused with a reason: oversized, not JSON, control characters in the room, absurd RSSI, stale, wildcards")
    func hostileEvidence() {
        var fleet = FleetRooms(settings: Self.settings, room: "kitchen", gateway: "gw-kitchen")
        _ = fleet.connected(now: at(0), date: date)
        let base = "nearby/fleet/evidence/gw-x/den/door"
        let cases: [(String, String, String)] = [
            (base, String(repeating: "x", count: 2000), "payload of 2000 bytes"),
            (base, "{\"room\":", "not evidence's JSON"),
            (base, "{\"room\":\"hall\\u001b[2J\",\"rssi_avg\":-50,\"audio\":false,\"at\":\"2027-01-15T08:00:00.000Z\"}", "room must not contain control characters"),
            (base, "{\"room\":\"hall\",\"rssi_avg\":1e300,\"audio\":false,\"at\":\"2027-01-15T08:00:00.000Z\"}", "rssi_avg"),
            (base, "{\"room\":\"hall\",\"rssi_avg\":-50,\"audio\":false,\"at\":\"yesterday\"}", "not an ISO 8601 time"),
            (base, "{\"room\":\"hall\",\"rssi_avg\":-50,\"audio\":false,\"at\":\"2027-01-15T07:00:00.000Z\"}", "stale: at is 3600 s old"),
            (base, "{\"room\":\"\(String(repeating: "r", count: 65))\",\"rssi_avg\":-50,\"audio\":false,\"at\":\"2027-01-15T08:00:00.000Z\"}", "room must be 1 to 64 bytes"),
            ("nearby/fleet/evidence/gw-x", "{}", "no message in the topic"),
            ("nearby/fleet/evidence/gw-x/den//door", "{}", "bad gateway or message topic"),
            ("nearby/fleet/room/den/door", "{\"room\":\"a\\nb\"}", "room must not contain control characters"),
        ]
        for (topic, payload, reason) in cases {
            let refusal = fleet.received(topic: topic, payload: Array(payload.utf8), now: at(1), date: date)
            #expect(refusal?.contains(reason) == true, "\(payload.prefix(60)): \(refusal ?? "taken")")
        }
        let long = "nearby/fleet/evidence/gw-x/" + String(repeating: "a", count: 5000)
        let shown = fleet.received(topic: long, payload: Array("{}".utf8), now: at(1), date: date) ?? ""
        #expect(shown.utf8.count < 300 && shown.contains("bad gateway or message topic"), "a long topic is cut for the log")
        #expect(fleet.refused == cases.count + 1)
        #expect(fleet.decider.count == 0, "nothing refused was kept")
        #expect(fleet.received(topic: "elsewhere/evidence/gw-x/den/door", payload: [1, 2], now: at(1), date: date) == nil)
    }

    @Test("memory stays bounded under a flood of messages and gateways")
    func bounded() {
        var fleet = FleetRooms(settings: Self.settings, room: "kitchen", gateway: "gw-kitchen")
        _ = fleet.connected(now: at(0), date: date)
        var refusals = 0
        for n in 0..<3000 {
            let (topic, payload) = peer("gw-\(n % 50)", room: "r\(n % 7)", rssi: -60, key: "flood/\(n / 2)")
            if fleet.received(topic: topic, payload: payload, now: at(1), date: date) != nil { refusals += 1 }
        }
        #expect(fleet.decider.count == fleet.decider.maxKeys)
        #expect(refusals == 3000 - 2 * fleet.decider.maxKeys)
    }
}
