@testable import Config
import Config
import Foundation
import NearbyProtocol
import Radio
import Testing
import TestSupport
@testable import Gateway

/// `AirIngest` with `[[identity]]`: a resolvable private address is found as its identity, a new
/// address of the same identity is the same entry, and only subscriptions that include it count.
@Suite struct IdentityIngestTests {
    /// The Core specification's sample IRK (Vol 3 Part H D.7) and the address its sample data makes.
    static let key = IdentityKey(mostSignificantFirst: [0xEC, 0x02, 0x34, 0xA3, 0x57, 0xC8, 0xAD, 0x05,
                                                         0x34, 0x10, 0x10, 0xA6, 0x0A, 0x39, 0x7D, 0x9B])!
    static let first = BDAddress(rawValue: 0x7081_940D_FBAA)

    struct Sink: AirIngestSink {
        var log: [String] = []
        mutating func found(_ found: AirIngest.Found) { log.append("found \(found.entry.key.topicSuffix) leds \(found.leds.sorted())") }
        mutating func subscriberBeacon(_ id: SubscriberBeaconID) {}
    }

    static func subscription(include: Set<BeaconFilter> = [], identities: Set<String> = []) -> Subscription {
        Subscription(namespace: "people", type: "*", mediums: [.ble], mode: .scan, background: false, lostAfter: .seconds(2),
                     include: include, identities: identities, led: "user1")
    }

    static func ingest(listening subscriptions: [Subscription]) throws -> AirIngest {
        let other = IdentityKey(mostSignificantFirst: Array(repeating: 0x5A, count: 16))!
        var ingest = AirIngest(reassembler: FrameFixture.reassembler(),
                               identities: try Identities([IdentityConfig(name: "other", key: other), IdentityConfig(name: "phone", key: key)]))
        ingest.listening = AirIngest.Listening(ble: subscriptions, audio: [], hasScanPublications: false)
        return ingest
    }

    static func sighting(_ address: BDAddress, type: AddressType = .random, at now: ContinuousClock.Instant) -> Sighting {
        Sighting(address: address, addressType: type, rssi: -60, data: [0x02, 0x01, 0x1A][...], time: now)
    }

    /// A second address of the phone: another prand, its hash by `ah` with the phone's key.
    static func second() throws -> BDAddress {
        let ring = try AESKeyRing(keys: [key.bytes])
        let prand: UInt32 = 0x41_2345
        return BDAddress(rawValue: UInt64(prand) << 24 | UInt64(try #require(PrivateAddress.ah(ring, key: 0, prand: prand))))
    }

    @Test func foundAsItsIdentityAcrossARotationThenLost() throws {
        var ingest = try Self.ingest(listening: [Self.subscription(include: [.identity])])
        var sink = Sink()
        let t0 = ContinuousClock.now, date = Date()
        ingest.ingest(Self.sighting(Self.first, at: t0), now: t0, date: date, into: &sink)
        ingest.ingest(Self.sighting(try Self.second(), at: t0 + .seconds(1)), now: t0 + .seconds(1), date: date, into: &sink)
        #expect(sink.log == ["found identity/phone leds [\"user1\"]"])
        // Lost 2 s after the second address, not after the first: one entry for both.
        #expect(ingest.expireFound(now: t0 + .milliseconds(2500)).isEmpty)
        #expect(ingest.expireFound(now: t0 + .milliseconds(3100)).map(\.key.topicSuffix) == ["identity/phone"])
        let counters = try #require(ingest.identityCounters)
        // The phone's key is second: two AES per new address.
        #expect(counters.resolutions == 4 && counters.cacheMisses == 2 && counters.resolved == 2)
    }

    @Test func onlySubscriptionsThatIncludeItFindIt() throws {
        var ingest = try Self.ingest(listening: [Self.subscription(identities: ["other"])])
        var sink = Sink()
        let now = ContinuousClock.now
        ingest.ingest(Self.sighting(Self.first, at: now), now: now, date: Date(), into: &sink)
        #expect(sink.log.isEmpty)
        #expect(ingest.foundCount == 0)
        var byName = try Self.ingest(listening: [Self.subscription(identities: ["phone"])])
        byName.ingest(Self.sighting(Self.first, at: now), now: now, date: Date(), into: &sink)
        #expect(sink.log == ["found identity/phone leds [\"user1\"]"])
    }

    @Test func onlyResolvableRandomAddressesAreTried() throws {
        var ingest = try Self.ingest(listening: [Self.subscription(include: [.identity])])
        var sink = Sink()
        let now = ContinuousClock.now
        ingest.ingest(Self.sighting(Self.first, type: .public, at: now), now: now, date: Date(), into: &sink)
        ingest.ingest(Self.sighting(BDAddress(rawValue: 0xC081_940D_FBAA), at: now), now: now, date: Date(), into: &sink)
        #expect(sink.log.isEmpty)
        #expect(ingest.identityCounters?.cacheMisses == 0)
    }
}
