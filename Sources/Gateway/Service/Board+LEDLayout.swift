import Config
import LEDs

extension Board {
    /// The LED layer's view of the board. The board's power input means "standby while asserted"; the
    /// LED layer's power-level input means "active while asserted", hence the inverted polarity.
    package func ledLayout(enabled: Bool) -> LEDLayout {
        var inputs: [String: LEDs.InputLine] = [:]
        if let power = powerInput {
            inputs["power"] = LEDs.InputLine(offset: power.line, kind: .powerLevel, activeLow: !power.activeLow,
                                        bias: InputBias(rawValue: power.bias.rawValue) ?? .asIs)
        }
        let lines = Dictionary(leds.map { ($0.name, $0.line) }, uniquingKeysWith: { first, _ in first })
        return LEDLayout(chipLabel: enabled ? gpioChip : nil, leds: lines, inputs: inputs,
                         activeLowLEDs: ledsActiveLow ? Set(lines.keys) : [])
    }
}
