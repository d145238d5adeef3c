import Foundation
import Testing

extension EndToEnd {
    /// Issue 9, faults: an invalid config never starts a gateway; the API key never reaches a log.
    @Suite(.serialized)
    struct FaultConfig {
        @Test("run refuses an invalid config: every problem with its line number, exit non-zero, nothing created")
        func invalidConfigIsRefused() async throws {
            let folder = try TemporaryFolder("badconfig")
            let socketPath = folder.path("bad.sock")
            let path = try folder.write("bad.toml", """
                api_key = "e2e-badconfig-key"
                board = "sim"

                [radio]
                device = "h4:\(TestEnvironment.btvirtServer)"
                interval_ms = "fast"

                [socket]
                path = "\(socketPath)"

                [[publication]]
                namespace = "home"
                type = "greeting"
                content = "hi"
                mediums = ["ble", "smoke-signals"]
                colour = "blue"
                """)
            let gateway = try GatewayProcess.run(config: path)
            let status = try await gateway.waitForExit()
            #expect(status != 0)
            let log = gateway.log
            #expect(log.contains("not starting, \(path) is invalid"), "log:\n\(log)")
            for line in [6, 15, 16] {
                #expect(log.contains("\(path):\(line):"), "no problem reported on line \(line); log:\n\(log)")
            }
            #expect(!FileManager.default.fileExists(atPath: socketPath), "an invalid config started the socket")

            // A TOML syntax error, reported on its own line too.
            let broken = try folder.write("broken.toml", "api_key = \"k\"\nboard = \"sim\"\n[radio\ndevice = 1\n")
            let second = try GatewayProcess.run(config: broken)
            #expect(try await second.waitForExit() != 0)
            #expect(second.log.contains("\(broken):3:"), "log:\n\(second.log)")
        }

        @Test("The API key never appears in full in the log, at trace level, through start, use, a reload, a bad reload and stop")
        func apiKeyIsNeverLogged() async throws {
            let folder = try TemporaryFolder("apikey")
            let key = "AIzaSy-\(UUID().uuidString)-secret"
            var config = TestGatewayConfig(apiKey: key, folder: folder, name: "k")
            config.publications = ["namespace = \"home\"\ntype = \"greeting\"\ncontent = \"hi\"\nmediums = [\"ble\"]"]
            config.subscriptions = ["namespace = \"home\"\ntype = \"*\"\nmediums = [\"ble\"]\nmode = \"both\""]
            let gateway = try await config.start(logLevel: "trace")
            let path = gateway.configPath
            let client = try SocketClient(path: config.socketPath)
            _ = try await client.request("SUB #")
            _ = try await client.request("PUB home/note \(Data("n".utf8).base64EncodedString()) mediums=ble")
            _ = try await stats(client)
            _ = try await client.request("GET publications")
            kill(gateway.pid, SIGHUP)
            try await gateway.waitForLog("config reloaded from", timeout: .seconds(10))
            // A broken config on reload prints its problems: still without the key.
            try (config.toml + "\nbogus_key = 1\n").write(toFile: path, atomically: true, encoding: .utf8)
            kill(gateway.pid, SIGHUP)
            try await gateway.waitForLog("keeping the running config", timeout: .seconds(10))
            client.close()
            #expect(try await gateway.stop() == 0)
            let log = gateway.log
            #expect(log.count > 1000, "the trace log is too short to mean anything")
            #expect(!log.contains(key), "the API key is in the log")
            // Not even a long piece of it (a key shown with a few characters masked is still a leak).
            let secret = String(key.dropFirst(7).prefix(36))
            #expect(!log.contains(secret.prefix(12)), "12 characters of the key's secret part are in the log")
            // check-config output too (what an operator pastes into a bug report).
            let checker = try GatewayProcess(arguments: ["check-config", "--config", path], configPath: path)
            _ = try await checker.waitForExit()
            #expect(!checker.log.contains(key) && !checker.log.contains(secret.prefix(12)), "check-config printed the key:\n\(checker.log)")
        }

        /// Issue 28 (fault runs): what a person reads must not carry terminal controls. Config values
        /// quoted back in problems (`check-config`, `run` refusing the file) show them escaped.
        @Test("check-config and run quote config values with control characters escaped")
        func configProblemsAreEscaped() async throws {
            let folder = try TemporaryFolder("escape")
            let path = try folder.write("e.toml", #"""
                api_key = "x"
                board = "sim\u001b]0;pwned\u0007"
                log_level = "loud\u001b[2J\u009b"
                """#)
            for arguments in [["check-config", "--config", path], ["run", "--config", path]] {
                let checker = try GatewayProcess(arguments: arguments, configPath: path)
                _ = try await checker.waitForExit()
                let output = checker.log
                #expect(!output.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 || $0.value == 0x9B },
                        "\(arguments[0]) printed a control character: \(output.debugDescription)")
                #expect(output.contains(#"sim\x1b]0;pwned\x07"#) && output.contains(#"loud\x1b[2J\x9b"#), "\(arguments[0]): \(output)")
            }
        }
    }
}
