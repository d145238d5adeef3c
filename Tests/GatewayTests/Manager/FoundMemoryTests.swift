@testable import Broker
import Config
import Foundation
@testable import NearbyProtocol
import Radio
import SystemCall
import Testing
import TestSupport
@testable import Gateway
@testable import MQTT

/// Issue 31, item 4: what one found entry costs, part by part, at the default `limits.found`, with
/// distinct iBeacons each heard in its own HCI event (as btvirt and a busy air deliver them). Resident
/// anonymous memory (RssAnon) before and after each part; the breakdown is printed for
/// docs/footprint-found.md. Run alone (`--filter FoundMemory`): the figures are differences within this
/// test, and other tests in the process would move them.
@Suite(.serialized) struct FoundMemoryTests {
    static let limit = GatewayConfig.defaultMaxFound
    static let beacons = Subscription(namespace: "flood", type: "*", mediums: [.ble], mode: .scan, background: false,
                                      lostAfter: .seconds(30), include: [.iBeacon], led: nil)

    struct NoSink: AirIngestSink {
        var found = 0
        mutating func found(_ found: AirIngest.Found) { self.found += 1 }
        mutating func subscriberBeacon(_ id: SubscriberBeaconID) {}
    }

    static func heapInUse() -> Int { (SystemCall.residentAnonymousKiB() ?? 0) * 1024 }

    /// The iBeacon `k` of tools/flood/beacons.py, in an HCI event of its own.
    static func sighting(_ k: Int, at now: ContinuousClock.Instant) -> Sighting {
        let uuid: [UInt8] = [0xF1, 0x00, 0xD5, UInt8(truncatingIfNeeded: k >> 16)] + [UInt8](repeating: 0, count: 12)
        let data: [UInt8] = [0x4C, 0x00, 0x02, 0x15] + uuid + [UInt8(truncatingIfNeeded: k >> 8), UInt8(truncatingIfNeeded: k), 0x00, 0x01, 0xC5]
        let ad = [UInt8(data.count + 1), 0xFF] + data
        let packet = HCIEventBytes.legacyReport(ad, address: [1, 2, 3, 4, 5, 0xC6])
        let start = 4 + 9   // after the event header and the report's header
        return Sighting(address: BDAddress(packet, at: 6), addressType: .random, rssi: nil,
                        data: packet[start..<(start + ad.count)], time: now)
    }

    /// A found event as the manager makes it (`eventJSON`, `retainKey`), kept by the broker.
    static func foundEvent(_ entry: AirIngest.Entry) -> BrokerEvent {
        let suffix = entry.key.topicSuffix
        let slash = suffix.firstIndex(of: "/")!
        let message = Message(namespace: String(suffix[..<slash]), type: String(suffix[slash...].dropFirst()),
                              content: Array(entry.detail.content))
        let json = SightingEvent.json(message: message, medium: .ble, rssi: entry.rssi, firstSeen: entry.firstSeen,
                                      lastSeen: entry.lastSeen) { writer in
            writer.add("rssi_avg", rawJSON: "null")
            writer.add("distance_m", rawJSON: "null")
            for (name, value) in entry.detail.extraFields { writer.add(name, rawJSON: value) }
        }
        let key = "found/" + suffix + "#" + String(UInt(bitPattern: entry.key.hashValue), radix: 36)
        return BrokerEvent(topic: "found/" + suffix, json: json, retain: .set(key))
    }

    /// Fills a found set and a retained store with `limit` distinct iBeacons; returns them.
    static func filled() -> (AirIngest, RetainedStore) {
        var ingest = AirIngest(reassembler: FrameFixture.reassembler())
        ingest.listening = AirIngest.Listening(ble: [Self.beacons], audio: [], hasScanPublications: false)
        let now = ContinuousClock.now, date = Date(timeIntervalSince1970: 1_790_000_000)
        var sink = NoSink()
        for k in 0..<Self.limit { ingest.ingest(Self.sighting(k, at: now), now: now, date: date, into: &sink) }
        var store = RetainedStore()
        for entry in ingest.foundEntries { store.apply(Self.foundEvent(entry)) }
        return (ingest, store)
    }

    /// Issue 31's bound, on what the structures themselves allocate (`HeapBytes`: counted from their
    /// capacities and strings, so other tests running in the process cannot move it). 1,484 B per
    /// entry by the same count before the first two rounds (docs/footprint-found.md): a dictionary of whole
    /// entries, 48-byte keys, entries pinning their HCI event, and two strings per retained event; 916 B
    /// before the retained events were kept compact.
    @Test("a found entry at limits.found, distinct iBeacons: found set and retained event take at most 1 KB")
    func perEntryBytesBound() {
        let (ingest, store) = Self.filled()
        #expect(ingest.foundCount == Self.limit && store.count == Self.limit)
        let foundSet = ingest.found.allocatedBytes { $0.key.heapBytes + $0.detail.heapBytes }
        let perEntry = (foundSet + store.allocatedBytes) / Self.limit
        print("found memory (counted): \(perEntry) B per entry: found set \(foundSet / Self.limit), retained store "
              + "\(store.allocatedBytes / Self.limit) (entry \(MemoryLayout<AirIngest.Entry>.stride) B, key \(MemoryLayout<DiscoveryKey>.stride) B)")
        #expect(MemoryLayout<DiscoveryKey>.stride <= 24)
        #expect(perEntry <= 1024)
        // The retained found event in `RetainedCodec`'s form: 240 B; 544 B as key and JSON text.
        #expect(store.allocatedBytes / Self.limit <= 320)
    }

    /// The found set's own part: 370 B per entry on main before this round (a 232 B entry, a
    /// `[DiscoveryKey: Int32]` of 8,192 slots × 28 B, two heaps of 40 B items); now a 200 B entry,
    /// 8,192 positions of 4 B, the same heaps: 288 B (docs/footprint-found.md).
    @Test("the found set's part of an entry: a 200-byte entry, 4-byte index slots and its heap items")
    func foundSetPerEntry() {
        let (ingest, _) = Self.filled()
        let perEntry = ingest.found.allocatedBytes { $0.key.heapBytes + $0.detail.heapBytes } / Self.limit
        print("found memory (counted): found set \(perEntry) B per entry (entry \(MemoryLayout<AirIngest.Entry>.stride) B)")
        #expect(MemoryLayout<AirIngest.Entry>.stride <= 200)
        #expect(perEntry <= 300)
    }

    /// A repeat sighting of a message finds its entry by hash and contents, without making the boxed key:
    /// the hash must be the key's own, or the entry would be filed where a removal never looks.
    @Test func aMessagesProbeHashIsItsKeysHash() {
        for message in [Message(namespace: "room", type: "door", content: [1, 2, 3]),
                        Message(namespace: "a-longer-namespace-than-15", type: "t", content: Array(repeating: 7, count: 300))] {
            #expect(DiscoveryKey.hashValue(of: message) == DiscoveryKey.message(message).hashValue)
            #expect(DiscoveryKey.message(message).isMessage(message))
            #expect(!DiscoveryKey.message(message).isMessage(Message(namespace: message.namespace, type: message.type, content: [])))
        }
    }

    /// With `[mqtt]` the bridge keeps no copy of the retained found events (the socket broker's
    /// `RetainedStore` has them, counted above), only which keys are set and how many share a topic:
    /// counted the same way, with the outbox as the gateway makes it. A copy of its own, as before,
    /// was 368 B (763 B before that): the test fails with it. The Home Assistant state is counted by
    /// `HomeAssistantPresenceTests`.
    @Test("with [mqtt], what the bridge keeps of a found entry's retained event, counted")
    func bridgeCopyPerEntry() {
        let (ingest, _) = Self.filled()
        var outbox = MQTTOutbox(prefix: "nearby", limit: 1000, retainedElsewhere: true)
        for entry in ingest.foundEntries {
            outbox.add(Self.foundEvent(entry))
            _ = outbox.takeAll()
        }
        let perEntry = outbox.retainedBytes / Self.limit
        print("found memory (counted): what the MQTT bridge keeps of a retained event \(perEntry) B per entry")
        #expect(perEntry <= 64)
    }

    @Test("memory per found entry at limits.found, distinct iBeacons: found set and retained events, and what comes back after expiry")
    func perEntryBreakdown() throws {
        var ingest = AirIngest(reassembler: FrameFixture.reassembler())
        ingest.listening = AirIngest.Listening(ble: [Self.beacons], audio: [], hasScanPublications: false)
        var store = RetainedStore()
        let t0 = ContinuousClock.now, d0 = Date(timeIntervalSince1970: 1_790_000_000)

        func fill(from first: Int, at now: ContinuousClock.Instant) -> Int {
            var sink = NoSink()
            for k in first..<(first + Self.limit) { ingest.ingest(Self.sighting(k, at: now), now: now, date: d0, into: &sink) }
            return sink.found
        }
        func expireAll(at now: ContinuousClock.Instant) {
            for entry in ingest.expireFound(now: now) {
                store.apply(BrokerEvent(topic: "lost/x", json: "{}", retain: .clear(Self.foundEvent(entry).retain.key!)))
            }
        }

        // No warm-up round: glibc would reuse its freed chunks, and the second round would cost nothing in RSS.
        let empty = Self.heapInUse()
        let found = fill(from: 0, at: t0)
        let foundSet = Self.heapInUse()
        var lineBytes = 0
        for entry in ingest.foundEntries {
            let event = Self.foundEvent(entry)
            lineBytes += event.topic.utf8.count + event.json.utf8.count + (event.retain.key?.utf8.count ?? 0)
            store.apply(event)
        }
        let full = Self.heapInUse()
        let counted = ingest.found.allocatedBytes { $0.key.heapBytes + $0.detail.heapBytes } + store.allocatedBytes
        // The model beside the resident memory it explains (only meaningful when this test runs alone).
        print("found memory: counted \(counted / Self.limit) B per entry, resident \((full - empty) / Self.limit) B (RssAnon)")
        #expect(found == Self.limit)
        #expect(ingest.foundCount == Self.limit && store.count == Self.limit)
        let perEntry = Double(full - empty) / Double(Self.limit)
        print(String(format: "found memory: %.0f B per entry: found set %.0f (entry %d B stride, key %d B), retained store %.0f "
                     + "(of it the topic, JSON and retain key's bytes %.0f)",
                     perEntry, Double(foundSet - empty) / Double(Self.limit), MemoryLayout<AirIngest.Entry>.stride,
                     MemoryLayout<DiscoveryKey>.stride, Double(full - foundSet) / Double(Self.limit),
                     Double(lineBytes) / Double(Self.limit)))

        expireAll(at: t0 + .seconds(80))
        let expired = Self.heapInUse()
        SystemCall.releaseFreeHeap()
        let trimmed = Self.heapInUse()
        print("found memory: \(expired - empty) B of \(full - empty) B still resident after every entry expired, "
              + "\(trimmed - empty) B after malloc_trim")
        #expect(ingest.foundCount == 0 && store.count == 0)
    }
}

extension BrokerEvent.Retain {
    var key: String? {
        switch self {
        case .none: nil
        case .set(let key), .clear(let key): key
        }
    }
}
