/// One advert heard by the scanner.
public struct Sighting: Sendable {
    public var address: BDAddress
    public var addressType: AddressType
    /// `nil` when the controller says 127 (not available), as btvirt always does.
    public var rssi: Int8?
    public var adStructures: [ADStructure]
    /// The AD bytes as received.
    public var raw: [UInt8]
    public var time: ContinuousClock.Instant

    public init(
        address: BDAddress, addressType: AddressType, rssi: Int8?, adStructures: [ADStructure], raw: [UInt8],
        time: ContinuousClock.Instant
    ) {
        self.address = address
        self.addressType = addressType
        self.rssi = rssi
        self.adStructures = adStructures
        self.raw = raw
        self.time = time
    }

    /// The sighting of one report, or `nil` when its AD structures are malformed.
    public init?(report: AdvertisingReport, time: ContinuousClock.Instant) {
        let (structures, malformed) = ADStructure.parse(report.data)
        guard !malformed else { return nil }
        self.init(
            address: report.address, addressType: report.addressType, rssi: report.rssi, adStructures: structures,
            raw: Array(report.data), time: time)
    }
}
