import Foundation
import Testing

extension EndToEnd {
    /// Issue 4's "done when": two gateways on btvirt find and lose each other's messages.
    @Suite(.serialized)
    struct Discovery {
        @Test("A publishes, B (subscribed to livingroom/*) finds it with the exact content, then loses it when A stops")
        func twoGatewaysFindAndLose() async throws {
            let folder = try TemporaryFolder("discovery")
            let key = TestEnvironment.uniqueAPIKey("discovery")
            var a = TestGatewayConfig(apiKey: key, folder: folder, name: "a")
            a.publications = ["namespace = \"livingroom\"\ntype = \"greeting\"\ncontent = \"hello\"\nmediums = [\"ble\"]"]
            var b = TestGatewayConfig(apiKey: key, folder: folder, name: "b")
            b.lostAfterSeconds = 3
            b.subscriptions = ["namespace = \"livingroom\"\ntype = \"*\"\nmediums = [\"ble\"]"]

            let gatewayB = try await b.start()
            let monitor = try SocketClient(path: b.socketPath)
            #expect(try await monitor.request("SUB found/#") .hasPrefix("OK"))
            #expect(try await monitor.request("SUB lost/#").hasPrefix("OK"))

            let aStarted = ContinuousClock.now
            let gatewayA = try await a.start()
            let found = try await monitor.waitForLine(startingWith: "found/livingroom/greeting ", timeout: .seconds(10))
            let findTime = ContinuousClock.now - aStarted
            let json = found.eventJSON
            #expect(json["namespace"] as? String == "livingroom")
            #expect(json["type"] as? String == "greeting")
            #expect(json["text"] as? String == "hello")
            #expect(json["content"] as? String == Data("hello".utf8).base64EncodedString())
            #expect(json["medium"] as? String == "ble")
            #expect(json.keys.contains("rssi") && json["rssi"] is NSNull, "btvirt reports RSSI 127 = not available")
            print("found \(findTime) after gateway A started")

            let stopped = ContinuousClock.now
            #expect(try await gatewayA.stop() == 0)
            let lost = try await monitor.waitForLine(startingWith: "lost/livingroom/greeting ", timeout: .seconds(8))
            let lostAfter = ContinuousClock.now - stopped
            #expect(lost.eventJSON["text"] as? String == "hello")
            // Lost is measured from the last frame seen, which is at most one re-announce before A stopped.
            #expect(lostAfter >= .seconds(2), "lost fired \(lostAfter) after A stopped, before lost_after_s")
            print("lost \(lostAfter) after gateway A stopped (lost_after_s = 3)")
            #expect(try await gatewayB.stop() == 0)
            // Debug logs of both gateways, start to stop, never show the api_key.
            #expect(!gatewayA.log.contains(key) && !gatewayB.log.contains(key), "the api_key reached the log")
        }

        @Test("A gateway with another api_key never reports the message, and counts the frames it rejects")
        func otherKeyNeverFinds() async throws {
            let folder = try TemporaryFolder("otherkey")
            let key = TestEnvironment.uniqueAPIKey("otherkey")
            var a = TestGatewayConfig(apiKey: key, folder: folder, name: "a")
            a.publications = ["namespace = \"livingroom\"\ntype = \"secret\"\ncontent = \"for our key only\"\nmediums = [\"ble\"]"]
            var b = TestGatewayConfig(apiKey: key, folder: folder, name: "b")
            b.subscriptions = ["namespace = \"livingroom\"\ntype = \"*\"\nmediums = [\"ble\"]"]
            var c = TestGatewayConfig(apiKey: TestEnvironment.uniqueAPIKey("intruder"), folder: folder, name: "c")
            c.subscriptions = ["namespace = \"livingroom\"\ntype = \"*\"\nmediums = [\"ble\"]"]

            let gatewayB = try await b.start()
            let gatewayC = try await c.start()
            let watchB = try SocketClient(path: b.socketPath)
            let watchC = try SocketClient(path: c.socketPath)
            _ = try await watchB.request("SUB found/#")
            _ = try await watchC.request("SUB found/#")
            let gatewayA = try await a.start()

            try await watchB.waitForLine(startingWith: "found/livingroom/secret ")
            // C hears the same adverts: wait until it has rejected some of them as not authentic.
            let deadline = ContinuousClock.now + .seconds(10)
            var rejected = 0
            while rejected == 0, ContinuousClock.now < deadline {
                let before = watchC.received.count
                watchC.send("GET stats")
                let stats = try await watchC.waitForLine(startingWith: "$SYS/stats ", after: before)
                let dropped = stats.eventJSON["frames_dropped"] as? [String: Int] ?? [:]
                rejected = dropped["authentication-failed"] ?? 0
            }
            #expect(rejected > 0, "gateway C never saw (and rejected) A's frames")
            #expect(!watchC.received.contains { $0.hasPrefix("found/") }, "a gateway with another key reported a message")
            try await gatewayA.stop()
            try await gatewayB.stop()
            try await gatewayC.stop()
        }

        @Test("A scan-mode publication stays silent until a broadcast-mode subscriber appears, then is found")
        func scanModePublication() async throws {
            let folder = try TemporaryFolder("scanmode")
            let key = TestEnvironment.uniqueAPIKey("scanmode")
            var a = TestGatewayConfig(apiKey: key, folder: folder, name: "a")
            a.publications = [
                "namespace = \"shop\"\ntype = \"offer\"\ncontent = \"on request\"\nmediums = [\"ble\"]\nmode = \"scan\"",
                // Broadcast all the time: proves the listener hears A while the offer stays silent.
                "namespace = \"shop\"\ntype = \"hours\"\ncontent = \"9-18\"\nmediums = [\"ble\"]\nmode = \"broadcast\"",
            ]
            var listener = TestGatewayConfig(apiKey: key, folder: folder, name: "listener")
            listener.subscriptions = ["namespace = \"shop\"\ntype = \"*\"\nmediums = [\"ble\"]\nmode = \"scan\""]
            var asker = TestGatewayConfig(apiKey: key, folder: folder, name: "asker")
            asker.subscriptions = ["namespace = \"shop\"\ntype = \"offer\"\nmediums = [\"ble\"]\nmode = \"broadcast\""]

            let gatewayA = try await a.start()
            let gatewayL = try await listener.start()
            let watchL = try SocketClient(path: listener.socketPath)
            _ = try await watchL.request("SUB found/#")
            // While nobody asks, A transmits only its broadcast publication: the listener finds that one
            // and keeps hearing A's adverts for many re-announce rounds, but never the offer.
            try await watchL.waitForLine(startingWith: "found/shop/hours ")
            let before = try await stats(watchL)["messages_decoded"] as? Int ?? 0
            let deadline = ContinuousClock.now + .seconds(10)
            var decoded = before
            while decoded < before + 20, ContinuousClock.now < deadline {
                decoded = try await stats(watchL)["messages_decoded"] as? Int ?? 0
            }
            #expect(decoded >= before + 20, "the listener stopped hearing A")
            #expect(!watchL.received.contains { $0.hasPrefix("found/shop/offer") }, "scan-mode publication was on the air unasked")

            let gatewayS = try await asker.start()
            let watchS = try SocketClient(path: asker.socketPath)
            _ = try await watchS.request("SUB found/#")
            try await watchS.waitForLine(startingWith: "found/shop/offer ", timeout: .seconds(10))
            try await watchL.waitForLine(startingWith: "found/shop/offer ", timeout: .seconds(10))
            for gateway in [gatewayA, gatewayL, gatewayS] { try await gateway.stop() }
        }
    }
}

/// `GET stats` → the `$SYS/stats` JSON.
func stats(_ client: SocketClient) async throws -> [String: Any] {
    let before = client.received.count
    client.send("GET stats")
    return try await client.waitForLine(startingWith: "$SYS/stats ", after: before).eventJSON
}
