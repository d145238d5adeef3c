import Logging
import SystemCall

/// What the connected controller currently has applied, so each step only sends what changed.
struct LinkState {
    var info: ControllerInfo
    var extended: Bool { info.usesExtendedAdvertising }
    /// Advertising sets the radio may use at once (LE Read Number of Supported Advertising Sets):
    /// one payload per set, rotated only when there are more payloads than sets. 1 on legacy
    /// controllers.
    var advertisingSets: Int
    var address: BDAddress?
    /// Legacy controllers: the one advertising configuration.
    var advertisingParametersSet = false
    var advertisingEnabled = false
    var advertisingData: [UInt8]?
    /// Extended controllers: what each advertising set has applied (index = handle). A set is in
    /// the array once its parameters are set, i.e. once it exists in the controller.
    var sets: [AdvertisingSetState] = []
    var scanParametersSet = false
    var scanningEnabled = false
    var nextPayload = 0
    /// Re-announce by an enable every interval (btvirt), or leave repeating to the controller.
    var reannouncesEveryInterval: Bool
    /// The payloads of the last step, to put a new one on the air first.
    var lastPayloads: [[UInt8]] = []
    /// The last liveness probe on a shared kernel device (see `probeIfShared`).
    var lastProbe = ContinuousClock.now

    /// More payloads than sets: one set (or the legacy advertiser) shows them in turn.
    func rotates(_ payloads: [[UInt8]]) -> Bool { payloads.count > advertisingSets }
}

extension Radio {
    /// Resets the controller, says so with `.up`, then converges it to the wanted state at every
    /// change and every advertising interval, until cancelled or a command fails.
    func serve(_ controller: HCIController) async throws {
        let info = try await initialize(controller)
        let sets = info.usesExtendedAdvertising ? try await advertisingSets(controller) : 1
        let everyInterval = switch configuration.reannounce {
        case .automatic: info.isBlueZEmulator
        case .everyInterval: true
        case .onChange: false
        }
        link = LinkState(info: info, advertisingSets: sets, reannouncesEveryInterval: everyInterval)
        logger.info(
            "controller up",
            metadata: ["address": "\(info.publicAddress.map { "\($0)" } ?? "-")", "extended": "\(info.usesExtendedAdvertising)",
                       "sets": "\(sets)",
                       "manufacturer": "0x\(String(info.manufacturer, radix: 16))", "hci_version": "\(info.hciVersion)",
                       "reannounce": everyInterval ? "every-interval" : "on-change"])
        sink.yield(.up(info))
        let (signals, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let (changes, changed) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        self.wake = wake
        self.ticksChanged = changed
        wake.yield()
        let shared = !controller.ownsController
        try await withThrowingTaskGroup(of: Void.self) { group in
            // Ticks only while something must happen on a clock: a rotation step, a re-announce,
            // a liveness probe. A single payload on a periodic controller costs no wake-ups at all.
            group.addTask {
                var changes = changes.makeAsyncIterator()
                while true {
                    if let period = await self.tickPeriod(shared: shared) {
                        try await self.loop.sleep(for: period)
                        wake.yield()
                    } else if await changes.next() == nil {
                        return
                    }
                }
            }
            for await _ in signals {
                try await step(controller)
            }
            group.cancelAll()
        }
        throw CancellationError()
    }

    /// How often the link must step on its own, or nil when only changes need a step.
    func tickPeriod(shared: Bool) -> Duration? {
        guard let state = link else { return nil }
        if state.rotates(advertisements) || (state.reannouncesEveryInterval && !advertisements.isEmpty) {
            return configuration.advertisingInterval
        }
        return shared ? Self.livenessProbeInterval : nil
    }

    private func initialize(_ controller: HCIController) async throws -> ControllerInfo {
        if controller.ownsController {
            try await controller.send(.reset)
        } else {
            // Shared with the kernel: no reset, but start from a known state.
            _ = try? await controller.send(.leSetAdvertisingEnable(false))
            _ = try? await controller.send(.leSetScanEnable(false))
        }
        let version = try await controller.send(.readLocalVersion, decode: ControllerResponses.localVersion)
        let features = try await controller.send(.leReadLocalSupportedFeatures, decode: ControllerResponses.leFeatures)
        let address = try await controller.send(.readBDAddress, decode: ControllerResponses.bdAddress)
        var extended = features & LEFeature.extendedAdvertising != 0
        if extended {
            // Some controllers announce the feature but lack the commands; ask one before relying on them.
            do {
                _ = try await controller.send(.leReadMaximumAdvertisingDataLength)
            } catch let error as RadioError where error.status == .unknownCommand {
                extended = false
            }
        }
        return ControllerInfo(
            device: device, hciVersion: version.hciVersion, hciRevision: version.hciRevision, lmpVersion: version.lmpVersion,
            manufacturer: version.manufacturer, lmpSubversion: version.lmpSubversion, leFeatures: features,
            publicAddress: address, usesExtendedAdvertising: extended)
    }

    /// One step: the next advertisement (with any address rotation), then scanning on/off.
    /// Advertising goes first so that after a (re)connect the random address is set before
    /// scanning starts, which would otherwise have to pause for it.
    func step(_ controller: HCIController) async throws {
        guard link != nil else { return }
        try await advanceAdvertising(controller)
        try await applyScanning(controller)
        try await probeIfShared(controller)
    }

    /// On a raw socket shared with the kernel, `hciconfig hciN down` is announced only to sockets
    /// bound to no device (HCI_EV_SI_DEVICE), never to ours, and a radio that only scans sends no
    /// commands that would fail. So every `livenessProbeInterval` it asks the controller something
    /// harmless: on a device that is down the write fails with ENETDOWN, the session ends with
    /// `.down`, and the reconnect loop restores scanning once the device is up again.
    private func probeIfShared(_ controller: HCIController) async throws {
        guard !controller.ownsController, let state = link,
              ContinuousClock.now - state.lastProbe >= Self.livenessProbeInterval else { return }
        link?.lastProbe = .now
        // A controller that is reporting is up: the kernel delivers nothing from a device that is
        // down. Asking it anyway put a command behind the socket's backlog of reports, where a
        // loaded box's answer came too late and took the link down (the Theengs bench's guest).
        if await controller.heard(within: Self.livenessProbeInterval) { return }
        _ = try await controller.send(.readLocalVersion, decode: ControllerResponses.localVersion)
    }

    static let livenessProbeInterval: Duration = .seconds(2)

    private func applyScanning(_ controller: HCIController) async throws {
        guard let state = link, scanning != state.scanningEnabled else { return }
        try await setScanEnabled(scanning, controller)
    }

    private func setScanEnabled(_ enabled: Bool, _ controller: HCIController) async throws {
        guard let state = link else { return }
        let extended = state.extended
        if enabled && !state.scanParametersSet {
            let (interval, window) = (configuration.scanInterval, configuration.scanWindow)
            try await controller.send(
                extended
                    ? .leSetExtendedScanParameters(interval: interval, window: window)
                    : .leSetScanParameters(interval: interval, window: window))
            link?.scanParametersSet = true
        }
        try await controller.send(extended ? .leSetExtendedScanEnable(enabled) : .leSetScanEnable(enabled))
        link?.scanningEnabled = enabled
        if enabled { quietWatch?.scanningStarted() }
    }

    private func setAdvertisingEnabled(_ enabled: Bool, _ controller: HCIController) async throws {
        guard let state = link, state.advertisingEnabled != enabled else { return }
        try await controller.send(.leSetAdvertisingEnable(enabled))
        link?.advertisingEnabled = enabled
    }

    private func advanceAdvertising(_ controller: HCIController) async throws {
        guard let state = link else { return }
        let payloads = advertisements
        if payloads.isEmpty { link?.lastPayloads = [] }
        if state.extended {
            try await advanceSets(payloads, controller)
            return
        }
        guard !payloads.isEmpty else {
            try await setAdvertisingEnabled(false, controller)
            return
        }
        let index = rotationIndex(payloads)
        let data = payloads[index]
        // A periodic controller repeats what it has: nothing to send unless the data or the address changes.
        if !state.reannouncesEveryInterval, state.advertisingEnabled, state.advertisingData == data, !addressRotationRequested {
            return
        }
        link?.nextPayload = index + 1
        // A periodic controller takes new data while it advertises (Core 5.x Vol 4 Part E 7.8.7: the
        // next advertising events carry it): a rotation step is the data alone, one command, not
        // disable → data → enable. Only btvirt needs the enable (one report per enable).
        if !state.reannouncesEveryInterval, state.advertisingEnabled, state.advertisingParametersSet,
           state.address != nil, !addressRotationRequested {
            try await controller.send(.leSetAdvertisingData(data, device: device))
            link?.advertisingData = data
            return
        }
        // Parameters and the address may only change while advertising is off. The step goes to
        // the controller as one sequence: the radio is resumed once, when the enable is answered.
        var commands: [HCICommand] = state.advertisingEnabled ? [.leSetAdvertisingEnable(false)] : []
        let address = state.address == nil || addressRotationRequested ? BDAddress.randomStatic() : nil
        if let address {
            // Taken now: a rotation asked for while this step is in flight gets a step of its own.
            addressRotationRequested = false
            // Legacy controllers refuse LE Set Random Address while scanning: scanning pauses for it.
            let pause = state.scanningEnabled
            commands += (pause ? [.leSetScanEnable(false)] : []) + [.leSetRandomAddress(address)] + (pause ? [.leSetScanEnable(true)] : [])
        }
        if !state.advertisingParametersSet {
            commands.append(.leSetAdvertisingParameters(interval: configuration.advertisingInterval))
        }
        if state.advertisingData != data { commands.append(try .leSetAdvertisingData(data, device: device)) }
        commands.append(.leSetAdvertisingEnable(true))
        try await controller.send(sequence: commands)
        link?.advertisingEnabled = true
        link?.advertisingParametersSet = true
        link?.advertisingData = data
        if let address {
            link?.address = address
            logger.debug("advertising address set", metadata: ["address": "\(address)"])
        }
    }

    /// The rotation's payload for this step. A payload that just arrived goes on the air first,
    /// not when the rotation comes round to it.
    func rotationIndex(_ payloads: [[UInt8]]) -> Int {
        guard let state = link else { return 0 }
        if payloads != state.lastPayloads {
            link?.lastPayloads = payloads
            if let fresh = payloads.firstIndex(where: { !state.lastPayloads.contains($0) }) { link?.nextPayload = fresh }
        }
        return (link?.nextPayload ?? 0) % payloads.count
    }
}
