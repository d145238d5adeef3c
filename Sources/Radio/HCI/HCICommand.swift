/// One HCI command: opcode and parameters, encoded as an H4 packet by `packet`. The factories
/// validate what a controller would refuse, before anything is sent: btvirt trusts lengths, and
/// over-long advertising data there crashes every emulated controller at once.
public struct HCICommand: Sendable, Equatable {
    public var opcode: HCIOpcode
    public var parameters: [UInt8]

    public init(opcode: HCIOpcode, parameters: [UInt8] = []) {
        self.opcode = opcode
        self.parameters = parameters
    }

    public var name: String { opcode.name }

    /// The H4 packet: indicator 0x01, opcode (little endian), parameter length, parameters.
    public var packet: [UInt8] {
        var bytes: [UInt8] = [H4PacketType.command.rawValue]
        bytes.reserveCapacity(4 + parameters.count)
        bytes.appendLittleEndian(opcode.rawValue)
        bytes.append(UInt8(truncatingIfNeeded: parameters.count))
        bytes.append(contentsOf: parameters)
        return bytes
    }

    /// Legacy advertising data and scan response data are at most 31 bytes (Core Vol 4 Part E 7.8.7).
    public static let maximumLegacyAdvertisingDataLength = 31

    public static let reset = HCICommand(opcode: .reset)
    public static let readLocalVersion = HCICommand(opcode: .readLocalVersion)
    public static let readBDAddress = HCICommand(opcode: .readBDAddress)
    public static let leReadLocalSupportedFeatures = HCICommand(opcode: .leReadLocalSupportedFeatures)
    public static let leReadMaximumAdvertisingDataLength = HCICommand(opcode: .leReadMaximumAdvertisingDataLength)

    public static func leSetRandomAddress(_ address: BDAddress) -> HCICommand {
        HCICommand(opcode: .leSetRandomAddress, parameters: address.littleEndianBytes)
    }

    /// Advertising interval in units of 0.625 ms, clamped to what the spec allows (20 ms … 10.24 s).
    public static func advertisingIntervalUnits(_ interval: Duration) -> UInt32 {
        let microseconds = interval.components.seconds * 1_000_000 + interval.components.attoseconds / 1_000_000_000_000
        return UInt32(clamping: min(max(microseconds * 1000 / 625_000, 0x0020), 0x4000))
    }

    /// Non-connectable undirected advertising (ADV_NONCONN_IND) from our random address on all
    /// three primary channels.
    public static func leSetAdvertisingParameters(interval: Duration, ownAddressType: AddressType = .random) -> HCICommand {
        let units = UInt16(advertisingIntervalUnits(interval))
        var parameters: [UInt8] = []
        parameters.appendLittleEndian(units)  // interval min
        parameters.appendLittleEndian(units)  // interval max
        parameters.append(0x03)  // ADV_NONCONN_IND
        parameters.append(ownAddressType.rawValue)
        parameters.append(0x00)  // peer address type (unused for undirected)
        parameters.append(contentsOf: [0, 0, 0, 0, 0, 0])  // peer address
        parameters.append(0x07)  // channels 37, 38, 39
        parameters.append(0x00)  // no filter
        return HCICommand(opcode: .leSetAdvertisingParameters, parameters: parameters)
    }

    /// Refuses data longer than 31 bytes; shorter data is zero padded as the command requires.
    public static func leSetAdvertisingData(_ data: [UInt8], device: String = "") throws(RadioError) -> HCICommand {
        guard data.count <= maximumLegacyAdvertisingDataLength else {
            throw RadioError(
                kind: .protocolViolation, device: device, operation: HCIOpcode.leSetAdvertisingData.name,
                message: "advertising data is \(data.count) bytes, legacy adverts carry at most 31")
        }
        var parameters = [UInt8(data.count)]
        parameters.reserveCapacity(32)
        parameters.append(contentsOf: data)
        parameters.append(contentsOf: repeatElement(0, count: maximumLegacyAdvertisingDataLength - data.count))
        return HCICommand(opcode: .leSetAdvertisingData, parameters: parameters)
    }

    public static func leSetAdvertisingEnable(_ enabled: Bool) -> HCICommand {
        HCICommand(opcode: .leSetAdvertisingEnable, parameters: [enabled ? 1 : 0])
    }

    /// Scan interval/window in units of 0.625 ms, clamped to 2.5 ms … 10.24 s.
    public static func scanUnits(_ duration: Duration) -> UInt16 {
        let microseconds = duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000
        return UInt16(clamping: min(max(microseconds * 1000 / 625_000, 0x0004), 0x4000))
    }

    /// Passive scanning (we never send scan requests) with no filter policy. Own address type is
    /// public: a passive scanner transmits nothing, and btvirt refuses a random one (status 0x12)
    /// until a random address has been set.
    public static func leSetScanParameters(interval: Duration, window: Duration) -> HCICommand {
        let intervalUnits = scanUnits(interval)
        let windowUnits = min(scanUnits(window), intervalUnits)
        var parameters: [UInt8] = [0x00]  // passive
        parameters.appendLittleEndian(intervalUnits)
        parameters.appendLittleEndian(windowUnits)
        parameters.append(AddressType.public.rawValue)
        parameters.append(0x00)  // accept all advertisements
        return HCICommand(opcode: .leSetScanParameters, parameters: parameters)
    }

    /// Duplicate filtering off: the gateway needs every report to keep found/lost and RSSI fresh.
    public static func leSetScanEnable(_ enabled: Bool, filterDuplicates: Bool = false) -> HCICommand {
        HCICommand(opcode: .leSetScanEnable, parameters: [enabled ? 1 : 0, filterDuplicates ? 1 : 0])
    }
}

extension Array where Element == UInt8 {
    @inlinable
    mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        for index in 0..<(T.bitWidth / 8) {
            append(UInt8(truncatingIfNeeded: value >> (8 * index)))
        }
    }
}
