/// How advertising reaches the air on a given controller.
public enum ReannouncePolicy: String, Sendable, Equatable, CaseIterable {
    /// Decide from Read Local Version Information: BlueZ's emulator (`btvirt`: manufacturer
    /// 0x05F1, HCI version 9) sends one report per advertising enable, so it is re-announced every
    /// interval; every other controller advertises periodically by itself.
    case automatic = "auto"
    /// Disable → set data → enable every interval, whatever the controller (what btvirt needs).
    case everyInterval = "every-interval"
    /// Commands only when the payloads change, or to rotate between several (real controllers).
    case onChange = "on-change"
}

/// Timing of one radio. Defaults follow docs/product.md §12 (`interval_ms = 100`).
public struct RadioConfiguration: Sendable, Equatable {
    /// Advertising interval, and the period of the advertising rotation: every interval the next
    /// payload goes on the air, so with N payloads each one comes round every N × interval. A
    /// single payload is left to the controller, which repeats it every interval by itself, unless
    /// `reannounce` says the controller needs an enable per report.
    public var advertisingInterval: Duration
    public var reannounce: ReannouncePolicy
    /// Scan duty cycle: the controller listens `scanWindow` out of every `scanInterval`.
    public var scanInterval: Duration
    public var scanWindow: Duration
    /// How long one HCI command may take before the controller counts as unresponsive.
    public var commandTimeout: Duration
    /// Reconnect back-off: starts at `initial`, doubles per failed attempt up to `maximum`.
    public var reconnectInitialDelay: Duration
    public var reconnectMaximumDelay: Duration
    /// A controller that goes quiet (answers commands, delivers no advertising reports): after
    /// reports were arriving on this connection, this long without one while scanning resets it.
    /// nil: never. Doubles after each such reset (`QuietWatch`, docs/radio.md).
    public var quietTimeout: Duration?

    public init(
        advertisingInterval: Duration = .milliseconds(100),
        scanInterval: Duration = .milliseconds(100),
        scanWindow: Duration = .milliseconds(100),
        commandTimeout: Duration = .seconds(2),
        reconnectInitialDelay: Duration = .milliseconds(100),
        reconnectMaximumDelay: Duration = .seconds(5),
        reannounce: ReannouncePolicy = .automatic,
        quietTimeout: Duration? = .seconds(60)
    ) {
        self.quietTimeout = quietTimeout
        self.advertisingInterval = advertisingInterval
        self.reannounce = reannounce
        self.scanInterval = scanInterval
        self.scanWindow = scanWindow
        self.commandTimeout = commandTimeout
        self.reconnectInitialDelay = reconnectInitialDelay
        self.reconnectMaximumDelay = reconnectMaximumDelay
    }
}
