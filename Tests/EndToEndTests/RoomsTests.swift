import Foundation
import Testing
import TestSupport

extension EndToEnd {
    /// Issue 29 item 5: three real gateways, one per room, on one real Mosquitto agree on the room a
    /// message is in (docs/mqtt.md and docs/behaviour.md, "Rooms across gateways"). Each gateway has
    /// its own air, a `ScriptedController` on the H4 transport reporting the same iBeacon at the RSSI
    /// of its room: btvirt reports no RSSI (127) and has one air for all, so it cannot put one message
    /// at three strengths. Everything else is real: the binary, the bridge, Mosquitto, mosquitto_sub.
    @Suite(.serialized)
    struct Rooms {
        static let uuid: [UInt8] = Array(0x20...0x2F)
        static let message = "ibeacon/20212223-2425-2627-2829-2a2b2c2d2e2f/3/4"
        static let decisionTopic = "fleet-test/room/\(message)"
        static let rooms = ["kitchen", "hall", "attic"]

        /// The rooms the fleet published for the message, in order (`{"room":…}` retained).
        static func decisions(_ sub: GatewayProcess) -> [String] {
            sub.messages.filter { $0.hasPrefix("1 \(decisionTopic) ") }.map { MQTTBridge.payload($0) }
        }

        /// Waits until every live gateway has refreshed its evidence `rounds` times after `mark`
        /// (they do every 5 s): a barrier in the gateways' own time, with no sleep.
        static func waitForRefreshes(_ sub: GatewayProcess, of gateways: [String], after mark: Int, rounds: Int) async throws {
            try await sub.waitForLog(timeout: .seconds(120), what: "\(rounds) evidence refreshes of \(gateways)") { log in
                let lines = GatewayProcess.messageLines(log).dropFirst(mark)
                return gateways.allSatisfy { gateway in
                    lines.filter { $0.hasPrefix("1 fleet-test/evidence/gw-\(gateway)/\(message) {") }.count >= rounds
                }
            }
        }

        /// Sets the controller's RSSI to -56 and -64 dBm by turns, every 30 reports (in the air's own
        /// time: its report count), until cancelled.
        static func wobble(_ controller: ScriptedController, inverted: Bool) -> Task<Void, Never> {
            Task {
                for await count in controller.reports {
                    let high = (count / 30) % 2 == 0
                    controller.setRSSI(high != inverted ? -56 : -64)
                }
            }
        }

        @Test("The room follows the message from room to room, never flaps (equal RSSI with noise included), and moves on when the room's gateway is killed")
        func threeGatewaysAgree() async throws {
            let folder = try TemporaryFolder("rooms")
            let broker = try MosquittoBroker(folder: folder)
            let mosquitto = try await broker.start()
            let sub = try await broker.subscribe(["fleet-test/#", "homeassistant/sensor/fleet-test/#"])
            var controllers: [ScriptedController] = []
            defer { for controller in controllers { controller.stop() } }
            func setRSSI(_ values: [Int8]) { for (controller, rssi) in zip(controllers, values) { controller.setRSSI(rssi) } }

            // The message starts in the kitchen.
            let start: [Int8] = [-45, -80, -85]
            var gateways: [GatewayProcess] = []
            var configs: [TestGatewayConfig] = []
            for (room, rssi) in zip(Self.rooms, start) {
                let controller = try ScriptedController(path: folder.path("\(room).ctl"),
                                                        advert: ScriptedController.iBeacon(uuid: Self.uuid, major: 3, minor: 4, measuredPower: -59),
                                                        reportInterval: .milliseconds(100))
                controller.setRSSI(rssi)
                controllers.append(controller)
                var config = TestGatewayConfig(apiKey: TestEnvironment.uniqueAPIKey("rooms"), folder: folder, name: room)
                config.subscriptions = ["namespace = \"rm\"\ntype = \"*\"\nmediums = [\"ble\"]\nmode = \"scan\"\ninclude = [\"ibeacon\"]\nlost_after_s = 30"]
                config.extra = broker.mqttSection(prefix: "gw/\(room)", clientID: "gw-\(room)") + "\nroom = \"\(room)\"\nfleet = \"fleet-test\"\n"
                config.radioDevice = "h4:\(controller.path)"
                configs.append(config)
                gateways.append(try await config.start())
            }

            // Deadlines are generous for a busy machine; the documented time (docs/behaviour.md) is
            // ~10 s for a move of 20 dB or more, and the test does not time it.
            try await sub.waitForMessage("1 \(Self.decisionTopic) {\"room\":\"kitchen\"}", timeout: .seconds(60))
            let sensor = try await sub.waitForMessage("1 homeassistant/sensor/fleet-test/room_", timeout: .seconds(20))
            let config = MQTTBridge.json(sensor)
            #expect(config["state_topic"] as? String == Self.decisionTopic, "\(sensor)")
            #expect((config["device"] as? [String: Any])?["identifiers"] as? [String] == ["nearby_fleet_fleet-test"], "\(sensor)")

            // Outside input through the broker: evidence with control characters in its room is refused
            // and said in the log; a forged decision for a room no gateway has evidence for is replaced
            // at once by the fleet (it is not retained, so it is not among the decisions below).
            try broker.publish("fleet-test/evidence/evil/\(Self.message)",
                               "{\"room\":\"x\\u001b[2J\",\"rssi_avg\":-10,\"audio\":true,\"at\":\"2030-01-01T00:00:00.000Z\"}")
            try await gateways[0].waitForLog("fleet evidence refused: fleet-test/evidence/evil/\(Self.message): room must not contain control characters",
                                             timeout: .seconds(20))
            let client = try SocketClient(path: configs[0].socketPath)
            let stats = try await MQTTBridge.stats(client)
            #expect(stats["rooms"] as? [String: Int] == ["messages": 1, "refused": 1], "\(stats)")
            client.close()
            let forged = sub.messages.count
            try broker.publish(Self.decisionTopic, "{\"room\":\"garage\"}")
            try await sub.waitForMessage("1 \(Self.decisionTopic) {\"room\":\"kitchen\"}", after: forged, timeout: .seconds(30))

            // It moves to the hall.
            let clock = ContinuousClock()
            var moved = clock.now
            setRSSI([-85, -45, -85])
            try await sub.waitForMessage("1 \(Self.decisionTopic) {\"room\":\"hall\"}", timeout: .seconds(60))
            // Reported for docs/behaviour.md's timings, not asserted (the machine may be busy).
            print("rooms: kitchen → hall decided \(clock.now - moved) after the RSSIs moved")

            // Steady, then equal in the hall and the attic, with noise: each wobbles ±4 dB around
            // -60 dBm, in opposite directions, switching every 30 reports (3 s), so the two rooms take
            // turns being stronger (their reported rssi_avg up to ~4.5 dB apart). Without hysteresis
            // the decision follows every turn (checked once with margin 0 and dwell 0: it failed);
            // with it the hall keeps the message through six refreshes of every gateway's evidence.
            var mark = sub.messages.count
            try await Self.waitForRefreshes(sub, of: Self.rooms, after: mark, rounds: 2)
            controllers[0].setRSSI(-85)
            let wobbles = [Self.wobble(controllers[1], inverted: false), Self.wobble(controllers[2], inverted: true)]
            defer { for wobble in wobbles { wobble.cancel() } }
            // The kitchen's gateway restarts meanwhile (a clean stop withdraws its evidence): back on
            // the broker it reads the retained evidence and decision and must not move the decision.
            // (It reads both in one go here, so this passes without the 6 s settle too; the settle is
            // for evidence that arrives later, e.g. after a broker restart: RoomDeciderTests.settle.)
            #expect(try await gateways[0].stop() == 0)
            gateways[0] = try await configs[0].start()
            mark = sub.messages.count
            try await Self.waitForRefreshes(sub, of: Self.rooms, after: mark, rounds: 6)
            #expect(Self.decisions(sub).last == "{\"room\":\"hall\"}", "\(Self.decisions(sub))")

            // The hall's gateway dies without a word: its evidence stays retained on the broker but is
            // not refreshed, expires (20 s after the others last heard it), and the attic takes over.
            mark = sub.messages.count
            try await gateways[1].stop(signal: SIGKILL)
            moved = clock.now
            try await sub.waitForMessage("1 \(Self.decisionTopic) {\"room\":\"attic\"}", after: mark, timeout: .seconds(90))
            print("rooms: hall → attic decided \(clock.now - moved) after the hall's gateway was killed")
            mark = sub.messages.count
            try await Self.waitForRefreshes(sub, of: ["kitchen", "attic"], after: mark, rounds: 2)

            // Every decision published during the run, repeats folded (two gateways may publish the
            // same change): exactly the rooms the message went through, never back and forth.
            let decisions = Self.decisions(sub)
            let changes = decisions.reduce(into: [String]()) { if $0.last != $1 { $0.append($1) } }
            #expect(changes == ["{\"room\":\"kitchen\"}", "{\"room\":\"hall\"}", "{\"room\":\"attic\"}"], "\(decisions)")

            for index in [0, 2] { #expect(try await gateways[index].stop() == 0) }
            try await sub.stop(signal: SIGKILL)
            try await mosquitto.stop(signal: SIGKILL)
        }
    }
}
