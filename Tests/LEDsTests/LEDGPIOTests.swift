import Foundation
import SystemCall
import Testing
@testable import LEDs

/// Error mapping through the real libgpiod (this machine has no /dev/gpiochip*), and the GPIO
/// output's bookkeeping over fake lines.
@Suite struct LEDGPIOTests {
    /// A label no kernel driver uses, so the test means the same on a Raspberry Pi.
    private let missingLabel = "nearby-test-no-such-chip"

    @Test func openingAMissingChipByLabelNamesTheChipAndENOENT() throws {
        let error = try #require(throws: GPIOError.self) { try GPIOChip.open(label: missingLabel) }
        #expect(error.kind == .chipMissing)
        #expect(error.chip == missingLabel)
        #expect(error.errno.rawValue == ENOENT)
        #expect(error.call == "nearby_gpio_chip_open_by_label")
        #expect(error.line == nil)
        #expect(error.description.contains("gpiochip '\(missingLabel)'"))
        #expect(error.description.contains("ENOENT"))
    }

    @Test func openingAPathThatIsNotAChipSaysSo() throws {
        let error = try #require(throws: GPIOError.self) { try GPIOChip.open(path: "/dev/null") }
        #expect(error.kind == .notAChip)
        #expect(error.chip == "/dev/null")
        // libgpiod 1.6 learns it from the chip-info ioctl (ENOTTY), 2.x from sysfs (ENODEV).
        #expect(error.errno.rawValue == ENOTTY || error.errno.rawValue == ENODEV)
        #expect(error.description.contains("not a GPIO character device"))
    }

    @Test func openingAMissingPathIsChipMissing() throws {
        let error = try #require(throws: GPIOError.self) { try GPIOChip.open(path: "/dev/gpiochip-nearby-test") }
        #expect(error.kind == .chipMissing)
        #expect(error.errno.rawValue == ENOENT)
    }

    @Test func aConfiguredChipThatIsMissingRefusesToOpenThePanel() throws {
        let layout = LEDLayout.raspberryPiDefault(chipLabel: missingLabel)
        let loop = try EventLoop(name: "panel-loop")
        defer { loop.shutdown() }
        let error = try #require(throws: GPIOError.self) {
            try LEDPanel.open(layout: layout, logger: .quiet, loop: loop, sink: { _, _ in }, onPower: { _ in })
        }
        #expect(error.kind == .chipMissing)
        #expect(error.chip == missingLabel)
    }

    @Test func errorTextNamesChipLineCallAndErrno() {
        let busy = GPIOError(kind: .lineBusy, chip: "pinctrl-bcm2711", line: 17, call: "gpiod_line_request_output_flags", errno: Errno(rawValue: EBUSY))
        #expect(busy.description.hasPrefix("gpiochip 'pinctrl-bcm2711' line 17: gpiod_line_request_output_flags failed: EBUSY"))
        #expect(busy.description.contains("another consumer"))
        let absent = GPIOError(kind: .noSuchLine, chip: "pinctrl-rp1", line: 60, call: "gpiod_chip_get_line", errno: Errno(rawValue: EINVAL), detail: "the chip has 54 lines (0...53)")
        #expect(absent.description.contains("line 60"))
        #expect(absent.description.contains("EINVAL"))
        #expect(absent.description.contains("54 lines"))
    }

    @Test func gpioOutputDrivesItsLinesAndReleasesThemDark() throws {
        let status = FakeLEDLine(), error = FakeLEDLine()
        let output = GPIOLEDOutput(lines: ["status": status, "error": error])
        #expect(output.ledNames == ["status", "error"])
        try output.set("status", on: true)
        try output.set("unknown", on: true)
        output.releaseAll()
        #expect(status.values == [true, false])
        #expect(error.values == [false])
        #expect(status.isReleased && error.isReleased)
    }
}

/// Without a chip: changes go to the sink (the gateway's `$SYS/led/<name>`) and to the log.
@Suite struct LEDSimTests {
    @Test func simBoardSaysSoOnceAndSendsFoundAndLostToTheSink() async throws {
        let messages = EventLog<String>()
        let sunk = EventLog<String>()
        let layout = LEDLayout(chipLabel: nil, leds: ["status": 17, "found": 27, "lost": 22, "error": 23])
        let loop = try EventLoop(name: "panel-loop")
        defer { loop.shutdown() }
        let panel = try LEDPanel.open(
            layout: layout, logger: .capturing(messages), loop: loop,
            sink: { name, on in sunk.append("$SYS/led/\(name) \(on ? "on" : "off")") }, onPower: { _ in })
        let notices = messages.items.filter { $0.contains("LEDs are simulated") }
        #expect(notices.count == 1)
        await panel.handle(.power(.active))
        await panel.handle(.found(total: 1, lit: []))
        await panel.handle(.lost(total: 0, lit: []))
        let events = try await sunk.first(3)
        #expect(events == ["$SYS/led/found on", "$SYS/led/found off", "$SYS/led/lost on"])
        #expect(messages.items.contains { $0.contains("LED on") })
        await panel.shutdown()
        _ = try await sunk.first(4)
        #expect(sunk.items.last == "$SYS/led/lost off")
    }

    @Test func simOutputIgnoresUnknownNamesAndWritesAfterRelease() throws {
        let sunk = EventLog<String>()
        let output = SimLEDOutput(ledNames: ["found"], logger: .quiet) { name, on in sunk.append("\(name) \(on)") }
        try output.set("found", on: true)
        try output.set("nope", on: true)
        output.releaseAll()
        try output.set("found", on: false)
        #expect(sunk.items == ["found true"])
    }
}

@Suite struct LEDLayoutTests {
    @Test func aReleasedLineErrorHasNoErrnoNoise() {
        let error = GPIOError(kind: .released, chip: "pinctrl-rp1", line: 17, call: "gpiod_line_set_value", errno: Errno(rawValue: 0))
        #expect(error.description == "gpiochip 'pinctrl-rp1' line 17: gpiod_line_set_value failed; the line was already released")
    }
}
