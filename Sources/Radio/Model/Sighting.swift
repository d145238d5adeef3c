/// One advert heard by the scanner.
///
/// A view, not a copy: `data` is the report's slice of the HCI event packet it came in (the packet is
/// shared by the reports of one event and kept alive by the sightings that need it), and
/// `structures` walks its AD structures lazily. Making a sighting allocates nothing.
public struct Sighting: Sendable {
    public var address: BDAddress
    public var addressType: AddressType
    /// `nil` when the controller says 127 (not available), as btvirt always does.
    public var rssi: Int8?
    /// The AD bytes as received.
    public var data: ArraySlice<UInt8>
    public var time: ContinuousClock.Instant

    @inlinable
    public init(address: BDAddress, addressType: AddressType, rssi: Int8?, data: ArraySlice<UInt8>, time: ContinuousClock.Instant) {
        self.address = address
        self.addressType = addressType
        self.rssi = rssi
        self.data = data
        self.time = time
    }

    /// The sighting of one report, or `nil` when its AD structures are malformed.
    @inlinable
    public init?(report: AdvertisingReport, time: ContinuousClock.Instant) {
        guard ADStructures(report.data).isWellFormed else { return nil }
        self.init(address: report.address, addressType: report.addressType, rssi: report.rssi, data: report.data, time: time)
    }

    /// The AD structures, walked lazily over `data` (no allocation).
    @inlinable
    public var structures: ADStructures { ADStructures(data) }

    /// The AD structures as values, each with its own copy of its data (allocates; for tests and tools).
    public var adStructures: [ADStructure] { structures.map { ADStructure(type: $0.type, data: Array($0.data)) } }

    /// A copy of the AD bytes.
    public var raw: [UInt8] { Array(data) }
}
