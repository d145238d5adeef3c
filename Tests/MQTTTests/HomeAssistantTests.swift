@testable import Config
import Foundation
@testable import NearbyProtocol
import Testing
@testable import MQTT

@Suite struct HomeAssistantTests {
    static let settings = MQTTSettings(url: "mqtt://b", transport: .tcp(host: "b", port: 1883), clientID: "gw kitchen.1", prefix: "nb")
    static let subscriptions = [BridgedSubscription(namespace: "room", type: "*"), BridgedSubscription(namespace: "room", type: "door")]

    static func object(_ json: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
    }

    /// The smoothed RSSI and distance read from the manager's event lines (searched as bytes).
    @Test func signalReadsRSSIAndDistanceFromAnEventLine() {
        let found = #"{"namespace":"ibeacon","rssi":-63,"rssi_avg":-63.5,"distance_m":1.25,"uuid":"e2c5","major":1}"#
        #expect(HomeAssistant.signal(found) == (-63.5, 1.25))
        #expect(HomeAssistant.signal(#"{"rssi":null,"rssi_avg":null,"distance_m":null}"#) == (nil, nil))
        #expect(HomeAssistant.signal(#"{"rssi":-80,"rssi_avg":-80.0,"distance_m":15.87}"#) == (-80, 15.87), "the last member: up to the brace")
        #expect(HomeAssistant.signal(#"{"rssi_avg":-50.0,"distance_m":2}"#) == (nil, 2), "a member is found after a comma only")
        #expect(HomeAssistant.signal(#"{"text":"é ,\"rssi_avg\":-1","x":1,"rssi_avg":-70.0}"#) == (-70, nil), "escaped quotes in a string do not match")
        #expect(HomeAssistant.signal("{}") == (nil, nil) && HomeAssistant.signal("") == (nil, nil))
    }

    @Test func configsAreRetainedUnderTheDiscoveryPrefixWithWhatHomeAssistantRequires() throws {
        let ha = HomeAssistant(settings: Self.settings, subscriptions: Self.subscriptions, model: "sim")
        #expect(ha.node == "gw_kitchen_1")
        let configs = ha.configs
        #expect(configs.map(\.topic) == ["homeassistant/binary_sensor/gw_kitchen_1/subscription_1/config",
                                         "homeassistant/binary_sensor/gw_kitchen_1/subscription_2/config",
                                         "homeassistant/sensor/gw_kitchen_1/found/config",
                                         "homeassistant/sensor/gw_kitchen_1/errors/config"])
        #expect(configs.allSatisfy { $0.retain })
        for config in configs {
            let json = try Self.object(config.payload)
            for key in ["name", "unique_id", "state_topic", "json_attributes_topic", "availability_topic", "value_template"] {
                #expect(json[key] is String, "\(config.topic) has no \(key)")
            }
            #expect(json["availability_topic"] as? String == "nb/status")
            let device = try #require(json["device"] as? [String: Any])
            #expect(device["identifiers"] as? [String] == ["nearby_gateway_gw_kitchen_1"])
        }
        let first = try Self.object(configs[0].payload)
        #expect(first["state_topic"] as? String == "nb/ha/subscription/1")
        #expect(first["payload_on"] as? String == "ON")
        #expect(Set(configs.map { (try? Self.object($0.payload))?["unique_id"] as? String }).count == 4)
    }

    @Test func noStateMemberIsAnAttributeHomeAssistantDrops() throws {
        // A state's JSON is also its entity's attributes (`json_attributes_topic`); HA's MQTT integration
        // drops these names from attributes (MQTT_ATTRIBUTES_BLOCKED in homeassistant/components/mqtt/entity.py).
        let blocked: Set = ["assumed_state", "available", "device_class", "device_info", "entity_category", "entity_picture",
                            "entity_registry_enabled_default", "extra_state_attributes", "force_update", "icon",
                            "friendly_name", "should_poll", "state", "supported_features", "unique_id", "unit_of_measurement"]
        var ha = HomeAssistant(settings: Self.settings, subscriptions: Self.subscriptions, model: "sim")
        let states = ha.initialStates() + ha.apply(BrokerEvent(topic: "found/room/door", json: "{}", retain: .set("d")))
            + ha.apply(BrokerEvent(topic: "$SYS/error/radio", json: "{}", retain: .set("$SYS/error/radio")))
        #expect(Set(states.map(\.topic)) == ["ha/subscription/1", "ha/subscription/2", "ha/found", "ha/errors"])
        for state in states {
            let dropped = Set(try Self.object(state.json).keys).intersection(blocked)
            #expect(dropped.isEmpty, "\(state.topic): HA drops the attributes \(dropped)")
        }
    }

    @Test func switchesOnlyWithCommands() throws {
        #expect(!HomeAssistant(settings: Self.settings, subscriptions: [], model: "sim").configs.contains { $0.topic.contains("/switch/") })
        var settings = Self.settings
        settings.commands = true
        let switches = HomeAssistant(settings: settings, subscriptions: [], model: "sim").configs.filter { $0.topic.contains("/switch/") }
        #expect(switches.map(\.topic) == ["homeassistant/switch/gw_kitchen_1/background/config", "homeassistant/switch/gw_kitchen_1/permission/config"])
        let background = try Self.object(switches[0].payload)
        #expect(background["command_topic"] as? String == "nb/cmd")
        #expect(background["payload_on"] as? String == "SET background on")
        #expect(background["state_topic"] as? String == "nb/$SYS/background")
    }

    @Test func aSubscriptionIsOnWhileAMatchingMessageIsFound() throws {
        var ha = HomeAssistant(settings: Self.settings, subscriptions: Self.subscriptions, model: "sim")
        let initial = ha.initialStates()
        #expect(initial.map(\.topic) == ["ha/subscription/1", "ha/subscription/2", "ha/found", "ha/errors"])
        #expect(try Self.object(initial[0].json)["presence"] as? String == "OFF")

        let window = ha.apply(BrokerEvent(topic: "found/room/window", json: "{}", retain: .set("w")))
        #expect(window.map(\.topic) == ["ha/subscription/1", "ha/found"])   // not the "door" one
        #expect(try Self.object(window[0].json)["presence"] as? String == "ON")
        #expect(window[1].json == "{\"found\":1}")
        #expect(ha.apply(BrokerEvent(topic: "found/room/window", json: "{}", retain: .set("w"))).isEmpty)   // the same entry again
        #expect(ha.apply(BrokerEvent(topic: "found/room/door", json: "{}", retain: .set("d"))).map(\.topic)
                == ["ha/subscription/1", "ha/subscription/2", "ha/found"])
        #expect(ha.apply(BrokerEvent(topic: "found/other/x", json: "{}", retain: .set("o"))).map(\.topic) == ["ha/found"])
        _ = ha.apply(BrokerEvent(topic: "lost/room/door", json: "{}", retain: .clear("d")))
        let last = ha.apply(BrokerEvent(topic: "lost/room/window", json: "{}", retain: .clear("w")))
        #expect(try Self.object(last[0].json)["presence"] as? String == "OFF")
        #expect(ha.apply(BrokerEvent(topic: "$SYS/power", json: "{}", retain: .set("$SYS/power"))).isEmpty)
    }

    /// Issue 29: the subscription's attributes carry the nearest matching message's smoothed RSSI and
    /// distance, following found, signal (by the entry's retain key) and lost.
    @Test func subscriptionAttributesFollowSignalEvents() throws {
        var ha = HomeAssistant(settings: Self.settings, subscriptions: Self.subscriptions, model: "sim")
        _ = ha.initialStates()
        let far = ha.apply(BrokerEvent(topic: "found/room/window", json: #"{"rssi":-80,"rssi_avg":-80.0,"distance_m":15.87}"#, retain: .set("w")))
        #expect(try Self.object(far[0].json)["rssi"] as? Int == -80)
        #expect(try Self.object(far[0].json)["distance_m"] as? Double == 15.9)
        let near = ha.apply(BrokerEvent(topic: "signal/room/window", json: #"{"rssi":-60,"rssi_avg":-61.4,"distance_m":1.14}"#, entry: "w"))
        #expect(near.map(\.topic) == ["ha/subscription/1"])
        #expect(try Self.object(near[0].json)["rssi"] as? Int == -61)
        #expect(try Self.object(near[0].json)["distance_m"] as? Double == 1.1)
        // Without an RSSI (btvirt, audio): null, not a made-up number.
        let silent = ha.apply(BrokerEvent(topic: "found/room/door", json: #"{"rssi":null,"rssi_avg":null,"distance_m":null}"#, retain: .set("d")))
        let door = try Self.object(silent.first { $0.topic == "ha/subscription/2" }!.json)
        #expect(door["rssi"] is NSNull && door["distance_m"] is NSNull, "\(door)")
        // A beacon counts for the subscriptions that include its family.
        var beacons = HomeAssistant(settings: Self.settings,
                                    subscriptions: [BridgedSubscription(namespace: "room", type: "*", include: [.iBeacon])], model: "sim")
        _ = beacons.initialStates()
        let beacon = beacons.apply(BrokerEvent(topic: "found/ibeacon/u/1/2", json: #"{"rssi":-70,"rssi_avg":-70.0,"distance_m":2.75}"#, retain: .set("b")))
        #expect(try Self.object(beacon[0].json)["presence"] as? String == "ON")
        #expect(try Self.object(beacon[0].json)["rssi"] as? Int == -70)
        // A signal for an entry the bridge does not know changes nothing.
        #expect(ha.apply(BrokerEvent(topic: "signal/room/x", json: #"{"rssi_avg":-50.0}"#, entry: "unknown")).isEmpty)
    }

    /// Issue 40: an identity counts for the subscriptions that include every identity or it by name.
    @Test func anIdentityCountsForTheSubscriptionsThatIncludeIt() throws {
        var ha = HomeAssistant(settings: Self.settings, subscriptions: [
            BridgedSubscription(namespace: "people", type: "*", include: [.identity]),
            BridgedSubscription(namespace: "bob", type: "*", identities: ["bob"]),
            BridgedSubscription(namespace: "beacons", type: "*", include: [.iBeacon]),
        ], model: "sim")
        _ = ha.initialStates()
        let alice = ha.apply(BrokerEvent(topic: "found/identity/alice", json: #"{"rssi":-60,"rssi_avg":-60.0,"distance_m":1.10}"#, retain: .set("a")))
        let on = try alice.filter { try Self.object($0.json)["presence"] as? String == "ON" }.map(\.topic)
        #expect(on == ["ha/subscription/1"], "\(alice)")
        let bob = ha.apply(BrokerEvent(topic: "found/identity/bob", json: #"{"rssi":-60,"rssi_avg":-60.0,"distance_m":1.10}"#, retain: .set("b")))
        #expect(try bob.filter { try Self.object($0.json)["presence"] as? String == "ON" }.map(\.topic) == ["ha/subscription/1", "ha/subscription/2"],
                "\(bob)")
    }

    @Test func theErrorSensorCountsRaisedErrors() {
        var ha = HomeAssistant(settings: Self.settings, subscriptions: [], model: "sim")
        _ = ha.initialStates()
        #expect(ha.apply(BrokerEvent(topic: "$SYS/error/mqtt", json: "{}", retain: .set("$SYS/error/mqtt")))
                == [BrokerEvent(topic: "ha/errors", json: "{\"count\":1,\"errors\":[\"mqtt\"]}", retain: .set("ha/errors"))])
        #expect(ha.apply(BrokerEvent(topic: "$SYS/error/mqtt", json: "{}", retain: .clear("$SYS/error/mqtt")))
                == [BrokerEvent(topic: "ha/errors", json: "{\"count\":0,\"errors\":[]}", retain: .set("ha/errors"))])
    }
}
