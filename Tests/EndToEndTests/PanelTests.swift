import Foundation
import Testing

extension EndToEnd {
    /// Issue 7 through the real binary: on the `sim` board, LED changes reach the socket.
    @Suite(.serialized)
    struct Panel {
        @Test("A found message lights the found LED ($SYS/led/found on) and its lost turns it off")
        func foundAndLostDriveTheFoundLED() async throws {
            let folder = try TemporaryFolder("leds")
            let key = TestEnvironment.uniqueAPIKey("leds")
            var a = TestGatewayConfig(apiKey: key, folder: folder, name: "a")
            a.publications = ["namespace = \"porch\"\ntype = \"bell\"\ncontent = \"ding\"\nmediums = [\"ble\"]"]
            var b = TestGatewayConfig(apiKey: key, folder: folder, name: "b")
            b.lostAfterSeconds = 2
            b.subscriptions = ["namespace = \"porch\"\ntype = \"*\"\nmediums = [\"ble\"]\nlost_after_s = 2\nled = \"user1\""]

            let gatewayB = try await b.start()
            let watch = try SocketClient(path: b.socketPath)
            _ = try await watch.request("SUB $SYS/led/#")
            // The status LED is solid while active; nothing is found yet.
            let status = try await watch.waitForLine(startingWith: "$SYS/led/status ")
            #expect(status.eventJSON["state"] as? String == "on")
            #expect(!watch.received.contains { $0.hasPrefix("$SYS/led/found ") && $0.contains("\"on\"") })

            let gatewayA = try await a.start()
            let on = try await watch.waitForLine(what: "found LED on") { $0.hasPrefix("$SYS/led/found ") && $0.eventJSON["state"] as? String == "on" }
            #expect(on.eventJSON["led"] as? String == "found")
            try await watch.waitForLine(what: "subscription LED on") { $0.hasPrefix("$SYS/led/user1 ") && $0.eventJSON["state"] as? String == "on" }

            try await gatewayA.stop()
            let mark = watch.received.count
            try await watch.waitForLine(after: mark, timeout: .seconds(8), what: "found LED off") {
                $0.hasPrefix("$SYS/led/found ") && $0.eventJSON["state"] as? String == "off"
            }
            try await watch.waitForLine(after: mark, what: "lost LED pulse") {
                $0.hasPrefix("$SYS/led/lost ") && $0.eventJSON["state"] as? String == "on"
            }
            try await watch.waitForLine(after: mark, what: "subscription LED off") {
                $0.hasPrefix("$SYS/led/user1 ") && $0.eventJSON["state"] as? String == "off"
            }
            try await gatewayB.stop()
        }
    }
}
