import Foundation
import Synchronization

/// One running `nearby-gateway` binary: its stderr is collected so a test can wait for a log line,
/// and a failing test can show what the gateway said.
final class GatewayProcess: Sendable {
    let process: Process
    let configPath: String
    private let output = Mutex<String>("")
    /// Set by the log reader at end of file: after the exit, what the process wrote is all read.
    private let outputEnded = Mutex(false)
    private let changed = ChangeSignal()

    init(arguments: [String], configPath: String, environment: [String: String] = [:],
         executable: URL = TestEnvironment.gatewayBinary) throws {
        self.configPath = configPath
        process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env.merge(environment) { _, new in new }
        process.environment = env
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = pipe
        let changed = self.changed
        process.terminationHandler = { _ in changed.signal() }
        try process.run()
        // The log is read by a thread of its own in blocking reads: Foundation's readabilityHandler
        // stopped firing under load, and a gateway whose log pipe is full blocks in its logging.
        let log = pipe.fileHandleForReading
        let reader = Thread { [weak self] in
            while true {
                let data = log.availableData   // blocks; empty at end of file
                guard !data.isEmpty, let self else { break }
                output.withLock { $0 += String(decoding: data, as: UTF8.self) }
                changed.signal()
            }
            self?.outputEnded.withLock { $0 = true }
            changed.signal()
        }
        reader.name = "GatewayProcess log"
        reader.start()
        RadioDiagnostics.register(self)
    }

    /// `nearby-gateway run --config PATH`.
    static func run(config: String, logLevel: String = "debug", environment: [String: String] = [:]) throws -> GatewayProcess {
        try GatewayProcess(arguments: ["run", "--config", config, "--log-level", logLevel], configPath: config,
                           environment: environment)
    }

    var log: String { output.withLock { $0 } }
    var pid: Int32 { process.processIdentifier }
    var isRunning: Bool { process.isRunning }
    /// The parts in the order they stopped, from the debug lines "<time> debug [nearby-gateway] stopped service=<part>".
    var stoppedServices: [String] {
        log.split(separator: "\n").compactMap { line in
            line.range(of: "] stopped service=").map { String(line[$0.upperBound...].prefix { $0 != " " }) }
        }
    }

    /// Waits until the log contains `text`, or throws with the log so far.
    func waitForLog(_ text: String, timeout: Duration = .seconds(10)) async throws {
        try await waitForLog(timeout: timeout, what: text) { $0.contains(text) }
    }

    func waitForLog(timeout: Duration, what: String, _ predicate: @Sendable @escaping (String) -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while true {
            try Task.checkCancellation()
            let seen = changed.generation
            if predicate(log) { return }
            guard ContinuousClock.now < deadline else {
                throw TimeoutError(description: "gateway log never showed \(what) within \(timeout); log:\n\(log)")
            }
            await changed.wait(since: seen, until: deadline)
        }
    }

    /// Sends a signal and waits for the process to exit and its output to be read to the end;
    /// returns its exit status.
    @discardableResult
    func stop(signal: Int32 = SIGTERM, timeout: Duration = .seconds(10)) async throws -> Int32 {
        if process.isRunning { kill(process.processIdentifier, signal) }
        let deadline = ContinuousClock.now + timeout
        while true {
            let seen = changed.generation
            if !process.isRunning && outputEnded.withLock({ $0 }) { break }
            guard ContinuousClock.now < deadline else {
                kill(process.processIdentifier, SIGKILL)
                throw TimeoutError(description: "gateway did not exit within \(timeout) after signal \(signal); log:\n\(log)")
            }
            await changed.wait(since: seen, until: deadline)
        }
        return process.terminationStatus
    }

    deinit {
        RadioDiagnostics.unregister(self)
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}

