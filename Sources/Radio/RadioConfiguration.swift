/// Timing of one radio. Defaults follow docs/product.md §12 (`interval_ms = 100`).
public struct RadioConfiguration: Sendable, Equatable {
    /// Advertising interval, and the period of the advertising rotation: every interval the next
    /// payload is announced (disable → set data → enable), so with N payloads each one comes
    /// round every N × interval.
    public var advertisingInterval: Duration
    /// Scan duty cycle: the controller listens `scanWindow` out of every `scanInterval`.
    public var scanInterval: Duration
    public var scanWindow: Duration
    /// How long one HCI command may take before the controller counts as unresponsive.
    public var commandTimeout: Duration
    /// Reconnect back-off: starts at `initial`, doubles per failed attempt up to `maximum`.
    public var reconnectInitialDelay: Duration
    public var reconnectMaximumDelay: Duration

    public init(
        advertisingInterval: Duration = .milliseconds(100),
        scanInterval: Duration = .milliseconds(100),
        scanWindow: Duration = .milliseconds(100),
        commandTimeout: Duration = .seconds(2),
        reconnectInitialDelay: Duration = .milliseconds(100),
        reconnectMaximumDelay: Duration = .seconds(5)
    ) {
        self.advertisingInterval = advertisingInterval
        self.scanInterval = scanInterval
        self.scanWindow = scanWindow
        self.commandTimeout = commandTimeout
        self.reconnectInitialDelay = reconnectInitialDelay
        self.reconnectMaximumDelay = reconnectMaximumDelay
    }
}
