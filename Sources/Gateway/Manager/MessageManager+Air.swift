import Config
import FoundationEssentials
import Logging
import Modem
import NearbyProtocol
import Radio
import SystemCall

/// What arrives from the air: radio events and audio payloads, through the frame codec into the
/// found set.
extension MessageManager {
    /// The radio's `SightingHandler`: the sightings of one wake's reads, taken in this call, on the gateway's
    /// loop (the radio's and this actor's executor), with no task per sighting. Returns how many
    /// sightings the backlog had to drop.
    nonisolated func receive(_ sightings: [Sighting]) -> Int {
        assumeIsolated { $0.ingest(read: sightings) }
    }

    /// Ingests `sightings` in order until one needs an await (a clock step, a peer's epoch ahead, a
    /// subscriber beacon); that one's rest and the sightings after it go to one task (`drainAir`,
    /// `AirBacklog`). Founds need none while the panel runs on this loop (`performAtOnce`).
    func ingest(read sightings: [Sighting]) -> Int {
        if airBacklog.draining || airBacklog.closed { return airBacklog.append(contentsOf: sightings) }
        // Cleared by the next sighting; setError awaits the panel.
        if errors.contains(.radioQuiet) { return drainAir(nil, then: sightings[...]) }
        guard let first = sightings.first else { return 0 }
        // One reading of both clocks for the whole batch: its sightings arrived together. Nothing in
        // the loop below moves the epoch (a peer ahead goes to `drainAir`), so the observation holds.
        let observation = observeClock(), now = clock.now
        if observation.needsSettling(epoch: epoch) {
            return drainAir(.clock(first, observation), then: sightings.dropFirst())
        }
        for index in sightings.indices {
            let sighting = sightings[index]
            var effects = AirEffects(logsDrops: isDebug)
            inbound.ingest(sighting, now: now, date: observation.date, into: &effects)
            let ahead = inbound.takeEpochAhead()
            if ahead != nil || !performAtOnce(effects) {
                return drainAir(.effects(effects, epochAhead: ahead), then: sightings[(index + 1)...])
            }
        }
        return 0
    }

    /// Starts the task that does `first`, then takes the backlog (`rest` first) until it is empty.
    private func drainAir(_ first: AirBacklog.Step?, then rest: ArraySlice<Sighting>) -> Int {
        let dropped = airBacklog.append(contentsOf: rest)
        airBacklog.draining = true
        Task(executorPreference: loop) { await self.takeBacklog(after: first) }
        return dropped
    }

    private func takeBacklog(after first: AirBacklog.Step?) async {
        switch first {
        case .clock(let sighting, let observation):
            let date = await settleClock(observation)
            var effects = AirEffects(logsDrops: isDebug)
            inbound.ingest(sighting, now: clock.now, date: date, into: &effects)
            await perform(effects)
            await followPeers()
        case .effects(let effects, let ahead):
            await perform(effects)
            if let ahead { await follow(epochAhead: ahead) }
        case nil:
            break
        }
        while let sighting = airBacklog.popFirst() { await handle(.sighting(sighting)) }
        airBacklog.draining = false
    }

    /// Does `effects` now when none needs an await: signal events and dropped frames' logs (what a
    /// repeat advert makes), and founds and evictions while the panel runs on this loop (it does in
    /// the gateway: their LEDs change in this call). False, and nothing done, otherwise: a subscriber
    /// beacon (its scan window awaits the radio), or a panel on another executor (tests).
    private func performAtOnce(_ effects: AirEffects) -> Bool {
        for effect in effects.effects {
            switch effect {
            case .signal, .dropped: continue
            case .found, .evicted: if panelIsCurrent { continue } else { return false }
            case .subscriberBeacon: return false
            }
        }
        for effect in effects.effects {
            switch effect {
            case .found(let found): announceFoundNow(found)
            case .evicted(let evicted): reportLost(evicted.entry, reason: "evicted")
            case .signal(let change): publishSignal(change)
            case .dropped(let reason, let source): logDrop(reason, source)
            case .subscriberBeacon: break
            }
        }
        // An eviction's lost: its LEDs change now, as `perform` does.
        if !pendingPanelEvents.isEmpty {
            for event in pendingPanelEvents { panel?.handleNow(event) }
            pendingPanelEvents.removeAll()
        }
        return true
    }

    func handle(_ event: RadioEvent) async {
        switch event {
        case .sighting(let sighting):
            if errors.contains(.radioQuiet) { await setError(.radioQuiet, false, cause: "advertising reports arrive again") }
            await ingest(sighting)
        case .up:
            await setError(.bluetoothPower, false, cause: "controller up")
            await setError(.bluetoothPermission, false, cause: "controller up")
        case .down(let error):
            let which: GatewayErrorState = error.kind == .permission ? .bluetoothPermission : .bluetoothPower
            await setError(which, true, cause: "\(error)", device: error.device, errno: error.errno?.rawValue, updating: true)
        case .quiet(let error):
            await setError(.radioQuiet, true, cause: "\(error); resetting the controller", device: error.device)
        }
    }

    func ingest(_ sighting: Sighting) async {
        let date = await clockDate()
        var effects = AirEffects(logsDrops: isDebug)
        inbound.ingest(sighting, now: clock.now, date: date, into: &effects)
        await perform(effects)
        await followPeers()
    }

    func ingestAudio(_ payload: [UInt8]) async {
        let date = await clockDate()
        var effects = AirEffects(logsDrops: isDebug)
        inbound.ingestAudio(payload, now: clock.now, date: date, into: &effects)
        await perform(effects)
        await followPeers()
    }

    /// What the air ingest reported, in order: the actor's side effects (events, LEDs, scan windows, logs).
    private func perform(_ effects: AirEffects) async {
        for effect in effects.effects {
            switch effect {
            case .found(let found):
                await announceFound(found)
            case .evicted(let evicted):
                reportLost(evicted.entry, reason: "evicted")
            case .signal(let change):
                publishSignal(change)
            case .subscriberBeacon(let id):
                await subscriberBeaconHeard(id)
            case .dropped(let reason, let source):
                logDrop(reason, source)
            }
        }
        // An eviction's lost: its LEDs change now, not at the next expiry.
        if !pendingPanelEvents.isEmpty {
            for event in pendingPanelEvents { await panel?.handle(event) }
            pendingPanelEvents.removeAll()
        }
    }

    private func publishSignal(_ change: AirIngest.SignalChange) {
        let entry = change.entry, suffix = entry.key.topicSuffix
        // Android's onBleSignalChanged/onDistanceChanged; not retained (GET found has the latest).
        events.publish(BrokerEvent(topic: "signal/" + suffix, json: eventJSON(entry, entry.detail, suffix: suffix), retain: .none,
                                   entry: retainKey(entry.key, suffix: suffix)))
    }

    private func logDrop(_ reason: DropReason, _ source: SourceID) {
        logger.debug("frame dropped", metadata: ["reason": "\(reason.rawValue)", "source": "\(source)"])
    }
}

/// The manager's `AirIngestSink`: collects what one call reported, to act on it afterwards (most
/// sightings report nothing, and then nothing is allocated).
struct AirEffects: AirIngestSink {
    enum Effect {
        case found(AirIngest.Found)
        case evicted(AirIngest.Evicted)
        case signal(AirIngest.SignalChange)
        case subscriberBeacon(SubscriberBeaconID)
        case dropped(DropReason, SourceID)
    }

    let logsDrops: Bool
    private(set) var effects: [Effect] = []

    init(logsDrops: Bool) { self.logsDrops = logsDrops }

    mutating func found(_ found: AirIngest.Found) { effects.append(.found(found)) }
    mutating func evicted(_ evicted: AirIngest.Evicted) { effects.append(.evicted(evicted)) }
    mutating func signal(_ change: AirIngest.SignalChange) { effects.append(.signal(change)) }
    mutating func subscriberBeacon(_ id: SubscriberBeaconID) { effects.append(.subscriberBeacon(id)) }
    mutating func dropped(_ reason: DropReason, source: SourceID) {
        if logsDrops { effects.append(.dropped(reason, source)) }
    }
}

/// Beacon sightings as found-set entries (docs/product.md §12 topics and fields).
enum BeaconDiscovery {
    /// The key and details of a beacon a subscription includes, from the decoded beacon and the AD
    /// structure (`type`, `content`) it came in. The details keep those bytes; the JSON fields are
    /// written only when an event needs them (`fields`). `AirIngest` makes the same keys and details
    /// straight from the bytes, without decoding into `Beacon` values (that allocates).
    static func make(_ beacon: Beacon, type: UInt8, content: ArraySlice<UInt8>, wanted: Set<BeaconFilter>,
                     telemetry: EddystoneTLM?) -> (DiscoveryKey, DiscoveryDetails)? {
        let key: DiscoveryKey
        switch beacon {
        case .eddystoneUID(let uid) where wanted.contains(.eddystoneUID):
            key = .eddystoneUID(ShortBytes(uid.namespace + uid.instance))
        case .eddystoneURL(let url) where wanted.contains(.eddystoneURL):
            key = .eddystoneURL(url.url)
        case .iBeacon(let ibeacon) where wanted.contains(.iBeacon):
            key = .iBeacon(uuid: ShortBytes(ibeacon.uuid), major: ibeacon.major, minor: ibeacon.minor)
        default:
            return nil
        }
        let isUID = if case .eddystoneUID = beacon { true } else { false }
        return (key, DiscoveryDetails(medium: .ble, content: content, beaconADType: type, telemetry: isUID ? telemetry : nil))
    }

    /// The decoded fields of a beacon's events, JSON values in order.
    static func fields(_ beacon: Beacon, telemetry: EddystoneTLM?) -> [(String, String)] {
        let quote = JSONObjectWriter.quote
        switch beacon {
        case .eddystoneUID(let uid):
            var fields = [("namespace_id", quote(uid.namespaceHex)), ("instance_id", quote(uid.instanceHex)),
                          ("tx_power", String(uid.txPower))]
            if let telemetry { fields.append(("tlm", json(telemetry))) }
            return fields
        case .eddystoneURL(let url):
            return [("url", quote(url.url)), ("tx_power", String(url.txPower))]
        case .iBeacon(let ibeacon):
            return [("uuid", quote(ibeacon.uuidString)), ("major", String(ibeacon.major)),
                    ("minor", String(ibeacon.minor)), ("tx_power", String(ibeacon.measuredPower))]
        case .eddystoneTLM:
            return []
        }
    }

    static func json(_ tlm: EddystoneTLM) -> String {
        var json = JSONObjectWriter()
        json.add("battery_mv", tlm.batteryMillivolts.map(Int.init))
        json.add("temperature_c", rawJSON: tlm.temperature.map { String(cFormat: "%.2f", $0) } ?? "null")
        json.add("adv_count", Int(tlm.advertisingCount))
        json.add("uptime_s", rawJSON: String(cFormat: "%.1f", Double(tlm.uptimeDeciseconds) / 10))
        return json.string
    }
}

/// The speaker and microphone threads' reports.
extension MessageManager {
    func handle(_ event: AudioEvent, side: AudioBridge.AudioSide) async {
        switch (event, side) {
        case (.received(let reception), _):
            await ingestAudio(reception.payload)
        case (.ready(let device), .capture):
            logger.info("microphone open", metadata: ["device": "\(device)"])
            await setError(.microphonePermission, false, cause: "capture device \(device) open")
        case (.captureOverrun(let count), _):
            stats.captureOverruns += count
            logger.warning("microphone overrun: the capture thread fell behind, \(count) buffer(s) of samples lost",
                           metadata: ["total": "\(stats.captureOverruns)"])
        case (.failed(let error, let retry), .capture):
            stats.captureFailures += 1
            // Any capture device that can't be opened or read is the microphone error of Nearby
            // Messages (its name kept); `reason` tells the faults apart. The thread retries by itself.
            await setError(.microphonePermission, true, cause: "\(error); retrying in \(retry) s", device: error.device,
                           errno: error.errno, reason: error.kind.rawValue)
        case (.ready(let device), .playback):
            logger.info("speaker open", metadata: ["device": "\(device)"])
        case (.failed(let error, let retry), .playback):
            logger.error("speaker: \(error); retrying in \(retry) s")
        case (.beaconFailed(let error), _):
            logger.error("speaker: audio beacon not played: \(error)")
        case (.beaconPlayed(let payloads, let seconds), _):
            logger.debug("audio beacon played", metadata: ["payloads": "\(payloads)", "seconds": "\(seconds)"])
        }
    }
}
