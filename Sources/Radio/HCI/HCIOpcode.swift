/// An HCI command opcode (OGF << 10 | OCF) with the command's name, so errors can say which
/// command failed.
public struct HCIOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16
    @inlinable public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(ogf: UInt16, ocf: UInt16) { rawValue = ogf << 10 | ocf }

    public static let reset = HCIOpcode(ogf: 0x03, ocf: 0x0003)
    public static let readLocalVersion = HCIOpcode(ogf: 0x04, ocf: 0x0001)
    public static let readBDAddress = HCIOpcode(ogf: 0x04, ocf: 0x0009)
    public static let leReadLocalSupportedFeatures = HCIOpcode(ogf: 0x08, ocf: 0x0003)
    public static let leSetRandomAddress = HCIOpcode(ogf: 0x08, ocf: 0x0005)
    public static let leSetAdvertisingParameters = HCIOpcode(ogf: 0x08, ocf: 0x0006)
    public static let leSetAdvertisingData = HCIOpcode(ogf: 0x08, ocf: 0x0008)
    public static let leSetAdvertisingEnable = HCIOpcode(ogf: 0x08, ocf: 0x000A)
    public static let leSetScanParameters = HCIOpcode(ogf: 0x08, ocf: 0x000B)
    public static let leSetScanEnable = HCIOpcode(ogf: 0x08, ocf: 0x000C)
    public static let leSetAdvertisingSetRandomAddress = HCIOpcode(ogf: 0x08, ocf: 0x0035)
    public static let leSetExtendedAdvertisingParameters = HCIOpcode(ogf: 0x08, ocf: 0x0036)
    public static let leSetExtendedAdvertisingData = HCIOpcode(ogf: 0x08, ocf: 0x0037)
    public static let leSetExtendedAdvertisingEnable = HCIOpcode(ogf: 0x08, ocf: 0x0039)
    public static let leReadMaximumAdvertisingDataLength = HCIOpcode(ogf: 0x08, ocf: 0x003A)
    public static let leReadNumberOfSupportedAdvertisingSets = HCIOpcode(ogf: 0x08, ocf: 0x003B)
    public static let leRemoveAdvertisingSet = HCIOpcode(ogf: 0x08, ocf: 0x003C)
    public static let leClearAdvertisingSets = HCIOpcode(ogf: 0x08, ocf: 0x003D)
    public static let leSetExtendedScanParameters = HCIOpcode(ogf: 0x08, ocf: 0x0041)
    public static let leSetExtendedScanEnable = HCIOpcode(ogf: 0x08, ocf: 0x0042)

    public var name: String {
        switch self {
        case .reset: "Reset"
        case .readLocalVersion: "Read Local Version Information"
        case .readBDAddress: "Read BD_ADDR"
        case .leReadLocalSupportedFeatures: "LE Read Local Supported Features"
        case .leSetRandomAddress: "LE Set Random Address"
        case .leSetAdvertisingParameters: "LE Set Advertising Parameters"
        case .leSetAdvertisingData: "LE Set Advertising Data"
        case .leSetAdvertisingEnable: "LE Set Advertising Enable"
        case .leSetScanParameters: "LE Set Scan Parameters"
        case .leSetScanEnable: "LE Set Scan Enable"
        case .leSetAdvertisingSetRandomAddress: "LE Set Advertising Set Random Address"
        case .leSetExtendedAdvertisingParameters: "LE Set Extended Advertising Parameters"
        case .leSetExtendedAdvertisingData: "LE Set Extended Advertising Data"
        case .leSetExtendedAdvertisingEnable: "LE Set Extended Advertising Enable"
        case .leReadMaximumAdvertisingDataLength: "LE Read Maximum Advertising Data Length"
        case .leReadNumberOfSupportedAdvertisingSets: "LE Read Number of Supported Advertising Sets"
        case .leRemoveAdvertisingSet: "LE Remove Advertising Set"
        case .leClearAdvertisingSets: "LE Clear Advertising Sets"
        case .leSetExtendedScanParameters: "LE Set Extended Scan Parameters"
        case .leSetExtendedScanEnable: "LE Set Extended Scan Enable"
        default: "HCI command 0x" + String(rawValue, radix: 16)
        }
    }

    public var description: String { name }
}
