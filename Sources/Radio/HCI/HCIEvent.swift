/// The HCI events we act on, decoded from an event packet (the bytes after the H4 indicator:
/// event code, parameter length, parameters). Decoding checks every length it relies on; a packet
/// that does not add up is `nil` and is counted by the caller, never trusted.
public enum HCIEvent: Sendable, Equatable {
    /// Command Complete (0x0E): the return parameters, which start with the status for every
    /// command we send.
    case commandComplete(opcode: HCIOpcode, numberOfPackets: UInt8, returnParameters: ArraySlice<UInt8>)
    /// Command Status (0x0F): sent instead of Command Complete for commands that run on, and for
    /// commands the controller refuses outright (btvirt: unknown commands).
    case commandStatus(opcode: HCIOpcode, numberOfPackets: UInt8, status: HCIStatus)
    /// Hardware Error (0x10): the controller needs a reset.
    case hardwareError(code: UInt8)
    /// LE Advertising Report or LE Extended Advertising Report (LE Meta 0x3E, 0x02 / 0x0D).
    case advertisingReports(AdvertisingReports)
    /// Anything else, well-formed as far as its header goes; ignored.
    case other(code: UInt8)

    public static let commandCompleteCode: UInt8 = 0x0E
    public static let commandStatusCode: UInt8 = 0x0F
    public static let hardwareErrorCode: UInt8 = 0x10
    public static let leMetaCode: UInt8 = 0x3E
    public static let leAdvertisingReportSubevent: UInt8 = 0x02
    public static let leExtendedAdvertisingReportSubevent: UInt8 = 0x0D

    /// Decodes one event packet; `nil` when its lengths lie.
    @inlinable
    public static func parse(_ packet: [UInt8]) -> HCIEvent? {
        guard packet.count >= 2, Int(packet[1]) == packet.count - 2 else { return nil }
        let parameterCount = packet.count - 2
        switch packet[0] {
        case commandCompleteCode:
            guard parameterCount >= 3 else { return nil }
            let opcode = HCIOpcode(rawValue: UInt16(packet[3]) | UInt16(packet[4]) << 8)
            return .commandComplete(opcode: opcode, numberOfPackets: packet[2], returnParameters: packet[5...])
        case commandStatusCode:
            guard parameterCount == 4 else { return nil }
            let opcode = HCIOpcode(rawValue: UInt16(packet[4]) | UInt16(packet[5]) << 8)
            return .commandStatus(opcode: opcode, numberOfPackets: packet[3], status: HCIStatus(rawValue: packet[2]))
        case hardwareErrorCode:
            guard parameterCount == 1 else { return nil }
            return .hardwareError(code: packet[2])
        case leMetaCode:
            guard parameterCount >= 1 else { return nil }
            switch packet[2] {
            case leAdvertisingReportSubevent:
                return AdvertisingReports(validating: packet, extended: false).map { .advertisingReports($0) }
            case leExtendedAdvertisingReportSubevent:
                return AdvertisingReports(validating: packet, extended: true).map { .advertisingReports($0) }
            default:
                return .other(code: leMetaCode)
            }
        case let code:
            return .other(code: code)
        }
    }
}
