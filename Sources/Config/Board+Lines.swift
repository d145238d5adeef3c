extension Board {
    /// Lines per GPIO chip of the supported boards, so `check-config` refuses an offset the chip does
    /// not have without the hardware (sources in docs/leds.md). Board data: the LED layer drives
    /// whatever lines it is given.
    public static let chipLineCounts: [String: UInt32] = [
        "pinctrl-bcm2835": 54, "pinctrl-bcm2711": 58, "pinctrl-rp1": 54,
    ]

    /// An LED or input on a line its chip does not have, one message each, naming it and the line.
    /// (One line used twice is refused while the board is read.)
    func lineProblems() -> [String] {
        guard let chip = gpioChip, let count = Self.chipLineCounts[chip] else { return [] }
        let lines = leds.map { ("LED '\($0.name)'", $0.line) } + (powerInput.map { [("input 'power'", $0.line)] } ?? [])
        return lines.sorted(by: { $0.0 < $1.0 }).filter { $0.1 >= count }.map { name, offset in
            "\(name): line \(offset) is not on \(chip) (\(count) lines, 0...\(count - 1))"
        }
    }
}
