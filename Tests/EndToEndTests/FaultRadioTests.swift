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
    }
}
