@testable import SystemCall
import Testing
@testable import LEDs

/// The panel actor driven by a manual clock: each step advances the clock and waits for the
/// expected write, then the whole history is compared, so a stray write would show.
@Suite struct LEDPanelTests {
    private func ms(_ value: Int) -> Duration { .milliseconds(value) }

    @Test func heartbeatBlinksWhileStartingThenTurnsSolidWhenActive() async throws {
        let clock = ManualClock()
        let output = RecordingLEDOutput(clock: clock)
        let loop = try EventLoop(name: "panel-loop")
        defer { loop.shutdown() }
        let panel = LEDPanel(output: output, clock: clock, logger: .quiet, loop: loop)
        await panel.start()
        _ = try await output.log.first(1)
        clock.advance(by: ms(500))
        _ = try await output.log.first(2)
        clock.advance(by: ms(500))
        _ = try await output.log.first(3)
        await panel.handle(.power(.active))
        // Solid: nothing left to time, so nothing sleeps on the clock.
        #expect(clock.sleeperCount == 0)
        clock.advance(by: .seconds(10))
        await panel.handle(.errors([.bluetoothPower]))
        let history = try await output.log.first(4)
        #expect(history == [
            LEDChange(ms(0), "status", true), LEDChange(ms(500), "status", false),
            LEDChange(ms(1000), "status", true), LEDChange(ms(11000), "error", true),
        ])
        #expect(await panel.levels["status"] == true)
    }

    @Test func standbyFlashes() async throws {
        let clock = ManualClock()
        let output = RecordingLEDOutput(["status"], clock: clock)
        let loop = try EventLoop(name: "panel-loop")
        defer { loop.shutdown() }
        let panel = LEDPanel(output: output, clock: clock, logger: .quiet, loop: loop)
        await panel.handle(.power(.standby))
        await panel.start()
        _ = try await output.log.first(1)
        for (step, count) in [(250, 2), (1750, 3), (250, 4)] {
            clock.advance(by: ms(step))
            _ = try await output.log.first(count)
        }
        #expect(output.log.items == [
            LEDChange(ms(0), "status", true), LEDChange(ms(250), "status", false),
            LEDChange(ms(2000), "status", true), LEDChange(ms(2250), "status", false),
        ])
    }

    @Test func foundWinkLostPulseAndSubscriptionLED() async throws {
        let clock = ManualClock()
        let output = RecordingLEDOutput(["found", "lost", "kitchen"], clock: clock)
        let loop = try EventLoop(name: "panel-loop")
        defer { loop.shutdown() }
        let panel = LEDPanel(output: output, clock: clock, logger: .quiet, loop: loop)
        await panel.start()
        await panel.handle(.found(total: 1, lit: ["kitchen"]))
        _ = try await output.log.first(2)
        clock.advance(by: ms(1000))
        await panel.handle(.found(total: 2, lit: ["kitchen"]))
        _ = try await output.log.first(3)
        clock.advance(by: ms(150))
        _ = try await output.log.first(4)
        clock.advance(by: ms(850))
        await panel.handle(.lost(total: 0, lit: []))
        _ = try await output.log.first(7)
        clock.advance(by: ms(200))
        let history = try await output.log.first(8)
        #expect(history == [
            LEDChange(ms(0), "found", true), LEDChange(ms(0), "kitchen", true),
            LEDChange(ms(1000), "found", false), LEDChange(ms(1150), "found", true),
            LEDChange(ms(2000), "found", false), LEDChange(ms(2000), "kitchen", false), LEDChange(ms(2000), "lost", true),
            LEDChange(ms(2200), "lost", false),
        ])
    }

    @Test func shutdownDarkensReleasesAndIgnoresLaterEvents() async throws {
        let clock = ManualClock()
        let output = RecordingLEDOutput(clock: clock)
        let loop = try EventLoop(name: "panel-loop")
        defer { loop.shutdown() }
        let panel = LEDPanel(output: output, clock: clock, logger: .quiet, loop: loop)
        await panel.start()
        await panel.handle(.errors([.bluetoothPermission]))
        _ = try await output.log.first(2)
        await panel.shutdown()
        let history = try await output.log.first(4)
        #expect(Set(history.suffix(2)) == [LEDChange(ms(0), "status", false), LEDChange(ms(0), "error", false)])
        #expect(output.releaseCount == 1)
        #expect(clock.sleeperCount == 0)
        await panel.handle(.errors([.bluetoothPower]))
        await panel.shutdown()
        #expect(output.log.items.count == 4)
        #expect(output.releaseCount == 1)
        #expect(await panel.levels.values.allSatisfy { !$0 })
    }

    @Test func aFailingOutputIsLoggedOnceAndNeverCrashes() async throws {
        let clock = ManualClock()
        let gone = GPIOError(kind: .chipGone, chip: "pinctrl-bcm2711", line: 23, call: "gpiod_line_set_value", errno: Errno(rawValue: 19))
        let output = RecordingLEDOutput(["error"], clock: clock, failing: gone)
        let messages = EventLog<String>()
        let loop = try EventLoop(name: "panel-loop")
        defer { loop.shutdown() }
        let panel = LEDPanel(output: output, clock: clock, logger: .capturing(messages), loop: loop)
        await panel.handle(.errors([.bluetoothPower]))
        await panel.handle(.errors([.bluetoothPower, .microphonePermission]))
        let errors = messages.items.filter { $0.hasPrefix("error") }
        #expect(errors.count == 1)
        #expect(errors.first?.contains("pinctrl-bcm2711") == true)
        #expect(errors.first?.contains("line 23") == true)
        #expect(errors.first?.contains("ENODEV") == true)
        #expect(await panel.levels["error"] == false)
    }
}



/// With the real clock, the panel's timers are its loop's: a found's wink is written on the loop's
/// thread, as the event that started it was, and no write comes from Swift's pool (where a
/// `Task.sleep` would have resumed it, waking Dispatch's timer thread and a worker for each wink).
@Suite struct LEDPanelLoopTests {
    /// Each write with whether it ran on the loop.
    final class ThreadRecordingOutput: LEDOutput {
        let ledNames: Set<String> = ["status", "found", "lost", "error"]
        let log = EventLog<(led: String, on: Bool, onLoop: Bool)>()
        let loop: EventLoop
        init(loop: EventLoop) { self.loop = loop }
        func set(_ led: String, on: Bool) throws(GPIOError) { log.append((led, on, loop.isCurrent)) }
        func releaseAll() {}
    }

    @Test func winksAreWrittenOnTheLoopAndWaitOnItsTimers() async throws {
        let loop = try EventLoop(name: "panel-loop")
        defer { loop.shutdown() }
        let output = ThreadRecordingOutput(loop: loop)
        let panel = LEDPanel(output: output, logger: .quiet, loop: loop)
        await panel.start()
        await panel.handle(.power(.active))
        await panel.handle(.found(total: 1, lit: []))
        await panel.handle(.found(total: 2, lit: []))
        // Lit, winked off by the second found, lit again by the wink's timer (150 ms later).
        let found = try await waitForFound(output.log, count: 3)
        #expect(found.map { $0.on } == [true, false, true])
        // The wait between the last two was a timer of the loop.
        #expect(loop.timersScheduled >= 1)
        #expect(output.log.items.allSatisfy { $0.onLoop }, "writes off the loop: \(output.log.items.filter { !$0.onLoop })")
        await panel.shutdown()
    }

    private func waitForFound(_ log: EventLog<(led: String, on: Bool, onLoop: Bool)>, count: Int) async throws
        -> [(led: String, on: Bool, onLoop: Bool)] {
        var seen = 0
        while true {
            seen += 1
            let items = try await log.first(seen)
            let found = items.filter { $0.led == "found" }
            if found.count >= count { return found }
        }
    }
}
