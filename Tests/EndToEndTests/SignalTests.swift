import Foundation
import Testing
import TestSupport

extension EndToEnd {
    /// Issue 29 items 1 and 2 through the real binary: smoothed RSSI, distance and signal events.
    /// The controller is scripted on the H4 transport (`ScriptedController`) because btvirt reports
    /// RSSI 127 ("none") for every advert; everything else (driver, ingest, socket, MQTT bridge,
    /// Mosquitto, mosquitto_sub) is real.
    @Suite(.serialized)
    struct Signal {
        static let uuid: [UInt8] = Array(0x10...0x1F)
        static let topic = "ibeacon/10111213-1415-1617-1819-1a1b1c1d1e1f/7/9"

        @Test("A 20 dB step in a beacon's RSSI reaches a socket client and an MQTT subscriber as signal events within 10 s; found has rssi, rssi_avg, distance_m")
        func twentyDecibelStep() async throws {
            let folder = try TemporaryFolder("signal")
            // One report every 100 ms: a beacon's advertising interval.
            let controller = try ScriptedController(path: folder.path("ctl.sock"),
                                                    advert: ScriptedController.iBeacon(uuid: Self.uuid, major: 7, minor: 9, measuredPower: -59),
                                                    reportInterval: .milliseconds(100))
            defer { controller.stop() }
            controller.setRSSI(-50)
            let broker = try MosquittoBroker(folder: folder)
            let mosquitto = try await broker.start()
            let sub = try await broker.subscribe(["sig/signal/#", "sig/ha/subscription/1"])

            var config = TestGatewayConfig(apiKey: TestEnvironment.uniqueAPIKey("signal"), folder: folder, name: "g")
            config.subscriptions = ["namespace = \"sig\"\ntype = \"*\"\nmediums = [\"ble\"]\nmode = \"scan\"\ninclude = [\"ibeacon\"]\nlost_after_s = 30"]
            config.extra = broker.mqttSection(prefix: "sig", clientID: "gw-sig")
            config.radioDevice = "h4:\(controller.path)"
            let gateway = try await config.start()
            let client = try SocketClient(path: config.socketPath)
            _ = try await client.request("SUB found/ibeacon/#")
            _ = try await client.request("SUB signal/ibeacon/#")

            // Found at -50 dBm, measured power -59: 10^((-59 + 50) / 25) = 0.44 m with the default n = 2.5.
            let found = try await client.waitForLine(startingWith: "found/\(Self.topic) ", timeout: .seconds(20)).eventJSON
            #expect(found["rssi"] as? Int == -50, "\(found)")
            #expect(found["rssi_avg"] as? Double == -50, "\(found)")
            let near = try #require(found["distance_m"] as? Double, "\(found)")
            #expect(abs(near - 0.44) < 0.01, "\(found)")
            try await sub.waitForMessage("1 sig/ha/subscription/1 {\"presence\":\"ON\"")

            // The step. Deadline: the issue's 10 s from the step to the client.
            let mark = client.received.count
            controller.setRSSI(-70)
            let moved = try await client.waitForLine(after: mark, timeout: .seconds(10), what: "a signal event 3 dB below -50") {
                $0.hasPrefix("signal/\(Self.topic) ") && ($0.eventJSON["rssi_avg"] as? Double ?? 0) <= -53
            }.eventJSON
            #expect(moved["rssi"] as? Int == -70, "\(moved)")
            #expect((moved["distance_m"] as? Double ?? 0) > near, "\(moved)")
            try await sub.waitForMessage("0 sig/signal/\(Self.topic) ", timeout: .seconds(10))

            // It settles near -70 (at most one event a second on the way), and Home Assistant's
            // attributes follow: 10^(11/25) = 2.75 m at -70.
            let settled = try await client.waitForLine(after: mark, timeout: .seconds(30), what: "a signal event below -66") {
                $0.hasPrefix("signal/\(Self.topic) ") && ($0.eventJSON["rssi_avg"] as? Double ?? 0) < -66
            }.eventJSON
            // Below -66 dBm the model (0.44 m at -50) gives at least 1.9 m; the value itself may be -66.1.
            #expect((settled["distance_m"] as? Double ?? 0) > 1.8, "\(settled)")
            try await sub.waitForMessage("1 sig/ha/subscription/1 {\"presence\":\"ON\",\"found\":1,\"namespace\":\"sig\",\"type\":\"*\",\"rssi\":-6",
                                         timeout: .seconds(10))
            let listed = try await client.requestFound()
            #expect(listed.count == 1 && listed[0].contains("\"rssi\":-70"), "\(listed)")

            #expect(try await gateway.stop() == 0)
            try await sub.stop(signal: SIGKILL)
            try await mosquitto.stop(signal: SIGKILL)
        }
    }
}
