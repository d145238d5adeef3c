/// A board file (`boards/<name>.toml`): where the gateway's LEDs, inputs, radio and speaker are.
public struct Board: Sendable, Equatable {
    public var name: String
    public var description: String
    /// The file it was read from.
    public var path: String
    /// Label of the gpiochip carrying the LED and input lines (e.g. "pinctrl-bcm2711"); nil = no GPIO,
    /// LEDs are simulated (log and `$SYS/led`).
    public var gpioChip: String?
    /// LED polarity: true when a line driven low lights its LED.
    public var ledsActiveLow: Bool
    /// LED name → line offset on `gpioChip`, in file order.
    public var leds: [LED]
    /// Optional standby switch: standby while the line is active.
    public var powerInput: InputLine?
    /// Default `radio.device`.
    public var radioDevice: String
    /// Default `audio.device`.
    public var audioDevice: String
    /// Default `audio.capture` (empty = none).
    public var captureDevice: String

    public struct LED: Sendable, Equatable {
        public var name: String
        public var line: UInt32
    }

    public struct InputLine: Sendable, Equatable {
        public var line: UInt32
        public var activeLow: Bool
        public var bias: Bias
    }

    public enum Bias: String, Sendable, CaseIterable {
        case asIs = "as-is"
        case disabled
        case pullUp = "pull-up"
        case pullDown = "pull-down"
    }

    public func led(named name: String) -> LED? { leds.first { $0.name == name } }

    /// Reads and checks a board file; every problem is reported with this file's lines.
    static func parse(_ table: TOMLTable, path: String) -> Result<Board, ConfigError> {
        var reader = ConfigReader(file: path)
        reader.checkKeys(table, prefix: "", allowed: ["name", "description", "gpio", "leds", "inputs", "radio", "audio"])
        let name = reader.string(table, "name", prefix: "")?.value
        if name == nil, table["name"] == nil { reader.problem(nil, "name", "missing") }
        let description = reader.string(table, "description", prefix: "")?.value ?? ""

        var chip: String?
        var activeLow = false
        if let gpio = reader.table(table, "gpio", prefix: "") {
            reader.checkKeys(gpio, prefix: "gpio", allowed: ["chip", "active_low"])
            if let label = reader.string(gpio, "chip", prefix: "gpio")?.value, !label.isEmpty { chip = label }
            activeLow = reader.boolean(gpio, "active_low", prefix: "gpio")?.value ?? false
        }

        var leds: [LED] = []
        if let table = reader.table(table, "leds", prefix: "") {
            for entry in table.entries {
                let key = "leds.\(entry.key)"
                guard let offset = entry.value.integer else {
                    reader.problem(entry.line, key, "expected a line offset (integer), found \(entry.value.typeName)")
                    continue
                }
                guard (0...511).contains(offset) else {
                    reader.problem(entry.line, key, "line offset \(offset) is out of range 0…511")
                    continue
                }
                if let other = leds.first(where: { $0.line == UInt32(offset) }) {
                    reader.problem(entry.line, key, "line \(offset) is already used by LED \(other.name)")
                    continue
                }
                leds.append(LED(name: entry.key, line: UInt32(offset)))
            }
        }
        for required in GatewayConfig.systemLEDs where table["leds"]?.value.table?[required] == nil {
            reader.problem(table["leds"]?.line, "leds.\(required)", "missing (every board names the status, found, lost and error LEDs)")
        }

        var power: InputLine?
        if let inputs = reader.table(table, "inputs", prefix: "") {
            reader.checkKeys(inputs, prefix: "inputs", allowed: ["power"])
            if let input = reader.table(inputs, "power", prefix: "inputs") {
                reader.checkKeys(input, prefix: "inputs.power", allowed: ["line", "active_low", "bias"])
                if let line = reader.integer(input, "line", prefix: "inputs.power", range: 0...511) {
                    if let led = leds.first(where: { $0.line == UInt32(line.value) }) {
                        reader.problem(line.line, "inputs.power.line", "line \(line.value) is already used by LED \(led.name)")
                    } else {
                        power = InputLine(line: UInt32(line.value),
                                          activeLow: reader.boolean(input, "active_low", prefix: "inputs.power")?.value ?? false,
                                          bias: reader.choice(input, "bias", prefix: "inputs.power", Bias.self)?.value ?? .asIs)
                    }
                } else if input["line"] == nil {
                    reader.problem(inputs["power"]?.line, "inputs.power.line", "missing")
                }
            }
        }

        var radioDevice = ""
        if let radio = reader.table(table, "radio", prefix: "") {
            reader.checkKeys(radio, prefix: "radio", allowed: ["device"])
            if let (device, line) = reader.string(radio, "device", prefix: "radio") {
                if let problem = RadioDeviceName.problem(device) { reader.problem(line, "radio.device", problem) } else { radioDevice = device }
            }
        }
        if table["radio"]?.value.table?["device"] == nil { reader.problem(table["radio"]?.line, "radio.device", "missing") }

        var audioDevice = "default", captureDevice = ""
        if let audio = reader.table(table, "audio", prefix: "") {
            reader.checkKeys(audio, prefix: "audio", allowed: ["device", "capture"])
            audioDevice = reader.string(audio, "device", prefix: "audio")?.value ?? "default"
            captureDevice = reader.string(audio, "capture", prefix: "audio")?.value ?? ""
        }

        guard reader.problems.isEmpty, let name else { return .failure(ConfigError(problems: reader.problems)) }
        return .success(Board(name: name, description: description, path: path, gpioChip: chip, ledsActiveLow: activeLow,
                              leds: leds, powerInput: power, radioDevice: radioDevice, audioDevice: audioDevice,
                              captureDevice: captureDevice))
    }
}

/// The forms `radio.device` takes: "h4:/path/to/socket" or "hciN".
enum RadioDeviceName {
    static func problem(_ device: String) -> String? {
        if device.hasPrefix("h4:") {
            return device.count > 3 ? nil : "\"h4:\" needs the path of the H4 socket, e.g. \"h4:/tmp/bt-server-le\""
        }
        if device.hasPrefix("hci"), let index = Int(device.dropFirst(3)), index >= 0, index < 1024, !device.dropFirst(3).hasPrefix("+") {
            return nil
        }
        return "\"\(device)\" is neither \"hciN\" (a kernel controller) nor \"h4:PATH\" (an H4 socket)"
    }
}
