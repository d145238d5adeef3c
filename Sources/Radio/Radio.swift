import Logging
import Synchronization
import SystemCall

/// One BLE controller, kept alive: opens the device, resets the controller, applies the current
/// advertisements and scanning, reports sightings, and when the controller vanishes reports it
/// once and reconnects with exponential back-off until it is back.
///
/// Advertising is a rotation: every `advertisingInterval` the next payload is announced by
/// disable → set data → enable. A controller that advertises periodically (every real one) keeps
/// repeating a single payload by itself, so then nothing is sent until the payloads change;
/// BlueZ's emulator sends one report per enable and gets an enable every interval
/// (`ReannouncePolicy`). A controller with several extended advertising sets gets one set per
/// payload instead of a rotation (`AdvertisingSets.swift`). Scanning is passive without
/// duplicate filtering.
///
/// The radio, its controller, their timers and the transport's reads all run on one thread
/// (`EventLoop`), the gateway's, which its owner (the message manager) shares: an advertising step
/// or a sighting wakes that one thread, not a timer thread, a reader and Swift's pool
/// (docs/architecture.md, "Concurrency"). That owner takes the sightings of each wake in one call,
/// on the loop (`handSightings`), with no queue and no task in between; everything else it learns
/// through `events`.
public actor Radio {
    /// Takes the sightings of one wake's reads, in order, on the radio's loop; returns how many sightings
    /// (these or earlier ones) it had no room for, which count as `overflowed`.
    public typealias SightingHandler = @Sendable ([Sighting]) -> Int

    public nonisolated let loop: EventLoop
    public nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }
    public nonisolated let events: EventQueue<RadioEvent>
    nonisolated let sink: EventQueue<RadioEvent>.Sink
    public nonisolated let device: String
    let configuration: RadioConfiguration
    let logger: Logger
    nonisolated let recorder = StatisticsRecorder()
    /// Where sightings go: `events` until the owner takes them itself; nowhere once `run` is cancelled.
    private nonisolated let handoff = Mutex(Handoff.events)
    private enum Handoff { case events, handler(SightingHandler), stopped }
    /// When reports last arrived; nil when `quietTimeout` is nil (never reset for silence).
    nonisolated let quietWatch: QuietWatch?
    private let openTransport: @Sendable (StatisticsRecorder, EventLoop) throws(RadioError) -> any HCITransport

    // What the owner asked for; every (re)connection converges the controller to it.
    var advertisements: [[UInt8]] = []
    var scanning = false
    var addressRotationRequested = false
    /// Wakes the link's loop when the above changes, so changes apply at once, not at the next tick.
    var wake: AsyncStream<Void>.Continuation?
    /// Tells the link's ticker that the advertisements changed (it may need to tick, or stop).
    var ticksChanged: AsyncStream<Void>.Continuation?
    /// What the connected controller has applied; `nil` while there is none.
    var link: LinkState?

    /// Sightings and state changes wait here for the owner; beyond this the oldest are dropped
    /// (and counted) rather than growing memory.
    public static let bufferedEvents = 4096

    /// `loop`: the gateway's event loop, which the radio then shares with the owner of its sightings
    /// (so a sighting reaches it without crossing threads). Its owner starts and stops it.
    public init(device: RadioDevice, configuration: RadioConfiguration = RadioConfiguration(), logger: Logger,
                loop: EventLoop) {
        var adapterLogger = logger
        adapterLogger[metadataKey: "device"] = "\(device)"
        self.init(name: device.description, configuration: configuration, logger: logger, loop: loop) { [adapterLogger] recorder, loop throws(RadioError) in
            // A shared kernel adapter that is down is brought up before each connection (AdapterPower).
            if case .kernel(let index, exclusive: false) = device,
               try AdapterPower.ensureUp(index: index, device: device.description, kernel: HCISocket.Kernel()) == .broughtUp {
                adapterLogger.notice("\(device) was down: brought it up (HCIDEVUP, as `hciconfig \(device) up` does)")
            }
            return try device.open(recorder: recorder, loop: loop)
        }
    }

    /// Any transport, e.g. a fake controller in tests.
    init(
        name: String, configuration: RadioConfiguration, logger: Logger, loop: EventLoop,
        openTransport: @escaping @Sendable (StatisticsRecorder, EventLoop) throws(RadioError) -> any HCITransport
    ) {
        self.loop = loop
        device = name
        self.configuration = configuration
        var logger = logger
        logger[metadataKey: "device"] = "\(name)"
        self.logger = logger
        self.openTransport = openTransport
        quietWatch = configuration.quietTimeout.map(QuietWatch.init(timeout:))
        (events, sink) = EventQueue.make(limit: Self.bufferedEvents)
    }

    /// Input dropped so far (garbage bytes, malformed events and adverts, overflow).
    public nonisolated var statistics: RadioStatistics { recorder.snapshot }

    /// The longest payload a legacy advert carries.
    public static let maximumAdvertisementLength = HCICommand.maximumLegacyAdvertisingDataLength

    /// Complete AD payloads to rotate through; `[]` stops advertising. Payloads longer than 31
    /// bytes are refused (left out, logged and counted): a real controller rejects them and
    /// btvirt crashes on them.
    public func setAdvertisements(_ payloads: [[UInt8]]) {
        setAdvertisements(payloads, rotatingAddress: false)
    }

    /// New payloads and, when `rotatingAddress`, a fresh random static address, applied in the
    /// same step: for the privacy rotation, where new message ids must never be seen from the old
    /// address nor old ids from the new one (two separate calls could interleave with a step).
    public func setAdvertisements(_ payloads: [[UInt8]], rotatingAddress: Bool) {
        let accepted = payloads.filter { $0.count <= Self.maximumAdvertisementLength }
        if accepted.count != payloads.count {
            let refused = payloads.count - accepted.count
            recorder.record { $0.refusedAdvertisements += refused }
            logger.error("refused advertisements longer than 31 bytes", metadata: ["count": "\(refused)"])
        }
        advertisements = accepted
        if rotatingAddress { addressRotationRequested = true }
        wake?.yield()
        ticksChanged?.yield()
    }

    public func setScanning(_ enabled: Bool) {
        scanning = enabled
        wake?.yield()
    }

    /// A fresh random static address from the next advertising enable on.
    public func rotateAddress() {
        addressRotationRequested = true
        wake?.yield()
    }

    /// From now on, each read's sightings go to `handler` (on the loop, so the owner shares the radio's
    /// loop) instead of `events`, until `run` is cancelled. Call it before `run`.
    public nonisolated func handSightings(to handler: @escaping SightingHandler) {
        handoff.withLock { if case .events = $0 { $0 = .handler(handler) } }
    }

    /// Runs until cancelled, then ends `events`. Call it once per radio.
    public func run() async {
        // Child tasks (the controller's pump, the ticker, the hardware error watch) start on the loop too.
        await withTaskCancellationHandler {
            await withTaskExecutorPreference(loop) { await runLoop() }
        } onCancel: {
            // A flood's handoff stops at once, not when the connection has wound down.
            handoff.withLock { $0 = .stopped }
        }
    }

    private func runLoop() async {
        var delay = configuration.reconnectInitialDelay
        var downReported = false
        var reportedRemedy: String?
        while !Task.isCancelled {
            let (wasUp, failure) = await connectAndServe()
            guard let failure, !Task.isCancelled else { break }
            if failure.kind == .quiet {
                // Not an outage: the controller answers. Reconnecting at once is the reset (HCI
                // Reset and the whole initialisation); the back-off is the watch's doubling bound.
                recorder.record { $0.quietResets += 1 }
                logger.warning("controller quiet, resetting it", metadata: ["error": "\(failure)"])
                sink.yield(.quiet(failure))
                downReported = false
                delay = configuration.reconnectInitialDelay
                continue
            }
            if wasUp {
                downReported = false
                delay = configuration.reconnectInitialDelay
            }
            // Once down, retries are quiet, unless one says what would fix it (an adapter the
            // gateway may not bring up): that is reported too, once.
            if downReported, failure.remedy == nil || failure.remedy == reportedRemedy {
                logger.debug("reconnect failed", metadata: ["error": "\(failure)"])
            } else {
                logger.error("controller down", metadata: ["error": "\(failure)", "errno": "\(failure.errno.map { String($0.rawValue) } ?? "-")"])
                sink.yield(.down(failure))
                downReported = true
                reportedRemedy = failure.remedy
            }
            do {
                try await loop.sleep(for: delay)
            } catch {
                break
            }
            delay = min(delay * 2, configuration.reconnectMaximumDelay)
        }
        // Stopping is not an outage: no `.down`, the stream just ends.
        sink.finish()
    }

    /// One connection: returns whether the controller came up and why the connection ended
    /// (`nil` when cancelled).
    private func connectAndServe() async -> (Bool, RadioError?) {
        let transport: any HCITransport
        do {
            transport = try openTransport(recorder, loop)
        } catch {
            return (false, error)
        }
        defer { transport.close() }
        let controller = HCIController(
            transport: transport, commandTimeout: configuration.commandTimeout, recorder: recorder, loop: loop,
            reports: { [self] in self.deliver($0) })
        var failure: RadioError?
        quietWatch?.connected()
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                if let quietWatch { group.addTask { try await self.watchForQuiet(quietWatch) } }
                group.addTask { try await controller.run() }
                group.addTask { try await self.serve(controller) }
                group.addTask { try await self.watchEvents(of: controller) }
                // Whichever ends first ends the connection: the transport closing, a command
                // failing, a hardware error.
                _ = try await group.next()
                group.cancelAll()
            }
        } catch let error as RadioError {
            failure = error
        } catch {
            failure = nil  // cancelled
        }
        if failure == nil && !Task.isCancelled {
            // Not asked to stop, yet the connection ended without a cause: still an outage.
            failure = RadioError(kind: .unavailable, device: device, operation: "read", message: "the connection ended")
        }
        let wasUp = link != nil
        link = nil
        wake = nil
        ticksChanged = nil
        return (wasUp, failure)
    }

    /// The advertising reports of one wake's reads, from the controller, on the loop: every report is
    /// parsed where it arrives, and the wake's sightings go to the owner in one call.
    private nonisolated func deliver(_ batch: [AdvertisingReports]) {
        let now = ContinuousClock.now
        quietWatch?.heard(now: now)
        var sightings: [Sighting] = []
        sightings.reserveCapacity(batch.reduce(0) { $0 + $1.count })
        var incomplete = 0, malformed = 0
        for reports in batch {
            for report in reports {
                guard report.isComplete else {
                    incomplete += 1
                    continue
                }
                guard let sighting = Sighting(report: report, time: now) else {
                    malformed += 1
                    continue
                }
                sightings.append(sighting)
            }
        }
        var overflowed = 0
        switch handoff.withLock({ $0 }) {
        case .handler(let handler):
            if !sightings.isEmpty { overflowed = handler(sightings) }
        case .events:
            for sighting in sightings {
                if case .dropped = sink.yield(.sighting(sighting)) { overflowed += 1 }
            }
        case .stopped:
            break
        }
        if incomplete + malformed + overflowed > 0 {
            recorder.record {
                $0.incompleteReports += incomplete
                $0.malformedAdverts += malformed
                $0.overflowed += overflowed
            }
        }
    }

    /// Ends the connection on a Hardware Error event; the controller's other events are not used.
    private nonisolated func watchEvents(of controller: HCIController) async throws {
        for await event in controller.events {
            switch event {
            case .hardwareError(let code):
                throw RadioError(
                    kind: .controller, device: device, operation: "Hardware Error event",
                    message: "the controller reported hardware error 0x\(String(code, radix: 16))")
            default:
                continue
            }
        }
        if let cause = await controller.finishedCause { throw cause }
        throw CancellationError()
    }

    /// Ends the connection with a `.quiet` error when reports stop (`QuietWatch` says when); waits
    /// on the radio's loop otherwise, one wake-up per bound at most.
    private func watchForQuiet(_ watch: QuietWatch) async throws {
        while true {
            switch watch.check(scanning: link?.scanningEnabled ?? false) {
            case .wait(let duration):
                try await loop.sleep(for: duration)
            case .quiet(let silence):
                throw RadioError(
                    kind: .quiet, device: device, operation: "advertising reports",
                    message: "none for \(silence.components.seconds) s while scanning, after reports were arriving; the controller still answers commands")
            }
        }
    }
}
