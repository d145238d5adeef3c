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
        let loop = try EventLoop(name: "radio-test")
        defer { loop.shutdown() }
        let radio = AdvertisingSetsTests.radio(on: device, loop: loop)
        let task = Task { await radio.run() }
        defer { task.cancel() }
        _ = try await first("up", in: radio.events) { $0.upInfo }
        let fake = try await first("connection", in: device.connections) { $0 }
        let probes = { fake.log.filter { $0.opcode == .readLocalVersion }.count }
        let afterStart = probes()
        let reporting = try fake.reportFromAThread(for: .seconds(5))
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
