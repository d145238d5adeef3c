import Logging
import Synchronization

/// LEDs without a chip: each change goes to the log and to `sink`, which the gateway wires to the
/// socket event `$SYS/led/<name> on|off`.
public final class SimLEDOutput: LEDOutput {
    public let ledNames: Set<String>
    private let logger: Logger
    private let sink: @Sendable (_ name: String, _ on: Bool) -> Void
    private let released = Mutex(false)

    public init(ledNames: Set<String>, logger: Logger, sink: @escaping @Sendable (_ name: String, _ on: Bool) -> Void) {
        self.ledNames = ledNames
        self.logger = logger
        self.sink = sink
    }

    public func set(_ led: String, on: Bool) throws(GPIOError) {
        guard ledNames.contains(led), !released.withLock({ $0 }) else { return }
        logger.info("LED \(on ? "on" : "off")", metadata: ["led": "\(led)"])
        sink(led, on)
    }

    /// LEDPanel switches lit LEDs off before calling this; nothing to hand back to a kernel.
    public func releaseAll() {
        released.withLock { $0 = true }
    }
}
