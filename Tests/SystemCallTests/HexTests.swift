import SystemCall
import Testing

@Suite struct HexTests {
    @Test func writesLowerCaseTwoDigitsAByte() {
        #expect(Hex.lower([0x00, 0x0a, 0xff, 0x5c]) == "000aff5c")
        #expect(Hex.lower([UInt8]()) == "")
    }

    @Test func writesA16ByteUUIDWithDashes() {
        let uuid: [UInt8] = [0xe2, 0xc5, 0x6d, 0xb5, 0xdf, 0xfb, 0x48, 0xd2, 0xb0, 0x60, 0xd0, 0xf5, 0xa7, 0x10, 0x96, 0xe0]
        #expect(Hex.uuid(uuid) == "e2c56db5-dffb-48d2-b060-d0f5a71096e0")
        #expect(Hex.uuid(uuid.prefix(10)) == "e2c56db5dffb48d2b060", "not a UUID: plain hex")
    }

    @Test func readsBackWhatItWritesInEitherCase() {
        let bytes = (0...255).map { UInt8($0) }
        #expect(Hex.bytes(Hex.lower(bytes)) == bytes)
        #expect(Hex.bytes("0A0b") == [0x0a, 0x0b])
    }

    @Test(arguments: ["abc", "0g", "zz", " 01", "0x01"])
    func refusesWhatIsNotHex(_ text: String) {
        #expect(Hex.bytes(text) == nil)
    }
}
