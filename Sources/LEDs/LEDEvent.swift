import NearbyProtocol
/// What the gateway tells the front panel. Found/lost carry the state after the change rather than
/// a delta, so a missed or repeated event cannot leave an LED lit forever.
public enum LEDEvent: Sendable, Equatable {
    /// The box changed between active and standby.
    case power(PowerState)
    /// Something new was found. `total` = messages found now; `lit` = per-subscription LEDs whose
    /// subscription has at least one found message now.
    case found(total: Int, lit: Set<String>)
    /// Something was lost; same meaning of `total` and `lit`, after the loss.
    case lost(total: Int, lit: Set<String>)
    /// The error states set now (empty = none).
    case errors(Set<GatewayErrorState>)
}

/// What an input line asks of the gateway; the lead applies it like `SET power`.
public enum PowerRequest: Sendable, Equatable {
    /// A button press: active ↔ standby.
    case toggle
    /// A power-level line: its level says which.
    case set(PowerState)
}

/// The pattern timings; `docs/leds.md` documents the standard ones.
public struct LEDTimings: Sendable, Equatable {
    /// `status` before the gateway has told the panel its power state (starting up): 1 Hz, 50 %.
    public var startingPeriod: Duration = .seconds(1)
    public var startingOn: Duration = .milliseconds(500)
    /// `status` in standby: a short flash every 2 s (slow, and mostly dark at night).
    public var standbyPeriod: Duration = .seconds(2)
    public var standbyOn: Duration = .milliseconds(250)
    /// `found` winks off this long on each new found while already lit…
    public var foundWink: Duration = .milliseconds(150)
    /// …and stays lit at least this long between two winks, so each wink is visible.
    public var foundWinkGap: Duration = .milliseconds(150)
    /// `lost` pulses on this long per lost, with at least this gap between pulses.
    public var lostPulse: Duration = .milliseconds(200)
    public var lostPulseGap: Duration = .milliseconds(200)
    /// Winks/pulses queued beyond this are dropped, so a burst of 100 losts does not blink for 40 s.
    public var maxQueuedPulses: Int = 4

    public init() {}

    public static let standard = LEDTimings()
}
