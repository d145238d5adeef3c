import Foundation
import Testing

extension EndToEnd {
    /// Issue 29 item 3: subscriptions made at run time (`SUBSCRIBE`), tested like PUB's: found and
    /// lost for them, their end with the connection and with UNSUBSCRIBE, consent, limits, MQTT.
    @Suite(.serialized)
    struct SocketSubscribe {
        /// A publishing `kitchen/timer` on the air; B with no `[[subscription]]` at all, so what B
        /// finds it finds through SUBSCRIBE.
        static func pair(_ label: String, folder: TemporaryFolder, permission: String = "granted",
                         extra: String = "") throws -> (a: TestGatewayConfig, b: TestGatewayConfig) {
            let key = TestEnvironment.uniqueAPIKey(label)
            var a = TestGatewayConfig(apiKey: key, folder: folder, name: "a")
            a.publications = ["namespace = \"kitchen\"\ntype = \"timer\"\ncontent = \"done\"\nmediums = [\"ble\"]\nmode = \"broadcast\""]
            var b = TestGatewayConfig(apiKey: key, folder: folder, name: "b")
            b.lostAfterSeconds = 2
            b.permission = permission
            b.extra = extra
            return (a, b)
        }

        @Test("SUBSCRIBE finds a message; it is lost after its connection closes; UNSUBSCRIBE ends another earlier; handles are per connection")
        func subscriptionLivesWithItsConnection() async throws {
            let folder = try TemporaryFolder("subscribe")
            let (a, b) = try Self.pair("subscribe", folder: folder)
            let gatewayA = try await a.start()
            let gatewayB = try await b.start()
            let watch = try SocketClient(path: b.socketPath)
            _ = try await watch.request("SUB +/kitchen/#")

            let subscriber = try SocketClient(path: b.socketPath)
            let handle = try await subscriber.request("SUBSCRIBE kitchen/* mediums=ble mode=scan")
            #expect(handle == "OK s1", "SUBSCRIBE answered \(handle)")
            let found = try await watch.waitForLine(startingWith: "found/kitchen/timer ", timeout: .seconds(15))
            #expect(found.eventJSON["text"] as? String == "done")
            // Another connection cannot end it.
            #expect(try await watch.request("UNSUBSCRIBE s1").hasPrefix("ERR not-found "))

            // The connection closes: its subscription ends, nothing refreshes the message, lost follows.
            subscriber.close()
            try await gatewayB.waitForLog("client gone: its subscriptions end", timeout: .seconds(10))
            try await watch.waitForLine(startingWith: "lost/kitchen/timer ", timeout: .seconds(10))

            // UNSUBSCRIBE ends one earlier, with the connection still open.
            let second = try SocketClient(path: b.socketPath)
            let mark = watch.received.count
            #expect(try await second.request("SUBSCRIBE kitchen/timer mediums=ble mode=scan") == "OK s2")
            _ = try await watch.waitForLine(startingWith: "found/kitchen/timer ", after: mark, timeout: .seconds(15))
            #expect(try await second.request("UNSUBSCRIBE s2") == "OK")
            #expect(try await second.request("UNSUBSCRIBE s2").hasPrefix("ERR not-found "))
            try await watch.waitForLine(startingWith: "lost/kitchen/timer ", after: mark, timeout: .seconds(10))
            #expect(try await second.request("GET found") == "OK 0")

            #expect(try await gatewayA.stop() == 0)
            #expect(try await gatewayB.stop() == 0)
        }

        @Test("SUBSCRIBE has PUB's error codes and limits: not-permitted without consent, bad-topic, bad-argument, limit at 17 per connection; SIGHUP keeps them")
        func subscribeAnswersLikePub() async throws {
            let folder = try TemporaryFolder("subscribe-err")
            let (_, b) = try Self.pair("subscribe-err", folder: folder, permission: "undecided")
            let gateway = try await b.start()
            let client = try SocketClient(path: b.socketPath)
            let refused = try await client.request("SUBSCRIBE kitchen/*")
            #expect(refused.hasPrefix("ERR not-permitted "), "SUBSCRIBE while undecided answered \(refused)")
            #expect(try await client.request("SUBSCRIBE kitchen").hasPrefix("ERR bad-topic "))
            #expect(try await client.request("SUBSCRIBE */timer").hasPrefix("ERR bad-topic "))
            #expect(try await client.request("SUBSCRIBE kitchen/* mediums=radio").hasPrefix("ERR bad-argument "))
            #expect(try await client.request("UNSUBSCRIBE p1").hasPrefix("ERR bad-argument "))

            #expect(try await client.request("SET permission granted") == "OK")
            for k in 0..<16 {
                let reply = try await client.request("SUBSCRIBE kitchen/t\(k) mode=scan")
                #expect(reply.hasPrefix("OK s"), "SUBSCRIBE \(k) answered \(reply)")
            }
            let over = try await client.request("SUBSCRIBE kitchen/t16 mode=scan")
            #expect(over.hasPrefix("ERR limit "), "the 17th SUBSCRIBE answered \(over)")
            let subscriptions = try await client.requestList("subscriptions")
            #expect(subscriptions.filter { $0.contains("\"origin\":\"socket\"") }.count == 16, "\(subscriptions)")
            // A reload replaces the config's subscriptions only: the connection's stay, as its PUBs do.
            kill(gateway.pid, SIGHUP)
            try await gateway.waitForLog("config reloaded from", timeout: .seconds(10))
            let reloaded = try await client.requestList("subscriptions")
            #expect(reloaded.filter { $0.contains("\"origin\":\"socket\"") }.count == 16, "\(reloaded)")
            #expect(reloaded.allSatisfy { $0.utf8.count < 4_096 }, "\(reloaded)")
            #expect(try await gateway.stop() == 0)
        }

        @Test("SUBSCRIBE over the MQTT command topic: answered on cmd/reply, found bridged, ends when the broker connection drops")
        func subscribeOverMQTT() async throws {
            let folder = try TemporaryFolder("subscribe-mqtt")
            let broker = try MosquittoBroker(folder: folder)
            var mosquitto = try await broker.start()
            let sub = try await broker.subscribe(["sm/cmd/reply", "sm/found/#", "sm/status"])
            let (a, b) = try Self.pair("subscribe-mqtt", folder: folder,
                                       extra: broker.mqttSection(prefix: "sm", clientID: "gw-sm") + "\ncommands = true\n")
            let gatewayB = try await b.start()
            try await sub.waitForMessage("1 sm/status online")
            let gatewayA = try await a.start()
            try broker.publish("sm/cmd", "SUBSCRIBE kitchen/* mediums=ble mode=scan")
            try await sub.waitForMessage("0 sm/cmd/reply OK s1")
            try await sub.waitForMessage("1 sm/found/kitchen/timer ", timeout: .seconds(20))

            let socket = try SocketClient(path: b.socketPath)
            #expect(try await socket.requestList("subscriptions").contains { $0.contains("\"handle\":\"s1\"") })
            #expect(try await socket.request("SUB $SYS/error/mqtt").hasPrefix("OK"))
            let beforeKill = socket.received.count
            try await mosquitto.stop(signal: SIGKILL)
            try await socket.waitForLine(after: beforeKill, timeout: .seconds(15), what: "$SYS/error/mqtt set") {
                $0.hasPrefix("$SYS/error/mqtt ") && $0.contains("\"set\":true")
            }
            let after = try await socket.requestList("subscriptions")
            #expect(!after.contains { $0.contains("\"handle\":\"s1\"") }, "the MQTT subscription outlived its connection: \(after)")
            mosquitto = try await broker.start()
            #expect(try await gatewayA.stop() == 0)
            #expect(try await gatewayB.stop() == 0)
            try await sub.stop(signal: SIGKILL)
            try await mosquitto.stop(signal: SIGKILL)
        }

        /// Issue 29 item 4: a deployment that requires a decision (`state.defaults.permission =
        /// "undecided"`) starts off the air, asks, and starts discovery once a client grants it.
        @Test("Consent undecided by state.defaults: request raised, nothing scanned, granted over the socket, discovery starts")
        func undecidedThenGranted() async throws {
            let folder = try TemporaryFolder("consent")
            let pair = try Self.pair("consent", folder: folder, permission: "undecided")
            let a = pair.a
            var b = pair.b
            b.subscriptions = ["namespace = \"kitchen\"\ntype = \"*\"\nmediums = [\"ble\"]\nmode = \"scan\"\nlost_after_s = 2"]
            // C, granted, proves A's message is on the air while B, undecided, hears nothing of it.
            var c = TestGatewayConfig(apiKey: a.apiKey, folder: folder, name: "c")
            c.subscriptions = b.subscriptions
            let gatewayA = try await a.start()
            let gatewayB = try await b.start()
            let gatewayC = try await c.start()
            let ui = try SocketClient(path: b.socketPath)
            _ = try await ui.request("SUB $SYS/permission/#")
            _ = try await ui.request("SUB found/#")
            #expect(try await ui.request("PING") == "PONG")   // the retained replay has arrived
            #expect(ui.received.contains { $0.hasPrefix("$SYS/permission/request ") && $0.contains("\"retained\":true") }, "\(ui.received)")
            #expect(ui.received.contains { $0.hasPrefix("$SYS/permission ") && $0.contains("\"undecided\"") }, "\(ui.received)")

            let witness = try SocketClient(path: c.socketPath)
            _ = try await witness.request("SUB found/#")
            _ = try await witness.waitForLine(startingWith: "found/kitchen/timer ", timeout: .seconds(15))
            // While undecided B does not even scan: no advert counted, nothing found.
            let before = ui.received.count
            ui.send("GET stats")
            let stats = try await ui.waitForLine(startingWith: "$SYS/stats ", after: before)
            #expect(stats.eventJSON["adverts_seen"] as? Int == 0, "\(stats)")
            #expect(try await ui.request("GET found") == "OK 0")
            #expect(!ui.received.contains { $0.hasPrefix("found/") })

            let mark = ui.received.count
            #expect(try await ui.request("SET permission granted") == "OK")
            _ = try await ui.waitForLine(startingWith: "$SYS/permission/request ", after: mark)
            #expect(ui.received.dropFirst(mark).contains { $0.contains("\"answered\":\"granted\"") }, "\(ui.received)")
            _ = try await ui.waitForLine(startingWith: "found/kitchen/timer ", after: mark, timeout: .seconds(15))

            #expect(try await gatewayA.stop() == 0)
            #expect(try await gatewayB.stop() == 0)
            #expect(try await gatewayC.stop() == 0)
        }
    }
}
