import Foundation
@testable import NearbyProtocol
import Testing
import TestSupport
@testable import Config

@Suite struct ConfigLoaderTests {
    @Test func theSpecificationExampleLoadsWithEveryKey() throws {
        let (config, board) = try ConfigFixture.loadExample("gateway.toml")
        #expect(board.name == "sim")
        #expect(config.apiKey == "a-real-key")
        #expect(config.logLevel == .info)
        #expect(config.radio == .init(device: "h4:/tmp/bt-server-le", exclusive: false, intervalMs: 100, rotateS: 600, lostAfterS: 10, scanDuty: 100))
        #expect(config.audio == .init(device: "default", protocol: .ultrasoundFast, volume: 50, intervalS: 5, capture: ""))
        #expect(config.socket == .init(path: "/run/nearby-gateway/gateway.sock", mode: 0o660, group: "", maxClients: 64))
        #expect(config.state == .init(path: "/var/lib/nearby-gateway/state.json", defaults: GatewayState(backgroundMode: true, permission: .granted, power: .active)))
        #expect(config.publications == [PublicationConfig(message: Message(namespace: "livingroom", type: "greeting", content: Array("hello".utf8)),
                                                          mediums: [.ble, .audio], mode: .both, background: false, ttlS: 0, line: 30)])
        #expect(config.subscriptions == [SubscriptionConfig(namespace: "livingroom", type: "*", mediums: [.ble], mode: .scan, background: true,
                                                            lostAfterS: 10, include: [], led: nil, line: 39)])
    }

    /// Issue 41: the seed's box receives: a phone publishes to it with mediums audio, mode scan, and the
    /// box's audio subscription in broadcast mode sends the subscriber beacon that makes it answer.
    @Test func theSetTopBoxExampleReceivesOverAudio() throws {
        let (config, board) = try ConfigFixture.loadExample("set-top-box.toml")
        #expect(board.name == "rpi4b")
        #expect(config.radio.device == "hci0")                           // from the board
        #expect(config.audio.device == "plughw:CARD=Headphones,DEV=0")   // from the board
        #expect(config.audio.capture == "plughw:CARD=Device,DEV=0")      // a USB microphone
        #expect(config.publications.isEmpty)
        let subscription = try #require(config.subscriptions.first)
        #expect(config.subscriptions.count == 1)
        #expect(subscription.mediums == [.audio])
        #expect(subscription.mode == .broadcast)
    }

    @Test func defaultsApply() throws {
        let (config, board) = try ConfigFixture.load("""
        api_key = "k"
        [[publication]]
        namespace = "n"
        type = "t"
        [[subscription]]
        namespace = "n"
        """)
        #expect(board.name == "sim")
        #expect(config.logLevel == .info)
        #expect(config.radio.device == "h4:/tmp/bt-server-le")
        #expect(config.leds.enabled)
        #expect(config.publications[0].message.content == [])
        #expect(config.publications[0].mediums == [.ble, .audio])
        #expect(config.publications[0].mode == .both)
        #expect(config.subscriptions[0].type == "*")
        #expect(config.subscriptions[0].lostAfterS == 10)
    }

    @Test func limitsHaveDefaultsRangesAndLines() throws {
        #expect(try ConfigFixture.load("api_key = \"k\"").0.limits == GatewayConfig.LimitSettings(found: 4096, publications: 64))
        let (config, _) = try ConfigFixture.load("api_key = \"k\"\n[limits]\nfound = 100\npublications = 3")
        #expect(config.limits == GatewayConfig.LimitSettings(found: 100, publications: 3))
        let problems = ConfigFixture.problems("api_key = \"k\"\n[limits]\nfound = 15\npublications = 0\nbeacons = 1")
        #expect(problems.contains { $0.hasPrefix("3: limits.found: ") }, "\(problems)")
        #expect(problems.contains { $0.hasPrefix("4: limits.publications: ") }, "\(problems)")
        #expect(problems.contains { $0.hasPrefix("5: limits.beacons: ") }, "\(problems)")
    }

    @Test func contentBase64AndLEDsOfTheBoard() throws {
        let (config, _) = try ConfigFixture.load("""
        api_key = "k"
        board = "rpi5"
        [radio]
        lost_after_s = 4
        [[publication]]
        namespace = "n"
        type = "t"
        content_base64 = "AAEC/w=="
        [[subscription]]
        namespace = "n"
        led = "user1"
        include = ["ibeacon", "eddystone-uid"]
        """)
        #expect(config.publications[0].message.content == [0, 1, 2, 255])
        #expect(config.subscriptions[0].led == "user1")
        #expect(config.subscriptions[0].lostAfterS == 4)
        #expect(config.subscriptions[0].include == [.iBeacon, .eddystoneUID])
    }

    @Test func everyProblemWithItsLine() {
        let problems = ConfigFixture.problems("""
        board = "rpi9"
        log_level = "loud"
        colour = 1

        [radio]
        interval_ms = 5
        device = "usb0"
        lost_afer_s = 3

        [audio]
        volume = 150
        protocol = "ultrasonic"

        [socket]
        mode = "0999"
        max_clients = 0

        [state]
        defaults = { permission = "maybe", power = 1 }
        """)
        #expect(problems == [
            "-: api_key: missing (required: every gateway that should see the others uses the same api_key)",
            "1: board: unknown board \"rpi9\" (known: rpi3b, rpi4b, rpi5, rpizero2w, sim; searched \(ConfigFixture.repository)/boards)",
            "2: log_level: \"loud\" is not one of \"trace\", \"debug\", \"info\", \"notice\", \"warning\", \"error\"",
            "3: colour: unknown key",
            "6: radio.interval_ms: 5 ms is out of range 20…10240 ms",
            "7: radio.device: \"usb0\" is neither \"hciN\" (a kernel controller) nor \"h4:PATH\" (an H4 socket)",
            "8: radio.lost_afer_s: unknown key (did you mean lost_after_s?)",
            "11: audio.volume: 150 is out of range 0…100",
            "12: audio.protocol: \"ultrasonic\" is not one of \"ultrasound-normal\", \"ultrasound-fast\", \"ultrasound-fastest\"",
            "15: socket.mode: \"0999\" is not an octal permission mode such as \"0660\"",
            "16: socket.max_clients: 0 is out of range 1…1024",
            "19: state.defaults.permission: \"maybe\" is not one of \"granted\", \"denied\", \"undecided\"",
            "19: state.defaults.power: expected a string, found integer",
        ])
    }

    @Test func publicationProblems() {
        let long = String(repeating: "t", count: 33)
        let problems = ConfigFixture.problems("""
        api_key = "k"
        [[publication]]
        namespace = "eddystone"
        type = "\(long)"
        content = "x"
        background = true

        [[publication]]
        namespace = "tv"
        type = "*"
        content_base64 = "!!"
        mediums = ["ble", "radio", "ble"]

        [[publication]]
        type = "t"
        content = "a"
        content_base64 = "YQ=="
        mode = "shout"
        ttl_s = -1

        [[publication]]
        namespace = "$SYS"
        type = "has space"
        mediums = []
        """)
        #expect(problems == [
            "3: publication[1].namespace: \"eddystone\" is reserved for beacon sightings; subscribe to beacons with include = [...]",
            "4: publication[1].type: is 33 bytes, at most 32 allowed",
            "6: publication[1].background: background = true is BLE only, but mediums include audio (mediums default to both; set mediums = [\"ble\"])",
            "10: publication[2].type: \"*\" matches types in subscriptions; a publication needs a real type",
            "11: publication[2].content_base64: is not valid base64",
            "12: publication[2].mediums: \"radio\" is not one of \"ble\", \"audio\"",
            "12: publication[2].mediums: \"ble\" is listed twice",
            "14: publication[3].namespace: missing",
            "17: publication[3].content_base64: give either content or content_base64, not both (content is on line 16)",
            "18: publication[3].mode: \"shout\" is not one of \"broadcast\", \"scan\", \"both\"",
            "19: publication[3].ttl_s: -1 s is out of range 0…31536000 s",
            "22: publication[4].namespace: must not start with '$' (reserved for $SYS topics)",
            "23: publication[4].type: must not contain U+0020 (it is a topic level: no '/', '+', '#', spaces or control characters)",
            "24: publication[4].mediums: must not be empty",
        ])
        // BLE carries a body of 304 bytes: 2 length bytes + "a" + "b" + 300 bytes of content. One more is refused.
        #expect(ConfigFixture.problems("""
        api_key = "k"
        [[publication]]
        namespace = "a"
        type = "b"
        content = "\(String(repeating: "x", count: 300))"
        mediums = ["ble"]
        """).isEmpty)
        let over = ConfigFixture.problems("""
        api_key = "k"
        [[publication]]
        namespace = "a"
        type = "b"
        content = "\(String(repeating: "x", count: 301))"
        mediums = ["ble"]
        """)
        #expect(over == ["5: publication[1].content: 301 bytes is over the ble limit of 300 bytes for this namespace and type (docs/protocol.md)"])
        let audioOver = ConfigFixture.problems("""
        api_key = "k"
        [[publication]]
        namespace = "a"
        type = "b"
        content_base64 = "\(Data(repeating: 1, count: 525).base64EncodedString())"
        """)
        #expect(audioOver == [
            "5: publication[1].content: 525 bytes is over the ble limit of 300 bytes for this namespace and type (docs/protocol.md)",
            "5: publication[1].content: 525 bytes is over the audio limit of 524 bytes for this namespace and type (docs/protocol.md)",
        ])
    }

    @Test func subscriptionProblems() {
        let problems = ConfigFixture.problems("""
        api_key = ""
        board = "rpi4b"
        [[subscription]]
        namespace = "a/b"
        led = "status"
        lost_after_s = "10"
        [[subscription]]
        namespace = "ibeacon"
        type = "x+y"
        led = "user9"
        include = ["ibeacon", "altbeacon"]
        mediums = ["audio"]
        background = true
        [[subscription]]
        namespace = "n"
        colour = "red"
        mode = 3
        """)
        #expect(problems == [
            "1: api_key: must not be empty",
            "4: subscription[1].namespace: must not contain '/' (it is a topic level: no '/', '+', '#', spaces or control characters)",
            "5: subscription[1].led: \"status\" is driven by the gateway itself; use another LED of the board",
            "6: subscription[1].lost_after_s: expected an integer, found string",
            "8: subscription[2].namespace: \"ibeacon\" is reserved for beacon sightings; subscribe to beacons with include = [...]",
            "9: subscription[2].type: must not contain '+' (it is a topic level: no '/', '+', '#', spaces or control characters)",
            "10: subscription[2].led: board rpi4b has no LED \"user9\" (it has user1, user2)",
            "11: subscription[2].include: \"altbeacon\" is not one of \"eddystone-uid\", \"eddystone-url\", \"eddystone-tlm\", \"ibeacon\", \"identity\", \"identity/<name>\"",
            "12: subscription[2].mediums: receives on audio only, but audio.capture is empty: it would never find anything (set audio.capture or add \"ble\")",
            "13: subscription[2].background: background = true is BLE only, but mediums include audio",
            "16: subscription[3].colour: unknown key",
            "17: subscription[3].mode: expected a string, found integer",
        ])
    }

    @Test func syntaxErrorsAndShapesAreProblemsToo() {
        #expect(ConfigFixture.problems("api_key = \"k\"\nradio = 3\npublication = 1") == [
            "2: radio: expected a table ([radio]), found integer",
            "3: publication: expected [[publication]] tables, found integer",
        ])
        #expect(ConfigFixture.problems("api_key = \"k\"\n\n[radio\n") == ["3: : expected ] to close the table header"])
        #expect(ConfigFixture.problems("api_key = \"k\"\n[radio]\nrotate_s = 1.5") == ["3: : floating-point numbers are not supported (1.5); use an integer"])
        #expect(throws: ConfigError.self) { try ConfigLoader.load(path: "/nonexistent/gateway.toml", boards: ConfigFixture.boards) }
    }

    @Test func problemsPrintLikeACompiler() {
        #expect(ConfigProblem(file: "g.toml", line: 7, key: "radio.rotate_s", message: "bad").description == "g.toml:7: radio.rotate_s: bad")
        #expect(ConfigProblem(file: "g.toml", line: nil, key: "api_key", message: "missing").description == "g.toml: api_key: missing")
        #expect(ConfigProblem(file: "g.toml", line: 3, key: "", message: "syntax").description == "g.toml:3: syntax")
    }

    @Test func nearMisses() {
        #expect(ConfigReader.isNearMiss("lost_afer_s", "lost_after_s"))
        #expect(ConfigReader.isNearMiss("intervalms", "interval_ms"))
        #expect(ConfigReader.isNearMiss("mdoe", "mode"))
        #expect(!ConfigReader.isNearMiss("colour", "content"))
    }
}
