import TestSupport
import Testing

@testable import Radio

@Suite struct ADParsingTests {
    @Test func structuresOfAnAdvert() {
        let (structures, malformed) = ADStructure.parse([0x02, 0x01, 0x06, 0x05, 0x09, 0x41, 0x42, 0x43, 0x44])
        #expect(!malformed)
        #expect(structures == [ADStructure(type: 0x01, data: [0x06]), ADStructure(type: 0x09, data: Array("ABCD".utf8))])
        #expect(ADStructure(type: 0x09, data: Array("ABCD".utf8)).encoded == [0x05, 0x09, 0x41, 0x42, 0x43, 0x44])
    }

    @Test func aLyingLengthDropsTheRest() {
        let (structures, malformed) = ADStructure.parse([0x02, 0x01, 0x06, 0x09, 0xFF, 0x01])
        #expect(malformed)
        #expect(structures == [ADStructure(type: 0x01, data: [0x06])])
        #expect(!ADStructures([0x02, 0x01, 0x06, 0x09, 0xFF, 0x01][...]).isWellFormed)
    }

    @Test func zeroLengthPaddingEndsTheAdvert() {
        #expect(ADStructure.parse([0x02, 0x01, 0x06, 0x00, 0x00, 0x00]) == ([ADStructure(type: 1, data: [6])], false))
        // Data after a zero length is not padding: malformed.
        #expect(ADStructure.parse([0x02, 0x01, 0x06, 0x00, 0x02, 0x01, 0x06]).malformed)
        #expect(ADStructure.parse([UInt8]()) == ([], false))
    }

    @Test func aLengthWithoutType() {
        // Length 1 = a type and no data: valid. A length byte at the very end: truncated.
        #expect(ADStructure.parse([0x01, 0x08]) == ([ADStructure(type: 8, data: [])], false))
        #expect(ADStructure.parse([0x02, 0x01, 0x06, 0x01]).malformed)
    }

    @Test func lazyWalkOverASliceOfALargerBuffer() {
        let buffer: [UInt8] = [0xEE, 0xEE, 0x03, 0xFF, 0x4C, 0x00, 0xEE]
        let structures = ADStructures(buffer[2..<6])
        #expect(structures.first(ofType: 0xFF).map(Array.init) == [0x4C, 0x00])
        #expect(structures.isWellFormed)
    }
}

@Suite struct BeaconParsingTests {
    /// Eddystone-UID with the namespace of the Eddystone examples (github.com/google/eddystone).
    @Test func eddystoneUID() throws {
        let advert = hex("0201060303aafe1716aafe00e7edd1ebeac04e5defa0170bdb87539b670000")
        let (structures, malformed) = ADStructure.parse(advert)
        #expect(!malformed)
        let beacons = Beacon.parse(structures)
        let expected = EddystoneUID(txPower: -25, namespace: hex("edd1ebeac04e5defa017"), instance: hex("0bdb87539b67"))
        #expect(beacons == [.eddystoneUID(expected)])
        #expect(expected.namespaceHex == "edd1ebeac04e5defa017")
        #expect(expected.instanceHex == "0bdb87539b67")
        #expect(Beacon.parse(raw: advert[...]) == beacons)
        // The reserved bytes may be left out.
        let short = hex("00e7edd1ebeac04e5defa0170bdb87539b67")
        #expect(EddystoneUID(frame: short[...]) == expected)
        #expect(EddystoneUID(frame: short.dropLast()) == nil)
    }

    @Test(arguments: [
        ([0x10, 0xEB, 0x03] + Array("goo.gl/S6zT6P".utf8), "https://goo.gl/S6zT6P"),
        (hex("10eb006578616d706c6500"), "http://www.example.com/"),
        (hex("10eb01676f6f676c6507"), "https://www.google.com"),
        (hex("10eb0277696b6904696e646578"), "http://wiki.info/index"),
    ])
    func eddystoneURL(frame: [UInt8], url: String) throws {
        let parsed = try #require(EddystoneURL(frame: frame[...]))
        #expect(parsed.url == url)
        #expect(parsed.txPower == -21)
        let advert = [0x03, 0x03, 0xAA, 0xFE, UInt8(frame.count + 3), 0x16, 0xAA, 0xFE] + frame
        #expect(Beacon.parse(raw: advert[...]) == [.eddystoneURL(parsed)])
    }

    @Test func eddystoneURLHost() {
        #expect(EddystoneURL(txPower: 0, url: "https://goo.gl/S6zT6P").host == "goo.gl")
        #expect(EddystoneURL(txPower: 0, url: "http://www.example.com/").host == "www.example.com")
        #expect(EddystoneURL(txPower: 0, url: "https://www.google.com").host == "www.google.com")
    }

    @Test func invalidEddystoneURLs() {
        #expect(EddystoneURL(frame: [0x10, 0x00, 0x04, 0x61][...]) == nil, "scheme 4 does not exist")
        #expect(EddystoneURL(frame: [0x10, 0x00, 0x00, 0x0E][...]) == nil, "0x0E-0x20 are reserved")
        #expect(EddystoneURL(frame: [0x10, 0x00, 0x00, 0x7F][...]) == nil)
        #expect(EddystoneURL(frame: [0x10, 0x00][...]) == nil)
        #expect(EddystoneURL(frame: ([0x10, 0x00, 0x00] + [UInt8](repeating: 0x61, count: 18))[...]) == nil, "at most 17 URL bytes")
    }

    @Test func eddystoneTLM() throws {
        // 3000 mV, 23.5 °C, 256 adverts, 10 s.
        let tlm = try #require(EddystoneTLM(frame: hex("20000bb8178000000100" + "00000064")[...]))
        #expect(tlm == EddystoneTLM(batteryMillivolts: 3000, temperature: 23.5, advertisingCount: 256, uptimeDeciseconds: 100))
        let negative = try #require(EddystoneTLM(frame: hex("20000000fec00000000000000000")[...]))
        #expect(negative.temperature == -1.25)
        #expect(negative.batteryMillivolts == nil, "0 mV means not battery powered")
        let unsupported = try #require(EddystoneTLM(frame: hex("20000bb8800000000000" + "00000000")[...]))
        #expect(unsupported.temperature == nil)
        #expect(EddystoneTLM(frame: hex("20010bb8800000000000" + "00000000")[...]) == nil, "encrypted TLM")
        #expect(EddystoneTLM(frame: hex("20000bb88000000000000000")[...]) == nil, "truncated")
    }

    /// Apple's AirLocate example beacon.
    @Test func iBeacon() throws {
        let advert = hex("0201061aff4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5")
        let beacons = Beacon.parse(raw: advert[...])
        let expected = IBeacon(uuid: hex("e2c56db5dffb48d2b060d0f5a71096e0"), major: 1, minor: 2, measuredPower: -59)
        #expect(beacons == [.iBeacon(expected)])
        #expect(expected.uuidString == "e2c56db5-dffb-48d2-b060-d0f5a71096e0")
        #expect(expected.manufacturerData == Array(advert[5...]))
    }

    @Test func notBeacons() {
        #expect(IBeacon(manufacturerData: hex("4c000215e2c56db5")[...]) == nil, "truncated")
        #expect(IBeacon(manufacturerData: hex("4c001005011c0d1b")[...]) == nil, "other Apple data")
        #expect(IBeacon(manufacturerData: hex("ffff0215e2c56db5dffb48d2b060d0f5a71096e000010002c5")[...]) == nil)
        #expect(Beacon.parse(raw: hex("0516abcd0000")[...]).isEmpty, "other service data")
        #expect(Beacon.parse(raw: hex("0416aafe30")[...]).isEmpty, "Eddystone-EID is not decoded")
        #expect(Beacon.parse(raw: hex("0316aafe")[...]).isEmpty)
    }
}
