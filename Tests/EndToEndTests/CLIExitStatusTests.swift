import Foundation
import Testing

/// `beacon` and `decode` through the real binary: a command used correctly that cannot do its work
/// exits 1 with an error naming the file and the cause, and no usage text; usage errors alone exit
/// 64 with the usage.
@Suite("Runtime errors are not usage errors")
struct CLIExitStatusTests {
    private func run(_ arguments: [String], in folder: TemporaryFolder) async throws -> (status: Int32, output: String) {
        let process = try GatewayProcess(arguments: arguments, configPath: folder.path("none.toml"))
        let status = try await process.waitForExit(timeout: .seconds(30))
        return (status, process.log)
    }

    @Test func runtimeFailuresExitOneWithoutUsage() async throws {
        let folder = try TemporaryFolder("cli-exit")
        let notWAV = try folder.write("notes.wav", "not a recording\n")
        let brokenConfig = try folder.write("broken.toml", "api_key = 1\n")
        let cases: [(arguments: [String], mentions: String)] = [
            (["decode", folder.path("missing.wav")], "missing.wav"),
            (["decode", notWAV], "notes.wav"),
            (["decode", notWAV, "--config", folder.path("missing.toml")], "missing.toml"),
            (["beacon", "--config", folder.path("missing.toml"), "--out", folder.path("out.wav")], "missing.toml"),
            (["beacon", "--config", brokenConfig, "--out", folder.path("out.wav")], "broken.toml"),
            (["beacon", "--payload", "hi", "--out", folder.path("no-such-folder/out.wav")], "out.wav"),
        ]
        for (arguments, mentions) in cases {
            let (status, output) = try await run(arguments, in: folder)
            #expect(status == 1, "\(arguments): exit \(status)\n\(output)")
            #expect(output.contains(mentions), "\(arguments): the error does not name \(mentions)\n\(output)")
            #expect(!output.contains("Usage:"), "\(arguments): a runtime error printed the usage\n\(output)")
        }
    }

    @Test func usageErrorsStillExitSixtyFourWithUsage() async throws {
        let folder = try TemporaryFolder("cli-usage")
        for arguments in [["decode", folder.path("x.wav"), "--protocol", "no-such-protocol"],
                          ["beacon", "--out", folder.path("out.wav")]] {
            let (status, output) = try await run(arguments, in: folder)
            #expect(status == 64, "\(arguments): exit \(status)\n\(output)")
            #expect(output.contains("Usage:"), "\(arguments): no usage for a usage error\n\(output)")
        }
    }
}

extension EndToEnd {
    /// Issue 13: `monitor` on a gateway that already serves `max_clients` printed "Broken pipe
    /// (errno 32)"; it must pass on what the gateway said.
    @Suite(.serialized)
    struct MonitorOnAFullGateway {
        @Test("monitor on a full gateway exits 1 with the gateway's too-many-clients reply, not EPIPE")
        func monitorShowsTheRefusal() async throws {
            var config = try TestGatewayConfig("monfull", name: "m")
            config.maxClients = 1
            try await withGateway(config) { gateway in
                let first = try SocketClient(path: config.socketPath)
                #expect(try await first.request("PING") == "PONG")

                // Whether the gateway's close comes before or after monitor's first SUB is a race: try it often.
                for _ in 0..<30 {
                    let monitor = try GatewayProcess(arguments: ["monitor", "--socket", config.socketPath, "--json"], configPath: gateway.configPath)
                    let status = try await monitor.waitForExit(timeout: .seconds(30))
                    #expect(status == 1, "monitor exit \(status)\n\(monitor.log)")
                    #expect(monitor.log.contains("too-many-clients"), "monitor did not pass on the refusal:\n\(monitor.log)")
                    if !monitor.log.contains("too-many-clients") { break }
                }
            }
        }
    }
}
