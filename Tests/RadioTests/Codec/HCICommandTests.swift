import Testing

@testable import Radio

@Suite struct HCICommandTests {
    @Test func informationalCommands() {
        #expect(HCICommand.reset.packet == [0x01, 0x03, 0x0C, 0x00])
        #expect(HCICommand.readLocalVersion.packet == [0x01, 0x01, 0x10, 0x00])
        #expect(HCICommand.readBDAddress.packet == [0x01, 0x09, 0x10, 0x00])
        #expect(HCICommand.leReadLocalSupportedFeatures.packet == [0x01, 0x03, 0x20, 0x00])
        #expect(HCICommand.leReadMaximumAdvertisingDataLength.packet == [0x01, 0x3A, 0x20, 0x00])
    }

    @Test func randomAddressIsSentLeastSignificantByteFirst() throws {
        let address = try #require(BDAddress("C5:04:03:02:01:C1"))
        #expect(HCICommand.leSetRandomAddress(address).packet == [0x01, 0x05, 0x20, 0x06, 0xC1, 0x01, 0x02, 0x03, 0x04, 0xC5])
    }

    @Test func legacyAdvertisingParameters() {
        // 100 ms = 160 × 0.625 ms = 0x00A0; ADV_NONCONN_IND, random own address, all channels.
        #expect(
            HCICommand.leSetAdvertisingParameters(interval: .milliseconds(100)).packet == [
                0x01, 0x06, 0x20, 0x0F, 0xA0, 0x00, 0xA0, 0x00, 0x03, 0x01, 0x00, 0, 0, 0, 0, 0, 0, 0x07, 0x00,
            ])
        // Clamped to the spec's 20 ms … 10.24 s.
        #expect(HCICommand.advertisingIntervalUnits(.milliseconds(1)) == 0x0020)
        #expect(HCICommand.advertisingIntervalUnits(.seconds(60)) == 0x4000)
    }

    @Test func advertisingDataIsPaddedTo31Bytes() throws {
        let command = try HCICommand.leSetAdvertisingData([0x02, 0x01, 0x06])
        #expect(command.packet.count == 4 + 32)
        #expect(Array(command.packet.prefix(8)) == [0x01, 0x08, 0x20, 0x20, 0x03, 0x02, 0x01, 0x06])
        #expect(command.packet.dropFirst(8).allSatisfy { $0 == 0 })
        #expect(try HCICommand.leSetAdvertisingData([UInt8](repeating: 1, count: 31)).parameters.count == 32)
    }

    @Test func advertisingDataOver31BytesIsRefusedBeforeSending() {
        let error = #expect(throws: RadioError.self) { try HCICommand.leSetAdvertisingData([UInt8](repeating: 0, count: 32), device: "h4:/x") }
        #expect(error?.kind == .protocolViolation)
        #expect(error?.operation == "LE Set Advertising Data")
        #expect(error?.device == "h4:/x")
        #expect(throws: RadioError.self) { try HCICommand.leSetExtendedAdvertisingData([UInt8](repeating: 0, count: 32)) }
    }

    @Test func enableCommands() {
        #expect(HCICommand.leSetAdvertisingEnable(true).packet == [0x01, 0x0A, 0x20, 0x01, 0x01])
        #expect(HCICommand.leSetAdvertisingEnable(false).packet == [0x01, 0x0A, 0x20, 0x01, 0x00])
        #expect(HCICommand.leSetScanEnable(true).packet == [0x01, 0x0C, 0x20, 0x02, 0x01, 0x00])
    }

    @Test func passiveScanParametersWithTheWindowNeverAboveTheInterval() {
        #expect(
            HCICommand.leSetScanParameters(interval: .milliseconds(100), window: .milliseconds(50)).packet == [
                0x01, 0x0B, 0x20, 0x07, 0x00, 0xA0, 0x00, 0x50, 0x00, 0x00, 0x00,
            ])
        let wide = HCICommand.leSetScanParameters(interval: .milliseconds(10), window: .milliseconds(100))
        #expect(wide.parameters[1...2] == wide.parameters[3...4])
    }

    @Test func extendedCommandsHaveTheirSpecifiedLengths() throws {
        #expect(HCICommand.leSetExtendedAdvertisingParameters(interval: .milliseconds(100)).parameters.count == 25)
        let parameters = HCICommand.leSetExtendedAdvertisingParameters(interval: .milliseconds(100)).parameters
        #expect(parameters[1...2] == [0x10, 0x00], "legacy ADV_NONCONN_IND PDU")
        #expect(parameters[3...8] == [0xA0, 0, 0, 0xA0, 0, 0])
        #expect(try HCICommand.leSetExtendedAdvertisingData([1, 2, 3]).parameters == [0, 0x03, 0x01, 3, 1, 2, 3])
        #expect(HCICommand.leSetExtendedAdvertisingEnable(true).parameters == [1, 1, 0, 0, 0, 0])
        // Per set: handle, duration (2 bytes), maximum events; set after set.
        #expect(HCICommand.leSetExtendedAdvertisingEnable(false, handles: [0, 2]).parameters == [0, 2, 0, 0, 0, 0, 2, 0, 0, 0])
        #expect(HCICommand.leRemoveAdvertisingSet(3).packet == [0x01, 0x3C, 0x20, 1, 3])
        #expect(HCICommand.leClearAdvertisingSets.packet == [0x01, 0x3D, 0x20, 0])
        #expect(HCICommand.leReadNumberOfSupportedAdvertisingSets.packet == [0x01, 0x3B, 0x20, 0])
        #expect(try HCICommand.leSetExtendedAdvertisingData([1], handle: 2).parameters.first == 2)
        #expect(HCICommand.leSetExtendedAdvertisingParameters(interval: .milliseconds(100), handle: 2).parameters.first == 2)
        #expect(HCICommand.leSetExtendedScanParameters(interval: .milliseconds(100), window: .milliseconds(100)).parameters
            == [0, 0, 1, 0, 0xA0, 0, 0xA0, 0])
        #expect(HCICommand.leSetExtendedScanEnable(true).parameters == [1, 0, 0, 0, 0, 0])
        #expect(HCICommand.leSetAdvertisingSetRandomAddress(BDAddress(rawValue: 0xC1_0203_0405_06)).opcode.rawValue == 0x2035)
    }

    @Test func opcodesAndNames() {
        #expect(HCIOpcode.leSetExtendedAdvertisingParameters.rawValue == 0x2036)
        #expect(HCIOpcode.leReadMaximumAdvertisingDataLength.rawValue == 0x203A)
        #expect(HCIOpcode.leSetExtendedScanEnable.rawValue == 0x2042)
        #expect(HCIOpcode.reset.name == "Reset")
        #expect(HCIOpcode(rawValue: 0xFC01).name == "HCI command 0xfc01")
        #expect(HCIStatus.invalidParameters.description == "Invalid HCI Command Parameters (0x12)")
    }
}

@Suite struct BDAddressTests {
    @Test func textAndBytes() throws {
        let address = try #require(BDAddress("00:aa:01:02:00:42"))
        #expect(address.description == "00:AA:01:02:00:42")
        #expect(address.littleEndianBytes == [0x42, 0x00, 0x02, 0x01, 0xAA, 0x00])
        #expect(BDAddress(littleEndianBytes: [0x42, 0x00, 0x02, 0x01, 0xAA, 0x00]) == address)
        #expect(BDAddress("00:AA:01:02:00") == nil)
        #expect(BDAddress("00:AA:01:02:00:4G") == nil)
    }

    @Test func randomStaticAddressesHaveTheirTopBitsSet() {
        for _ in 0..<1000 {
            let address = BDAddress.randomStatic()
            #expect(address.isRandomStatic)
            #expect(address.rawValue & 0x3FFF_FFFF_FFFF != 0)
            #expect(address.rawValue & 0x3FFF_FFFF_FFFF != 0x3FFF_FFFF_FFFF)
        }
    }

    @Test func deviceStrings() throws {
        #expect(try RadioDevice(parsing: "h4:/tmp/bt-server-le", exclusive: false) == .h4(path: "/tmp/bt-server-le"))
        #expect(try RadioDevice(parsing: "hci1", exclusive: true) == .kernel(index: 1, exclusive: true))
        #expect(RadioDevice.kernel(index: 0, exclusive: false).description == "hci0")
        #expect(throws: RadioError.self) { try RadioDevice(parsing: "bluetooth", exclusive: false) }
        #expect(throws: RadioError.self) { try RadioDevice(parsing: "h4:", exclusive: false) }
        #expect(throws: RadioError.self) { try RadioDevice(parsing: "hcix", exclusive: false) }
    }
}
