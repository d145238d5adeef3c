import Foundation
import SystemCall
import Testing

extension EndToEnd {
    /// Issue 28 item 3's "done when": two gateways whose clocks are 3 days apart find each other's
    /// messages within 3 minutes (docs/protocol.md, "Clocks that disagree"). One runs under
    /// libfaketime 3 days ahead. Only a clock the kernel does not call synchronised follows a peer,
    /// and libfaketime does not fake adjtimex(2): on a host whose clock NTP has synchronised, neither
    /// gateway may follow, so the test runs only where the kernel says unsynchronised (containers, a
    /// Pi without network), and says so when skipped.
    @Suite(.serialized)
    struct ClockSkew {
        /// The gateway's own libfaketime: an arm64 gateway under qemu-user (scripts/arm64-test e2e)
        /// preloads the arm64 root's, which the emulator's loader finds under QEMU_LD_PREFIX.
        static let emulatorRoot = ProcessInfo.processInfo.environment["QEMU_LD_PREFIX"]
        static let libfaketime = emulatorRoot == nil
            ? "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1" : "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1"
        static var installed: Bool { FileManager.default.fileExists(atPath: (emulatorRoot ?? "") + libfaketime) }
        static var unsynchronised: Bool { KernelClock.read() != .synchronised }

        // Two conditions, two reasons: Tests/allowed-skips allows only the second (scripts/test fails
        // a run that skips this test for the first: scripts/setup installs libfaketime).
        @Test("A gateway 3 days ahead (faketime) and one on the true clock find each other's messages within 3 minutes",
              .enabled(if: installed, "needs libfaketime (the faketime package, which scripts/setup installs)"),
              .enabled(if: unsynchronised, "the kernel clock is synchronised (NTP): libfaketime does not fake adjtimex(2), so neither gateway may follow the other"))
        func threeDaysApart() async throws {
            let folder = try TemporaryFolder("clockskew")
            let key = TestEnvironment.uniqueAPIKey("clockskew")
            var a = TestGatewayConfig(apiKey: key, folder: folder, name: "a")
            var b = TestGatewayConfig(apiKey: key, folder: folder, name: "b")
            a.publications = ["namespace = \"skew\"\ntype = \"a\"\ncontent = \"from a\"\nmediums = [\"ble\"]"]
            b.publications = ["namespace = \"skew\"\ntype = \"b\"\ncontent = \"from b\"\nmediums = [\"ble\"]"]
            a.subscriptions = ["namespace = \"skew\"\ntype = \"*\"\nmediums = [\"ble\"]"]
            b.subscriptions = a.subscriptions

            let started = ContinuousClock.now
            let deadline = started + .seconds(180)
            let gatewayA = try await a.start()
            let watchA = try SocketClient(path: a.socketPath)
            for filter in ["found/#", "$SYS/error/#"] { #expect(try await watchA.request("SUB \(filter)").hasPrefix("OK")) }
            // libfaketime, exec'd by a shell: started directly with LD_PRELOAD, a Swift program gets no
            // arguments, and the faketime command forks (SIGTERM would leave the gateway running).
            // Monotonic clocks stay true: only the wall clock is off (docs/protocol.md).
            let path = try b.write()
            let gatewayB = try GatewayProcess(arguments: ["-c", "exec \"$@\"", "sh", TestEnvironment.gatewayBinary.path, "run",
                                                          "--config", path, "--log-level", "debug"],
                                              configPath: path,
                                              environment: ["LD_PRELOAD": Self.libfaketime, "FAKETIME": "+3d",
                                                            "FAKETIME_DONT_FAKE_MONOTONIC": "1"],
                                              executable: URL(fileURLWithPath: "/bin/sh"))
            do {
                try await gatewayB.waitUntilReady()
                let watchB = try SocketClient(path: b.socketPath)
                #expect(try await watchB.request("SUB found/#").hasPrefix("OK"))

                let foundB = try await watchA.waitForLine(startingWith: "found/skew/b ", timeout: deadline - .now)
                #expect(foundB.eventJSON["text"] as? String == "from b")
                let aFound = ContinuousClock.now - started
                let foundA = try await watchB.waitForLine(startingWith: "found/skew/a ", timeout: deadline - .now)
                #expect(foundA.eventJSON["text"] as? String == "from a")
                print("3 days apart: A found B after \(aFound), B found A after \(ContinuousClock.now - started)")
                // A is the one behind: it follows B's clock, and says so.
                let error = try await watchA.waitForLine(startingWith: "$SYS/error/clock ", timeout: .seconds(10))
                #expect(error.eventJSON["set"] as? Bool == true, "\(error)")
                #expect(gatewayA.log.contains("following it"), "A's log:\n\(gatewayA.log)")
            } catch {
                _ = try? await gatewayB.stop()
                _ = try? await gatewayA.stop()
                throw error
            }
            #expect(try await gatewayB.stop() == 0, "B's log:\n\(gatewayB.log)")
            #expect(try await gatewayA.stop() == 0)
        }
    }
}
