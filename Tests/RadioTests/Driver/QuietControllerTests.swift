import Foundation
import SystemCall
import TestSupport
import Testing

@testable import Radio

/// Issue 28 item 2: a controller that keeps answering HCI commands but delivers no advertising
/// reports (ESPHome's "scanner has gone quiet", BlueZ stopping after hours). A scripted controller on
/// the real H4 transport (a UNIX socket, as `h4:` devices are): btvirt cannot be made to go quiet.
@Suite(.serialized) struct QuietControllerTests {
    static func socketPath(_ label: String) -> String {
        "/var/tmp/nearby-quiet-\(label)-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
    }

    @Test func aControllerThatGoesQuietIsResetAndTheRadioHearsAgain() async throws {
        let controller = try ScriptedController(path: Self.socketPath("reset"))
        defer { controller.stop() }
        let loop = try EventLoop(name: "radio-test")
        defer { loop.shutdown() }
        let radio = Radio(device: .h4(path: controller.path), configuration: RadioConfiguration(quietTimeout: .seconds(1)), logger: quietLogger, loop: loop)
        let task = Task { await radio.run() }
        defer { task.cancel() }
        _ = try await first("controller up", in: radio.events) { $0.upInfo }
        await radio.setScanning(true)
        _ = try await first("a report", in: radio.events) { $0.sighting }
        #expect(controller.resets == 1)

        controller.reporting = false   // still answers every command from here on
        let quiet = try await first("the quiet reset", in: radio.events, within: .seconds(20)) { event -> RadioError? in
            if case .quiet(let error) = event { return error }
            #expect(event.downError == nil, "a quiet controller is no outage: \(event)")
            return nil
        }
        #expect(quiet.kind == .quiet && quiet.device == "h4:\(controller.path)", "\(quiet)")
        controller.reporting = true
        _ = try await first("controller up again", in: radio.events) { $0.upInfo }
        _ = try await first("a report after the reset", in: radio.events) { $0.sighting }
        #expect(controller.resets == 2, "the reset is an HCI Reset on a new connection")
        #expect(radio.statistics.quietResets == 1)
    }

    @Test func aQuietRoomNeverCausesAReset() async throws {
        let controller = try ScriptedController(path: Self.socketPath("room"))
        defer { controller.stop() }
        controller.reporting = false   // nothing on the air, ever
        // Re-announced every interval: the radio's own commands measure the time that passes.
        let configuration = RadioConfiguration(reannounce: .everyInterval, quietTimeout: .seconds(1))
        let loop = try EventLoop(name: "radio-test")
        defer { loop.shutdown() }
        let radio = Radio(device: .h4(path: controller.path), configuration: configuration, logger: quietLogger, loop: loop)
        let task = Task { await radio.run() }
        defer { task.cancel() }
        let events = Task {
            var quiet = 0
            for await event in radio.events { if case .quiet = event { quiet += 1 } }
            return quiet
        }
        await radio.setScanning(true)
        await radio.setAdvertisements([[0x02, 0x01, 0x06]])
        // 60 advertising enables at 100 ms: at least 6 s, six times the quiet timeout.
        let enables = try await withDeadline(.seconds(60), waitingFor: { "60 advertising enables" }) { () -> Int? in
            var count = 0
            for await opcode in controller.commands where opcode == 0x200A {
                count += 1
                if count >= 120 { return count }   // each step is disable + enable
            }
            return nil
        }
        #expect(enables >= 120)
        #expect(controller.resets == 1, "reset \(controller.resets - 1) times in a room where nothing was ever heard")
        #expect(radio.statistics.quietResets == 0)
        task.cancel()
        #expect(await events.value == 0)
    }

    /// The back-off: each quiet reset doubles the silence the next one needs, up to 16 × the
    /// timeout, and a connection that keeps hearing for 10 × the timeout ends the streak.
    @Test func quietResetsBackOff() {
        let watch = QuietWatch(timeout: .seconds(10))
        let t0 = ContinuousClock.now
        watch.connected(now: t0)
        #expect(watch.check(scanning: true, now: t0 + .seconds(1000)) == .wait(.seconds(10)), "nothing heard: never quiet")
        watch.heard(now: t0)
        #expect(watch.check(scanning: false, now: t0 + .seconds(1000)) == .wait(.seconds(10)), "not scanning: never quiet")
        #expect(watch.check(scanning: true, now: t0 + .seconds(4)) == .wait(.seconds(6)))
        #expect(watch.check(scanning: true, now: t0 + .seconds(10)) == .quiet(silence: .seconds(10)))
        var bounds: [Duration] = []
        for _ in 0..<6 {
            bounds.append(watch.bound)
            watch.connected(now: t0)
            watch.heard(now: t0)
            _ = watch.check(scanning: true, now: t0 + watch.bound)
        }
        #expect(bounds == [.seconds(20), .seconds(40), .seconds(80), .seconds(160), .seconds(160), .seconds(160)])
        // Heard for 10 × the timeout on one connection: the next quiet spell resets after 10 s again.
        watch.connected(now: t0)
        watch.heard(now: t0 + .seconds(100))
        #expect(watch.check(scanning: true, now: t0 + .seconds(101)) == .wait(.seconds(9)))
        #expect(watch.bound == .seconds(10))
        // Scanning re-enabled: the silence before it does not count.
        watch.scanningStarted(now: t0 + .seconds(200))
        #expect(watch.check(scanning: true, now: t0 + .seconds(205)) == .wait(.seconds(5)))
    }
}
