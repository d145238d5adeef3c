import Logging
import NearbyProtocol

/// Everything in `gateway.toml` (docs/product.md §12), typed, with defaults applied and board defaults
/// resolved. Built only by `ConfigLoader`, which refuses a file with any problem.
public struct GatewayConfig: Sendable, Equatable {
    /// The file it was read from.
    public var path: String
    public var apiKey: String
    public var boardName: String
    public var logLevel: Logger.Level
    public var radio: RadioSettings
    public var audio: AudioSettings
    public var socket: SocketSettings
    public var state: StateSettings
    public var leds: LEDSettings
    public var limits: LimitSettings
    public var publications: [PublicationConfig]
    public var subscriptions: [SubscriptionConfig]
    /// `[[identity]]`: phones and watches followed by their IRK (docs/identities.md).
    public var identities: [IdentityConfig] = []
    /// nil = no `[mqtt]` section: no bridge is created.
    public var mqtt: MQTTSettings? = nil

    public struct RadioSettings: Sendable, Equatable {
        /// `radio.reannounce`'s words; Gateway/Service/ConfigMapping.swift maps them onto the radio's
        /// `ReannouncePolicy` (docs/radio.md says what each does).
        public enum Reannounce: String, Sendable, Equatable, CaseIterable {
            case automatic = "auto"
            case everyInterval = "every-interval"
            case onChange = "on-change"
        }

        /// "h4:/path" or "hciN" (from the board unless set).
        public var device: String
        /// Use the HCI user channel (exclusive access; bluetoothd must not hold the controller).
        public var exclusive: Bool
        public var intervalMs: Int
        /// Message id + random address rotation period, and the frame epoch length.
        public var rotateS: Int
        /// Default `lost_after_s` of subscriptions.
        public var lostAfterS: Int
        /// Percent of the time the controller listens while scanning (scan window / scan interval).
        public var scanDuty: Int
        /// How a payload is kept on the air (`radio.reannounce`): from the controller's identity by default.
        public var reannounce: Reannounce = .automatic
        /// Our gateways' RSSI at 1 m, for the distance of our messages (`radio.tx_power_1m`, dBm).
        public var txPowerAt1m = -59
        /// The path-loss exponent ×10 (`radio.path_loss_x10`; TOML floats are not supported).
        public var pathLossX10 = 25
        /// `radio.quiet_s`: silence after reports that resets a quiet controller; 0 = never (docs/radio.md).
        public var quietS = 60

        public var interval: Duration { .milliseconds(intervalMs) }
        public var lostAfter: Duration { .seconds(lostAfterS) }
    }

    public struct AudioSettings: Sendable, Equatable {
        /// ALSA PCM for the beacon (from the board unless set).
        public var device: String
        public var `protocol`: AudioProtocol
        /// 0…100.
        public var volume: Int
        public var intervalS: Int
        /// ALSA capture PCM for audio scanning; empty = no audio scanning.
        public var capture: String
    }

    public struct SocketSettings: Sendable, Equatable {
        public var path: String
        /// Permission bits of the socket file (from an octal string such as "0660").
        public var mode: UInt32
        /// Group owning the socket file; empty = the gateway's own group.
        public var group: String
        public var maxClients: Int
    }

    public struct StateSettings: Sendable, Equatable {
        public var path: String
        /// Used when the state file is missing or corrupt.
        public var defaults: GatewayState
    }

    public struct LEDSettings: Sendable, Equatable {
        /// false = leave the board's LED lines alone (LED states still go to the log and `$SYS/led`).
        public var enabled: Bool
    }

    /// Bounds on what other parties can make the gateway hold: the air (beacons anyone can forge)
    /// and local socket clients.
    public struct LimitSettings: Sendable, Equatable {
        /// Found-set entries (messages and beacons); beacons make room first.
        public var found: Int
        /// Runtime publications (`PUB`) over all socket connections together.
        public var publications: Int

        public init(found: Int = GatewayConfig.defaultMaxFound, publications: Int = GatewayConfig.defaultMaxRuntimePublications) {
            self.found = found
            self.publications = publications
        }
    }

    public static let defaultMaxFound = 4096
    public static let defaultMaxRuntimePublications = 64
}

/// The ggwave ultrasound protocols (same raw values as the modem's `GGWaveProtocol`).
public enum AudioProtocol: String, Sendable, Hashable, CaseIterable {
    case ultrasoundNormal = "ultrasound-normal"
    case ultrasoundFast = "ultrasound-fast"
    case ultrasoundFastest = "ultrasound-fastest"
}

/// An `[[identity]]`: a device that advertises from resolvable private addresses, found as
/// `found/identity/<name>` (docs/identities.md).
public struct IdentityConfig: Sendable, Equatable, CustomStringConvertible {
    public var name: String
    /// A secret: its description shows no byte.
    public var key: IdentityKey
    public var line: Int

    public init(name: String, key: IdentityKey, line: Int = 0) {
        self.name = name
        self.key = key
        self.line = line
    }

    public var description: String { "identity \(name) \(key)" }
}

/// A `[[publication]]`.
public struct PublicationConfig: Sendable, Equatable {
    public var message: Message
    public var mediums: [Medium]
    public var mode: DiscoveryMode
    /// Keeps running in standby (BLE only; refused with audio).
    public var background: Bool
    /// 0 = for the life of the process.
    public var ttlS: Int
    /// Line of its `[[publication]]` header, for log lines.
    public var line: Int
}

/// A `[[subscription]]`.
public struct SubscriptionConfig: Sendable, Equatable {
    public var namespace: String
    /// "*" = every type of the namespace.
    public var type: String
    public var mediums: [Medium]
    public var mode: DiscoveryMode
    public var background: Bool
    public var lostAfterS: Int
    public var include: [BeaconFilter]
    /// Identities included one by one (`include = ["identity/<name>"]`); `include` holding
    /// `.identity` includes them all.
    public var identities: [String] = []
    /// A board LED of its own (nil = none).
    public var led: String?
    public var line: Int

    public var lostAfter: Duration { .seconds(lostAfterS) }

    public init(namespace: String, type: String = "*", mediums: [Medium] = [.ble], mode: DiscoveryMode = .both,
                background: Bool = false, lostAfterS: Int = 10, include: [BeaconFilter] = [], identities: [String] = [],
                led: String? = nil, line: Int = 0) {
        self.identities = identities
        self.namespace = namespace
        self.type = type
        self.mediums = mediums
        self.mode = mode
        self.background = background
        self.lostAfterS = lostAfterS
        self.include = include
        self.led = led
        self.line = line
    }
}

extension GatewayConfig {
    /// The LEDs the gateway drives itself; subscriptions may not take them.
    public static let systemLEDs = ["status", "found", "lost", "error"]
}
