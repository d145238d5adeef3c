import Foundation
import TestSupport
import Testing

extension EndToEnd {
    /// Issue 9, faults: the Bluetooth controller goes away under running gateways and comes back.
    /// Both gateways use a btvirt of their own (a private air), so killing it touches nobody else.
    @Suite(.serialized)
    struct FaultRadio {
        @Test("btvirt killed and restarted: $SYS/error/bluetooth-power is set then cleared, and discovery resumes without restarting the gateways")
        func controllerOutageAndRecovery() async throws {
            let air = try PrivateAir(label: "fault")
            try air.start()
            defer { air.stop() }
            var a = try TestGatewayConfig("outage")
            a.radioDevice = "h4:\(air.socketPath)"
            a.publications = ["namespace = \"outage\"\ntype = \"ping\"\ncontent = \"still here\"\nmediums = [\"ble\"]"]
            var b = a.peer("b")
            b.radioDevice = "h4:\(air.socketPath)"
            b.lostAfterSeconds = 2
            b.subscriptions = ["namespace = \"outage\"\ntype = \"*\"\nmediums = [\"ble\"]\nlost_after_s = 2"]
            let gatewayA = try await a.start()
            let gatewayB = try await b.start()
            let watchA = try SocketClient(path: a.socketPath)
            let watchB = try SocketClient(path: b.socketPath)
            _ = try await watchA.request("SUB $SYS/error/#")
            for filter in ["found/#", "lost/#", "$SYS/error/#"] { _ = try await watchB.request("SUB \(filter)") }
            try await watchB.waitForLine(startingWith: "found/outage/ping ", timeout: .seconds(15))

            for round in 1...2 {
                let markA = watchA.received.count
                let markB = watchB.received.count
                air.stop()
                for (name, watch, mark) in [("A", watchA, markA), ("B", watchB, markB)] {
                    let set = try await watch.waitForLine(after: mark, timeout: .seconds(10), what: "\(name): bluetooth-power set (round \(round))") {
                        $0.hasPrefix("$SYS/error/bluetooth-power ") && $0.eventJSON["set"] as? Bool == true
                    }
                    #expect((set.eventJSON["message"] as? String ?? "").contains(air.socketPath), "the error names the device: \(set)")
                }
                // No controller, no sightings: B loses A's message (lost_after_s = 2) while both keep serving.
                try await watchB.waitForLine(startingWith: "lost/outage/ping ", after: markB, timeout: .seconds(10))
                #expect(try await watchA.request("GET errors") == "OK [\"bluetooth-power\"]")
                #expect(try await watchB.request("PING") == "PONG")

                try air.start()
                for (name, watch, mark) in [("A", watchA, markA), ("B", watchB, markB)] {
                    try await watch.waitForLine(after: mark, timeout: .seconds(15), what: "\(name): bluetooth-power cleared (round \(round))") {
                        $0.hasPrefix("$SYS/error/bluetooth-power ") && $0.eventJSON["set"] as? Bool == false
                    }
                }
                let found = try await watchB.waitForLine(startingWith: "found/outage/ping ", after: markB, timeout: .seconds(15))
                #expect(found.eventJSON["text"] as? String == "still here", "round \(round): discovery resumed")
                #expect(try await watchA.request("GET errors") == "OK []")
            }
            #expect(gatewayA.isRunning && gatewayB.isRunning)
            #expect(try await gatewayA.stop() == 0)
            #expect(try await gatewayB.stop() == 0)
        }

        /// Issue 28 item 2: the controller goes quiet (answers commands, reports nothing). The binary on
        /// a scripted H4 controller (btvirt cannot be made to go quiet), `radio.quiet_s = 2`:
        /// `$SYS/error/radio-quiet` is raised, the controller reset, the error cleared when reports
        /// arrive again, and the reset counted in `GET stats`.
        @Test("a quiet controller: radio-quiet raised, the controller reset, cleared when reports resume, counted")
        func quietControllerIsReset() async throws {
            let folder = try TemporaryFolder("quiet")
            let controller = try ScriptedController(path: folder.path("controller.sock"))
            defer { controller.stop() }
            var config = TestGatewayConfig(apiKey: TestEnvironment.uniqueAPIKey("quiet"), folder: folder, name: "q")
            config.subscriptions = ["namespace = \"quiet\"\ntype = \"*\"\nmediums = [\"ble\"]"]
            config.radioDevice = "h4:\(controller.path)"
            config.quietSeconds = 2
            let gateway = try await config.start()
            let watch = try SocketClient(path: config.socketPath)
            _ = try await watch.request("SUB $SYS/error/#")
            try await gateway.waitForLog("controller up", timeout: .seconds(15))
            // Reports arrive (a scripted neighbour's adverts): the air was busy. Then the controller goes quiet.
            _ = try await withDeadline(.seconds(20), waitingFor: { "20 reports sent" }) { () -> Int? in
                for await sent in controller.reports where sent >= 20 { return sent }
                return nil
            }
            let mark = watch.received.count
            controller.reporting = false
            let raised = try await watch.waitForLine(after: mark, timeout: .seconds(30), what: "radio-quiet set") {
                $0.hasPrefix("$SYS/error/radio-quiet ") && $0.eventJSON["set"] as? Bool == true
            }
            #expect((raised.eventJSON["message"] as? String ?? "").contains("none for"), "\(raised)")
            #expect(!watch.received[mark...].contains { $0.hasPrefix("$SYS/error/bluetooth-power ") }, "a quiet controller is no outage")
            controller.reporting = true
            try await watch.waitForLine(after: mark, timeout: .seconds(30), what: "radio-quiet cleared") {
                $0.hasPrefix("$SYS/error/radio-quiet ") && $0.eventJSON["set"] as? Bool == false
            }
            #expect(controller.resets == 2, "one HCI Reset at start, one for the quiet spell")
            let counters = try await stats(watch)
            #expect(counters["radio_quiet_resets"] as? Int == 1, "\(counters)")
            #expect(try await watch.request("GET errors") == "OK []")
            #expect(try await gateway.stop() == 0)
        }
    }
}
