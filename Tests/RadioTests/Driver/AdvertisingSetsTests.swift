import SystemCall
import Testing

@testable import Radio

/// Issue 18 §1: on a controller with several extended advertising sets every payload gets its own
/// set, all enabled by one command, and nothing is sent until the payloads or the address change.
/// Exact HCI commands, against a controller double.
@Suite struct AdvertisingSetsTests {
    typealias FakeDevice = RadioLogicTests.FakeDevice
    let a: [UInt8] = [0x02, 0x01, 0x06], b: [UInt8] = [0x03, 0xFF, 0x01, 0x02], c: [UInt8] = [0x03, 0xFF, 0x03, 0x04]

    private func start(sets: UInt8?, shared: Bool = false, loop: EventLoop) async throws -> (Radio, Task<Void, Never>, FakeController, ControllerInfo) {
        let device = FakeDevice(shared: shared, responder: FakeController.extended(sets: sets))
        let radio = Self.radio(on: device, loop: loop)
        let task = Task { await radio.run() }
        let info = try await first("up", in: radio.events) { $0.upInfo }
        let fake = try await first("connection", in: device.connections) { $0 }
        // Reset (or the two disables when shared), the three reads, max data length, number of sets.
        for _ in 0..<(shared ? 7 : 6) { _ = try await FakeControllerWaiting.next(fake.sent) }
        return (radio, task, fake, info)
    }

    /// A radio on the fake device and the test's loop, with a 20 ms advertising tick and a 5 s command timeout.
    static func radio(on device: FakeDevice, loop: EventLoop) -> Radio {
        Radio(
            name: "fake",
            configuration: RadioConfiguration(
                advertisingInterval: .milliseconds(20), commandTimeout: .seconds(5), reconnectInitialDelay: .milliseconds(1),
                reconnectMaximumDelay: .milliseconds(10)),
            logger: quietLogger, loop: loop
        ) { _, _ throws(RadioError) in try device.open() }
    }

    private func next(_ fake: FakeController, _ count: Int) async throws -> [HCICommand] {
        var out: [HCICommand] = []
        for _ in 0..<count { out.append(try await FakeControllerWaiting.next(fake.sent)) }
        return out
    }

    /// The next `count` commands other than the liveness probe a shared controller gets every 2 s
    /// (Read Local Version, `RadioLink.probeIfShared`): the radio's thread keeps its own time, and a
    /// test kept waiting by a busy pool can see one between the commands it expects.
    private func nextSkippingProbes(_ fake: FakeController, _ count: Int) async throws -> [HCICommand] {
        var out: [HCICommand] = []
        while out.count < count {
            let command = try await FakeControllerWaiting.next(fake.sent)
            if command.opcode != .readLocalVersion { out.append(command) }
        }
        return out
    }

    /// Parameters, address and data of one new set.
    private func newSet(_ handle: UInt8, _ address: BDAddress, _ data: [UInt8]) throws -> [HCICommand] {
        [
            .leSetExtendedAdvertisingParameters(interval: .milliseconds(20), handle: handle),
            .leSetAdvertisingSetRandomAddress(address, handle: handle),
            try .leSetExtendedAdvertisingData(data, handle: handle),
        ]
    }

    @Test func eachPayloadGetsItsOwnSetAndIdleSendsNothing() async throws {
        let loop = try EventLoop(name: "radio-test")
        defer { loop.shutdown() }
        let (radio, task, fake, _) = try await start(sets: 4, loop: loop)
        defer { task.cancel() }
        #expect(await radio.link?.advertisingSets == 4)
        await radio.setAdvertisements([a, b])
        let sent = try await next(fake, 7)
        let address = BDAddress(littleEndianBytes: sent[1].parameters.dropFirst())
        #expect(address.isRandomStatic)
        #expect(sent == (try newSet(0, address, a) + newSet(1, address, b) + [.leSetExtendedAdvertisingEnable(true, handles: [0, 1])]))
        // Nothing on a clock: the controller repeats both sets by itself.
        #expect(await radio.tickPeriod(shared: false) == nil)
        // A step for another reason (scanning) leaves advertising alone.
        await radio.setScanning(true)
        #expect(try await next(fake, 2).map(\.opcode) == [.leSetExtendedScanParameters, .leSetExtendedScanEnable])
        // Idle: no clock (above) and nothing queued. A later step is the barrier: the next command
        // the controller gets is the one that step asks for, nothing before it.
        #expect(await radio.tickPeriod(shared: false) == nil)
        let before = fake.log.count
        await radio.setScanning(false)
        let marker = try await FakeControllerWaiting.next(fake.sent)
        #expect(marker.opcode == .leSetExtendedScanEnable && fake.log.count == before + 1,
                "commands while idle: \(fake.log.dropFirst(before).map(\.opcode))")
    }

    @Test func aChangedPayloadTouchesOnlyItsSet() async throws {
        let loop = try EventLoop(name: "radio-test")
        defer { loop.shutdown() }
        let (radio, task, fake, _) = try await start(sets: 4, loop: loop)
        defer { task.cancel() }
        await radio.setAdvertisements([a, b])
        _ = try await next(fake, 7)
        // a stays where it is; c replaces b on set 1 while set 0 keeps advertising.
        await radio.setAdvertisements([c, a])
        #expect(try await next(fake, 3) == [
            .leSetExtendedAdvertisingEnable(false, handles: [1]), try .leSetExtendedAdvertisingData(c, handle: 1),
            .leSetExtendedAdvertisingEnable(true, handles: [1]),
        ])
    }

    @Test func anAddressRotationTurnsEverySetOffAndOnTogether() async throws {
        let loop = try EventLoop(name: "radio-test")
        defer { loop.shutdown() }
        let (radio, task, fake, _) = try await start(sets: 4, loop: loop)
        defer { task.cancel() }
        await radio.setAdvertisements([a, b])
        let first = try await next(fake, 7)
        await radio.setAdvertisements([b, c], rotatingAddress: true)
        let rotation = try await next(fake, 5)
        let address = BDAddress(littleEndianBytes: rotation[1].parameters.dropFirst())
        #expect(address != BDAddress(littleEndianBytes: first[1].parameters.dropFirst()))
        // b keeps set 1 (only its address changes); every set has the new address before any is on again.
        #expect(rotation == [
            .leSetExtendedAdvertisingEnable(false, handles: [0, 1]),
            .leSetAdvertisingSetRandomAddress(address, handle: 0), try .leSetExtendedAdvertisingData(c, handle: 0),
            .leSetAdvertisingSetRandomAddress(address, handle: 1),
            .leSetExtendedAdvertisingEnable(true, handles: [0, 1]),
        ])
    }

    @Test func setsNoPayloadNeedsAreRemovedAndClearedWhenAllGo() async throws {
        let loop = try EventLoop(name: "radio-test")
        defer { loop.shutdown() }
        let (radio, task, fake, _) = try await start(sets: 4, loop: loop)
        defer { task.cancel() }
        await radio.setAdvertisements([a, b, c])
        _ = try await next(fake, 10)
        await radio.setAdvertisements([c])
        // c moves to set 0 (sets stay 0…n-1): 0 changes, 1 and 2 go.
        #expect(try await next(fake, 5) == [
            .leSetExtendedAdvertisingEnable(false, handles: [0, 1, 2]), .leRemoveAdvertisingSet(2), .leRemoveAdvertisingSet(1),
            try .leSetExtendedAdvertisingData(c, handle: 0), .leSetExtendedAdvertisingEnable(true, handles: [0]),
        ])
        await radio.setAdvertisements([a, b])
        _ = try await next(fake, 6)   // off 0, data a on 0, set 1 (parameters, address, data), on 0 and 1
        await radio.setAdvertisements([])
        #expect(try await next(fake, 2) == [.leSetExtendedAdvertisingEnable(false, handles: [0, 1]), .leClearAdvertisingSets])
    }

    @Test func aSharedControllerLosesOnlyOurSetsOneByOne() async throws {
        let loop = try EventLoop(name: "radio-test")
        defer { loop.shutdown() }
        let (radio, task, fake, _) = try await start(sets: 4, shared: true, loop: loop)
        defer { task.cancel() }
        await radio.setAdvertisements([a, b])
        _ = try await nextSkippingProbes(fake, 7)
        await radio.setAdvertisements([])
        #expect(try await nextSkippingProbes(fake, 3) == [
            .leSetExtendedAdvertisingEnable(false, handles: [0, 1]), .leRemoveAdvertisingSet(1), .leRemoveAdvertisingSet(0),
        ])
    }

    @Test func morePayloadsThanSetsRotateOneSet() async throws {
        let loop = try EventLoop(name: "radio-test")
        defer { loop.shutdown() }
        let (radio, task, fake, _) = try await start(sets: 2, loop: loop)
        defer { task.cancel() }
        await radio.setAdvertisements([a, b])
        let sent = try await next(fake, 7)
        let address = BDAddress(littleEndianBytes: sent[1].parameters.dropFirst())
        await radio.setAdvertisements([a, b, c])
        // c is new, so it goes first, on set 0; set 1 goes; then set 0 rotates every interval.
        #expect(try await next(fake, 4) == [
            .leSetExtendedAdvertisingEnable(false, handles: [0, 1]), .leRemoveAdvertisingSet(1),
            try .leSetExtendedAdvertisingData(c, handle: 0), .leSetExtendedAdvertisingEnable(true, handles: [0]),
        ])
        #expect(await radio.tickPeriod(shared: false) == .milliseconds(20))
        for payload in [a, b, c] {
            #expect(try await next(fake, 3) == [
                .leSetExtendedAdvertisingEnable(false, handles: [0]), try .leSetExtendedAdvertisingData(payload, handle: 0),
                .leSetExtendedAdvertisingEnable(true, handles: [0]),
            ])
        }
        let addresses = fake.log.filter { $0.opcode == .leSetAdvertisingSetRandomAddress }
        #expect(addresses.allSatisfy { BDAddress(littleEndianBytes: $0.parameters.dropFirst()) == address })
    }

    @Test func aControllerThatCannotCountItsSetsGetsOne() async throws {
        let loop = try EventLoop(name: "radio-test")
        defer { loop.shutdown() }
        let (radio, task, fake, info) = try await start(sets: nil, loop: loop)
        defer { task.cancel() }
        #expect(info.usesExtendedAdvertising)
        #expect(await radio.link?.advertisingSets == 1)
        await radio.setAdvertisements([a, b])
        _ = try await next(fake, 4)   // set 0: parameters, address, a, on
        #expect(try await next(fake, 3) == [
            .leSetExtendedAdvertisingEnable(false, handles: [0]), try .leSetExtendedAdvertisingData(b, handle: 0),
            .leSetExtendedAdvertisingEnable(true, handles: [0]),
        ])
    }
}
