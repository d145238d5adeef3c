import Testing

@testable import Radio

/// Two radios on btvirt's shared air, one advertising, one scanning. Other tests advertise at the
/// same time, so each test recognises its adverts by random bytes of its own.
@Suite("Radios exchange adverts on btvirt", .serialized)
struct BtvirtExchangeTests {
    @Test func scannerReportsTheAdvertisersExactBytes() async throws {
        let marker = uniqueBytes(12)
        let payload: [UInt8] = [0x02, 0x01, 0x06] + ADStructure(type: 0xFF, data: [0xFF, 0xFF] + marker).encoded
        try await withRadios(2) { radios in
            let (advertiser, scanner) = (radios[0], radios[1])
            await scanner.setScanning(true)
            await advertiser.setAdvertisements([payload])
            let sighting = try await first("our advert", in: scanner.events) { $0.sighting.flatMap { $0.raw == payload ? $0 : nil } }
            #expect(sighting.adStructures == [ADStructure(type: 0x01, data: [0x06]), ADStructure(type: 0xFF, data: [0xFF, 0xFF] + marker)])
            #expect(sighting.rssi == nil, "btvirt reports RSSI 127, which means not available")
            #expect(sighting.addressType == .random)
            #expect(sighting.address.isRandomStatic)
        }
    }

    @Test func eddystoneUIDAndIBeaconAreParsedIntoTheirFields() async throws {
        let namespace = uniqueBytes(10)
        let instance = uniqueBytes(6)
        let uuid = uniqueBytes(16)
        let eddystone: [UInt8] =
            [0x02, 0x01, 0x06, 0x03, 0x03, 0xAA, 0xFE, 0x17, 0x16, 0xAA, 0xFE, 0x00, 0xEC] + namespace + instance + [0, 0]
        let iBeacon: [UInt8] = [0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15] + uuid + [0x12, 0x34, 0xAB, 0xCD, 0xC5]
        try await withRadios(2) { radios in
            let (advertiser, scanner) = (radios[0], radios[1])
            await scanner.setScanning(true)
            // Both at once: the advertiser rotates them, and the scanner must hear each.
            await advertiser.setAdvertisements([eddystone, iBeacon])
            let uid = try await first("the Eddystone-UID frame", in: scanner.events) { event -> EddystoneUID? in
                guard let sighting = event.sighting else { return nil }
                for case .eddystoneUID(let uid) in Beacon.parse(sighting.adStructures) where uid.namespace == namespace {
                    return uid
                }
                return nil
            }
            #expect(uid == EddystoneUID(txPower: -20, namespace: namespace, instance: instance))
            let beacon = try await first("the iBeacon frame", in: scanner.events) { event -> IBeacon? in
                guard let sighting = event.sighting else { return nil }
                for case .iBeacon(let beacon) in Beacon.parse(sighting.adStructures) where beacon.uuid == uuid {
                    return beacon
                }
                return nil
            }
            #expect(beacon == IBeacon(uuid: uuid, major: 0x1234, minor: 0xABCD, measuredPower: -59))
        }
    }

    @Test func rotatingTheAddressChangesTheAdvertisersAddress() async throws {
        let payload = ADStructure(type: 0xFF, data: [0xFF, 0xFF] + uniqueBytes(10)).encoded
        try await withRadios(2) { radios in
            let (advertiser, scanner) = (radios[0], radios[1])
            await scanner.setScanning(true)
            await advertiser.setAdvertisements([payload])
            let before = try await first("the advert", in: scanner.events) { $0.sighting.flatMap { $0.raw == payload ? $0.address : nil } }
            await advertiser.rotateAddress()
            let after = try await first("the advert from a new address", in: scanner.events) {
                $0.sighting.flatMap { $0.raw == payload && $0.address != before ? $0.address : nil }
            }
            #expect(after.isRandomStatic)
        }
    }

    @Test func overlongAdvertisementsAreRefusedBeforeReachingTheController() async throws {
        // btvirt would crash with every emulated controller on it; the radio must not send it.
        let marker = uniqueBytes(8)
        let fitting = ADStructure(type: 0xFF, data: [0xFF, 0xFF] + marker).encoded
        let overlong = ADStructure(type: 0xFF, data: [0xFF, 0xFF] + uniqueBytes(30)).encoded
        try await withRadios(2) { radios in
            let (advertiser, scanner) = (radios[0], radios[1])
            await scanner.setScanning(true)
            await advertiser.setAdvertisements([overlong, fitting])
            #expect(advertiser.statistics.refusedAdvertisements == 1)
            _ = try await first("the fitting advert", in: scanner.events) { $0.sighting.flatMap { $0.raw == fitting ? true : nil } }
        }
    }
}
