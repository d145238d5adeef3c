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
        let reporting = try fake.reportFromAThread(for: .seconds(5))
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            _ = try? OSThread.spawn(name: "join-reports") { reporting.join(); done.resume() }
        }
        let reports = fake.reportTimes
        let (firstReport, lastReport) = try (#require(reports.first), #require(reports.last))
        let probes = fake.timedLog.filter { $0.command.opcode == .readLocalVersion && $0.at > firstReport && $0.at <= lastReport }.map(\.at)
        // A probe while the reports come at their pace is the fault. A starved machine (qemu-user
        // beside other work) can hold the reporting thread for seconds, and the controller was then
        // quiet: a probe after such a silence is right. So a probe counts against the radio only when
        // no gap of half a second was in the reports of the probe interval before it.
        let interval = Radio.livenessProbeInterval
        let wrong = probes.filter { Self.longestGap(in: reports, from: $0 - interval, to: $0) < interval / 4 }
        #expect(wrong.isEmpty, """
            probed \(wrong.count) times while reports came at their pace (\(probes.count) probes while reporting; \
            \(reports.count) reports, the longest gap \(Self.longestGap(in: reports, from: firstReport, to: lastReport)))
            """)
        // Quiet now: a probe comes after the last report (the stream holds every command sent).
        let probe = try await first("a probe once quiet", in: fake.sent) { command -> HCICommand? in
            guard command.opcode == .readLocalVersion else { return nil }
            return fake.timedLog.contains { $0.command.opcode == .readLocalVersion && $0.at > lastReport } ? command : nil
        }
        #expect(probe.opcode == .readLocalVersion)
    }

    /// The longest time between `start`, the instants of `times` inside the range, and `end`.
    static func longestGap(in times: [ContinuousClock.Instant], from start: ContinuousClock.Instant, to end: ContinuousClock.Instant) -> Duration {
        let points = [start] + times.filter { $0 > start && $0 < end } + [end]
        return zip(points, points.dropFirst()).map { $1 - $0 }.max() ?? .zero
    }
}
