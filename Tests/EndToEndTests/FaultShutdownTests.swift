import Foundation
import Testing

extension EndToEnd {
    /// Issue 9, faults: docs/product.md §10's SIGTERM promise holds while the socket is busy.
    @Suite(.serialized)
    struct FaultShutdown {
        @Test("SIGTERM under heavy socket load (16 flooding clients, half never reading): exit 0 with the state flushed within the unit's TimeoutStopSec (5 s), before systemd would SIGKILL it")
        func sigtermUnderLoad() async throws {
            let folder = try TemporaryFolder("sigterm")
            var config = TestGatewayConfig(apiKey: TestEnvironment.uniqueAPIKey("sigterm"), folder: folder, name: "t")
            config.publications = ["namespace = \"load\"\ntype = \"beacon\"\ncontent = \"busy\"\nmediums = [\"ble\"]"]
            config.subscriptions = ["namespace = \"load\"\ntype = \"*\"\nmediums = [\"ble\"]"]
            let gateway = try await config.start()
            let control = try SocketClient(path: config.socketPath)
            var random = SeededRandom(label: "sigtermUnderLoad")
            var model = StateSnapshot.defaults
            let flood = try SocketFlood(path: config.socketPath, readers: 8, stuck: 8)
            defer { flood.stop() }
            // The flood is under way: several thousand lines through before the state changes start.
            let deadline = ContinuousClock.now + .seconds(20)
            while flood.sent < 20_000, ContinuousClock.now < deadline { #expect(try await control.request("PING") == "PONG") }
            for _ in 0..<10 {
                let (line, next) = model.randomChange(using: &random)
                let reply = try await control.request(line, timeout: .seconds(10))
                #expect(reply == "OK", "\(line) under load: \(reply)")
                model = next
            }
            let sentBefore = flood.sent
            #expect(flood.activeClients == 16, "every flooding client is still sending when SIGTERM comes")
            let signalled = ContinuousClock.now
            // The contract is packaging/nearby-gateway.service's TimeoutStopSec=5s: past it systemd
            // SIGKILLs the gateway, and a state not yet flushed is lost. stop() SIGKILLs and throws at
            // the same deadline. docs/product.md §10's 2 s is the aim, logged here, not asserted.
            let status = try await gateway.stop(signal: SIGTERM, timeout: .seconds(5))
            let took = ContinuousClock.now - signalled
            print("sigtermUnderLoad: \(sentBefore) lines flooded before SIGTERM, exit \(status) after \(took)")
            #expect(status == 0)
            #expect(took < .seconds(5), "exited within TimeoutStopSec")
            #expect(config.stateOnDisk().flatMap { try? $0.get() } == model, "the last acknowledged state is on disk")
            #expect(gateway.log.contains("stopped"))
            #expect(!FileManager.default.fileExists(atPath: config.socketPath), "socket file removed")
        }
    }
}
