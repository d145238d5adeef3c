#if DEBUG || FUZZING
@testable import NearbyProtocol
import Foundation
@testable import Modem
import Radio
import TestSupport

/// `--write-seeds DIR`: the starting corpus of every target, built from the product's own encoders
/// (real frames under the fuzz key, real beacons, real configs) so mutations start from valid input.
/// `scripts/fuzz --seeds` writes them to fuzz/corpus, where they are kept in the repository.
enum SeedWriter {
    static func writeAll(into folder: String) -> Int32 {
        do {
            for (target, seeds) in try allSeeds() {
                let directory = "\(folder)/\(target)"
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                for (index, seed) in seeds.enumerated() {
                    try Data(seed).write(to: URL(fileURLWithPath: String(format: "%@/seed-%02d", directory, index)))
                }
                print("\(target): \(seeds.count) seeds")
            }
            return 0
        } catch {
            FileHandle.standardError.write(Data("writing seeds: \(error)\n".utf8))
            return 1
        }
    }

    static func allSeeds() throws -> [(String, [[UInt8]])] {
        let ads = try adverts()
        let events = ads.map(legacyReport) + controllerEvents
        return [
            ("h4-stream", events.map { [7, 31, 255, 1] + h4($0) } + [[255, 255, 255, 255] + events.flatMap(h4)]),
            ("hci-event", events),
            ("ad-beacon", ads),
            ("frames", try frameRecords()),
            ("socket-line", socketLines),
            ("config-toml", configs),
            ("state-file", states.map { Array($0.utf8) }),
            ("wav", wavs),
            ("modem-rx", try audio()),
        ]
    }

    // MARK: Radio

    /// Whole adverts: Eddystone UID/URL/TLM, iBeacon, a name, and our own frames.
    static func adverts() throws -> [[UInt8]] {
        var ads = [
            hex("0201060303aafe1716aafe00e7edd1ebeac04e5defa0170bdb87539b670000"),
            hex("0201061aff4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5"),
            hex("0303aafe1116aafe10eb03676f6f2e676c2f53367a5436"),
            hex("0303aafe1116aafe20000bb8178000000100") + [0, 0, 0, 0x64],
            hex("020106") + [8, 0x09] + Array("gateway".utf8),
        ]
        for (message, epoch) in FrameTargets.authentic.prefix(2) {
            ads += try FrameTargets.codec.bleAdverts(for: message, epoch: epoch)
        }
        ads.append(FrameTargets.codec.subscriberBeacon(namespace: "livingroom", type: "*", epoch: FrameTargets.epoch))
        return ads
    }

    /// An LE Advertising Report event around one advert, as btvirt sends it.
    static func legacyReport(_ ad: [UInt8]) -> [UInt8] {
        HCIEventBytes.legacyReport(ad, address: [0x42, 0x00, 0x02, 0x01, 0xAA, 0x00])
    }

    static let controllerEvents: [[UInt8]] = {
        let iBeacon = hex("0201061aff4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5")
        return [
            hex("3e1502010301c101020304c50902010605ffffff01027f"),
            HCIEventBytes.extendedReport(iBeacon),
            hex("0e0c0101100009000009f1050000"),   // Read Local Version
            hex("0e0c01032000ff49010000000000"),   // LE Read Local Supported Features
            hex("0e0a01091000420002011aaa00"),     // Read BD_ADDR
            hex("0f0401013a20"), [0x10, 0x01, 0x03],
        ]
    }()

    static func h4(_ event: [UInt8]) -> [UInt8] { [0x04] + event }

    // MARK: Frames

    /// Records of `control, length, bytes` (see FrameTargets.frames): every chunk of each message, as
    /// manufacturer data, whole adverts and audio payloads; replays and another key's frames too.
    static func frameRecords() throws -> [[UInt8]] {
        var seeds: [[UInt8]] = []
        func records(_ frames: [[UInt8]], control: UInt8) -> [UInt8] {
            frames.flatMap { [control, UInt8($0.count)] + $0 }
        }
        for (message, epoch) in FrameTargets.authentic + FrameTargets.replayed {
            let ads = try FrameTargets.codec.bleAdverts(for: message, epoch: epoch)
            seeds.append(records(ads.map { Array($0[2...]) }, control: 0x01))
            seeds.append(records(ads, control: 0x1A))
            seeds.append(records(try FrameTargets.codec.audioPayloads(for: message, epoch: epoch), control: 0x04))
        }
        let forged = try FrameTargets.otherKey.bleAdverts(for: FrameTargets.intruder, epoch: FrameTargets.epoch)
        seeds.append(records(forged.map { Array($0[2...]) }, control: 0x02))
        let beacon = FrameTargets.codec.subscriberBeacon(namespace: "kitchen", type: "timer", epoch: FrameTargets.epoch)
        seeds.append(records([beacon], control: 0x08) + records([Array(beacon[2...])], control: 0x83))
        return seeds
    }

    // MARK: Socket, config, state

    static let socketLines: [[UInt8]] = [
        "SUB found/#\nSUB lost/+/greeting\nSUB $SYS/#\nUNSUB found/#\nPING\r\n",
        "PUB kitchen/timer dGltZXIgZG9uZSDinJM= mediums=ble mode=scan\nUNPUB 3\nGET stats\nGET found\n",
        "SET power standby\nSET background off\nSET permission undecided\nSET debug on\nGET permission\n",
        "SUB a/+/+/#\nSUB +\nSUB #\nSUB /\nSUB a//b\nBOGUS\n\n\nsub found/x\n",
        String(repeating: "x", count: 300) + "\nPING\n",
    ].map { [64, 5, 17, 200] + Array($0.utf8) }

    static let configs: [[UInt8]] = {
        var texts = ["""
            api_key = "k"
            board = "sim"
            [radio]
            device = "h4:/tmp/bt-server-le"
            lost_after_s = 3
            [socket]
            path = "/tmp/x.sock"
            mode = "0660"
            group = "daemon"
            [state]
            path = "/tmp/s/state.json"
            defaults = { background_mode = false, permission = "undecided", power = "standby" }
            [leds]
            enabled = true

            [[publication]]
            namespace = "a"
            type = "b"
            content_base64 = "aGk="
            mediums = ["ble"]
            mode = "scan"
            ttl_s = 5

            [[subscription]]
            namespace = "a"
            type = "*"
            include = ["eddystone-uid", "ibeacon"]
            led = "user1"
            """,
            "api_key = 'literal'\nboard = \"rpi4b\"\nlog_level = \"debug\"\n[audio]\nprotocol = \"ultrasound-fastest\"\nvolume = 100\ncapture = \"hw:1\"\n",
            "# comment only\n",
            "api_key = \"\"\"\nmulti\nline\"\"\"\nboard = \"sim\"\n[radio]\ninterval_ms = 1_000\n",
        ]
        for example in ["examples/gateway.toml", "examples/set-top-box.toml"] {
            if let text = try? String(contentsOfFile: example, encoding: .utf8) { texts.append(text) }
        }
        return texts.map { Array($0.utf8) }
    }()

    static let states = [
        #"{"background_mode": true, "permission": "granted", "power": "active"}"# + "\n",
        #"{"background_mode": false, "permission": "undecided", "power": "standby"}"#,
        #"{"power": "standby", "future_key": [1, 2, {"x": null}]}"#,
        #"{"background_mode": null, "permission": "denied"}"#,
        #"{"background_mode": 1}"#, "[]", "", "{\"power\": \"act",
    ]

    // MARK: Audio

    static let wavs: [[UInt8]] = {
        let tone = (0..<400).map { Float(sin(Double($0) * 0.3)) * 0.5 }
        return [
            WAVParser.serialize(tone, sampleRate: 48_000, format: .pcm16),
            WAVParser.serialize(tone, sampleRate: 44_100, format: .float32),
            WAVParser.serialize([], sampleRate: 8_000, format: .pcm16),
        ]
    }()

    /// Pieces of a real beacon (`choice, cut` then 16-bit samples): its start markers, its middle.
    static func audio() throws -> [[UInt8]] {
        let samples = try GGWaveEncoder.encode(Array("hi".utf8), protocol: .ultrasoundFastest, volume: 50)
        func pcm(_ part: ArraySlice<Float>) -> [UInt8] {
            part.flatMap { sample -> [UInt8] in
                let value = UInt16(bitPattern: WAVParser.pcm16(sample))
                return [UInt8(value & 0xFF), UInt8(value >> 8)]
            }
        }
        let window = 6_000
        return [
            [0x07, 15] + pcm(samples.prefix(window)),
            [0x04, 3] + pcm(samples.dropFirst(samples.count / 2).prefix(window)),
            [0x01, 0] + pcm(samples.suffix(window)),
            [0x02, 255] + [UInt8](repeating: 0, count: 2_000),
        ]
    }
}
#endif
