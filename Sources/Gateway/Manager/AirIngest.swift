import Foundation
import Radio

/// The synchronous part of what arrives from the air: a sighting's AD structures through the frame
/// codec (reassembly, authentication) and the beacon decoders into the found set.
///
/// A value type with one owner, the `MessageManager` actor, which calls it for every sighting and audio
/// payload and then does what it reports through an `AirIngestSink` (events, LEDs, scan windows, logs).
/// `nearby-gateway bench pipeline` drives this same type, so the benchmark measures the gateway's code.
public struct AirIngest: Sendable {
    /// What the owner listens for right now: the running subscriptions per medium (permission and
    /// power state applied) and whether scan-mode publications want subscriber beacons. The owner
    /// sets it whenever one of those changes, so a sighting costs no filtering.
    struct Listening: Sendable {
        var ble: [Subscription] = []
        var audio: [Subscription] = []
        /// Every beacon family some running BLE subscription includes.
        var wanted: Set<BeaconFilter> = []
        var hasScanPublications = false

        init() {}

        init(ble: [Subscription], audio: [Subscription], hasScanPublications: Bool) {
            self.ble = ble
            self.audio = audio
            self.wanted = ble.reduce(into: Set<BeaconFilter>()) { $0.formUnion($1.include) }
            self.hasScanPublications = hasScanPublications
        }

        /// Nothing in a BLE advert can matter when false: not even its frames are decoded.
        var hearsBLE: Bool { !ble.isEmpty || hasScanPublications }
    }

    typealias Entry = FoundSet<DiscoveryKey, DiscoveryDetails>.Entry

    /// A new found-set entry, for the owner to announce.
    public struct Found: Sendable {
        var entry: Entry
        /// The LEDs of the subscriptions it matched.
        var leds: Set<String>
        /// Entries found right after this one was added.
        var total: Int
    }

    private(set) var reassembler: Reassembler
    private(set) var found = FoundSet<DiscoveryKey, DiscoveryDetails>()
    var listening = Listening()
    /// The latest Eddystone TLM per sender, added to that sender's UID sightings. Bounded: beacons are
    /// few; a flood of fake senders only resets it.
    private var telemetryBySender: [BDAddress: EddystoneTLM] = [:]
    public private(set) var advertsSeen = 0
    public private(set) var audioPayloadsSeen = 0

    init(reassembler: Reassembler) {
        self.reassembler = reassembler
    }

    /// Listens the way a gateway with these subscriptions does when they all run (permission
    /// granted, power on): what the benchmark needs.
    public init(codec: FrameCodec, epoch: UInt32, subscriptions: [SubscriptionConfig], scanPublications: Bool = false) {
        self.init(reassembler: Reassembler(codec: codec, epoch: epoch))
        let running = subscriptions.map { config in
            Subscription(namespace: config.namespace, type: config.type, mediums: Set(config.mediums), mode: config.mode,
                         background: config.background, lostAfter: config.lostAfter, include: Set(config.include), led: config.led)
        }
        listening = Listening(ble: running.filter { $0.mediums.contains(.ble) }, audio: running.filter { $0.mediums.contains(.audio) },
                              hasScanPublications: scanPublications)
    }

    // MARK: Inputs

    /// One advert heard by the radio.
    public mutating func ingest<Sink: AirIngestSink>(_ sighting: Sighting, now: ContinuousClock.Instant, date: Date,
                                                     into sink: inout Sink) {
        advertsSeen += 1
        guard listening.hearsBLE else { return }
        let source = SourceID.ble(address: sighting.address.rawValue)
        for structure in sighting.adStructures where structure.type == ADStructure.manufacturerSpecificData {
            frame(structure.data, source: source, medium: .ble, rssi: sighting.rssi, subscriptions: listening.ble,
                  now: now, date: date, into: &sink)
        }
        guard !listening.wanted.isEmpty else { return }
        for structure in sighting.adStructures {
            guard let beacon = Beacon.parse(type: structure.type, data: structure.data[...]) else { continue }
            sink.beacon(beacon)
            if case .eddystoneTLM(let tlm) = beacon {
                rememberTelemetry(tlm, from: sighting.address)
                continue
            }
            guard let (key, details) = BeaconDiscovery.make(beacon, content: structure.data, wanted: listening.wanted,
                                                            telemetry: telemetryBySender[sighting.address]) else { continue }
            let matching = listening.ble.filter { key.beaconFilter.map($0.include.contains) ?? false }
            sighted(key, details: details, rssi: sighting.rssi, lostAfter: matching.map(\.lostAfter).max() ?? .seconds(10),
                    leds: { Set(matching.compactMap(\.led)) }, now: now, date: date, into: &sink)
        }
    }

    /// One payload the audio receiver decoded (the frame itself).
    mutating func ingestAudio<Sink: AirIngestSink>(_ payload: [UInt8], now: ContinuousClock.Instant, date: Date,
                                                   into sink: inout Sink) {
        audioPayloadsSeen += 1
        frame(payload, source: .audio, medium: .audio, rssi: nil, subscriptions: listening.audio, now: now, date: date, into: &sink)
    }

    private mutating func frame<Sink: AirIngestSink>(_ bytes: [UInt8], source: SourceID, medium: Medium, rssi: Int8?,
                                                     subscriptions: [Subscription], now: ContinuousClock.Instant, date: Date,
                                                     into sink: inout Sink) {
        switch reassembler.ingest(bytes, source: source, now: now) {
        case .notOurs, .incomplete:
            break
        case .dropped(let reason):
            sink.dropped(reason, source: source)
        case .subscriberBeacon(let id):
            sink.subscriberBeacon(id)
        case .message(let message):
            let matching = subscriptions.filter { $0.matches(message) }
            guard !matching.isEmpty else { return }
            sighted(.message(message), details: DiscoveryDetails(medium: medium, content: message.content), rssi: rssi,
                    lostAfter: matching.map(\.lostAfter).max()!, leds: { Set(matching.compactMap(\.led)) },
                    now: now, date: date, into: &sink)
        }
    }

    /// A sighting of `key`: found if new, otherwise refreshes last_seen, RSSI and details.
    private mutating func sighted<Sink: AirIngestSink>(_ key: DiscoveryKey, details: DiscoveryDetails, rssi: Int8?,
                                                       lostAfter: Duration, leds: () -> Set<String>,
                                                       now: ContinuousClock.Instant, date: Date, into sink: inout Sink) {
        // Details follow the latest sighting (a beacon's telemetry changes), the event goes out once.
        guard case .found(let entry) = found.saw(key, detail: details, rssi: rssi.map(Int.init), lostAfter: lostAfter,
                                                 now: now, date: date) else { return }
        sink.found(Found(entry: entry, leds: leds(), total: found.count))
    }

    private mutating func rememberTelemetry(_ tlm: EddystoneTLM, from sender: BDAddress) {
        if telemetryBySender.count >= 256, telemetryBySender[sender] == nil { telemetryBySender.removeAll() }
        telemetryBySender[sender] = tlm
    }

    // MARK: Time and epochs

    /// Removes and returns the entries lost as of `now`.
    mutating func expireFound(now: ContinuousClock.Instant) -> [Entry] { found.expire(now: now) }

    /// Removes the entries lost as of `now`; returns how many (the benchmark's view of `expireFound`).
    public mutating func expireLost(now: ContinuousClock.Instant) -> Int { found.expire(now: now).count }

    /// The earliest instant an entry can be lost.
    mutating func nextDeadline() -> ContinuousClock.Instant? { found.nextDeadline() }

    /// Throws away partial messages older than the reassembler's timeout.
    mutating func expireFrames(now: ContinuousClock.Instant) { reassembler.expire(now: now) }

    mutating func setEpoch(_ epoch: UInt32) { reassembler.setEpoch(epoch) }

    /// A reloaded config: a new codec (api key, rotation) for frames; the found set stays.
    mutating func replaceReassembler(_ reassembler: Reassembler) { self.reassembler = reassembler }

    // MARK: Reading

    public var frameCounters: Reassembler.Counters { reassembler.counters }
    public var foundCount: Int { found.count }
    var foundEntries: Dictionary<DiscoveryKey, Entry>.Values { found.entries.values }
}

/// What an `AirIngest` call reports back to its owner, in the order it happened.
public protocol AirIngestSink {
    /// A new entry in the found set.
    mutating func found(_ found: AirIngest.Found)
    /// A subscriber beacon that authenticated; scan-mode publications may answer it.
    mutating func subscriberBeacon(_ id: SubscriberBeaconID)
    /// A frame that looked like ours and was thrown away (already counted in `frameCounters`).
    mutating func dropped(_ reason: DropReason, source: SourceID)
    /// A beacon decoded from an advert (only while some subscription includes beacons).
    mutating func beacon(_ beacon: Beacon)
}

extension AirIngestSink {
    public mutating func dropped(_ reason: DropReason, source: SourceID) {}
    public mutating func beacon(_ beacon: Beacon) {}
}
