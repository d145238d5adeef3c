import Foundation
@testable import NearbyProtocol
import Radio
import Testing
import TestSupport
@testable import Gateway

/// A publisher whose clock is ahead of ours by less than the skew, sending presence frames (the last
/// chunk of its message) around our rotation: the subscriber must not report it lost. Time is injected
/// (`now`, `date`), nothing sleeps.
@Suite struct SkewedClockIngestTests {
    static let subscription = Subscription(namespace: "den", type: "*", mediums: [.ble], mode: .scan, background: false,
                                           lostAfter: .seconds(10), include: [], led: nil)
    static let message = Message(namespace: "den", type: "r4", content: Array(repeating: 0x65, count: 120))

    struct Sink: AirIngestSink {
        var found = 0
        mutating func found(_ found: AirIngest.Found) { self.found += 1 }
        mutating func subscriberBeacon(_ id: SubscriberBeaconID) {}
        mutating func dropped(_ reason: DropReason, source: SourceID) {}
    }

    func sighting(_ ad: [UInt8], at now: ContinuousClock.Instant) throws -> Sighting {
        let report = AdvertisingReport(eventType: 3, isExtended: false, addressType: .random, address: BDAddress(rawValue: 0x42),
                                       rssi: -60, data: ad[...])
        return try #require(Sighting(report: report, time: now))
    }

    @Test func aPublisherAheadOfUsIsNotLostAroundOurRotation() throws {
        let codec = FrameFixture.codec, epoch = FrameFixture.epoch, ahead = 20.0
        let rotation = codec.start(of: epoch + 1), t0 = FrameFixture.t0
        var ingest = AirIngest(reassembler: FrameFixture.reassembler())
        ingest.listening = AirIngest.Listening(ble: [Self.subscription], audio: [], hasScanPublications: false)
        var sink = Sink()
        // Our clock 40 s before our rotation: the publisher's whole block, under its (still our) epoch.
        for ad in try codec.bleAdverts(for: Self.message, epoch: epoch) {
            ingest.ingest(try sighting(ad, at: t0), now: t0, date: rotation.addingTimeInterval(-40), into: &sink)
        }
        #expect(sink.found == 1)
        // Then only its presence frames, every 2 s, under the epoch of its clock; we rotate on ours.
        for step in 1...25 {
            let now = t0 + .seconds(2 * step), date = rotation.addingTimeInterval(-40 + 2 * Double(step))
            if codec.epoch(at: date) != ingest.reassembler.epoch { ingest.setEpoch(codec.epoch(at: date)) }
            let presence = try #require(try codec.bleAdverts(for: Self.message, epoch: codec.epoch(at: date.addingTimeInterval(ahead))).last)
            ingest.ingest(try sighting(presence, at: now), now: now, date: date, into: &sink)
            let lost = ingest.expireFound(now: now + .seconds(1))
            #expect(lost.isEmpty, "lost \(2 * step - 40) s from our rotation")
            if !lost.isEmpty { break }
        }
        #expect(sink.found == 1)
        #expect(ingest.foundCount == 1)
    }
}
