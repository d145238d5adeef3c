import Glibc
import Synchronization
import SystemCall
import Testing

@testable import Radio

/// On a raw socket shared with the kernel the radio probes the controller every 2 s (Read Local
/// Version) to notice `hciconfig down`, but not while the controller is reporting: a device that
/// is down delivers nothing, and a probe queued behind a backlog of reports on a loaded box was
/// answered too late and took the link down (the Theengs bench's guest, 2026-11-28).
@Suite struct LivenessProbeTests {
    @Test func aReportingControllerIsNotProbedAQuietOneIs() async throws {
        let device = RadioLogicTests.FakeDevice(shared: true, responder: FakeController.btvirtLike)
        let radio = Radio(
            name: "fake",
            configuration: RadioConfiguration(
                advertisingInterval: .milliseconds(20), commandTimeout: .seconds(5), reconnectInitialDelay: .milliseconds(1),
                reconnectMaximumDelay: .milliseconds(10)),
            logger: quietLogger
        ) { _, _ throws(RadioError) in try device.open() }
        let task = Task { await radio.run() }
        defer { task.cancel() }
        _ = try await first("up", in: radio.events) { $0.upInfo }
        let fake = try await first("connection", in: device.connections) { $0 }
        let probes = { fake.log.filter { $0.opcode == .readLocalVersion }.count }
        let afterStart = probes()
        // Reports every 50 ms for 5 s, from a thread of its own (a stimulus, not a synchronisation).
        let report: [UInt8] = [0x3E, 0x0C, 0x02, 0x01, 0x00, 0x00, 1, 2, 3, 4, 5, 6, 0x00, 0xC5]
        let reporting = try OSThread.spawn(name: "fake-reports") {
            let start = ContinuousClock.now
            while ContinuousClock.now - start < .seconds(5) {
                fake.inject(report)
                usleep(50_000)
            }
        }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            _ = try? OSThread.spawn(name: "join-reports") { reporting.join(); done.resume() }
        }
        #expect(probes() == afterStart, "probed while reports came: \(probes() - afterStart) times")
        // Quiet now: a probe comes (the stream holds every command sent: the ones before are skipped).
        let seen = Mutex(0)
        let probe = try await first("a probe once quiet", in: fake.sent) { command -> HCICommand? in
            guard command.opcode == .readLocalVersion else { return nil }
            return seen.withLock { $0 += 1; return $0 } > afterStart ? command : nil
        }
        #expect(probe.opcode == .readLocalVersion)
    }
}
