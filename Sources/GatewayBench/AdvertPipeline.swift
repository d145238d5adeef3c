import Config
import FoundationEssentials
import Gateway
import NearbyProtocol
import Radio

/// The advert pipeline as the gateway runs it: the HCI event parse and the `Sighting` of every
/// complete report (what `Radio` does), then the manager's own `AirIngest` (frame decode,
/// authentication, reassembly, Eddystone/iBeacon decoding, found/lost). One instance per run; the
/// clock is simulated, one report every `AdvertCorpus.reportSpacing`.
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

    /// Counts what the ingest reports, where the manager would act on it.
    struct Tally: AirIngestSink {
        var found = 0, beacons = 0
        mutating func found(_ found: AirIngest.Found) { self.found += 1 }
        mutating func subscriberBeacon(_ id: SubscriberBeaconID) {}
        mutating func beacon(_ family: BeaconFilter) { beacons += 1 }
    }

    /// One subscription to every message of the corpus's namespace and to every beacon family.
    static let subscription = SubscriptionConfig(namespace: AdvertCorpus.namespace, type: "*", mediums: [.ble], lostAfterS: 2,
                                                 include: BeaconFilter.allCases)
    var ingest: AirIngest
    var tally = Tally()
    var outcomes = Outcomes()
    private(set) var now: ContinuousClock.Instant
    private var date: Date

    init(start: ContinuousClock.Instant) {
        let codec = FrameCodec(apiKey: AdvertCorpus.apiKey, rotateSeconds: 600)
        ingest = AirIngest(codec: codec, epoch: AdvertCorpus.epoch, subscriptions: [Self.subscription])
        now = start
        date = Date(timeIntervalSince1970: 1_790_000_000)
    }

    mutating func run(_ events: [[UInt8]]) {
        for packet in events {
            guard case .advertisingReports(let reports)? = HCIEvent.parse(packet) else {
                outcomes.malformedEvents += 1
                continue
            }
            for report in reports {
                tick()
                guard report.isComplete, let sighting = Sighting(report: report, time: now) else {
                    outcomes.malformedAdverts += 1
                    continue
                }
                ingest.ingest(sighting, now: now, date: date, into: &tally)
            }
        }
        let counters = ingest.frameCounters
        outcomes.messages = counters.messages
        outcomes.incomplete = counters.incomplete
        outcomes.subscriberBeacons = counters.subscriberBeacons
        outcomes.dropped = counters.totalDropped
        outcomes.beacons = tally.beacons
        outcomes.found = tally.found
    }

    /// Moves the simulated clock one report on; every 1024 reports the found set is expired, as the
    /// manager's deadline timer would.
    @inline(__always)
    private mutating func tick() {
        outcomes.reports += 1
        now = now.advanced(by: AdvertCorpus.reportSpacing)
        date = date.addingTimeInterval(1e-5)
        if outcomes.reports & 1023 == 0 { outcomes.lost += ingest.expireLost(now: now) }
    }
}
