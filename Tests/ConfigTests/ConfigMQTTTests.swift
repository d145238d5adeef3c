import Foundation
import Testing
import TestSupport
@testable import Config
import NearbyProtocol

@Suite struct ConfigMQTTTests {
    static let base = """
        api_key = "a-real-key"
        board = "sim"

        """

    @Test func noSectionMeansNoBridge() throws {
        let (config, _) = try ConfigFixture.load(Self.base)
        #expect(config.mqtt == nil)
    }

    @Test func urlsOfEachTransport() throws {
        #expect(try MQTTSettings.transport(parsing: "mqtt://broker.lan").get() == .tcp(host: "broker.lan", port: 1883))
        #expect(try MQTTSettings.transport(parsing: "mqtt://10.0.0.2:1884/").get() == .tcp(host: "10.0.0.2", port: 1884))
        #expect(try MQTTSettings.transport(parsing: "mqtts://[::1]:8884").get() == .tls(host: "::1", port: 8884))
        #expect(try MQTTSettings.transport(parsing: "mqtts://broker").get() == .tls(host: "broker", port: 8883))
        #expect(try MQTTSettings.transport(parsing: "unix:///run/mosquitto/m.sock").get() == .unix(path: "/run/mosquitto/m.sock"))
        for bad in ["http://x", "mqtt://", "mqtt://host:0", "mqtt://host:x", "mqtt://u:p@host", "mqtt://host/path", "unix://relative"] {
            #expect(throws: MQTTSettings.URLProblem.self) { try MQTTSettings.transport(parsing: bad).get() }
        }
    }

    @Test func defaultsAndEveryKey() throws {
        let (config, _) = try ConfigFixture.load(Self.base + """
            [mqtt]
            url = "mqtt://broker.lan"
            client_id = "gw-kitchen"
            username = "gw"
            password = "pw"
            prefix = "house/nearby"
            qos = 1
            keepalive_s = 30
            queue = 50
            reconnect_max_s = 10
            discovery = false
            discovery_prefix = "ha"
            """)
        let mqtt = try #require(config.mqtt)
        #expect(mqtt == MQTTSettings(url: "mqtt://broker.lan", transport: .tcp(host: "broker.lan", port: 1883), clientID: "gw-kitchen",
                                     username: "gw", password: "pw", prefix: "house/nearby", qos: 1, keepaliveS: 30, queue: 50,
                                     reconnectMaxS: 10, discovery: false, discoveryPrefix: "ha"))
        #expect(!"\(mqtt)".contains("pw\"") && !String(reflecting: mqtt).contains(", password pw"))
        #expect("\(mqtt)".contains("password <redacted>"))
        let (minimal, _) = try ConfigFixture.load(Self.base + "[mqtt]\nurl = \"unix:///run/m.sock\"\n")
        #expect(minimal.mqtt?.prefix == "nearby")
        #expect(minimal.mqtt?.queue == 1000)
        #expect(minimal.mqtt?.clientID.hasPrefix("nearby-gateway-") == true)
    }

    @Test func everyProblemWithItsLine() throws {
        let problems = ConfigFixture.problems(Self.base + """
            [mqtt]
            url = "mqtts://broker"
            password = "x"
            prefix = "$bad/"
            qos = 2
            queue = 0
            commands = "yes"
            keepalive_z = 10
            """)
        #expect(problems == [
            "4: mqtt.ca_file: missing: mqtts:// needs the CA file that signed the broker's certificate",
            "5: mqtt.username: missing: a password needs a username",
            "6: mqtt.prefix: must not start with $ (reserved by brokers)",
            "7: mqtt.qos: 2 is out of range 0…1",
            "8: mqtt.queue: 0 is out of range 1…100000",
            "9: mqtt.commands: expected true or false, found string",
            "10: mqtt.keepalive_z: unknown key (did you mean keepalive_s?)",
        ])
        #expect(ConfigFixture.problems(Self.base + "[mqtt]\nprefix = \"x\"\n").first?.hasPrefix("3: mqtt.url: missing") == true)
        #expect(ConfigFixture.problems(Self.base + "[mqtt]\nurl = \"tcp://x\"\n") == ["4: mqtt.url: \"tcp://x\" must start with mqtt://, mqtts:// or unix://"])
    }

    @Test func passwordFileMustBePrivate() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mqtt-pw-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("pw").path
        try "secret\n".write(toFile: file, atomically: false, encoding: .utf8)
        chmod(file, 0o644)
        let text = Self.base + "[mqtt]\nurl = \"mqtt://b\"\nusername = \"gw\"\npassword_file = \"\(file)\"\n"
        #expect(ConfigFixture.problems(text) == ["6: mqtt.password_file: \(file) is readable by others (mode 0644); chmod 600 it"])
        chmod(file, 0o600)
        let (config, _) = try ConfigFixture.load(text)
        #expect(config.mqtt?.passwordFile == file)
    }

    /// Issue 29 item 5: `room` and `fleet` (docs/config.md). A room name also arrives from other
    /// gateways, so the same check applies to theirs (`MQTTSettings.roomProblem`).
    @Test func roomAndFleet() throws {
        let (config, _) = try ConfigFixture.load(Self.base + "[mqtt]\nurl = \"mqtt://b\"\nroom = \"Küche 1\"\nfleet = \"house/rooms\"\n")
        #expect(config.mqtt?.room == "Küche 1")
        #expect(config.mqtt?.fleet == "house/rooms")
        let (minimal, _) = try ConfigFixture.load(Self.base + "[mqtt]\nurl = \"mqtt://b\"\n")
        #expect(minimal.mqtt?.room == nil)
        #expect(minimal.mqtt?.fleet == "nearby/fleet")
        let problems = ConfigFixture.problems(Self.base + """
            [mqtt]
            url = "mqtt://b"
            room = "kitchen\\u001b[2J"
            fleet = "a/#"

            """)
        #expect(problems == ["5: mqtt.room: must not contain control characters", "6: mqtt.fleet: must not contain +, # or NUL"])
        #expect(ConfigFixture.problems(Self.base + "[mqtt]\nurl = \"mqtt://b\"\nroom = \"\"\n") == ["5: mqtt.room: must be 1 to 64 bytes"])
        #expect(MQTTSettings.roomProblem(String(repeating: "ä", count: 33)) != nil, "66 bytes")
        #expect(MQTTSettings.roomProblem("a\u{85}b") != nil, "C1 NEL")
        #expect(MQTTSettings.roomProblem("living room") == nil)
    }
}
