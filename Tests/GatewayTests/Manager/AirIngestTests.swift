@testable import Config
import Foundation
@testable import NearbyProtocol
import Radio
import SplitMix
import Testing
import TestSupport
@testable import Gateway

/// `AirIngest` against the manager's ingest as it was before the extraction (`ReferenceIngest` below,
/// a copy of the old `MessageManager+Air` logic over eagerly parsed `[ADStructure]`), on a mixed
/// corpus: our messages (one and several chunks), subscriber beacons, another deployment's frames,
/// corrupted chunks, Eddystone UID/URL/TLM, iBeacon, malformed and foreign adverts, devices coming
/// and going so entries are found, refreshed and lost.
@Suite struct AirIngestTests {
    static let livingroom = Subscription(namespace: "livingroom", type: "*", mediums: [.ble, .audio], mode: .scan, background: false,
                                         lostAfter: .seconds(2), include: [.eddystoneUID, .iBeacon], led: "a")
    static let greetings = Subscription(namespace: "livingroom", type: "greeting", mediums: [.ble], mode: .scan, background: false,
                                        lostAfter: .seconds(5), include: [.eddystoneURL], led: "b")

    @Test func sameOutcomesAsTheOldPathOnAMixedCorpus() throws {
        let corpus = try MixedCorpus(seed: 7, reports: 6000)
        let listening = AirIngest.Listening(ble: [Self.livingroom, Self.greetings], audio: [Self.livingroom], hasScanPublications: true)
        var ingest = AirIngest(reassembler: FrameFixture.reassembler())
        ingest.listening = listening
        var reference = ReferenceIngest(reassembler: FrameFixture.reassembler(), listening: listening)
        var sink = RecordingSink()
        let t0 = ContinuousClock.now, d0 = Date(timeIntervalSince1970: 1_790_000_000)

        for (i, report) in corpus.reports.enumerated() {
            let now = t0 + .milliseconds(10 * i), date = d0.addingTimeInterval(0.01 * Double(i))
            if let sighting = Sighting(report: report, time: now) {
                ingest.ingest(sighting, now: now, date: date, into: &sink)
            }
            reference.ingest(report, now: now, date: date)
            if i % 50 == 49 {
                sink.log += ingest.expireFound(now: now).map { "lost \($0.key.topicSuffix) \(Describe.entry($0))" }
                reference.log += reference.found.expire(now: now).map { "lost \($0.key.topicSuffix) \(Describe.entry($0, reference.lostDetails($0.key)))" }
            }
        }

        #expect(sink.log.count == reference.log.count)
        for (ours, theirs) in zip(sink.log, reference.log) where ours != theirs {
            Issue.record("first difference: \(ours) ≠ \(theirs)")
            break
        }
        #expect(sink.log.contains { $0.hasPrefix("found livingroom/") })
        #expect(sink.log.contains { $0.hasPrefix("found eddystone/") })
        #expect(sink.log.contains { $0.hasPrefix("found eddystone-url/") })
        #expect(sink.log.contains { $0.hasPrefix("found ibeacon/") })
        #expect(sink.log.contains { $0.hasPrefix("lost ") })
        #expect(sink.log.contains { $0.hasPrefix("subscriber-beacon ") })
        #expect(sink.log.contains { $0.hasPrefix("dropped authentication-failed") })
        #expect(ingest.frameCounters == reference.reassembler.counters)
        #expect(ingest.advertsSeen == corpus.reports.count - corpus.malformed)
        let ours = ingest.foundEntries.map { "\($0.key.topicSuffix) \(Describe.entry($0))" }.sorted()
        let theirs = reference.found.entries.map { "\($0.key.topicSuffix) \(Describe.entry($0, reference.details[$0.key]!))" }.sorted()
        #expect(ours == theirs)
    }

    @Test func telemetryIsAttachedToTheSendersUID() throws {
        var ingest = AirIngest(reassembler: FrameFixture.reassembler())
        ingest.listening = AirIngest.Listening(ble: [Self.livingroom], audio: [], hasScanPublications: false)
        var sink = RecordingSink()
        let now = ContinuousClock.now, date = Date()
        let sender = BDAddress(rawValue: 0x0000_1122_3344_5566)
        for ad in [MixedCorpus.eddystoneTLM(battery: 3000), MixedCorpus.eddystoneUID(namespace: 1, instance: 2)] {
            let report = AdvertisingReport(eventType: 3, isExtended: false, addressType: .public, address: sender, rssi: -50, data: ad[...])
            ingest.ingest(try #require(Sighting(report: report, time: now)), now: now, date: date, into: &sink)
        }
        let found = try #require(ingest.foundEntries.first)
        #expect(found.detail.extraFields.contains { $0.0 == "tlm" && $0.1.contains("\"battery_mv\":3000") })
        #expect(sink.log.count == 1)
    }

    @Test func nothingIsDecodedWhileNothingListens() throws {
        var ingest = AirIngest(reassembler: FrameFixture.reassembler())
        var sink = RecordingSink()
        let ad = try FrameFixture.codec.bleAdverts(for: FrameFixture.greeting, epoch: FrameFixture.epoch)[0]
        let report = AdvertisingReport(eventType: 3, isExtended: false, addressType: .public, address: BDAddress(rawValue: 1),
                                       rssi: nil, data: ad[...])
        ingest.ingest(try #require(Sighting(report: report, time: .now)), now: .now, date: Date(), into: &sink)
        #expect(ingest.advertsSeen == 1)
        #expect(ingest.frameCounters == Reassembler.Counters())
        #expect(sink.log.isEmpty)
    }

    @Test func audioPayloadsGoThroughTheAudioSubscriptions() throws {
        var ingest = AirIngest(reassembler: FrameFixture.reassembler())
        ingest.listening = AirIngest.Listening(ble: [], audio: [Self.livingroom], hasScanPublications: false)
        var sink = RecordingSink()
        for payload in try FrameFixture.codec.audioPayloads(for: FrameFixture.greeting, epoch: FrameFixture.epoch) {
            ingest.ingestAudio(payload, now: .now, date: Date(), into: &sink)
        }
        #expect(ingest.audioPayloadsSeen == 1)
        #expect(sink.log == ["found livingroom/greeting leds [\"a\"] total 1"])
        #expect(ingest.foundEntries.first?.detail.medium == .audio)
    }

    /// Issue 29 item 5: a message found over BLE and then heard over audio is a signal (medium audio),
    /// once per change of medium, so the fleet's rooms learn that it is in this room.
    @Test func audioAfterBLEIsASignal() throws {
        var ingest = AirIngest(reassembler: FrameFixture.reassembler())
        ingest.listening = AirIngest.Listening(ble: [Self.livingroom], audio: [Self.livingroom], hasScanPublications: false)
        var sink = SignalSink()
        let t0 = ContinuousClock.now
        func ble(_ ms: Int) throws {
            for ad in try FrameFixture.codec.bleAdverts(for: FrameFixture.greeting, epoch: FrameFixture.epoch) {
                let report = AdvertisingReport(eventType: 3, isExtended: false, addressType: .public, address: BDAddress(rawValue: 1),
                                               rssi: -50, data: ad[...])
                ingest.ingest(try #require(Sighting(report: report, time: t0 + .milliseconds(ms))), now: t0 + .milliseconds(ms), date: Date(), into: &sink)
            }
        }
        func audio(_ ms: Int) throws {
            for payload in try FrameFixture.codec.audioPayloads(for: FrameFixture.greeting, epoch: FrameFixture.epoch) {
                ingest.ingestAudio(payload, now: t0 + .milliseconds(ms), date: Date(), into: &sink)
            }
        }
        try ble(0)
        try ble(100)
        #expect(sink.log == ["found ble"], "steady RSSI: no signal")
        try audio(200)
        #expect(sink.log == ["found ble", "signal audio"])
        try audio(300)
        #expect(sink.log == ["found ble", "signal audio"], "still audio: nothing new")
        try ble(400)
        try audio(500)
        #expect(sink.log == ["found ble", "signal audio", "signal audio"])
    }
}

private struct SignalSink: AirIngestSink {
    var log: [String] = []
    mutating func found(_ found: AirIngest.Found) { log.append("found \(found.entry.detail.medium.rawValue)") }
    mutating func signal(_ change: AirIngest.SignalChange) { log.append("signal \(change.entry.detail.medium.rawValue)") }
    mutating func subscriberBeacon(_ id: SubscriberBeaconID) {}
}

/// Records what an `AirIngest` reports, as text.
private struct RecordingSink: AirIngestSink {
    var log: [String] = []
    mutating func found(_ found: AirIngest.Found) {
        log.append("found \(found.entry.key.topicSuffix) leds \(found.leds.sorted()) total \(found.total)")
    }
    mutating func subscriberBeacon(_ id: SubscriberBeaconID) { log.append("subscriber-beacon \(id)") }
    mutating func dropped(_ reason: DropReason, source: SourceID) { log.append("dropped \(reason.rawValue) \(source)") }
}

private enum Describe {
    static func entry(_ entry: AirIngest.Entry) -> String { self.entry(entry, entry.detail) }

    static func entry<D>(_ entry: FoundSet<DiscoveryKey, D>.Entry, _ details: DiscoveryDetails) -> String {
        "\(details.medium) \(Array(details.content)) \(details.extraFields.map { "\($0.0)=\($0.1)" }) rssi \(entry.rssi.map(String.init) ?? "-") "
            + "avg \(entry.smoothedRSSI.map { String(format: "%.3f", $0) } ?? "-") n \(entry.sightings) "
            + "first \(entry.firstSeen.timeIntervalSince1970) last \(entry.lastSeen.timeIntervalSince1970) after \(entry.lostAfter)"
    }
}

/// The manager's BLE ingest before `AirIngest` existed, step by step (`MessageManager+Air.ingest` and
/// `MessageManager.sighted`), over `ADStructure.parse` as the old `Sighting` did.
private struct ReferenceIngest {
    var reassembler: Reassembler
    let listening: AirIngest.Listening
    var found = FoundTracker<DiscoveryKey>()
    var details: [DiscoveryKey: DiscoveryDetails] = [:]
    var telemetryBySender: [BDAddress: EddystoneTLM] = [:]
    var log: [String] = []

    init(reassembler: Reassembler, listening: AirIngest.Listening) {
        self.reassembler = reassembler
        self.listening = listening
    }

    func lostDetails(_ key: DiscoveryKey) -> DiscoveryDetails { details[key] ?? DiscoveryDetails(medium: .ble, content: []) }

    mutating func ingest(_ report: AdvertisingReport, now: ContinuousClock.Instant, date: Date) {
        let (adStructures, malformed) = ADStructure.parse(report.data)
        guard !malformed else { return }
        let subscriptions = listening.ble
        guard !subscriptions.isEmpty || listening.hasScanPublications else { return }
        let source = SourceID.ble(address: report.address.rawValue)
        for structure in adStructures where structure.type == 0xFF {
            switch reassembler.ingest(structure.data, source: source, now: now) {
            case .notOurs, .incomplete: break
            case .dropped(let reason): log.append("dropped \(reason.rawValue) \(source)")
            case .subscriberBeacon(let id): log.append("subscriber-beacon \(id)")
            case .message(let message):
                let matching = subscriptions.filter { $0.matches(message) }
                guard !matching.isEmpty else { continue }
                sighted(.message(message), DiscoveryDetails(medium: .ble, content: message.content[...]), report.rssi,
                        matching.map(\.lostAfter).max()!, Set(matching.compactMap(\.led)), now, date)
            }
        }
        let wanted = subscriptions.reduce(into: Set<BeaconFilter>()) { $0.formUnion($1.include) }
        guard !wanted.isEmpty else { return }
        for structure in adStructures {
            guard let beacon = Beacon.parse(type: structure.type, data: structure.data[...]) else { continue }
            if case .eddystoneTLM(let tlm) = beacon {
                if telemetryBySender.count >= 256, telemetryBySender[report.address] == nil { telemetryBySender.removeAll() }
                telemetryBySender[report.address] = tlm
                continue
            }
            guard let (key, details) = BeaconDiscovery.make(beacon, type: structure.type, content: structure.data[...], wanted: wanted,
                                                            telemetry: telemetryBySender[report.address]) else { continue }
            let matching = subscriptions.filter { key.beaconFilter.map($0.include.contains) ?? false }
            sighted(key, details, report.rssi, matching.map(\.lostAfter).max() ?? .seconds(10), Set(matching.compactMap(\.led)), now, date)
        }
    }

    private mutating func sighted(_ key: DiscoveryKey, _ details: DiscoveryDetails, _ rssi: Int8?, _ lostAfter: Duration,
                                  _ leds: Set<String>, _ now: ContinuousClock.Instant, _ date: Date) {
        self.details[key] = details
        guard case .found = found.saw(key, rssi: rssi.map(Int.init), lostAfter: lostAfter, now: now, date: date) else { return }
        log.append("found \(key.topicSuffix) leds \(leds.sorted()) total \(found.count)")
    }
}

/// Reports as a busy room makes them, seeded.
private struct MixedCorpus {
    var reports: [AdvertisingReport] = []
    /// Reports whose AD structures are malformed (no `Sighting`).
    var malformed = 0

    init(seed: UInt64, reports count: Int) throws {
        var rng = SeededGenerator(seed: seed)
        let codec = FrameFixture.codec, epoch = FrameFixture.epoch
        let foreign = FrameCodec(apiKey: "someone-elses-key", rotateSeconds: 600)
        var pool: [(address: UInt64, ads: [[UInt8]])] = []
        for k in 0..<12 {
            let content = (0..<(k % 3 == 0 ? 90 : 8)).map { UInt8(truncatingIfNeeded: $0 &* (k + 1)) }
            let message = Message(namespace: k % 4 == 3 ? "kitchen" : "livingroom", type: k % 2 == 0 ? "greeting" : "note", content: content)
            pool.append((0x10_0000 + UInt64(k), try codec.bleAdverts(for: message, epoch: epoch)))
        }
        pool.append((0x20_0001, [codec.subscriberBeacon(namespace: "livingroom", type: "*", epoch: epoch)]))
        pool.append((0x20_0002, try foreign.bleAdverts(for: FrameFixture.greeting, epoch: epoch)))
        for k in 0..<4 {
            pool.append((0x30_0000 + UInt64(k), [Self.eddystoneTLM(battery: 2900 + k), Self.eddystoneUID(namespace: UInt8(k), instance: 9)]))
            pool.append((0x40_0000 + UInt64(k), [Self.eddystoneURL(k)]))
            pool.append((0x50_0000 + UInt64(k), [Self.iBeacon(minor: UInt16(k))]))
        }
        pool.append((0x60_0000, [[0x02, 0x01, 0x06, 0x09, 0x09] + Array("Speaker!".utf8)]))
        var step = [Int](repeating: 0, count: pool.count)
        for i in 0..<count {
            // A window of the pool is on the air at a time and slides: devices come and go.
            let window = (i / 150) % pool.count
            let device = (window + Int(rng.next() % 9)) % pool.count
            var ad = pool[device].ads[step[device] % pool[device].ads.count]
            step[device] += 1
            switch rng.next() % 40 {
            case 0: ad[ad.count - 1] ^= 0x5A                       // a corrupted chunk
            case 1: ad[0] = UInt8(ad.count + 3); malformed += 1     // a length running past the end
            case 2: ad = (0..<Int(rng.next() % 31)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                if ADStructure.parse(ad).malformed { malformed += 1 }
            default: break
            }
            let rssi: Int8? = rng.next() % 10 == 0 ? nil : -Int8(rng.next() % 70) - 30
            reports.append(AdvertisingReport(eventType: 3, isExtended: false, addressType: .random,
                                             address: BDAddress(rawValue: pool[device].address), rssi: rssi, data: ad[...]))
        }
    }

    static func eddystoneUID(namespace: UInt8, instance: UInt8) -> [UInt8] {
        let frame: [UInt8] = [0xAA, 0xFE, 0x00, 0xEB] + [UInt8](repeating: namespace, count: 10) + [UInt8](repeating: instance, count: 6) + [0, 0]
        return [UInt8(frame.count + 1), 0x16] + frame
    }

    static func eddystoneURL(_ k: Int) -> [UInt8] {
        let frame: [UInt8] = [0xAA, 0xFE, 0x10, 0xEB, 0x03] + Array("example\(k)".utf8) + [0x07]
        return [UInt8(frame.count + 1), 0x16] + frame
    }

    static func eddystoneTLM(battery: Int) -> [UInt8] {
        let frame: [UInt8] = [0xAA, 0xFE, 0x20, 0x00, UInt8(battery >> 8), UInt8(battery & 0xFF), 0x15, 0x80,
                              0, 0, 0x01, 0x00, 0, 0, 0x10, 0x00]
        return [UInt8(frame.count + 1), 0x16] + frame
    }

    static func iBeacon(minor: UInt16) -> [UInt8] {
        let data: [UInt8] = [0x4C, 0x00, 0x02, 0x15] + (0..<16).map { UInt8($0 * 7) } + [0x00, 0x01, UInt8(minor >> 8), UInt8(minor & 0xFF), 0xC5]
        return [UInt8(data.count + 1), 0xFF] + data
    }
}

/// Issue 13: a neighbour sending random beacon ids must not grow the found set, and must not push
/// out an authenticated message.
@Suite struct AirIngestLimitTests {
    @Test func oneHundredThousandDistinctBeaconsStayWithinTheLimitAndMessagesAreStillFound() throws {
        var ingest = AirIngest(reassembler: FrameFixture.reassembler(), maxFound: 256)
        ingest.listening = AirIngest.Listening(ble: [AirIngestTests.livingroom], audio: [], hasScanPublications: false)
        var sink = CountingSink()
        let t0 = ContinuousClock.now, d0 = Date()
        let message = try FrameFixture.codec.bleAdverts(for: FrameFixture.greeting, epoch: FrameFixture.epoch)
        func hear(_ ad: [UInt8], address: UInt64, at k: Int) throws {
            let report = AdvertisingReport(eventType: 3, isExtended: false, addressType: .random, address: BDAddress(rawValue: address),
                                           rssi: -60, data: ad[...])
            let now = t0 + .milliseconds(k)
            ingest.ingest(try #require(Sighting(report: report, time: now)), now: now, date: d0, into: &sink)
        }
        for k in 0..<100_000 {
            try hear(MixedCorpus.eddystoneUID(namespace: UInt8(truncatingIfNeeded: k), instance: UInt8(truncatingIfNeeded: k >> 8))
                        .enumerated().map { $0.offset == 20 ? UInt8(truncatingIfNeeded: k >> 16) : $0.element },
                     address: UInt64(k), at: k)
            if k == 50_000 { for ad in message { try hear(ad, address: 0xA0A0, at: k) } }
        }
        #expect(ingest.foundCount == 256)
        #expect(sink.found > 100_000 - 256, "every distinct beacon was found once")
        #expect(sink.evicted == ingest.foundEvicted)
        #expect(ingest.foundEvicted >= 100_000 - 256)
        #expect(ingest.foundEntries.contains { if case .message = $0.key { true } else { false } },
                "the authenticated message was pushed out by beacons")
    }
}

private struct CountingSink: AirIngestSink {
    var found = 0, evicted = 0
    mutating func found(_ found: AirIngest.Found) { self.found += 1 }
    mutating func evicted(_ evicted: AirIngest.Evicted) { self.evicted += 1 }
    mutating func subscriberBeacon(_ id: SubscriberBeaconID) {}
}
