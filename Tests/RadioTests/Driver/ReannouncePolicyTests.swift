import Synchronization
import SystemCall
import Testing

@testable import Radio

/// Issue 18 §1: re-announcing by an enable every interval is btvirt's need, not a real controller's.
/// A controller that advertises periodically is left alone with a single payload, gets a data change
/// per step when rotating several, and a new payload goes on the air first.
@Suite struct ReannouncePolicyTests {
    typealias FakeDevice = RadioLogicTests.FakeDevice

    /// A Broadcom controller as a Pi 4's CYW43455 answers Read Local Version (manufacturer 0x000F,
    /// HCI 5.0): everything else as btvirt's legacy controller.
    @Sendable static func periodic(_ command: HCICommand) -> FakeController.Response {
        switch command.opcode {
        case .readLocalVersion: .complete(parameters: [0x09, 0x00, 0x01, 0x09, 0x0F, 0x00, 0x23, 0x61])
        default: FakeController.btvirtLike(command)
        }
    }

    private func start(_ device: FakeDevice, reannounce: ReannouncePolicy = .automatic, loop: EventLoop) async throws -> (Radio, Task<Void, Never>, FakeController, ControllerInfo) {
        let radio = Radio(
            name: "fake",
            configuration: RadioConfiguration(
                advertisingInterval: .milliseconds(20), commandTimeout: .seconds(5), reconnectInitialDelay: .milliseconds(1),
                reconnectMaximumDelay: .milliseconds(10), reannounce: reannounce),
            logger: quietLogger, loop: loop
        ) { _, _ throws(RadioError) in try device.open() }
        let task = Task { await radio.run() }
        let info = try await first("up", in: radio.events) { $0.upInfo }
        let fake = try await first("connection", in: device.connections) { $0 }
        for _ in 0..<4 { _ = try await FakeControllerWaiting.next(fake.sent) }   // reset and the three reads
        return (radio, task, fake, info)
    }

    private func next(_ fake: FakeController, _ count: Int) async throws -> [HCICommand] {
        var out: [HCICommand] = []
        for _ in 0..<count { out.append(try await FakeControllerWaiting.next(fake.sent)) }
        return out
    }

    @Test func btvirtIsRecognisedAndRealControllersAreNot() async throws {
        let loop = try EventLoop(name: "radio-test")
        defer { loop.shutdown() }
        let (_, emulated, _, info) = try await start(FakeDevice(), loop: loop)
        emulated.cancel()
        #expect(info.isBlueZEmulator)
        let (_, real, _, periodicInfo) = try await start(FakeDevice(responder: Self.periodic), loop: loop)
        real.cancel()
        #expect(!periodicInfo.isBlueZEmulator)
        #expect(periodicInfo.manufacturer == 0x000F)
    }

    @Test func aPeriodicControllerGetsASinglePayloadOnce() async throws {
        let loop = try EventLoop(name: "radio-test")
        defer { loop.shutdown() }
        let (radio, task, fake, _) = try await start(FakeDevice(responder: Self.periodic), loop: loop)
        defer { task.cancel() }
        let payload: [UInt8] = [0x02, 0x01, 0x06]
        await radio.setAdvertisements([payload])
        #expect(try await next(fake, 4).map(\.opcode)
                == [.leSetRandomAddress, .leSetAdvertisingParameters, .leSetAdvertisingData, .leSetAdvertisingEnable])
        // Steps still happen (scanning on, off, on): none of them touches advertising.
        for enabled in [true, false, true] {
            await radio.setScanning(enabled)
            var command = try await FakeControllerWaiting.next(fake.sent)
            if command.opcode == .leSetScanParameters { command = try await FakeControllerWaiting.next(fake.sent) }
            #expect(command == .leSetScanEnable(enabled), "a step re-announced the payload: \(command)")
        }
        // No clock at all (btvirt's controller would get an enable every interval), and nothing
        // queued: a later step is the barrier, the next command is the one it asks for.
        #expect(await radio.tickPeriod(shared: false) == nil)
        let before = fake.log.count
        await radio.setScanning(false)
        let marker = try await FakeControllerWaiting.next(fake.sent)
        #expect(marker == .leSetScanEnable(false) && fake.log.count == before + 1,
                "commands while idle: \(fake.log.dropFirst(before).map(\.opcode))")
        #expect(radio.statistics.commandsSent == fake.log.count)
    }

    @Test func theSameControllerForcedToReannounceGetsAnEnablePerInterval() async throws {
        let loop = try EventLoop(name: "radio-test")
        defer { loop.shutdown() }
        let (radio, task, fake, _) = try await start(FakeDevice(responder: Self.periodic), reannounce: .everyInterval, loop: loop)
        defer { task.cancel() }
        await radio.setAdvertisements([[0x02, 0x01, 0x06]])
        _ = try await next(fake, 4)
        #expect(try await next(fake, 2) == [.leSetAdvertisingEnable(false), .leSetAdvertisingEnable(true)])
        #expect(try await next(fake, 2) == [.leSetAdvertisingEnable(false), .leSetAdvertisingEnable(true)])
    }

    /// Issue 31: a legacy controller takes new data while it advertises, so a rotation step is the
    /// data alone (it was disable → data → enable, btvirt's need, three commands every interval).
    @Test func severalPayloadsRotateOnAPeriodicControllerByDataAloneAndANewOneGoesFirst() async throws {
        let loop = try EventLoop(name: "radio-test")
        defer { loop.shutdown() }
        let (radio, task, fake, _) = try await start(FakeDevice(responder: Self.periodic), loop: loop)
        defer { task.cancel() }
        let a: [UInt8] = [0x02, 0x01, 0x06], b: [UInt8] = [0x03, 0xFF, 0x01, 0x02], c: [UInt8] = [0x03, 0xFF, 0x03, 0x04]
        await radio.setAdvertisements([a, b])
        _ = try await next(fake, 4)   // address, parameters, a, enable
        #expect(try await next(fake, 3) == [try .leSetAdvertisingData(b), try .leSetAdvertisingData(a), try .leSetAdvertisingData(b)],
                "a rotation step is the data alone")
        let read = 4 + 4 + 3   // start's reset and reads, then the two reads above
        // The radio steps on its own thread, every 20 ms, while this task may wait long for Swift's
        // pool: skip what was sent before the call. The call is queued on the radio's thread at once,
        // so at most one step can start before it runs (a tick due in the same turn, or one under way).
        let sentBefore = fake.log.count
        await radio.setAdvertisements([a, b, c])
        _ = try await next(fake, sentBefore - read)
        var steps = [try await FakeControllerWaiting.next(fake.sent)]
        if steps[0] != (try .leSetAdvertisingData(c)) { steps.append(try await FakeControllerWaiting.next(fake.sent)) }
        // Wherever the rotation was, c comes next.
        #expect(steps.last == (try .leSetAdvertisingData(c)), "steps after the call: \(steps)")
        let enables = fake.log.dropFirst(4 + 4).filter { $0.opcode == .leSetAdvertisingEnable }
        #expect(enables.isEmpty, "advertising re-enabled while rotating: \(enables)")
    }
}

@Suite struct CommandRateTests {
    @Test func averagesTheLastTenWholeSeconds() {
        var rate = CommandRate()
        for second in Int64(0)..<10 { for _ in 0..<30 { rate.record(atSecond: second) } }
        #expect(rate.perSecond(atSecond: 10) == 30)
        #expect(rate.perSecond(atSecond: 15) == 15, "seconds 5…9 in the window, 0…4 out of it")
        for second in Int64(10)..<20 { for _ in 0..<3 { rate.record(atSecond: second) } }
        #expect(rate.perSecond(atSecond: 20) == 3)
        #expect(rate.perSecond(atSecond: 100) == 0)
    }
}
