import Config
import FoundationEssentials
import LEDs
import Logging
import MQTT
import NearbyProtocol
import Radio
import SystemCall

/// The one owner of the gateway's Nearby state (`GNSMessageManager`, serverless): publications,
/// subscriptions, the found set, consent/background/power and the error states. Inputs arrive as
/// method calls (radio sightings, audio payloads, socket requests, timers); outputs go through the
/// seams in `Seams.swift`. Everything that decides what is on the air is in `AirPlanner`.
actor MessageManager {
    struct Stats: Sendable {
        let started = ContinuousClock.now
        let startedAt = Date()
        /// Capture overruns (the capture thread fell behind: samples lost) and capture failures
        /// (device gone, stalled or unreadable; each reopened with backoff), for `GET stats`.
        var captureOverruns = 0
        var captureFailures = 0
    }

    let logger: Logger
    private(set) var settings: ManagerSettings
    private var planner: AirPlanner
    private(set) var state: GatewayState
    private(set) var publications: [PublicationID: Publication] = [:]
    private var nextPublication = 1
    var nextSubscription = 1   // s<N> of SUBSCRIBE
    /// The config's, then the run-time ones (`SUBSCRIBE`, MessageManager+Subscribe.swift changes them).
    var subscriptions: [Subscription]
    /// Sightings and audio payloads through the frame codec into the found set (the synchronous part).
    var inbound: AirIngest
    private var beaconMatcher: SubscriberBeaconMatcher<PublicationID>
    private(set) var scanWindows: [PublicationID: ContinuousClock.Instant] = [:]
    private(set) var errors: Set<GatewayErrorState> = []
    /// The cause of each raised error, for systemd's status line (`statusText`).
    private var errorCauses: [GatewayErrorState: String] = [:]
    /// Told the status line whenever an error is raised or cleared (systemd's `STATUS=`).
    private var statusSink: (@Sendable (String) -> Void)?
    var stats = Stats()
    /// `PUB`s refused by the per-connection or the global limit (`GET stats`).
    var publicationsRefused = 0
    /// The MQTT bridge's counters for `GET stats` (nil = no `[mqtt]`, no bridge).
    private(set) var mqttStatistics: (@Sendable () -> MQTTBridgeStatistics)?
    var epoch: UInt32
    var clockFollower: ClockFollower   // the clock epochs follow: the wall clock or a peer's ahead (+Clock.swift)
    private var plan = AirPlan.silent
    /// The loop timer armed for `armedDeadline`, if any (MessageManager+Timers.swift).
    var timer: EventLoop.TimerID?
    var armedDeadline: ContinuousClock.Instant?
    private var debug = false
    /// Per-subscription LEDs: how many found entries keep each lit, and which LEDs each entry lit.
    private var litCounts: [String: Int] = [:]
    private var ledsByKey: [DiscoveryKey: Set<String>] = [:]
    var pendingPanelEvents: [LEDEvent] = []
    /// Sightings waiting behind an awaited step (MessageManager+Air.swift).
    var airBacklog = AirBacklog(limit: Radio.bufferedEvents)
    /// Saves run off the actor (`StateFile.persist`), so the actor takes other calls meanwhile; these
    /// keep state changes one at a time, in order, so the file never ends older than what was acknowledged.
    private var stateWriting = false
    private var stateWriters: [CheckedContinuation<Void, Never>] = []

    let air: (any AirInterface)?
    private let audio: (any AudioInterface)?
    let events: any EventSink
    let panel: (any PanelInterface)?
    private let stateFile: StateFile
    private let logLevel: SharedLogLevel
    let clock = ContinuousClock()
    /// The gateway's event loop, this actor's executor: sightings reach it on the thread that read
    /// them, and its timers are the loop's.
    nonisolated let loop: EventLoop
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    init(
        settings: ManagerSettings, state: GatewayState, stateFile: StateFile,
        air: (any AirInterface)?, audio: (any AudioInterface)?, events: any EventSink,
        panel: (any PanelInterface)?, logLevel: SharedLogLevel, logger: Logger, loop: EventLoop
    ) {
        self.loop = loop
        self.logLevel = logLevel
        self.settings = settings
        self.planner = AirPlanner(codec: settings.codec)
        self.state = state
        self.stateFile = stateFile
        self.air = air
        self.audio = audio
        self.events = events
        self.panel = panel
        self.logger = logger
        self.subscriptions = settings.subscriptions
        let epoch = settings.codec.epoch(at: Date())
        self.epoch = epoch
        inbound = AirIngest(reassembler: Reassembler(codec: settings.codec, epoch: epoch), maxFound: settings.limits.found, identities: settings.identities)
        self.beaconMatcher = SubscriberBeaconMatcher(codec: settings.codec, epoch: epoch, publications: [])
        self.clockFollower = ClockFollower(rotateSeconds: settings.codec.rotateSeconds, reference: .now)
        for publication in settings.publications {
            publications[PublicationID(rawValue: nextPublication)] = Self.numbered(publication, nextPublication, owner: nil)
            nextPublication += 1
        }
        inbound.listening = Self.listening(state: state, subscriptions: subscriptions, publications: publications.values)
    }

    private static func numbered(_ template: Publication, _ number: Int, owner: Int?) -> Publication {
        var publication = template
        publication.id = PublicationID(rawValue: number)
        publication.owner = owner
        return publication
    }

    // MARK: Start, reload, stop

    /// Announces the restored state and puts the plan on the air.
    func start() async {
        publishSystemState()
        await refreshKernelClock()
        await panel?.handle(.power(state.power))
        await apply()
    }

    /// SIGHUP: the new config's publications and subscriptions replace the old ones; runtime
    /// publications and subscriptions from socket clients stay. A new `rotate_s` or api key means another epoch (its
    /// peers compute it from the new values), so the epoch is recomputed and the air rotates now;
    /// a new `log_level` applies unless `--log-level` or `SET debug on` says otherwise.
    func reload(_ newSettings: ManagerSettings) async {
        publications = publications.filter { $0.value.owner != nil }
        settings = newSettings
        planner = AirPlanner(codec: newSettings.codec)
        let previousEpoch = epoch
        epoch = newSettings.codec.epoch(at: clockFollower.date(real: Date()))
        inbound.reload(newSettings.codec, epoch: epoch, identities: newSettings.identities)
        inbound.setSearchesAhead(clockFollower.follows)
        inbound.setPhaseUnknown(!clockFollower.phaseKnown)
        subscriptions = newSettings.subscriptions + subscriptions.filter { $0.owner != nil }
        for publication in newSettings.publications { _ = addPublication(publication, owner: nil) }
        if !debug { logLevel.value = logLevel.base(configured: newSettings.logLevel) }
        logger.info("config reloaded", metadata: ["publications": "\(publications.count)", "subscriptions": "\(subscriptions.count)",
                                                  "epoch": "\(epoch)", "log_level": "\(logLevel.value)"])
        await apply(rotatingAddress: epoch != previousEpoch)
    }

    /// Graceful shutdown: nothing more on the air, LEDs dark, state on disk.
    func shutdown() async {
        disarm()
        plan = .silent
        await air?.setAdvertisements([], rotatingAddress: false)
        await air?.setScanning(false)
        audio?.setPayloads([])
        audio?.setCapture(false)
        await beginStateWrite()
        defer { endStateWrite() }
        do { try await stateFile.persist(state) } catch { logger.error("could not flush state: \(error)") }
        // Off the air and flushed: sightings still on their way are dropped, not ingested.
        airBacklog.close()
    }

    // MARK: Publications

    func addPublication(_ template: Publication, owner: Int?) -> PublicationID {
        let publication = Self.numbered(template, nextPublication, owner: owner)
        nextPublication += 1
        publications[publication.id] = publication
        return publication.id
    }

    func publish(_ template: Publication, owner: Int?) async -> PublicationID {
        let id = addPublication(template, owner: owner)
        logger.info("publishing", metadata: ["handle": "\(id)", "namespace": "\(template.message.namespace)", "type": "\(template.message.type)"])
        await apply()
        return id
    }

    /// Removes a publication; only its owner (or anyone, for owner nil) may do so.
    func unpublish(_ id: PublicationID, owner: Int?) async -> Bool {
        guard let publication = publications[id], owner == nil || publication.owner == owner else { return false }
        publications[id] = nil
        scanWindows[id] = nil
        await apply()
        return true
    }

    func clientGone(_ client: Int) async {
        let owned = publications.values.filter { $0.owner == client }.map(\.id)
        let subscribed = subscriptions.count(where: { $0.owner == client })
        guard !owned.isEmpty || subscribed > 0 else { return }
        for id in owned { publications[id] = nil; scanWindows[id] = nil }
        subscriptions.removeAll { $0.owner == client }
        if !owned.isEmpty { logger.info("client gone: its publications end", metadata: ["client": "\(client)", "count": "\(owned.count)"]) }
        if subscribed > 0 { logger.info("client gone: its subscriptions end", metadata: ["client": "\(client)", "count": "\(subscribed)"]) }
        await apply()
    }

    // MARK: State changes

    /// Persists first, then announces: a value is acknowledged only once it is on disk.
    func update(_ change: (inout GatewayState) -> Void) async throws {
        await beginStateWrite()
        defer { endStateWrite() }
        var next = state
        change(&next)
        guard next != state else { return }
        do {
            try await stateFile.persist(next)
        } catch {
            await setError(.state, true, cause: "state not saved, nothing changed: \(error)", device: error.path, errno: error.errno.rawValue)
            throw error
        }
        await setError(.state, false, cause: "state saved to \(stateFile.path)")
        let previous = state
        state = next
        if previous.permission != next.permission { logger.notice("permission \(next.permission.rawValue)") }
        if previous.power != next.power {
            logger.notice("power \(next.power.rawValue)")
            await panel?.handle(.power(next.power))
        }
        if previous.backgroundMode != next.backgroundMode { logger.notice("background mode \(next.backgroundMode ? "on" : "off")") }
        publishSystemState(previous: previous)
        await apply()
    }

    private func beginStateWrite() async {
        guard stateWriting else { stateWriting = true; return }
        await withCheckedContinuation { stateWriters.append($0) }
    }

    /// Hands the turn to the next waiting change (which then owns `stateWriting`), or frees it.
    private func endStateWrite() {
        if stateWriters.isEmpty { stateWriting = false } else { stateWriters.removeFirst().resume() }
    }

    /// `SET debug on|off`: the whole process logs at debug level, or back at `--log-level` if given,
    /// else the config's `log_level`.
    func setDebug(_ on: Bool) {
        let changed = debug != on
        debug = on
        logLevel.value = on ? .debug : logLevel.base(configured: settings.logLevel)
        logger.notice("debug logging \(on ? "on" : "off")")
        if changed { publishDebug() }
    }
    var isDebug: Bool { debug }

    /// `updating`: an error already set is published again when its cause changed (the radio's outage, once it says what fixes it).
    func setError(_ error: GatewayErrorState, _ isSet: Bool, cause: String, device: String? = nil, errno: Int32? = nil, reason: String? = nil,
                  updating: Bool = false) async {
        guard errors.contains(error) != isSet || (isSet && updating && errorCauses[error] != cause) else { return }
        if isSet {
            errors.insert(error)
            errorCauses[error] = cause
            logger.error("\(error.rawValue): \(cause)")
        } else {
            errors.remove(error)
            errorCauses[error] = nil
            logger.notice("\(error.rawValue) cleared: \(cause)")
        }
        var json = JSONObjectWriter()
        json.add("error", error.rawValue)
        json.add("set", isSet)
        if isSet {
            json.add("device", device)
            json.add("errno", errno.map(Int.init))
            if let reason { json.add("reason", reason) }
        }
        json.add("message", cause)
        events.publish(BrokerEvent(topic: "$SYS/error/\(error.rawValue)", json: json.string,
                                   retain: isSet ? .set("$SYS/error/\(error.rawValue)") : .clear("$SYS/error/\(error.rawValue)")))
        statusSink?(statusText)
        await panel?.handle(.errors(errors))
    }

    /// systemd's status line for the error states raised now.
    var statusText: String { SystemdStatus.text(errors: errorCauses) }

    /// Where the status line goes on each change from now on (the service's sd_notify; the first
    /// one goes with READY=1).
    func setStatusSink(_ sink: @escaping @Sendable (String) -> Void) { statusSink = sink }

    func setMQTTStatistics(_ source: @escaping @Sendable () -> MQTTBridgeStatistics) { mqttStatistics = source }

    // MARK: Applying the plan

    /// Recomputes what should be on the air and tells the radio and speaker what changed.
    func apply(rotatingAddress: Bool = false) async {
        // Every change of state, subscriptions or publications ends here: what the air ingest listens for follows.
        inbound.listening = listening
        let now = clock.now
        scanWindows = scanWindows.filter { $0.value > now }
        beaconMatcher = SubscriberBeaconMatcher(codec: settings.codec, epoch: epoch, publications: publications.values
            .filter { $0.mode == .scan }
            .map { .init(key: $0.id, namespace: $0.message.namespace, type: $0.message.type) })
        let next = planner.plan(state: state, publications: publications.values, subscriptions: subscriptions,
                                openScanWindows: Set(scanWindows.keys), epoch: epoch)
        let previous = plan
        plan = next
        if next.bleAdverts != previous.bleAdverts || rotatingAddress {
            await air?.setAdvertisements(next.bleAdverts, rotatingAddress: rotatingAddress)
        }
        if next.bleScanning != previous.bleScanning { await air?.setScanning(next.bleScanning) }
        if next.audioPayloads != previous.audioPayloads { audio?.setPayloads(next.audioPayloads) }
        if next.audioCapture != previous.audioCapture { audio?.setCapture(next.audioCapture) }
        if next != previous {
            logger.debug("air plan", metadata: ["adverts": "\(next.bleAdverts.count)", "scanning": "\(next.bleScanning)",
                                                "audio": "\(next.audioPayloads.count)", "capture": "\(next.audioCapture)"])
        }
        reschedule()
    }

    /// Publications whose ttl has ended as of `now` end (the timer's part that changes them).
    func endExpiredPublications(now: ContinuousClock.Instant) {
        let expired = publications.values.filter { ($0.expiry ?? .now.advanced(by: .seconds(1))) <= now }.map(\.id)
        for id in expired {
            publications[id] = nil
            logger.info("publication ttl ended", metadata: ["handle": "\(id)"])
        }
    }

    // MARK: Found / lost

    /// A new found-set entry: event, LED, log.
    func announceFound(_ found: AirIngest.Found) async {
        let event = recordFound(found)
        await panel?.handle(event)
        reschedule()
    }

    /// `announceFound` without an await, where the panel runs on this actor's loop (`panelIsCurrent`):
    /// a read's founds are done in the radio's call (MessageManager+Air.swift).
    func announceFoundNow(_ found: AirIngest.Found) {
        let event = recordFound(found)
        panel?.handleNow(event)
        // A found adds only its own lost deadline: nothing to arm when the timer is due before it.
        if timer != nil, let armed = armedDeadline, armed <= found.entry.deadline { return }
        reschedule()
    }

    /// The panel can be told in this call: there is none, or it runs on this actor's loop.
    var panelIsCurrent: Bool { panel?.isCurrent ?? true }

    /// A found's event, log and LED counts; returns what the panel is to be told.
    private func recordFound(_ found: AirIngest.Found) -> LEDEvent {
        let entry = found.entry, key = entry.key
        // Spelt once for the topic, the retain key and the JSON (an iBeacon's is its UUID in hex).
        let suffix = key.topicSuffix
        logger.info("found \(suffix)", metadata: ["medium": "\(entry.detail.medium.rawValue)"])
        events.publish(BrokerEvent(topic: "found/" + suffix, json: eventJSON(entry, entry.detail, suffix: suffix),
                                   retain: .set(retainKey(key, suffix: suffix))))
        ledsByKey[key] = found.leds
        for led in found.leds { litCounts[led, default: 0] += 1 }
        return .found(total: found.total, lit: Set(litCounts.keys))
    }

    /// A lost entry: event (with `reason` when it did not simply time out), LEDs, log.
    func reportLost(_ entry: AirIngest.Entry, reason: String? = nil) {
        let key = entry.key, suffix = key.topicSuffix
        logger.info("lost \(suffix)", metadata: reason.map { ["reason": "\($0)"] } ?? [:])
        events.publish(BrokerEvent(topic: "lost/" + suffix, json: eventJSON(entry, entry.detail, reason: reason, suffix: suffix),
                                   retain: .clear(retainKey(key, suffix: suffix))))
        for led in ledsByKey.removeValue(forKey: key) ?? [] {
            litCounts[led, default: 1] -= 1
            if litCounts[led] == 0 { litCounts[led] = nil }
        }
        pendingPanelEvents.append(.lost(total: inbound.foundCount, lit: Set(litCounts.keys)))
    }

    var foundCount: Int { inbound.foundCount }
    var currentPlan: AirPlan { plan }

    /// A subscriber beacon was heard: matching scan-mode publications transmit for a while.
    func subscriberBeaconHeard(_ id: SubscriberBeaconID) async {
        let matches = beaconMatcher.matches(id)
        guard !matches.isEmpty else { return }
        let until = clock.now + settings.scanWindow
        var opened = false
        for publication in matches {
            if scanWindows[publication] == nil { opened = true }
            scanWindows[publication] = until
        }
        if opened {
            logger.info("subscriber beacon heard: scan-mode publications transmit", metadata: ["handles": "\(matches)"])
            await apply()
        }
    }
}
