/// The LED and input wiring of one board, as the LED module needs it. The lead fills it from the
/// board file; keeping our own type lets the LED module build and test on its own.
public struct LEDLayout: Sendable, Equatable {
    /// The gpiochip label (`pinctrl-bcm2711`); nil = no chip (the `sim` board): LEDs are simulated.
    public var chipLabel: String?
    /// LED name → line offset on the chip.
    public var leds: [String: UInt32]
    /// Input name → line. Inputs are ignored without a chip.
    public var inputs: [String: InputLine]
    /// LEDs wired active-low (lit when the line is driven low).
    public var activeLowLEDs: Set<String>

    public init(chipLabel: String?, leds: [String: UInt32], inputs: [String: InputLine] = [:], activeLowLEDs: Set<String> = []) {
        self.chipLabel = chipLabel
        self.leds = leds
        self.inputs = inputs
        self.activeLowLEDs = activeLowLEDs
    }

    /// The four LEDs every board has; any other name is a per-subscription LED.
    public static let builtInLEDs: [String] = ["status", "found", "lost", "error"]

    /// The documented default pin map (BCM numbering on the 40-pin header): status 17, found 27,
    /// lost 22, error 23, power button on 24 (active-low, pull-up).
    public static func raspberryPiDefault(chipLabel: String) -> LEDLayout {
        LEDLayout(
            chipLabel: chipLabel,
            leds: ["status": 17, "found": 27, "lost": 22, "error": 23],
            inputs: ["power-button": InputLine(offset: 24, kind: .button, activeLow: true, bias: .pullUp)]
        )
    }
}

/// An input line that switches active/standby.
public struct InputLine: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable, CaseIterable {
        /// A momentary button: each press toggles active ↔ standby.
        case button
        /// A level (e.g. from a TV's 5 V rail through a divider): asserted = active, released = standby.
        case powerLevel = "power-level"
    }

    public var offset: UInt32
    public var kind: Kind
    public var activeLow: Bool
    public var bias: InputBias
    /// How long the level must hold before it counts; switch contacts bounce for a few ms.
    public var debounce: Duration

    public init(offset: UInt32, kind: Kind, activeLow: Bool = false, bias: InputBias = .asIs, debounce: Duration = .milliseconds(30)) {
        self.offset = offset
        self.kind = kind
        self.activeLow = activeLow
        self.bias = bias
        self.debounce = debounce
    }
}
