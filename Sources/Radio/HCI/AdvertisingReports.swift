/// One advertising report, a view into the event packet it came in: `data` is a slice of that
/// packet, so walking reports allocates nothing.
public struct AdvertisingReport: Sendable, Equatable {
    /// Legacy: 0 ADV_IND … 3 ADV_NONCONN_IND, 4 SCAN_RSP. Extended: the event type bit field.
    public var eventType: UInt16
    public var isExtended: Bool
    public var addressType: AddressType
    public var address: BDAddress
    /// `nil` when the controller says 127, "not available" (btvirt always does).
    public var rssi: Int8?
    /// The AD bytes as received.
    public var data: ArraySlice<UInt8>

    /// Extended reports can split data over several reports; only complete ones become sightings.
    @inlinable
    public init(
        eventType: UInt16, isExtended: Bool, addressType: AddressType, address: BDAddress, rssi: Int8?,
        data: ArraySlice<UInt8>
    ) {
        self.eventType = eventType
        self.isExtended = isExtended
        self.addressType = addressType
        self.address = address
        self.rssi = rssi
        self.data = data
    }

    public var isComplete: Bool { !isExtended || (eventType >> 5) & 0b11 == 0 }
    public var isScanResponse: Bool { isExtended ? eventType & 0x08 != 0 : eventType == 0x04 }
}

/// The reports of one LE (Extended) Advertising Report event, checked once when the event is
/// decoded and then walked lazily.
public struct AdvertisingReports: Sequence, Sendable, Equatable {
    @usableFromInline let packet: [UInt8]
    @usableFromInline let extended: Bool
    public let count: Int

    /// Packet layout: code, length, subevent, number of reports, then the reports one after the
    /// other (every controller and BlueZ lay them out per report, not per field).
    @usableFromInline static let firstReportOffset = 4
    @usableFromInline static let legacyHeader = 9  // type, address type, address, data length
    @usableFromInline static let extendedHeader = 24

    @inlinable
    init?(validating packet: [UInt8], extended: Bool) {
        guard packet.count >= Self.firstReportOffset else { return nil }
        let reports = Int(packet[3])
        var offset = Self.firstReportOffset
        for _ in 0..<reports {
            let header = extended ? Self.extendedHeader : Self.legacyHeader
            guard offset + header <= packet.count else { return nil }
            let length = Int(packet[offset + header - 1])
            if !extended && length > HCICommand.maximumLegacyAdvertisingDataLength { return nil }
            offset += header + length + (extended ? 0 : 1)  // legacy: RSSI after the data
            guard offset <= packet.count else { return nil }
        }
        guard offset == packet.count else { return nil }
        self.packet = packet
        self.extended = extended
        self.count = reports
    }

    public struct Iterator: IteratorProtocol, Sendable {
        @usableFromInline let packet: [UInt8]
        @usableFromInline let extended: Bool
        @usableFromInline var remaining: Int
        @usableFromInline var offset = AdvertisingReports.firstReportOffset

        @usableFromInline init(packet: [UInt8], extended: Bool, remaining: Int) {
            self.packet = packet
            self.extended = extended
            self.remaining = remaining
        }

        @inlinable
        public mutating func next() -> AdvertisingReport? {
            guard remaining > 0 else { return nil }
            remaining -= 1
            let o = offset
            if extended {
                let length = Int(packet[o + 23])
                offset = o + 24 + length
                return AdvertisingReport(
                    eventType: UInt16(packet[o]) | UInt16(packet[o + 1]) << 8, isExtended: true,
                    addressType: AddressType(rawValue: packet[o + 2]),
                    address: BDAddress(packet, at: o + 3),
                    rssi: Self.rssi(packet[o + 13]), data: packet[(o + 24)..<(o + 24 + length)])
            } else {
                let length = Int(packet[o + 8])
                offset = o + 10 + length
                return AdvertisingReport(
                    eventType: UInt16(packet[o]), isExtended: false,
                    addressType: AddressType(rawValue: packet[o + 1]),
                    address: BDAddress(packet, at: o + 2),
                    rssi: Self.rssi(packet[o + 9 + length]), data: packet[(o + 9)..<(o + 9 + length)])
            }
        }

        @inlinable
        static func rssi(_ byte: UInt8) -> Int8? {
            byte == 127 ? nil : Int8(bitPattern: byte)
        }
    }

    @inlinable
    public func makeIterator() -> Iterator {
        Iterator(packet: packet, extended: extended, remaining: count)
    }
}
