import Foundation
import Synchronization

/// What to print when a test waited in vain for something only the air brings (a found or lost
/// event): the state of btvirt (alive, a zombie, gone; its log) and the end of every running
/// gateway's log, so "btvirt stopped serving" is told apart from a gateway bug.
enum RadioDiagnostics {
    /// Gateways of this test process that are running: registered by `GatewayProcess`. A registry
    /// of test-only diagnostics, read only to describe a failure.
    private static let gateways = Mutex<[ObjectIdentifier: @Sendable () -> (pid: Int32, log: String)]>([:])

    static func register(_ gateway: GatewayProcess) {
        let id = ObjectIdentifier(gateway)
        gateways.withLock { $0[id] = { [weak gateway] in (gateway?.pid ?? 0, gateway?.log ?? "") } }
    }

    static func unregister(_ gateway: GatewayProcess) {
        let id = ObjectIdentifier(gateway)
        _ = gateways.withLock { $0.removeValue(forKey: id) }
    }

    /// `scripts/private-air` exports btvirt's pid and log; else `scripts/sim`'s pid file and log.
    static func report() -> String {
        let environment = ProcessInfo.processInfo.environment
        let pidText = environment["NEARBY_BTVIRT_PID"]
            ?? (try? String(contentsOfFile: environment["NEARBY_SIM_PIDFILE"] ?? "/tmp/nearby-gateway-btvirt.pid", encoding: .utf8))
        let logPath = environment["NEARBY_BTVIRT_LOG"] ?? environment["NEARBY_SIM_LOG"] ?? "/tmp/nearby-gateway-btvirt.log"
        var text = "\n--- radio diagnostics ---\n"
        if let pid = pidText.flatMap({ Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }) {
            let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8))?.split(separator: " ")
            let state = stat.map { $0.count > 2 ? "state \($0[2]) (R/S running, Z exited and not reaped)" : "unknown" } ?? "gone"
            text += "btvirt pid \(pid): \(state)\n"
        } else {
            text += "btvirt: no pid known (neither NEARBY_BTVIRT_PID nor scripts/sim's pid file)\n"
        }
        text += "\(TestEnvironment.btvirtServer): \(FileManager.default.fileExists(atPath: TestEnvironment.btvirtServer) ? "present" : "missing")\n"
        let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "(no log at \(logPath))"
        text += "btvirt log (\(logPath)), last lines:\n\(log.split(separator: "\n").suffix(20).joined(separator: "\n"))\n"
        for describe in gateways.withLock({ Array($0.values) }) {
            let (pid, gatewayLog) = describe()
            guard pid != 0 else { continue }
            text += "gateway pid \(pid), last lines of its log:\n\(gatewayLog.split(separator: "\n").suffix(40).joined(separator: "\n"))\n"
        }
        return text + "--- end of radio diagnostics ---"
    }

    /// Waits on these need the air.
    static func needsTheAir(_ what: String) -> Bool {
        what.contains("'found/") || what.contains("'lost/") || what.contains("+/") || what.contains("air:")
    }
}
