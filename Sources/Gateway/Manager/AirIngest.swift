import Config
import FoundationEssentials
import NearbyProtocol
import Radio

/// The synchronous part of what arrives from the air: a sighting's AD structures through the frame
/// codec (reassembly, authentication) and the beacon decoders into the found set.
///
/// A value type with one owner, the `MessageManager` actor, which calls it for every sighting and audio
/// payload and then does what it reports through an `AirIngestSink` (events, LEDs, scan windows, logs).
/// `nearby-gateway-bench pipeline` drives this same type, so the benchmark measures the gateway's code.
public struct AirIngest: Sendable {
    /// What the owner listens for right now: the running subscriptions per medium (permission and
    /// power state applied) and whether scan-mode publications want subscriber beacons. The owner
    /// sets it whenever one of those changes, so a sighting costs no filtering.
    struct Listening: Sendable {
        var ble: [Subscription] = []
        var audio: [Subscription] = []
        /// Every beacon family some running BLE subscription includes.
        var wanted: Set<BeaconFilter> = []
        /// Whether some running BLE subscription includes an identity (all, or one by name).
        var wantsIdentities = false
        var hasScanPublications = false

        init() {}

        init(ble: [Subscription], audio: [Subscription], hasScanPublications: Bool) {
            self.ble = ble
            self.audio = audio
            self.wanted = ble.reduce(into: Set<BeaconFilter>()) { $0.formUnion($1.include) }
            self.wantsIdentities = ble.contains { $0.include.contains(.identity) || !$0.identities.isEmpty }
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

    /// A found entry whose smoothed RSSI moved enough to tell clients (`FoundSet.SignalRule`), or a
    /// message found over BLE that was just heard over audio.
    public struct SignalChange: Sendable {
        var entry: Entry
    }

    /// An entry taken out of a full found set to make room for a newer one.
    public struct Evicted: Sendable {
        var entry: Entry
    }

    private(set) var reassembler: Reassembler
    private(set) var found: FoundSet<DiscoveryKey, DiscoveryDetails>
    var listening = Listening()
    /// The `[[identity]]` entries; nil without any.
    private(set) var identities: Identities?
    /// The latest Eddystone TLM per sender, added to that sender's UID sightings. Bounded: beacons are
    /// few; a flood of fake senders only resets it.
    private var telemetryBySender: [BDAddress: EddystoneTLM] = [:]
    public private(set) var advertsSeen = 0
    public private(set) var audioPayloadsSeen = 0

    /// `maxFound` bounds the found set (`found.max_entries`): beacons, which anyone can forge, make
    /// room for messages, never the other way round.
    init(reassembler: Reassembler, maxFound: Int = GatewayConfig.defaultMaxFound, identities: Identities? = nil) {
        self.reassembler = reassembler
        self.found = FoundSet(limit: maxFound)
        self.identities = identities
    }

    /// Listens the way a gateway with these subscriptions does when they all run (permission
    /// granted, power on): what the benchmark needs.
    public init(codec: FrameCodec, epoch: UInt32, subscriptions: [SubscriptionConfig], scanPublications: Bool = false,
                identities: Identities? = nil) {
        self.init(reassembler: Reassembler(codec: codec, epoch: epoch), identities: identities)
        let running = subscriptions.map { config in
            Subscription(namespace: config.namespace, type: config.type, mediums: Set(config.mediums), mode: config.mode,
                         background: config.background, lostAfter: config.lostAfter, include: Set(config.include),
                         identities: Set(config.identities), led: config.led)
        }
        listening = Listening(ble: running.filter { $0.mediums.contains(.ble) }, audio: running.filter { $0.mediums.contains(.audio) },
                              hasScanPublications: scanPublications)
    }

    // MARK: Inputs

    /// One advert heard by the radio.
    ///
    /// The AD structures are walked in place, over a pointer to the report's bytes (as `ADStructures`
    /// does: a zero length or a length running past the end stops the walk): first every
    /// manufacturer-specific data field through the reassembler, then, when a subscription includes
    /// beacons, the service and manufacturer data through the beacon decoders. Nothing is copied or
    /// retained per structure; only a beacon that a subscription includes keeps a slice of the report.
    public mutating func ingest<Sink: AirIngestSink>(_ sighting: Sighting, now: ContinuousClock.Instant, date: Date,
                                                     into sink: inout Sink) {
        advertsSeen += 1
        guard listening.hearsBLE else { return }
        let source = SourceID.ble(address: sighting.address.rawValue), rssi = sighting.rssi
        if listening.wantsIdentities, PrivateAddress.isResolvable(sighting.address, type: sighting.addressType) {
            identity(sighting.address, rssi: rssi, now: now, date: date, into: &sink)
        }
        var mayHoldBeacons = false
        sighting.data.withUnsafeBufferPointer { ad in
            var offset = 0
            while let (type, data) = Self.structure(in: ad, at: &offset) {
                if type == ADStructure.manufacturerSpecificData {
                    mayHoldBeacons = true
                    frame(data, source: source, medium: .ble, rssi: rssi, subscriptions: listening.ble, now: now, date: date, into: &sink)
                } else if type == ADStructure.serviceData16BitUUID {
                    mayHoldBeacons = true
                }
            }
        }
        guard mayHoldBeacons, !listening.wanted.isEmpty else { return }
        let data = sighting.data
        var offset = data.startIndex
        while offset < data.endIndex {
            let length = Int(data[offset])
            guard length != 0, length < data.endIndex - offset else { break }
            let type = data[offset + 1], start = offset + 2
            offset += 1 + length
            guard type == ADStructure.serviceData16BitUUID || type == ADStructure.manufacturerSpecificData else { continue }
            beacon(type: type, content: data[start..<offset], from: sighting.address, rssi: rssi, now: now, date: date, into: &sink)
        }
    }

    /// The next AD structure at `offset` (type and data), or nil at the end, at a zero length or at a
    /// length running past the end.
    @inline(__always)
    private static func structure(in ad: UnsafeBufferPointer<UInt8>, at offset: inout Int) -> (UInt8, UnsafeBufferPointer<UInt8>)? {
        guard offset < ad.count else { return nil }
        let length = Int(ad[offset])
        guard length != 0, length < ad.count - offset else { return nil }
        let type = ad[offset + 1]
        let data = UnsafeBufferPointer(rebasing: ad[(offset + 2)..<(offset + 1 + length)])
        offset += 1 + length
        return (type, data)
    }

    /// One service-data or manufacturer-data structure, if it is a beacon (the same checks as
    /// `Beacon.parse`). Eddystone-UID and iBeacon keys are read straight from the bytes, so a sighting
    /// of them allocates nothing; an Eddystone-URL is decoded (its key is the URL), a TLM is kept for
    /// its sender's UID.
    private mutating func beacon<Sink: AirIngestSink>(type: UInt8, content: ArraySlice<UInt8>, from sender: BDAddress, rssi: Int8?,
                                                      now: ContinuousClock.Instant, date: Date, into sink: inout Sink) {
        let s = content.startIndex
        let key: DiscoveryKey
        var telemetry: EddystoneTLM?
        if type == ADStructure.serviceData16BitUUID {
            guard content.count >= 3, UInt16(content[s]) | UInt16(content[s + 1]) << 8 == Beacon.eddystoneServiceUUID else { return }
            let f = s + 2, frameCount = content.count - 2
            switch content[f] {
            case EddystoneUID.frameType:
                guard frameCount == 18 || frameCount == 20 else { return }
                sink.beacon(.eddystoneUID)
                guard listening.wanted.contains(.eddystoneUID) else { return }
                key = .eddystoneUID(ShortBytes(content[(f + 2)..<(f + 18)]))
                telemetry = telemetryBySender[sender]
            case EddystoneURL.frameType:
                guard case .eddystoneURL(let url)? = Beacon.parse(type: type, data: content) else { return }
                sink.beacon(.eddystoneURL)
                guard listening.wanted.contains(.eddystoneURL) else { return }
                key = .eddystoneURL(url.url)
            case EddystoneTLM.frameType:
                guard let tlm = EddystoneTLM(frame: content[f...]) else { return }
                sink.beacon(.eddystoneTLM)
                rememberTelemetry(tlm, from: sender)
                return
            default:
                return
            }
        } else {
            guard content.count == 25, content[s] == 0x4C, content[s + 1] == 0x00, content[s + 2] == 0x02, content[s + 3] == 0x15
            else { return }
            sink.beacon(.iBeacon)
            guard listening.wanted.contains(.iBeacon) else { return }
            key = .iBeacon(uuid: ShortBytes(content[(s + 4)..<(s + 20)]), major: UInt16(content[s + 20]) << 8 | UInt16(content[s + 21]),
                           minor: UInt16(content[s + 22]) << 8 | UInt16(content[s + 23]))
        }
        let details = DiscoveryDetails(medium: .ble, content: content, beaconADType: type, telemetry: telemetry)
        let family = key.beaconFilter
        var lostAfter: Duration?
        for subscription in listening.ble where family.map(subscription.include.contains) ?? false {
            lostAfter = max(lostAfter ?? subscription.lostAfter, subscription.lostAfter)
        }
        sighted(hash: key.hashValue, matching: { $0 == key }, key: key, details: details, rssi: rssi,
                lostAfter: lostAfter ?? .seconds(10), authenticated: false, now: now, date: date, into: &sink) {
            Set($0.listening.ble.lazy.filter { family.map($0.include.contains) ?? false }.compactMap(\.led))
        }
    }

    /// A resolvable private address: found as its identity when a key resolves it and a subscription
    /// includes that identity. Keyed by the name, so a new address is the same entry (no lost).
    private mutating func identity<Sink: AirIngestSink>(_ address: BDAddress, rssi: Int8?, now: ContinuousClock.Instant, date: Date,
                                                        into sink: inout Sink) {
        guard let index = identities?.resolver.identity(of: address), let name = identities?.names[index] else { return }
        var lostAfter: Duration?
        for subscription in listening.ble where subscription.includes(identity: name) {
            lostAfter = max(lostAfter ?? subscription.lostAfter, subscription.lostAfter)
        }
        guard let lostAfter else { return }
        let key = DiscoveryKey.identity(name)
        // Protected like our messages: only the key's holder makes addresses that resolve to it.
        sighted(hash: key.hashValue, matching: { $0 == key }, key: key, details: DiscoveryDetails(medium: .ble, content: EmptyCollection()),
                rssi: rssi, lostAfter: lostAfter, authenticated: true, now: now, date: date, into: &sink) {
            Set($0.listening.ble.lazy.filter { $0.includes(identity: name) }.compactMap(\.led))
        }
    }

    /// One payload the audio receiver decoded (the frame itself).
    mutating func ingestAudio<Sink: AirIngestSink>(_ payload: [UInt8], now: ContinuousClock.Instant, date: Date,
                                                   into sink: inout Sink) {
        audioPayloadsSeen += 1
        payload.withUnsafeBufferPointer { frame in
            self.frame(frame, source: .audio, medium: .audio, rssi: nil, subscriptions: listening.audio, now: now, date: date, into: &sink)
        }
    }

    private mutating func frame<Sink: AirIngestSink>(_ bytes: UnsafeBufferPointer<UInt8>, source: SourceID, medium: Medium, rssi: Int8?,
                                                     subscriptions: [Subscription], now: ContinuousClock.Instant, date: Date,
                                                     into sink: inout Sink) {
        reassembler.follow(clock: date)
        switch reassembler.ingest(buffer: bytes, source: source, now: now) {
        case .notOurs, .incomplete:
            break
        case .dropped(let reason):
            sink.dropped(reason, source: source)
        case .subscriberBeacon(let id):
            sink.subscriberBeacon(id)
        case .message(let message):
            var lostAfter: Duration?
            for subscription in subscriptions where subscription.matches(message) {
                lostAfter = max(lostAfter ?? subscription.lostAfter, subscription.lostAfter)
            }
            guard let lostAfter else { return }
            // Found by its hash and contents: the key is boxed, so it is made for a new entry only.
            sighted(hash: DiscoveryKey.hashValue(of: message), matching: { $0.isMessage(message) }, key: .message(message),
                    details: DiscoveryDetails(medium: medium, content: message.content), rssi: rssi,
                    lostAfter: lostAfter, authenticated: true, now: now, date: date, into: &sink) { _ in
                Set(subscriptions.lazy.filter { $0.matches(message) }.compactMap(\.led))
            }
        }
    }

    /// A sighting of `key`: found if new, otherwise refreshes last_seen, RSSI and details.
    /// `leds` is asked only for a new entry (the matching subscriptions' LEDs). A full found set makes
    /// room by evicting (reported as lost first) or refuses an unauthenticated beacon.
    /// The key is the one `matching` accepts, whose `hashValue` is `hash`; `key` makes it.
    private mutating func sighted<Sink: AirIngestSink>(hash: Int, matching: (DiscoveryKey) -> Bool, key: @autoclosure () -> DiscoveryKey,
                                                       details: DiscoveryDetails, rssi: Int8?,
                                                       lostAfter: Duration, authenticated: Bool, now: ContinuousClock.Instant,
                                                       date: Date, into sink: inout Sink, leds: (Self) -> Set<String>) {
        // A found message heard over audio after BLE sightings is news for clients: near-ultrasound
        // does not pass walls (the fleet's room evidence, docs/behaviour.md). Looked up for audio only.
        let nowAudio = details.medium == .audio && found.entry(hash: hash, matching: matching).map { $0.detail.medium != .audio } == true
        // Details follow the latest sighting (a beacon's telemetry changes), the event goes out once.
        switch found.record(hash: hash, matching: matching, key: key(), detail: details, rssi: rssi.map(Int.init), lostAfter: lostAfter,
                            now: now, date: date, protected: authenticated) {
        case .refreshed:
            if nowAudio, let entry = found.entry(hash: hash, matching: matching) { sink.signal(SignalChange(entry: entry)) }
        case .refused:
            return
        case .signalMoved(let entry):
            sink.signal(SignalChange(entry: entry))
        case .added(let entry, let evicted):
            if let evicted { sink.evicted(Evicted(entry: evicted)) }
            sink.found(Found(entry: entry, leds: leds(self), total: found.count))
        }
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

    /// Clocks that disagree (docs/protocol.md): the owner's choices, passed to the reassembler.
    mutating func setSearchesAhead(_ on: Bool) { reassembler.searchesAhead = on }
    mutating func setPhaseUnknown(_ unknown: Bool) { reassembler.phaseUnknown = unknown }
    mutating func resetSearch() { reassembler.resetSearch() }
    mutating func takeEpochAhead() -> UInt32? { reassembler.takeEpochAhead() }

    /// A reloaded config: a new codec (api key, rotation) for frames, and its identities (their cache
    /// starts empty: a key may have changed); the found set and the counters stay (every `GET stats`
    /// counter runs from process start).
    mutating func reload(_ codec: FrameCodec, epoch: UInt32, identities: Identities?) {
        reassembler = Reassembler(codec: codec, epoch: epoch, limits: reassembler.limits, counters: reassembler.counters)
        self.identities = identities
    }

    // MARK: Reading

    public var frameCounters: Reassembler.Counters { reassembler.counters }
    public var foundCount: Int { found.count }
    /// Found-set entries evicted to make room, and beacon sightings refused for lack of it.
    public var foundEvicted: Int { found.evicted }
    public var foundRefused: Int { found.refused }
    /// Resolution counters, nil without identities.
    public var identityCounters: IdentityResolver.Counters? { identities?.resolver.counters }
    public var identityCacheEntries: Int { identities?.resolver.cachedAddresses ?? 0 }
    var foundEntries: [Entry] { found.entries }
}

/// The configured identities: their names, which key the found set, and the resolver of their keys
/// (in the same order).
public struct Identities: Sendable {
    let names: [String]
    var resolver: IdentityResolver

    /// Loads libcrypto (the first time) and prepares one AES key per identity.
    public init(_ configs: [IdentityConfig], cacheCapacity: Int = IdentityResolver.defaultCapacity) throws(CryptoError) {
        names = configs.map(\.name)
        resolver = try IdentityResolver(keys: configs.map { IdentityResolvingKey(mostSignificantFirst: $0.key.bytes)! },
                                        capacity: cacheCapacity)
    }
}

/// What an `AirIngest` call reports back to its owner, in the order it happened.
public protocol AirIngestSink {
    /// A new entry in the found set.
    mutating func found(_ found: AirIngest.Found)
    /// An entry taken out of a full found set to make room for a new one: lost, for the owner.
    mutating func evicted(_ evicted: AirIngest.Evicted)
    /// A subscriber beacon that authenticated; scan-mode publications may answer it.
    mutating func subscriberBeacon(_ id: SubscriberBeaconID)
    /// A frame that looked like ours and was thrown away (already counted in `frameCounters`).
    mutating func dropped(_ reason: DropReason, source: SourceID)
    /// A beacon heard in an advert, by family (only while some subscription includes beacons).
    mutating func beacon(_ family: BeaconFilter)
    /// A found entry whose smoothed RSSI moved past the found set's `SignalRule`.
    mutating func signal(_ change: AirIngest.SignalChange)
}

extension AirIngestSink {
    public mutating func dropped(_ reason: DropReason, source: SourceID) {}
    public mutating func evicted(_ evicted: AirIngest.Evicted) {}
    public mutating func beacon(_ family: BeaconFilter) {}
    public mutating func signal(_ change: AirIngest.SignalChange) {}
}
