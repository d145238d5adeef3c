import Foundation
import Testing

/// The end-to-end fixture: a gateway started from a `TestGatewayConfig` and waited for until it is
/// ready. Ready is the log's `running`: the gateway logs it once the manager has announced the
/// restored state and the socket serves (docs/socket-protocol.md, "Start-up"), so a client that
/// connects then finds the state retained and gets an answer.
extension GatewayProcess {
    /// Waits until the gateway is ready (see above), or throws with its log.
    func waitUntilReady(timeout: Duration = .seconds(15)) async throws {
        // The gateway's own line, not any "running": a gateway that printed its usage and exited
        // ("Watch a running gateway…") is not ready.
        try await waitForLog("] running board=", timeout: timeout)
    }

    /// Waits for the process to exit by itself (signal 0 only checks it exists); its exit status.
    func waitForExit(timeout: Duration = .seconds(10)) async throws -> Int32 {
        try await stop(signal: 0, timeout: timeout)
    }
}

extension TestGatewayConfig {
    /// Writes the config, starts `nearby-gateway run` and waits until it is ready. `logLevel` is
    /// passed as `--log-level` (nil: the file's `log_level` rules); `umask` (octal, e.g. "000") is set
    /// by a shell that then execs the gateway.
    func start(logLevel: String? = "debug", environment: [String: String] = [:], umask: String? = nil) async throws -> GatewayProcess {
        let process = try launch(logLevel: logLevel, environment: environment, umask: umask)
        try await process.waitUntilReady()
        return process
    }

    /// Writes the config and starts the gateway without waiting for it: for one that must not start.
    func launch(logLevel: String? = "debug", environment: [String: String] = [:], umask: String? = nil) throws -> GatewayProcess {
        let path = try write()
        var arguments = ["run", "--config", path]
        if let logLevel { arguments += ["--log-level", logLevel] }
        guard let umask else {
            return try GatewayProcess(arguments: arguments, configPath: path, environment: environment)
        }
        return try GatewayProcess(arguments: ["-c", "umask \(umask); exec \"$@\"", "sh", TestEnvironment.gatewayBinary.path] + arguments,
                                  configPath: path, environment: environment, executable: URL(fileURLWithPath: "/bin/sh"))
    }
}

/// Runs `body` with a ready gateway for `config`, then stops it with SIGTERM; it must exit 0. On a
/// throw from `body` the gateway is stopped all the same and the error passed on.
@discardableResult
func withGateway<T>(_ config: TestGatewayConfig, logLevel: String? = "debug", environment: [String: String] = [:],
                    umask: String? = nil, _ body: (GatewayProcess) async throws -> T) async throws -> T {
    let gateway = try await config.start(logLevel: logLevel, environment: environment, umask: umask)
    let result: T
    do {
        result = try await body(gateway)
    } catch {
        _ = try? await gateway.stop()
        throw error
    }
    let status = try await gateway.stop()
    #expect(status == 0, "gateway \(config.name) exited \(status); log:\n\(gateway.log)")
    return result
}
