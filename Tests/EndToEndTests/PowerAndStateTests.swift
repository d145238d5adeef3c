import Foundation
import Testing

extension EndToEnd {
    /// Background mode, power states and the state file, through the real binary and its socket.
    @Suite(.serialized)
    struct PowerAndState {
        @Test("$SYS/debug is state like $SYS/power: retained from start, an event only when SET debug changes it (issue 41)")
        func debugIsRetainedStateChangedOnlyOnChange() async throws {
            let config = try TestGatewayConfig("sysdebug")
            let gateway = try await config.start()
            let watch = try SocketClient(path: config.socketPath)
            _ = try await watch.request("SUB $SYS/debug")
            let first = try await watch.waitForLine(startingWith: "$SYS/debug ")
            #expect(first.eventJSON["debug"] as? Bool == false && first.eventJSON["retained"] as? Bool == true, "\(first)")

            let control = try SocketClient(path: config.socketPath)
            #expect(try await control.request("SET debug on") == "OK")
            #expect(try await control.request("SET debug on") == "OK")
            #expect(try await control.request("SET debug off") == "OK")
            #expect(try await control.request("SET debug off") == "OK")
            // Each event reached every client before the broker read the next request: PONG is a barrier.
            #expect(try await watch.request("PING") == "PONG")
            let values = watch.received.filter { $0.hasPrefix("$SYS/debug ") }.map { $0.eventJSON["debug"] as? Bool }
            #expect(values == [false, true, false], "\(watch.received)")

            #expect(try await control.request("SET debug on") == "OK")
            let late = try SocketClient(path: config.socketPath)
            _ = try await late.request("SUB $SYS/debug")
            let replay = try await late.waitForLine(startingWith: "$SYS/debug ")
            #expect(replay.eventJSON["debug"] as? Bool == true && replay.eventJSON["retained"] as? Bool == true, "\(replay)")
            #expect(try await gateway.stop() == 0)
        }

        @Test("In standby only background entries stay on the air; with background mode off nothing does")
        func standbyKeepsOnlyBackgroundEntries() async throws {
            let folder = try TemporaryFolder("standby")
            let key = TestEnvironment.uniqueAPIKey("standby")
            var a = TestGatewayConfig(apiKey: key, folder: folder, name: "a")
            a.lostAfterSeconds = 2
            a.publications = [
                "namespace = \"home\"\ntype = \"always\"\ncontent = \"bg\"\nmediums = [\"ble\"]\nbackground = true",
                "namespace = \"home\"\ntype = \"foreground\"\ncontent = \"fg\"\nmediums = [\"ble\"]",
            ]
            var b = TestGatewayConfig(apiKey: key, folder: folder, name: "b")
            b.lostAfterSeconds = 2
            b.subscriptions = ["namespace = \"home\"\ntype = \"*\"\nmediums = [\"ble\"]\nlost_after_s = 2"]

            let gatewayB = try await b.start()
            let watch = try SocketClient(path: b.socketPath)
            _ = try await watch.request("SUB found/#")
            _ = try await watch.request("SUB lost/#")
            let gatewayA = try await a.start()
            let control = try SocketClient(path: a.socketPath)
            try await watch.waitForLine(startingWith: "found/home/always ")
            try await watch.waitForLine(startingWith: "found/home/foreground ")

            #expect(try await control.request("SET power standby").hasPrefix("OK"))
            let lostForeground = try await watch.waitForLine(startingWith: "lost/home/foreground ", timeout: .seconds(8))
            #expect(!lostForeground.isEmpty)
            // The background entry is still found: had standby silenced it too, it would have been
            // lost together with the foreground one. A late subscriber gets the found set replayed.
            let late = try SocketClient(path: b.socketPath)
            _ = try await late.request("SUB found/#")
            try await late.waitForLine(startingWith: "found/home/always ", timeout: .seconds(2))
            #expect(!late.received.contains { $0.hasPrefix("found/home/foreground ") })
            #expect(!watch.received.contains { $0.hasPrefix("lost/home/always ") })

            #expect(try await control.request("SET background off").hasPrefix("OK"))
            try await watch.waitForLine(startingWith: "lost/home/always ", timeout: .seconds(8))

            let mark = watch.received.count
            #expect(try await control.request("SET power active").hasPrefix("OK"))
            try await watch.waitForLine(startingWith: "found/home/foreground ", after: mark, timeout: .seconds(8))
            try await gatewayA.stop()
            try await gatewayB.stop()
        }

        @Test("State set over the socket survives SIGKILL and restart")
        func stateSurvivesKill() async throws {
            let folder = try TemporaryFolder("state")
            let config = TestGatewayConfig(apiKey: TestEnvironment.uniqueAPIKey("state"), folder: folder, name: "s")
            var gateway = try await config.start()
            var control = try SocketClient(path: config.socketPath)
            for (step, line) in ["SET background off", "SET power standby", "SET permission denied",
                                 "SET background on", "SET permission undecided"].enumerated() {
                #expect(try await control.request(line).hasPrefix("OK"), "step \(step): \(line)")
            }
            control.close()
            #expect(try await gateway.stop(signal: SIGKILL) == SIGKILL)

            gateway = try await config.start()
            control = try SocketClient(path: config.socketPath)
            _ = try await control.request("SUB $SYS/#")
            let power = try await control.waitForLine(startingWith: "$SYS/power ")
            let background = try await control.waitForLine(startingWith: "$SYS/background ")
            let permission = try await control.waitForLine(startingWith: "$SYS/permission ")
            #expect(power.eventJSON["power"] as? String == "standby")
            #expect(background.eventJSON["background"] as? Bool == true)
            #expect(permission.eventJSON["permission"] as? String == "undecided")
            // Undecided consent asks the box's UI, retained for every new subscriber.
            try await control.waitForLine(startingWith: "$SYS/permission/request ")
            try await gateway.stop()
        }
    }
}
