import Foundation
import Testing

extension EndToEnd {
    /// docs/product.md §3 privacy: ids and address rotate every rotate_s, and subscribers don't notice.
    @Suite(.serialized)
    struct Rotation {
        @Test("Rotation every 2 s changes A's address and message ids, and B reports neither lost nor found again")
        func rotationIsInvisibleToSubscribers() async throws {
            let folder = try TemporaryFolder("rotation")
            let key = TestEnvironment.uniqueAPIKey("rotation")
            var a = TestGatewayConfig(apiKey: key, folder: folder, name: "a")
            a.rotateSeconds = 2
            a.publications = ["namespace = \"hall\"\ntype = \"light\"\ncontent = \"on\"\nmediums = [\"ble\"]"]
            var b = TestGatewayConfig(apiKey: key, folder: folder, name: "b")
            b.rotateSeconds = 2
            b.lostAfterSeconds = 3
            b.subscriptions = ["namespace = \"hall\"\ntype = \"*\"\nmediums = [\"ble\"]"]

            let gatewayB = try await b.start()
            let watch = try SocketClient(path: b.socketPath)
            _ = try await watch.request("SUB +/hall/#")
            let gatewayA = try await a.start()
            try await watch.waitForLine(startingWith: "found/hall/light ")
            // Three rotations on A, each logged with its new epoch.
            try await gatewayA.waitForLog(timeout: .seconds(10), what: "three rotations") {
                $0.components(separatedBy: "rotation: new message ids and address").count > 3
            }
            // B kept hearing A across them: it still has the message, found once, never lost.
            let found = try await watch.requestFound()
            #expect(found.contains { $0.contains("\"type\":\"light\"") }, "B lost the message across rotations: \(found)")
            #expect(watch.received.filter { $0.hasPrefix("found/hall/light ") }.count == 1)
            #expect(!watch.received.contains { $0.hasPrefix("lost/hall/light ") })
            // And A really used several addresses.
            let addresses = Set(gatewayA.log.components(separatedBy: "\n").compactMap { line -> String? in
                guard line.contains("advertising address set"), let range = line.range(of: "address=") else { return nil }
                return String(line[range.upperBound...].prefix(17))
            })
            #expect(addresses.count >= 2, "A's log shows the random addresses it used: \(addresses)")
            try await gatewayA.stop()
            try await gatewayB.stop()
        }
    }
}
