import Foundation
import Testing

extension EndToEnd {
    /// Issue 13: start-up order is state → socket → LEDs → audio → radio. A second gateway is told
    /// "already running" by the socket before it touches any hardware; a GPIO problem is reported
    /// only when the socket is free, and then leaves no socket file behind.
    @Suite(.serialized)
    struct StartupOrder {
        @Test("Socket taken and GPIO unusable: 'another gateway is running'; socket free: the GPIO error, and no socket file left")
        func socketIsBoundBeforeTheGPIOLines() async throws {
            let folder = try TemporaryFolder("order")
            // The sim board with a GPIO chip that is not there: opening the LEDs fails, as on a board
            // whose lines another process holds (tools/system-test's gateway-gpio shows that one).
            let boards = folder.path("boards")
            try FileManager.default.createDirectory(atPath: boards, withIntermediateDirectories: true)
            let sim = try String(contentsOf: TestEnvironment.repository.appendingPathComponent("boards/sim.toml"), encoding: .utf8)
            let chipless = sim.replacingOccurrences(of: "chip = \"\"", with: "chip = \"nearby-no-such-chip\"")
                .replacingOccurrences(of: "name = \"sim\"", with: "name = \"gpioless\"")
            #expect(chipless != sim)
            _ = try folder.write("boards/gpioless.toml", chipless)

            let first = TestGatewayConfig(apiKey: TestEnvironment.uniqueAPIKey("order"), folder: folder, name: "a")
            let gateway = try await first.start()
            var second = first.peer("b")
            second.board = "gpioless"
            var onTakenSocket = second
            onTakenSocket.socketPath = first.socketPath
            let intruder = try onTakenSocket.launch(environment: ["NEARBY_GATEWAY_BOARDS": boards])
            #expect(try await intruder.waitForExit() != 0)
            #expect(intruder.log.contains("another gateway is running and answers on it"), "log:\n\(intruder.log)")
            #expect(!intruder.log.contains("nearby-no-such-chip"), "the GPIO lines were requested before the socket was bound:\n\(intruder.log)")

            let lone = try second.launch(environment: ["NEARBY_GATEWAY_BOARDS": boards])
            #expect(try await lone.waitForExit() != 0)
            #expect(lone.log.contains("nearby-no-such-chip"), "the GPIO error names the chip:\n\(lone.log)")
            #expect(!FileManager.default.fileExists(atPath: second.socketPath), "a failed start left its socket file behind")

            let client = try SocketClient(path: first.socketPath)
            #expect(try await client.request("PING") == "PONG", "the first gateway lost its socket")
            client.close()
            #expect(try await gateway.stop() == 0)
        }
    }
}
