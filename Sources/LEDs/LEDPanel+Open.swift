import Logging
import NearbyProtocol
import SystemCall

extension LEDPanel {
    /// Builds the front panel a board describes.
    ///
    /// Without a chip label (the `sim` board) the LEDs are simulated: each change is logged and
    /// passed to `sink` (the gateway publishes it as `$SYS/led/<name> on|off`), and one line in the
    /// log says so. With a label, the chip must exist: a missing chip, a busy or absent line throws
    /// a `GPIOError` naming chip, line and errno, with nothing left requested, and the gateway
    /// refuses to start.
    public static func open(
        layout: LEDLayout,
        clock: any Clock<Duration> = ContinuousClock(),
        timings: LEDTimings = .standard,
        logger: Logger,
        loop: EventLoop,
        sink: @escaping @Sendable (_ name: String, _ on: Bool) -> Void,
        onPower: @escaping @Sendable (PowerRequest) -> Void
    ) throws(GPIOError) -> LEDPanel {
        guard let chipLabel = layout.chipLabel else {
            let names = Set(layout.leds.keys).union(LEDLayout.builtInLEDs)
            var message: Logger.Message = "LEDs are simulated: the board names no gpiochip; LED changes go to the log and $SYS/led/<name>"
            if !layout.inputs.isEmpty { message = "\(message) (inputs \(layout.inputs.keys.sorted()) ignored)" }
            logger.notice(message, metadata: ["leds": "\(names.sorted().joined(separator: ","))"])
            return LEDPanel(output: SimLEDOutput(ledNames: names, logger: logger, sink: sink),
                            clock: clock, timings: timings, logger: logger, loop: loop)
        }
        let chip = try GPIOChip.open(label: chipLabel)
        let output = try GPIOLEDOutput.open(chip: chip, layout: layout)
        var inputs: [InputWatcher] = []
        for (name, input) in layout.inputs.sorted(by: { $0.key < $1.key }) {
            do throws(GPIOError) {
                let line = try chip.requestEdgeEvents(offset: input.offset, activeLow: input.activeLow, bias: input.bias)
                inputs.append(InputWatcher(name: name, input: input, source: line, logger: logger, onRequest: onPower))
            } catch {
                output.releaseAll()
                for watcher in inputs { watcher.releaseUnstarted() }
                throw error
            }
        }
        logger.info("LEDs on GPIO", metadata: [
            "chip": "\(chipLabel)", "lines": "\(chip.lineCount)", "libgpiod": "\(GPIOChip.libraryVersion)",
            "leds": "\(layout.leds.sorted(by: { $0.key < $1.key }).map { "\($0.key)=\($0.value)" }.joined(separator: ","))",
        ])
        return LEDPanel(output: output, inputs: inputs, clock: clock, timings: timings, logger: logger, loop: loop)
    }
}
