import Foundation

/// Runs a gateway in a private mount namespace, after a shell set-up that mounts what only it should
/// see (a read-only bind of its state folder, a tiny full tmpfs). Everything else stays shared — /tmp
/// with btvirt's socket and the test's socket path — so the test talks to it as usual, and nothing the
/// set-up mounts outlives the gateway or touches the rest of the machine.
enum MountNamespace {
    /// `unshare -m` execs bash, which runs `setup` and then execs the gateway, so the process is the
    /// gateway itself: its pid, its signals, its exit status. `environment` reaches the set-up script.
    static func start(_ config: TestGatewayConfig, setup: String, environment: [String: String] = [:]) async throws -> GatewayProcess {
        let path = try config.write()
        let script = "set -e\n\(setup)\nexec \"$NEARBY_BIN\" run --config \"$NEARBY_CONFIG\" --log-level debug"
        var env = environment
        env["NEARBY_BIN"] = TestEnvironment.gatewayBinary.path
        env["NEARBY_CONFIG"] = path
        let process = try GatewayProcess(
            arguments: ["-m", "--propagation", "private", "bash", "-c", script], configPath: path,
            environment: env, executable: URL(fileURLWithPath: "/usr/bin/unshare"))
        try await process.waitUntilReady()
        return process
    }

    /// Runs `command` in the gateway's mount namespace and returns its standard output: what the
    /// gateway sees there, which a tmpfs mounted only for it hides from the test.
    static func shell(in gateway: GatewayProcess, _ command: String) throws -> String {
        try ShellCommand.output("/usr/bin/nsenter", ["-t", "\(gateway.pid)", "-m", "bash", "-c", command])
    }
}

/// A short helper command run to completion (nsenter, stat): its standard output, or an error with
/// its standard error.
enum ShellCommand {
    static func output(_ executable: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TimeoutError(description: "\(executable) \(arguments) failed (\(process.terminationStatus)): \(String(decoding: errors, as: UTF8.self))")
        }
        return String(decoding: output, as: UTF8.self)
    }
}
