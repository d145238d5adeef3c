/// The LE extended advertising and scanning commands (Core 5.0+). We only use them to send legacy
/// PDUs (so every scanner can hear us) through the command set a 5.x controller insists on once
/// extended commands are in use: one advertising set per payload where the controller has enough
/// sets, else one set rotated. btvirt answers all of them with "Unknown HCI Command".
extension HCICommand {
    /// The first advertising set (the one a rotation uses).
    public static let advertisingHandle: UInt8 = 0
    /// Handles run 0x00…0xEF (Core Vol 4 Part E 7.8.53).
    public static let maximumAdvertisingSets = 0xF0

    public static let leReadNumberOfSupportedAdvertisingSets = HCICommand(opcode: .leReadNumberOfSupportedAdvertisingSets)
    /// Every set goes; refused while any set is enabled.
    public static let leClearAdvertisingSets = HCICommand(opcode: .leClearAdvertisingSets)

    /// One set goes; refused while it is enabled.
    public static func leRemoveAdvertisingSet(_ handle: UInt8) -> HCICommand {
        HCICommand(opcode: .leRemoveAdvertisingSet, parameters: [handle])
    }

    public static func leSetAdvertisingSetRandomAddress(_ address: BDAddress, handle: UInt8 = advertisingHandle) -> HCICommand {
        HCICommand(opcode: .leSetAdvertisingSetRandomAddress, parameters: [handle] + address.littleEndianBytes)
    }

    public static func leSetExtendedAdvertisingParameters(
        interval: Duration, ownAddressType: AddressType = .random, handle: UInt8 = advertisingHandle
    ) -> HCICommand {
        let units = advertisingIntervalUnits(interval)
        var parameters: [UInt8] = [handle]
        parameters.appendLittleEndian(UInt16(0x0010))  // legacy PDU, non-connectable, non-scannable: ADV_NONCONN_IND
        for _ in 0..<2 {  // primary interval min, max: 3 bytes each
            parameters.append(UInt8(truncatingIfNeeded: units))
            parameters.append(UInt8(truncatingIfNeeded: units >> 8))
            parameters.append(UInt8(truncatingIfNeeded: units >> 16))
        }
        parameters.append(0x07)  // channels 37, 38, 39
        parameters.append(ownAddressType.rawValue)
        parameters.append(0x00)  // peer address type
        parameters.append(contentsOf: [0, 0, 0, 0, 0, 0])  // peer address
        parameters.append(0x00)  // no filter
        parameters.append(0x7F)  // TX power: no preference
        parameters.append(0x01)  // primary PHY LE 1M
        parameters.append(0x00)  // secondary max skip
        parameters.append(0x01)  // secondary PHY LE 1M
        parameters.append(0x00)  // advertising SID
        parameters.append(0x00)  // no scan request notifications
        return HCICommand(opcode: .leSetExtendedAdvertisingParameters, parameters: parameters)
    }

    /// Complete data in one fragment. Legacy PDUs still carry at most 31 bytes, so the same check
    /// applies as for the legacy command.
    public static func leSetExtendedAdvertisingData(
        _ data: [UInt8], handle: UInt8 = advertisingHandle, device: String = ""
    ) throws(RadioError) -> HCICommand {
        guard data.count <= maximumLegacyAdvertisingDataLength else {
            throw RadioError(
                kind: .protocolViolation, device: device, operation: HCIOpcode.leSetExtendedAdvertisingData.name,
                message: "advertising data is \(data.count) bytes, legacy adverts carry at most 31")
        }
        var parameters: [UInt8] = [handle, 0x03, 0x01, UInt8(data.count)]  // complete data, no fragmentation
        parameters.append(contentsOf: data)
        return HCICommand(opcode: .leSetExtendedAdvertisingData, parameters: parameters)
    }

    /// Enables or disables these sets in one command, each with no duration and no event limit.
    /// Per set: handle, duration (2 bytes), maximum events, one set after another (the layout the
    /// Linux kernel's `hci_cp_ext_adv_set` sends to every controller it drives).
    public static func leSetExtendedAdvertisingEnable(_ enabled: Bool, handles: [UInt8] = [advertisingHandle]) -> HCICommand {
        var parameters: [UInt8] = [enabled ? 1 : 0, UInt8(truncatingIfNeeded: handles.count)]
        parameters.reserveCapacity(2 + 4 * handles.count)
        for handle in handles { parameters.append(contentsOf: [handle, 0, 0, 0]) }
        return HCICommand(opcode: .leSetExtendedAdvertisingEnable, parameters: parameters)
    }

    public static func leSetExtendedScanParameters(interval: Duration, window: Duration) -> HCICommand {
        let intervalUnits = scanUnits(interval)
        let windowUnits = min(scanUnits(window), intervalUnits)
        var parameters: [UInt8] = [AddressType.public.rawValue, 0x00, 0x01]  // own address, no filter, LE 1M only
        parameters.append(0x00)  // passive
        parameters.appendLittleEndian(intervalUnits)
        parameters.appendLittleEndian(windowUnits)
        return HCICommand(opcode: .leSetExtendedScanParameters, parameters: parameters)
    }

    public static func leSetExtendedScanEnable(_ enabled: Bool, filterDuplicates: Bool = false) -> HCICommand {
        // Scan until disabled: duration 0, period 0.
        HCICommand(opcode: .leSetExtendedScanEnable, parameters: [enabled ? 1 : 0, filterDuplicates ? 1 : 0, 0, 0, 0, 0])
    }
}
