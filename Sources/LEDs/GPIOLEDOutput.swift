/// LEDs on GPIO lines: one `LEDLine` per LED name.
public struct GPIOLEDOutput: LEDOutput {
    private let lines: [String: any LEDLine]

    public init(lines: [String: any LEDLine]) {
        self.lines = lines
    }

    /// Requests every LED line of `layout` on `chip` as an output, initially off. If any request
    /// fails, the lines already taken are released before the error is thrown, so a refused start
    /// leaves the chip as it found it.
    public static func open(chip: GPIOChip, layout: LEDLayout) throws(GPIOError) -> GPIOLEDOutput {
        var lines: [String: any LEDLine] = [:]
        // Sorted so that which line fails first (and so the error) is the same on every run.
        for (name, offset) in layout.leds.sorted(by: { $0.key < $1.key }) {
            do throws(GPIOError) {
                lines[name] = try chip.requestOutput(
                    offset: offset, initial: false, activeLow: layout.activeLowLEDs.contains(name))
            } catch {
                for line in lines.values { line.release() }
                throw error
            }
        }
        return GPIOLEDOutput(lines: lines)
    }

    public var ledNames: Set<String> { Set(lines.keys) }

    public func set(_ led: String, on: Bool) throws(GPIOError) {
        try lines[led]?.set(on)
    }

    public func releaseAll() {
        for line in lines.values {
            // Best effort: a chip that has gone away cannot be switched off, but must still be released.
            try? line.set(false)
            line.release()
        }
    }
}
