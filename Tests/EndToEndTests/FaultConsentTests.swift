import Foundation
import Logging
import Radio
import Synchronization
import SystemCall
import TestSupport
import Testing

extension EndToEnd {
    /// Issue 13: consent must fail closed. A state file that said "denied" and was then damaged must
    /// not bring the gateway back on the air on a config default of "granted". Checked on a private
    /// air with a scanner of our own (the Radio module, not a gateway), so anything the gateway puts
    /// on the air is seen, whatever its format.
    @Suite(.serialized)
    struct FaultConsent {
        @Test("SET permission denied, state file damaged, restart: nothing on the air, $SYS/error/state set, permission undecided")
        func damagedStateFileWithholdsConsent() async throws {
            let air = try PrivateAir(label: "consent")
            try air.start()
            defer { air.stop() }
            var config = try TestGatewayConfig("consent", name: "c")
            config.radioDevice = "h4:\(air.socketPath)"
            config.permission = "granted"
            config.publications = ["namespace = \"consent\"\ntype = \"secret\"\ncontent = \"not without consent\"\nmediums = [\"ble\"]"]

            // An independent scanner, and a sentinel advertiser whose reports pace the "nothing seen" window.
            let sentinel = ADStructure(type: 0xFF, data: [0xFF, 0xFF] + Array("sentinel-\(UUID().uuidString.prefix(8))".utf8)).encoded
            let airLog = AirLog(sentinel: sentinel)
            let loops = [try EventLoop(name: "scanner"), try EventLoop(name: "sentinel")]
            defer { loops.forEach { $0.shutdown() } }
            let scanner = Radio(device: .h4(path: air.socketPath), logger: Logger(label: "scanner"), loop: loops[0])
            let transmitter = Radio(device: .h4(path: air.socketPath), logger: Logger(label: "sentinel"), loop: loops[1])
            let tasks = [Task { await scanner.run() }, Task { await transmitter.run() },
                         Task { for await event in scanner.events { if case .sighting(let s) = event { airLog.record(s.raw) } } },
                         Task { for await _ in transmitter.events {} }]
            defer { tasks.forEach { $0.cancel() } }
            await scanner.setScanning(true)
            await transmitter.setAdvertisements([sentinel])

            var gateway = try await config.start()
            try await airLog.waitForOthers(after: 0, what: "the gateway's adverts while consent is granted (positive control)")
            let control = try SocketClient(path: config.socketPath)
            #expect(try await control.request("SET permission denied") == "OK")
            control.close()
            #expect(try await gateway.stop() == 0)

            // Damaged: what a torn write or a bad SD card sector leaves.
            try Data(#"{"background_mode": true, "permission": "den"#.utf8).write(to: URL(fileURLWithPath: config.statePath))
            // Reports already under way when the old gateway stopped arrive before these (one stream, in order).
            try await airLog.waitForSentinels(3, after: airLog.count)
            let mark = airLog.count

            gateway = try await config.start()
            // 20 sentinel reports (20 × 100 ms advertising events) with nothing else on the air.
            try await airLog.waitForSentinels(20, after: mark)
            #expect(airLog.others(after: mark).isEmpty, "advertised without consent: \(airLog.others(after: mark).prefix(3))")
            let client = try SocketClient(path: config.socketPath)
            _ = try await client.request("SUB $SYS/#")
            let error = try await client.waitForLine(startingWith: "$SYS/error/state ", timeout: .seconds(5))
            #expect(error.eventJSON["set"] as? Bool == true)
            #expect((error.eventJSON["message"] as? String ?? "").contains("not JSON"), "the cause is named: \(error)")
            #expect(try await client.request("GET permission") == "OK undecided")
            #expect(try await client.request("GET errors") == "OK [\"state\"]")
            try await client.waitForLine(startingWith: "$SYS/permission/request ", timeout: .seconds(5))
            #expect(gateway.log.contains("consent withheld"), "the log says so")


            // Deciding again puts the gateway back on the air and clears the error.
            let decided = airLog.count
            #expect(try await client.request("SET permission granted") == "OK")
            let cleared = try await client.waitForLine(timeout: .seconds(5), what: "$SYS/error/state cleared") {
                $0.hasPrefix("$SYS/error/state ") && $0.eventJSON["set"] as? Bool == false
            }
            #expect(!cleared.isEmpty)
            try await airLog.waitForOthers(after: decided, what: "the gateway's adverts once consent is granted again")
            #expect(try await gateway.stop() == 0)
        }
    }
}

/// Every advertising report a test scanner heard, in order, split into the sentinel's and the others'.
final class AirLog: Sendable {
    private let sentinel: [UInt8]
    private let reports = Mutex<[[UInt8]]>([])
    private let changed = ChangeSignal()

    init(sentinel: [UInt8]) { self.sentinel = sentinel }

    func record(_ raw: [UInt8]) {
        reports.withLock { $0.append(raw) }
        changed.signal()
    }

    var count: Int { reports.withLock { $0.count } }

    func others(after mark: Int) -> [[UInt8]] {
        reports.withLock { Array($0.dropFirst(mark)) }.filter { !$0.contains(sentinel) }
    }

    private func sentinels(after mark: Int) -> Int {
        reports.withLock { Array($0.dropFirst(mark)) }.reduce(0) { $0 + ($1.contains(sentinel) ? 1 : 0) }
    }

    func waitForSentinels(_ count: Int, after mark: Int, timeout: Duration = .seconds(15)) async throws {
        try await wait(timeout: timeout, what: "\(count) sentinel reports") { self.sentinels(after: mark) >= count }
    }

    func waitForOthers(after mark: Int, what: String, timeout: Duration = .seconds(15)) async throws {
        try await wait(timeout: timeout, what: what) { !self.others(after: mark).isEmpty }
    }

    private func wait(timeout: Duration, what: String, _ done: () -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while true {
            let seen = changed.generation
            if done() { return }
            guard ContinuousClock.now < deadline else {
                throw TimeoutError(description: "air: never saw \(what) within \(timeout)\(RadioDiagnostics.report())")
            }
            await changed.wait(since: seen, until: deadline)
        }
    }
}

private extension Array where Element == UInt8 {
    func contains(_ other: [UInt8]) -> Bool {
        guard other.count <= count else { return false }
        return (0...(count - other.count)).contains { self[$0..<($0 + other.count)].elementsEqual(other) }
    }
}
