import Testing
@testable import LEDs

/// The patterns as a pure function of events and time: exact timings, no clock.
@Suite struct LEDPatternsTests {
    private func ms(_ value: Int) -> Duration { .milliseconds(value) }

    private func statusLevels(_ patterns: LEDPatterns, at times: [Int]) -> [Bool] {
        times.map { patterns.level(of: "status", at: ms($0)) }
    }

    @Test func everythingIsDarkBeforeStart() {
        let patterns = LEDPatterns()
        for led in ["status", "found", "lost", "error", "kitchen"] {
            #expect(!patterns.level(of: led, at: .zero))
        }
        #expect(patterns.nextChange(after: .zero) == nil)
    }

    @Test func startingBlinksAtOneHertz() {
        var patterns = LEDPatterns()
        patterns.start(at: ms(100))
        #expect(patterns.statusMode == .starting)
        #expect(statusLevels(patterns, at: [100, 599, 600, 1099, 1100, 5100, 5600]) == [true, true, false, false, true, true, false])
        #expect(patterns.nextChange(after: ms(100)) == ms(600))
        #expect(patterns.nextChange(after: ms(600)) == ms(1100))
        #expect(patterns.nextChange(after: ms(7350)) == ms(7600))
        #expect(patterns.nextChange(after: ms(7700)) == ms(8100))
    }

    @Test func activeIsSolidAndSchedulesNothing() {
        var patterns = LEDPatterns()
        patterns.start(at: .zero)
        patterns.apply(.power(.active), at: ms(300))
        #expect(statusLevels(patterns, at: [300, 800, 1300, 60_000]) == [true, true, true, true])
        #expect(patterns.nextChange(after: ms(300)) == nil)
    }

    @Test func standbyFlashesShortlyEveryTwoSeconds() {
        var patterns = LEDPatterns()
        patterns.start(at: .zero)
        patterns.apply(.power(.standby), at: ms(1000))
        #expect(statusLevels(patterns, at: [1000, 1249, 1250, 2999, 3000, 3250]) == [true, true, false, false, true, false])
        #expect(patterns.nextChange(after: ms(1000)) == ms(1250))
        #expect(patterns.nextChange(after: ms(1250)) == ms(3000))
    }

    @Test func repeatedPowerEventKeepsTheBlinkPhase() {
        var patterns = LEDPatterns()
        patterns.start(at: .zero)
        patterns.apply(.power(.standby), at: ms(0))
        patterns.apply(.power(.standby), at: ms(1900))
        #expect(patterns.level(of: "status", at: ms(1950)) == false)
        #expect(patterns.level(of: "status", at: ms(2000)) == true)
    }

    @Test func powerToldBeforeStartIsShownAtStart() {
        var patterns = LEDPatterns()
        patterns.apply(.power(.standby), at: .zero)
        #expect(!patterns.level(of: "status", at: .zero))
        patterns.start(at: ms(500))
        #expect(patterns.statusMode == .standby)
        #expect(patterns.level(of: "status", at: ms(500)))
    }

    @Test func foundIsLitWhileAnythingIsFoundAndWinksOnEachNewOne() {
        var patterns = LEDPatterns()
        patterns.start(at: .zero)
        patterns.apply(.power(.active), at: .zero)
        patterns.apply(.found(total: 1, lit: []), at: ms(1000))
        // The first found lights the LED without a wink.
        #expect(patterns.level(of: "found", at: ms(1000)))
        #expect(patterns.nextChange(after: ms(1000)) == nil)
        patterns.apply(.found(total: 2, lit: []), at: ms(2000))
        #expect(!patterns.level(of: "found", at: ms(2000)))
        #expect(!patterns.level(of: "found", at: ms(2149)))
        #expect(patterns.level(of: "found", at: ms(2150)))
        #expect(patterns.nextChange(after: ms(2000)) == ms(2150))
        patterns.apply(.lost(total: 0, lit: []), at: ms(3000))
        #expect(!patterns.level(of: "found", at: ms(3000)))
    }

    @Test func winksInABurstQueueWithAGapAndAreCapped() {
        var patterns = LEDPatterns()
        patterns.apply(.found(total: 1, lit: []), at: .zero)
        for n in 2...8 { patterns.apply(.found(total: n, lit: []), at: ms(10)) }
        // 4 winks (the cap) at 10, 310, 610, 910, each 150 ms dark.
        let dark = stride(from: 0, through: 1300, by: 10).filter { !patterns.level(of: "found", at: ms($0)) }
        let expected = [10, 310, 610, 910].flatMap { start in stride(from: start, to: start + 150, by: 10).map { $0 } }
        #expect(dark == expected)
    }

    @Test func lostPulsesOncePerLost() {
        var patterns = LEDPatterns()
        patterns.apply(.lost(total: 0, lit: []), at: ms(100))
        patterns.apply(.lost(total: 0, lit: []), at: ms(150))
        #expect(patterns.level(of: "lost", at: ms(100)))
        #expect(!patterns.level(of: "lost", at: ms(300)))
        #expect(!patterns.level(of: "lost", at: ms(499)))
        #expect(patterns.level(of: "lost", at: ms(500)))
        #expect(!patterns.level(of: "lost", at: ms(700)))
        #expect(patterns.nextChange(after: ms(100)) == ms(300))
        #expect(patterns.nextChange(after: ms(300)) == ms(500))
        #expect(patterns.nextChange(after: ms(500)) == ms(700))
        #expect(patterns.nextChange(after: ms(700)) == nil)
    }

    @Test func errorIsLitWhileAnyErrorIsSet() {
        var patterns = LEDPatterns()
        patterns.apply(.errors([.bluetoothPower, .microphonePermission]), at: .zero)
        #expect(patterns.level(of: "error", at: .zero))
        patterns.apply(.errors([.microphonePermission]), at: ms(1))
        #expect(patterns.level(of: "error", at: ms(1)))
        patterns.apply(.errors([]), at: ms(2))
        #expect(!patterns.level(of: "error", at: ms(2)))
    }

    @Test func subscriptionLEDsFollowTheLitSet() {
        var patterns = LEDPatterns()
        patterns.apply(.found(total: 2, lit: ["kitchen", "door"]), at: .zero)
        #expect(patterns.level(of: "kitchen", at: .zero))
        #expect(patterns.level(of: "door", at: .zero))
        #expect(!patterns.level(of: "garage", at: .zero))
        patterns.apply(.lost(total: 1, lit: ["door"]), at: ms(5))
        #expect(!patterns.level(of: "kitchen", at: ms(5)))
        #expect(patterns.level(of: "door", at: ms(5)))
    }

    @Test func stopDarkensEverythingAndIgnoresLaterEvents() {
        var patterns = LEDPatterns()
        patterns.start(at: .zero)
        patterns.apply(.errors([.bluetoothPower]), at: .zero)
        patterns.apply(.found(total: 1, lit: ["kitchen"]), at: .zero)
        patterns.stop()
        patterns.apply(.errors([.bluetoothPower]), at: ms(1))
        patterns.start(at: ms(2))
        for led in ["status", "found", "lost", "error", "kitchen"] {
            #expect(!patterns.level(of: led, at: ms(2)))
        }
        #expect(patterns.nextChange(after: ms(2)) == nil)
    }
}

@Suite struct DebouncerTests {
    private func ms(_ value: Int) -> Duration { .milliseconds(value) }

    @Test func aLevelCountsOnceItHeld() {
        var debouncer = Debouncer(hold: ms(30))
        debouncer.reset(to: false)
        #expect(debouncer.observe(true, at: ms(100)) == nil)
        #expect(debouncer.deadline == ms(130))
        #expect(debouncer.observe(true, at: ms(129)) == nil)
        #expect(debouncer.observe(true, at: ms(130)) == true)
        #expect(debouncer.stable == true)
        #expect(debouncer.deadline == nil)
    }

    @Test func bouncesRestartTheHold() {
        var debouncer = Debouncer(hold: ms(30))
        debouncer.reset(to: false)
        #expect(debouncer.observe(true, at: ms(0)) == nil)
        #expect(debouncer.observe(false, at: ms(5)) == nil)
        #expect(debouncer.deadline == nil)
        #expect(debouncer.observe(true, at: ms(8)) == nil)
        #expect(debouncer.observe(true, at: ms(37)) == nil)
        #expect(debouncer.observe(true, at: ms(38)) == true)
    }

    @Test func aGlitchShorterThanTheHoldIsIgnored() {
        var debouncer = Debouncer(hold: ms(30))
        debouncer.reset(to: true)
        #expect(debouncer.observe(false, at: ms(0)) == nil)
        #expect(debouncer.observe(true, at: ms(10)) == nil)
        #expect(debouncer.observe(true, at: ms(100)) == nil)
        #expect(debouncer.stable == true)
    }
}
