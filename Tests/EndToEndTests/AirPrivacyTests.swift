import Foundation
import Logging
import Radio
import Synchronization
import SystemCall
import Testing

extension EndToEnd {
    /// Issue 15, item 2: a BLE sniffer on the same air reads neither namespace, type nor content of a
    /// publication, and a gateway with the api_key still finds it.
    @Suite(.serialized)
    struct AirPrivacy {
        @Test("A sniffer hears A's adverts but no plaintext in them; B, with the key, finds the message")
        func nothingReadableOnTheAir() async throws {
            let folder = try TemporaryFolder("air-privacy")
            let key = TestEnvironment.uniqueAPIKey("air-privacy")
            let content = "x-scan private guide"
            var a = TestGatewayConfig(apiKey: key, folder: folder, name: "a")
            a.publications = ["namespace = \"den\"\ntype = \"tv\"\ncontent = \"\(content)\"\nmediums = [\"ble\"]"]
            var b = TestGatewayConfig(apiKey: key, folder: folder, name: "b")
            b.subscriptions = ["namespace = \"den\"\ntype = \"*\"\nmediums = [\"ble\"]"]

            // The sniffer: the Radio module scanning, keeping every manufacturer-specific data field.
            let loop = try EventLoop(name: "sniffer")
            defer { loop.shutdown() }
            let sniffer = Radio(device: .h4(path: TestEnvironment.btvirtServer), logger: Logger(label: "sniffer"), loop: loop)
            let heard = Heard()
            let running = Task { await sniffer.run() }
            let collecting = Task {
                for await event in sniffer.events {
                    guard case .sighting(let sighting) = event else { continue }
                    for structure in sighting.adStructures where structure.type == 0xFF { heard.data.withLock { $0.append(structure.data) }; heard.changed.signal() }
                }
            }
            defer { running.cancel(); collecting.cancel() }
            await sniffer.setScanning(true)

            let gatewayB = try await b.start()
            let watch = try SocketClient(path: b.socketPath)
            _ = try await watch.request("SUB found/#")
            let gatewayA = try await a.start()
            let found = try await watch.waitForLine(startingWith: "found/den/tv ", timeout: .seconds(20))
            #expect(found.eventJSON["text"] as? String == content)

            // Every chunk of A's message went by the sniffer at least once (2 chunks: 2 + 3 + 20 bytes).
            // Other gateways' frames may be on the shared air too (another test run on this machine):
            // they are ours as well, and must not leak either, but only A's two chunks are awaited.
            let deadline = ContinuousClock.now + .seconds(15)
            func ours() -> [[UInt8]] { heard.data.withLock { $0 }.filter { $0.count > 3 && $0[0] == 0xFF && $0[1] == 0xFF && $0[2] != 0x53 } }
            let chunks: Set<UInt8> = [0x01, 0x11]
            while true {
                let seen = heard.changed.generation
                guard !Set(ours().map { $0[3] }).isSuperset(of: chunks), ContinuousClock.now < deadline else { break }
                await heard.changed.wait(since: seen, until: deadline)
            }
            let frames = ours()
            #expect(Set(frames.map { $0[3] }).isSuperset(of: chunks), "the sniffer heard \(frames.count) of our frames")
            let air = frames.flatMap { $0 }
            for secret in ["den", "x-scan", "private", "guide"] {
                let needle = Array(secret.utf8)
                let leaked = air.count >= needle.count && (0...(air.count - needle.count)).contains { Array(air[$0..<($0 + needle.count)]) == needle }
                #expect(!leaked, "\(secret) readable in the adverts")
            }
            try await gatewayA.stop()
            try await gatewayB.stop()
        }

        /// What the sniffer heard, shared with its collecting task.
        final class Heard: Sendable {
            let data = Mutex<[[UInt8]]>([])
            /// Signalled on every structure heard, so the test waits for them rather than polling.
            let changed = ChangeSignal()
        }
    }
}
