/// User consent (`GNSPermission`): nothing is published or scanned unless granted.
public enum Permission: String, Sendable, Hashable, CaseIterable, Codable {
    case granted
    case denied
    case undecided
}

/// Active: everything runs. Standby: only `background = true` entries, BLE only, and only when
/// background mode is on.
public enum PowerState: String, Sendable, Hashable, CaseIterable, Codable {
    case active
    case standby
}

/// What survives a reboot: the state file's content (docs/product.md §7).
public struct GatewayState: Equatable, Hashable, Sendable, Codable {
    public var backgroundMode: Bool
    public var permission: Permission
    public var power: PowerState

    public init(backgroundMode: Bool = true, permission: Permission = .granted, power: PowerState = .active) {
        self.backgroundMode = backgroundMode
        self.permission = permission
        self.power = power
    }

    enum CodingKeys: String, CodingKey {
        case backgroundMode = "background_mode"
        case permission
        case power
    }
}

/// The three error states of Nearby Messages' error handlers, set and cleared as causes come and go.
public enum GatewayErrorState: String, Sendable, Hashable, CaseIterable, Codable {
    case bluetoothPower = "bluetooth-power"
    case bluetoothPermission = "bluetooth-permission"
    case microphonePermission = "microphone-permission"
    /// The state file could not be read at boot or written since: consent was withheld, or a change
    /// was refused. Cleared by the next successful save.
    case state
    /// The last SIGHUP could not be applied (invalid config): the running config stays. Cleared by
    /// the next successful reload.
    case config
    /// The MQTT bridge cannot reach its broker, or the broker refuses it (docs/mqtt.md). Cleared on
    /// the next successful connect.
    case mqtt
    /// The controller went quiet (reports had been arriving, then none for `radio.quiet_s`) and was
    /// reset; cleared by the next sighting (docs/radio.md).
    case radioQuiet = "radio-quiet"
    /// This gateway's clock is behind a peer's by more than the epoch window allows, and its epochs
    /// follow that peer's (docs/protocol.md, "Clocks that disagree"); cleared when the clock steps or
    /// the kernel says it is synchronised.
    case clock
}
