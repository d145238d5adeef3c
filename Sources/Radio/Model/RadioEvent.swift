/// What a `Radio` tells its owner.
public enum RadioEvent: Sendable {
    /// The controller is reset and ready; advertising and scanning are (re)applied.
    case up(ControllerInfo)
    /// The controller is gone or could not be opened. Sent once per outage, with its first cause;
    /// retries stay quiet until the next `up`.
    case down(RadioError)
    case sighting(Sighting)
    /// Reports had been arriving, then none for the quiet timeout while scanning: the controller
    /// is being reset (`up` follows). The next sighting says it hears again.
    case quiet(RadioError)
}

/// What the controller said about itself after the reset.
public struct ControllerInfo: Sendable, Equatable {
    public var device: String
    public var hciVersion: UInt8
    public var hciRevision: UInt16
    public var lmpVersion: UInt8
    public var manufacturer: UInt16
    public var lmpSubversion: UInt16
    public var leFeatures: UInt64
    /// The controller's public address (btvirt: 00:AA:01:<slot>:00:42).
    public var publicAddress: BDAddress?
    /// True when the LE features announce extended advertising and we use those commands.
    public var usesExtendedAdvertising: Bool

    /// BlueZ's emulated controller (btvirt), measured: manufacturer 0x05F1 (The Linux Foundation),
    /// HCI version 9. It sends one advertising report per enable instead of one per interval.
    public var isBlueZEmulator: Bool { manufacturer == 0x05F1 && hciVersion == 9 }
}

/// Counters of input the radio dropped instead of trusting it.
public struct RadioStatistics: Sendable, Equatable {
    /// Bytes skipped in the H4 stream while resynchronising.
    public var droppedStreamBytes = 0
    /// H4 headers announcing impossible lengths.
    public var droppedStreamPackets = 0
    /// Event packets whose lengths did not add up.
    public var malformedEvents = 0
    /// Adverts whose AD structures had lying lengths.
    public var malformedAdverts = 0
    /// Extended report fragments (incomplete data) not turned into sightings.
    public var incompleteReports = 0
    /// Advertisements refused by `setAdvertisements` for being longer than 31 bytes.
    public var refusedAdvertisements = 0
    /// Packets or sightings dropped because a consumer fell behind.
    public var overflowed = 0
    /// Packets the kernel dropped because the socket's receive queue was full (SO_MEMINFO's
    /// drop counter, summed over connections): a kernel HCI socket whose reader fell behind. A
    /// UNIX stream to btvirt never drops here; btvirt drops what does not fit itself, unseen
    /// (docs/reliability.md).
    public var socketDrops = 0
    /// Controllers reset because they went quiet (`RadioEvent.quiet`).
    public var quietResets = 0
    /// HCI commands sent to the controller since the radio started.
    public var commandsSent = 0
    /// HCI commands a second over the last 10 s (what a real controller's UART sees).
    public var commandsPerSecond = 0.0

    public init() {}
}
