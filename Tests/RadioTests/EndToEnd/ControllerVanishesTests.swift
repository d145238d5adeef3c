import Logging
import SystemCall
import TestSupport
import Testing

@testable import Radio

/// The controller disappears mid-run (its btvirt is killed) and comes back (a new btvirt): the
/// outage is reported once with its cause, the radios reconnect by themselves and carry on with
/// the advertising and scanning they had. Runs on an air of its own, never the shared btvirt.
@Suite("A vanishing controller is reported and recovered")
struct ControllerVanishesTests {
    @Test func outageIsReportedOnceAndRadiosRecover() async throws {
        let air = try PrivateAir(label: "radio")
        try air.start()
        defer { air.stop() }
        let device = RadioDevice.h4(path: air.socketPath)
        let configuration = RadioConfiguration(reconnectInitialDelay: .milliseconds(20), reconnectMaximumDelay: .milliseconds(200))
        let (logLines, logSink) = AsyncStream<String>.makeStream()
        let scannerLogger = Logger(label: "scanner") { _ in StreamLogHandler(sink: logSink) }
        let loops = [try EventLoop(name: "advertiser"), try EventLoop(name: "scanner")]
        defer { loops.forEach { $0.shutdown() } }
        let advertiser = Radio(device: device, configuration: configuration, logger: quietLogger, loop: loops[0])
        let scanner = Radio(device: device, configuration: configuration, logger: scannerLogger, loop: loops[1])
        let tasks = [advertiser, scanner].map { radio in Task { await radio.run() } }
        defer { tasks.forEach { $0.cancel() } }
        // The relay appears once the private btvirt accepts; until then the radios retry.
        for radio in [advertiser, scanner] {
            _ = try await first("first up", in: radio.events, within: .seconds(30)) { $0.upInfo }
        }
        let payload = ADStructure(type: 0xFF, data: [0xFF, 0xFF] + uniqueBytes(10)).encoded
        await advertiser.setAdvertisements([payload])
        await scanner.setScanning(true)
        _ = try await first("the advert", in: scanner.events) { $0.sighting.flatMap { $0.raw == payload ? true : nil } }

        air.stop()
        let down = try await first("down", in: scanner.events) { $0.downError }
        #expect(down.kind == .unavailable)
        #expect(down.device == "h4:\(air.socketPath)")
        #expect(down.operation == "read")
        // Let it fail to reconnect a few times while the air is gone: none of that is reported again.
        var failures = 0
        for await line in logLines where line == "reconnect failed" {
            failures += 1
            if failures == 3 { break }
        }

        try air.start()
        let downsBeforeUp = Counter()
        _ = try await first("up again", in: scanner.events, within: .seconds(30)) { event -> ControllerInfo? in
            if event.downError != nil { downsBeforeUp.increment() }
            return event.upInfo
        }
        #expect(downsBeforeUp.value == 0, "an outage is reported once, not per retry")
        // Nobody called setAdvertisements/setScanning again: the radios restored them.
        _ = try await first("the advert after recovery", in: scanner.events, within: .seconds(30)) {
            $0.sighting.flatMap { $0.raw == payload ? true : nil }
        }
    }
}
