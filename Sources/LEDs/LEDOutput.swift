/// One LED's line: the seam between the LED logic and libgpiod (`GPIOOutputLine`), faked in tests.
public protocol LEDLine: Sendable {
    /// Drives the LED; `true` is lit (active-low wiring is handled when the line is requested).
    func set(_ on: Bool) throws(GPIOError)
    /// Hands the line back to the kernel. Idempotent.
    func release()
}

/// Where LED states go: GPIO lines (`GPIOLEDOutput`) or the log and the socket (`SimLEDOutput`).
/// `LEDPanel` is its only caller and only writes changes.
public protocol LEDOutput: Sendable {
    /// The LEDs this output drives (`status`, `found`, `lost`, `error` and per-subscription ones).
    var ledNames: Set<String> { get }
    func set(_ led: String, on: Bool) throws(GPIOError)
    /// Switches every LED off and releases every line. Idempotent; called on shutdown.
    func releaseAll()
}

/// An edge-reporting input line: the seam between `InputWatcher` and libgpiod (`GPIOEdgeLine`).
public protocol GPIOEventSource: Sendable, CustomStringConvertible {
    /// Blocks up to `timeout` for one edge; `true` if one arrived (and was consumed).
    func waitForEdge(timeout: Duration) throws(GPIOError) -> Bool
    /// The line's logical level now (`true` = asserted, after active-low inversion).
    func level() throws(GPIOError) -> Bool
    func release()
}

/// Pull resistor for an input line. Buttons wired to ground want `pullUp` with `activeLow`.
public enum InputBias: String, Sendable, Equatable, CaseIterable {
    case asIs = "as-is"
    case disabled
    case pullUp = "pull-up"
    case pullDown = "pull-down"
}
