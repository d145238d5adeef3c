import Foundation
import Testing

extension EndToEnd {
    /// Issue 5's end-to-end cases: runtime publications and what subscribers see.
    @Suite(.serialized)
    struct SocketPublish {
        @Test("PUB from a client is found by a second gateway and lost after the client disconnects")
        func runtimePublicationLivesWithItsClient() async throws {
            let folder = try TemporaryFolder("pub")
            let key = TestEnvironment.uniqueAPIKey("pub")
            let a = TestGatewayConfig(apiKey: key, folder: folder, name: "a")
            var b = TestGatewayConfig(apiKey: key, folder: folder, name: "b")
            b.lostAfterSeconds = 2
            b.subscriptions = ["namespace = \"kitchen\"\ntype = \"*\"\nmediums = [\"ble\"]\nlost_after_s = 2"]
            let gatewayA = try await a.start()
            let gatewayB = try await b.start()
            let watch = try SocketClient(path: b.socketPath)
            _ = try await watch.request("SUB +/kitchen/#")

            let publisher = try SocketClient(path: a.socketPath)
            let content = Data("timer done ✓".utf8).base64EncodedString()
            let reply = try await publisher.request("PUB kitchen/timer \(content) mediums=ble")
            #expect(reply.hasPrefix("OK "), "PUB answered \(reply)")
            let found = try await watch.waitForLine(startingWith: "found/kitchen/timer ")
            #expect(found.eventJSON["text"] as? String == "timer done ✓")

            // Only subscribed clients get events: a client subscribed elsewhere sees nothing of it.
            let other = try SocketClient(path: b.socketPath)
            _ = try await other.request("SUB found/garden/#")
            #expect(try await other.request("PING") == "PONG")

            publisher.close()
            try await watch.waitForLine(startingWith: "lost/kitchen/timer ", timeout: .seconds(8))
            #expect(!other.received.contains { $0.hasPrefix("found/") || $0.hasPrefix("lost/") })
            try await gatewayA.stop()
            try await gatewayB.stop()
        }
    }
}
