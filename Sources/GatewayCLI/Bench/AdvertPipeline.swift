import Foundation
import Gateway
import Radio

/// What a subscription tracks in the found set: the same kinds of keys the message manager keeps
/// (its `DiscoveryKey` is internal to Gateway, so the benchmark has its own twin).
enum BenchKey: Hashable, Sendable {
    case message(Message)
    case eddystoneUID(namespace: [UInt8], instance: [UInt8])
    case eddystoneURL(String)
    case iBeacon(uuid: [UInt8], major: UInt16, minor: UInt16)
}

/// The advert pipeline after the HCI event is parsed: frame decode + authentication + reassembly
/// for manufacturer data, Eddystone/iBeacon decoding, then found/lost. One instance per run.
struct AdvertPipeline {
    struct Outcomes: Equatable, CustomStringConvertible {
        var reports = 0, malformedEvents = 0, malformedAdverts = 0
        var messages = 0, incomplete = 0, subscriberBeacons = 0, dropped = 0, beacons = 0
        var found = 0, lost = 0

        var description: String {
            "reports \(reports), malformed events \(malformedEvents), malformed adverts \(malformedAdverts), "
                + "messages \(messages), incomplete \(incomplete), subscriber beacons \(subscriberBeacons), "
                + "dropped \(dropped), beacons \(beacons), found \(found), lost \(lost)"
        }

        var json: [String: Int] {
            ["reports": reports, "malformed_events": malformedEvents, "malformed_adverts": malformedAdverts,
             "messages": messages, "incomplete": incomplete, "subscriber_beacons": subscriberBeacons,
             "dropped": dropped, "beacons": beacons, "found": found, "lost": lost]
        }
    }

    static let lostAfter = Duration.seconds(2)
    var reassembler: Reassembler
    var tracker = FoundTracker<BenchKey>()
    var outcomes = Outcomes()
    private(set) var now: ContinuousClock.Instant
    private var date: Date
    private let start: ContinuousClock.Instant

    init(start: ContinuousClock.Instant) {
        let codec = FrameCodec(apiKey: AdvertCorpus.apiKey, rotateSeconds: 600)
        reassembler = Reassembler(codec: codec, epoch: AdvertCorpus.epoch)
        self.start = start
        now = start
        date = Date(timeIntervalSince1970: 1_790_000_000)
    }

    /// Moves the simulated clock one report on; every 1024 reports the found set is expired, as the
    /// manager's deadline timer would.
    @inline(__always)
    mutating func tick() {
        outcomes.reports += 1
        now = now.advanced(by: AdvertCorpus.reportSpacing)
        date = date.addingTimeInterval(1e-5)
        if outcomes.reports & 1023 == 0 { outcomes.lost += tracker.expire(now: now).count }
    }

    /// One manufacturer-specific data field (company id first).
    @inline(__always)
    mutating func manufacturerData(_ data: ArraySlice<UInt8>, source: SourceID, rssi: Int8?) {
        switch reassembler.ingest(data, source: source, now: now) {
        case .notOurs: break
        case .incomplete: outcomes.incomplete += 1
        case .dropped: outcomes.dropped += 1
        case .subscriberBeacon: outcomes.subscriberBeacons += 1
        case .message(let message):
            outcomes.messages += 1
            saw(.message(message), rssi: rssi)
        }
    }

    /// One AD structure, if it is a beacon a subscription includes.
    @inline(__always)
    mutating func beacon(type: UInt8, data: ArraySlice<UInt8>, rssi: Int8?) {
        guard type == ADStructure.serviceData16BitUUID || type == ADStructure.manufacturerSpecificData,
              let beacon = Beacon.parse(type: type, data: data) else { return }
        outcomes.beacons += 1
        switch beacon {
        case .eddystoneUID(let uid): saw(.eddystoneUID(namespace: uid.namespace, instance: uid.instance), rssi: rssi)
        case .eddystoneURL(let url): saw(.eddystoneURL(url.url), rssi: rssi)
        case .iBeacon(let b): saw(.iBeacon(uuid: b.uuid, major: b.major, minor: b.minor), rssi: rssi)
        case .eddystoneTLM: break   // telemetry is attached to the sender's UID, not found by itself
        }
    }

    @inline(__always)
    private mutating func saw(_ key: BenchKey, rssi: Int8?) {
        if case .found = tracker.saw(key, rssi: rssi.map(Int.init), lostAfter: Self.lostAfter, now: now, date: date) {
            outcomes.found += 1
        }
    }

    // MARK: The two ways through

    /// The lazy path: reports and AD structures are views into the event packet, nothing is copied.
    mutating func runFast(_ events: [[UInt8]]) {
        for packet in events {
            guard case .advertisingReports(let reports)? = HCIEvent.parse(packet) else {
                outcomes.malformedEvents += 1
                continue
            }
            for report in reports {
                tick()
                let structures = ADStructures(report.data)
                guard structures.isWellFormed else {
                    outcomes.malformedAdverts += 1
                    continue
                }
                let source = SourceID.ble(address: report.address.rawValue)
                for element in structures {
                    if element.type == ADStructure.manufacturerSpecificData {
                        manufacturerData(element.data, source: source, rssi: report.rssi)
                    }
                    beacon(type: element.type, data: element.data, rssi: report.rssi)
                }
            }
        }
    }

    /// The path the gateway takes today: the radio turns each report into a `Sighting` (an array of
    /// `ADStructure`, each with its own data array, plus a copy of the raw bytes) and the manager
    /// walks its structures.
    mutating func runSightings(_ events: [[UInt8]]) {
        for packet in events {
            guard case .advertisingReports(let reports)? = HCIEvent.parse(packet) else {
                outcomes.malformedEvents += 1
                continue
            }
            for report in reports {
                tick()
                guard let sighting = Sighting(report: report, time: now) else {
                    outcomes.malformedAdverts += 1
                    continue
                }
                let source = SourceID.ble(address: sighting.address.rawValue)
                for structure in sighting.adStructures where structure.type == ADStructure.manufacturerSpecificData {
                    manufacturerData(structure.data[...], source: source, rssi: sighting.rssi)
                }
                for structure in sighting.adStructures {
                    beacon(type: structure.type, data: structure.data[...], rssi: sighting.rssi)
                }
            }
        }
    }
}
