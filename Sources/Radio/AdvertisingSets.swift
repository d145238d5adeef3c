import Logging
/// What one extended advertising set has applied. A set exists in the controller from its
/// parameters on, until it is removed.
struct AdvertisingSetState: Equatable {
    var address: BDAddress?
    var data: [UInt8]?
    var enabled = false
}

/// Extended controllers: one advertising set per payload, all enabled by one command, and then
/// nothing until the payloads or the address change (the controller repeats every set by itself).
/// With more payloads than sets, set 0 rotates them like the legacy advertiser.
extension Radio {
    func advanceSets(_ payloads: [[UInt8]], _ controller: HCIController) async throws {
        guard let state = link else { return }
        let plan: [[UInt8]]
        if state.rotates(payloads) {
            let index = rotationIndex(payloads)
            link?.nextPayload = index + 1
            plan = [payloads[index]]
        } else {
            link?.lastPayloads = payloads   // so that a rotation starting later puts the newest first
            plan = Self.assign(payloads, to: state.sets)
        }
        let rotating = !plan.isEmpty && (state.address == nil || addressRotationRequested)
        let address = rotating ? BDAddress.randomStatic() : state.address
        // Taken now: a rotation asked for while this step is in flight gets a step of its own.
        if rotating { addressRotationRequested = false }
        let changed = plan.indices.filter { handle in
            handle >= state.sets.count || state.sets[handle].data != plan[handle] || state.sets[handle].address != address
        }
        let reenabled = state.reannouncesEveryInterval ? Array(plan.indices) : changed
        let surplus = Array(plan.count..<max(plan.count, state.sets.count))
        guard !reenabled.isEmpty || !surplus.isEmpty else { return }

        // Parameters, address and data change only on a disabled set. At an address rotation
        // every set changes, so all go off in one command and on in another: no message id is
        // ever heard from the other address. The step goes as one command sequence.
        var sets = state.sets
        var commands: [HCICommand] = []
        let off = (reenabled + surplus).filter { $0 < sets.count && sets[$0].enabled }
        if !off.isEmpty {
            commands.append(.leSetExtendedAdvertisingEnable(false, handles: off.map(UInt8.init)))
            for handle in off { sets[handle].enabled = false }
        }
        commands += removal(of: surplus, from: sets.count, controller)
        sets.removeLast(surplus.count)
        for handle in changed {
            if handle >= sets.count {
                commands.append(.leSetExtendedAdvertisingParameters(interval: configuration.advertisingInterval, handle: UInt8(handle)))
                sets.append(AdvertisingSetState())
            }
            if let address, sets[handle].address != address {
                commands.append(.leSetAdvertisingSetRandomAddress(address, handle: UInt8(handle)))
                sets[handle].address = address
            }
            if sets[handle].data != plan[handle] {
                commands.append(try .leSetExtendedAdvertisingData(plan[handle], handle: UInt8(handle), device: device))
                sets[handle].data = plan[handle]
            }
        }
        if !reenabled.isEmpty {
            commands.append(.leSetExtendedAdvertisingEnable(true, handles: reenabled.map(UInt8.init)))
            for handle in reenabled { sets[handle].enabled = true }
        }
        try await controller.send(sequence: commands)
        link?.sets = sets
        if rotating, let address {
            link?.address = address
            logger.debug("advertising address set", metadata: ["address": "\(address)", "sets": "\(plan.count)"])
        }
    }

    /// Payloads to sets, index = handle: a payload keeps the set it is already on, so a change
    /// touches only the sets whose payload changed; new payloads fill the sets left over.
    static func assign(_ payloads: [[UInt8]], to sets: [AdvertisingSetState]) -> [[UInt8]] {
        var plan = [[UInt8]?](repeating: nil, count: payloads.count)
        var unplaced = payloads
        for handle in plan.indices where handle < sets.count {
            if let data = sets[handle].data, let index = unplaced.firstIndex(of: data) {
                plan[handle] = unplaced.remove(at: index)
            }
        }
        return plan.map { $0 ?? unplaced.removeFirst() }
    }

    /// Removes the sets no payload needs any more (they are disabled by then). When every set
    /// goes on a controller we own, one Clear does it; on a controller shared with the kernel
    /// only our own sets are removed, one by one.
    private func removal(of handles: [Int], from existing: Int, _ controller: HCIController) -> [HCICommand] {
        if handles.isEmpty { return [] }
        if handles.count == existing && handles.count > 1 && controller.ownsController { return [.leClearAdvertisingSets] }
        return handles.reversed().map { .leRemoveAdvertisingSet(UInt8($0)) }
    }

    /// How many sets the controller has (1 when it can't say).
    func advertisingSets(_ controller: HCIController) async throws -> Int {
        do {
            let count = try await controller.send(.leReadNumberOfSupportedAdvertisingSets, decode: ControllerResponses.advertisingSets)
            return min(max(count, 1), HCICommand.maximumAdvertisingSets)
        } catch let error as RadioError where error.status == .unknownCommand {
            return 1
        }
    }
}
