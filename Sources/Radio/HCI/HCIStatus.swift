/// An HCI status / error code (Core spec Vol 1 Part F) with its name, for logs and errors.
public struct HCIStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let success = HCIStatus(rawValue: 0x00)
    public static let unknownCommand = HCIStatus(rawValue: 0x01)
    public static let commandDisallowed = HCIStatus(rawValue: 0x0C)
    public static let invalidParameters = HCIStatus(rawValue: 0x12)

    public var name: String {
        switch rawValue {
        case 0x00: "Success"
        case 0x01: "Unknown HCI Command"
        case 0x02: "Unknown Connection Identifier"
        case 0x03: "Hardware Failure"
        case 0x07: "Memory Capacity Exceeded"
        case 0x0C: "Command Disallowed"
        case 0x0D: "Connection Rejected due to Limited Resources"
        case 0x11: "Unsupported Feature or Parameter Value"
        case 0x12: "Invalid HCI Command Parameters"
        case 0x1F: "Unspecified Error"
        case 0x3A: "Controller Busy"
        case 0x3C: "Directed Advertising Timeout"
        case 0x42: "Unknown Advertising Identifier"
        case 0x43: "Limit Reached"
        case 0x45: "Packet Too Long"
        default: "Error"
        }
    }

    public var description: String {
        let hex = String(rawValue, radix: 16, uppercase: true)
        return "\(name) (0x\(hex.count < 2 ? "0" + hex : hex))"
    }
}
