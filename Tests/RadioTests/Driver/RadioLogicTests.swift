import Synchronization
import SystemCall
import TestSupport
import Testing

@testable import Radio

/// The radio's advertiser, scanner and reconnection logic against fake controllers.
@Suite struct RadioLogicTests {
    /// Hands out fake controllers one connection at a time; `failures` first attempts fail.
    final class FakeDevice: Sendable {
        let connections: AsyncStream<FakeController>
        private let sink: AsyncStream<FakeController>.Continuation
        private let state: Mutex<(attempts: Int, failures: Int)>
        let responder: @Sendable (HCICommand) -> FakeController.Response
        let shared: Bool

        init(
            failures: Int = 0, shared: Bool = false,
            responder: @escaping @Sendable (HCICommand) -> FakeController.Response = FakeController.btvirtLike
        ) {
            (connections, sink) = AsyncStream.makeStream()
            state = Mutex((0, failures))
            self.responder = responder
            self.shared = shared
        }

        var attempts: Int { state.withLock { $0.attempts } }

        func failNext(_ count: Int) { state.withLock { $0.failures = count } }

        func open() throws(RadioError) -> any HCITransport {
            let fail = state.withLock { state -> Bool in
                state.attempts += 1
                guard state.failures > 0 else { return false }
                state.failures -= 1
                return true
            }
            if fail { throw RadioError.system("connect", device: "fake", errno: Errno(rawValue: 2)) }
            let fake = FakeController(ownsController: !shared, responder: responder)
            sink.yield(fake)
            return fake
        }
    }

    /// A radio on `loop`, which the test made (as the gateway gives the radio its loop) and shuts down.
    func makeRadio(_ device: FakeDevice, interval: Duration = .milliseconds(20), loop: EventLoop) -> Radio {
        Radio(
            name: "fake",
            configuration: RadioConfiguration(
                advertisingInterval: interval, commandTimeout: .seconds(5), reconnectInitialDelay: .milliseconds(1),
                reconnectMaximumDelay: .milliseconds(10)),
            logger: quietLogger, loop: loop
        ) { _, _ throws(RadioError) in try device.open() }
    }

    /// A radio on `device` that has come up, with its controller's reset and three reads consumed.
    func started(_ device: FakeDevice, interval: Duration, loop: EventLoop) async throws -> (Radio, Task<Void, Never>, FakeController) {
        let radio = makeRadio(device, interval: interval, loop: loop)
        let task = Task { await radio.run() }
        do {
            _ = try await first("up", in: radio.events) { $0.upInfo }
            let fake = try await first("connection", in: device.connections) { $0 }
            _ = try await commands(fake, 4)
            return (radio, task, fake)
        } catch {
            task.cancel()
            throw error
        }
    }

    /// The next `count` commands the fake was sent.
    func commands(_ fake: FakeController, _ count: Int) async throws -> [HCICommand] {
        var out: [HCICommand] = []
        for _ in 0..<count { out.append(try await FakeControllerWaiting.next(fake.sent)) }
        return out
    }

    @Test func comingUpResetsAndReadsTheController() async throws {
        let device = FakeDevice()
        let loop = try EventLoop(name: "radio-test")
        defer { loop.shutdown() }
        let radio = makeRadio(device, loop: loop)
        let task = Task { await radio.run() }
        defer { task.cancel() }
        let info = try await first("up", in: radio.events) { $0.upInfo }
        #expect(info.hciVersion == 9)
        #expect(info.manufacturer == 0x05F1)
        #expect(info.publicAddress == BDAddress("00:AA:01:02:00:42"))
        #expect(!info.usesExtendedAdvertising)
        let fake = try await first("connection", in: device.connections) { $0 }
        #expect(try await commands(fake, 4).map(\.opcode) == [.reset, .readLocalVersion, .leReadLocalSupportedFeatures, .readBDAddress])
    }

    @Test func aControllerSharedWithTheKernelIsNotReset() async throws {
        let device = FakeDevice(shared: true)
        let loop = try EventLoop(name: "radio-test")
        defer { loop.shutdown() }
        let radio = makeRadio(device, loop: loop)
        let task = Task { await radio.run() }
        defer { task.cancel() }
        _ = try await first("up", in: radio.events) { $0.upInfo }
        let fake = try await first("connection", in: device.connections) { $0 }
        #expect(try await commands(fake, 2) == [.leSetAdvertisingEnable(false), .leSetScanEnable(false)])
        #expect(!fake.log.contains(.reset))
    }

    @Test func legacyAdvertisingRotatesPayloadsByReenabling() async throws {
        let device = FakeDevice()
        let loop = try EventLoop(name: "radio-test")
        defer { loop.shutdown() }
        let radio = makeRadio(device, loop: loop)
        let task = Task { await radio.run() }
        defer { task.cancel() }
        _ = try await first("up", in: radio.events) { $0.upInfo }
        let fake = try await first("connection", in: device.connections) { $0 }
        _ = try await commands(fake, 4)
        let a: [UInt8] = [0x02, 0x01, 0x06]
        let b: [UInt8] = [0x03, 0xFF, 0xFF, 0xFF]
        await radio.setAdvertisements([a, b])
        let first = try await commands(fake, 4)
        #expect(first.map(\.opcode) == [.leSetRandomAddress, .leSetAdvertisingParameters, .leSetAdvertisingData, .leSetAdvertisingEnable])
        let address = BDAddress(littleEndianBytes: first[0].parameters)
        #expect(address.isRandomStatic)
        #expect(first[1].parameters[4] == 0x03, "ADV_NONCONN_IND")
        #expect(first[1].parameters[5] == AddressType.random.rawValue, "own address type random")
        #expect(first[2] == (try HCICommand.leSetAdvertisingData(a)))
        // Each step: disable, the other payload, enable.
        #expect(try await commands(fake, 3) == [.leSetAdvertisingEnable(false), try .leSetAdvertisingData(b), .leSetAdvertisingEnable(true)])
        #expect(try await commands(fake, 3) == [.leSetAdvertisingEnable(false), try .leSetAdvertisingData(a), .leSetAdvertisingEnable(true)])
        // Silence.
        await radio.setAdvertisements([])
        #expect(try await FakeControllerWaiting.next(fake.sent) == .leSetAdvertisingEnable(false))
    }

    @Test func aSinglePayloadIsReannouncedEveryInterval() async throws {
        let device = FakeDevice()
        let loop = try EventLoop(name: "radio-test")
        defer { loop.shutdown() }
        let radio = makeRadio(device, loop: loop)
        let task = Task { await radio.run() }
        defer { task.cancel() }
        _ = try await first("up", in: radio.events) { $0.upInfo }
        let fake = try await first("connection", in: device.connections) { $0 }
        _ = try await commands(fake, 4)
        await radio.setAdvertisements([[0x02, 0x01, 0x06]])
        _ = try await commands(fake, 4)
        // btvirt reports once per enable: the same data is not sent again, but re-enabled.
        #expect(try await commands(fake, 2) == [.leSetAdvertisingEnable(false), .leSetAdvertisingEnable(true)])
        #expect(try await commands(fake, 2) == [.leSetAdvertisingEnable(false), .leSetAdvertisingEnable(true)])
    }

    @Test func rotatingTheAddressPausesLegacyScanning() async throws {
        let device = FakeDevice()
        let loop = try EventLoop(name: "radio-test")
        defer { loop.shutdown() }
        let (radio, task, fake) = try await started(device, interval: .seconds(60), loop: loop)
        defer { task.cancel() }
        await radio.setScanning(true)
        #expect(try await commands(fake, 2).map(\.opcode) == [.leSetScanParameters, .leSetScanEnable])
        await radio.setAdvertisements([[0x02, 0x01, 0x06]])
        // The first address also needs scanning paused.
        #expect(try await commands(fake, 3).map(\.opcode) == [.leSetScanEnable, .leSetRandomAddress, .leSetScanEnable])
        _ = try await commands(fake, 3)  // parameters, data, enable
        await radio.rotateAddress()
        let rotation = try await commands(fake, 5)
        #expect(rotation == [
            .leSetAdvertisingEnable(false), .leSetScanEnable(false), rotation[2], .leSetScanEnable(true), .leSetAdvertisingEnable(true),
        ])
        #expect(rotation[2].opcode == .leSetRandomAddress)
    }

    @Test func newPayloadsAndANewAddressGoOutTogether() async throws {
        let device = FakeDevice()
        let loop = try EventLoop(name: "radio-test")
        defer { loop.shutdown() }
        let (radio, task, fake) = try await started(device, interval: .seconds(60), loop: loop)
        defer { task.cancel() }
        await radio.setAdvertisements([[0x02, 0x01, 0x06]])
        let initial = try await commands(fake, 4)
        await radio.setAdvertisements([[0x02, 0x01, 0x04]], rotatingAddress: true)
        let rotation = try await commands(fake, 4)
        #expect(rotation.map(\.opcode) == [.leSetAdvertisingEnable, .leSetRandomAddress, .leSetAdvertisingData, .leSetAdvertisingEnable])
        #expect(rotation[1] != initial[0], "a different address")
        #expect(rotation[2] == (try .leSetAdvertisingData([0x02, 0x01, 0x04])))
    }

    /// A rotation asked for while a step is still waiting for its enable to be answered (a
    /// scanner may hear that enable before we do) gets the next step; the step in flight must not
    /// take it as done.
    @Test func aRotationAskedForDuringAStepIsNotLost() async throws {
        let held = Counter()
        let device = FakeDevice { command in
            // The first advertising enable is answered only when the test says so.
            if command == .leSetAdvertisingEnable(true) && held.value == 0 {
                held.increment()
                return .none
            }
            return FakeController.btvirtLike(command)
        }
        let loop = try EventLoop(name: "radio-test")
        defer { loop.shutdown() }
        let (radio, task, fake) = try await started(device, interval: .seconds(60), loop: loop)
        defer { task.cancel() }
        await radio.setAdvertisements([[0x02, 0x01, 0x06]])
        let initial = try await commands(fake, 4)
        #expect(initial.last == .leSetAdvertisingEnable(true))
        await radio.rotateAddress()
        fake.answer(.leSetAdvertisingEnable, .complete())
        let rotation = try await commands(fake, 3)
        #expect(rotation.map(\.opcode) == [.leSetAdvertisingEnable, .leSetRandomAddress, .leSetAdvertisingEnable])
        #expect(rotation[1] != initial[0], "a different address")
    }

    @Test func extendedControllersGetTheExtendedCommands() async throws {
        let device = FakeDevice(responder: FakeController.extendedCapable)
        let loop = try EventLoop(name: "radio-test")
        defer { loop.shutdown() }
        let radio = makeRadio(device, interval: .seconds(60), loop: loop)
        let task = Task { await radio.run() }
        defer { task.cancel() }
        let info = try await first("up", in: radio.events) { $0.upInfo }
        #expect(info.usesExtendedAdvertising)
        let fake = try await first("connection", in: device.connections) { $0 }
        _ = try await commands(fake, 6)  // reset, version, features, address, max data length, sets
        await radio.setScanning(true)
        #expect(try await commands(fake, 2).map(\.opcode) == [.leSetExtendedScanParameters, .leSetExtendedScanEnable])
        await radio.setAdvertisements([[0x02, 0x01, 0x06]])
        #expect(try await commands(fake, 4).map(\.opcode) == [
            .leSetExtendedAdvertisingParameters, .leSetAdvertisingSetRandomAddress, .leSetExtendedAdvertisingData,
            .leSetExtendedAdvertisingEnable,
        ])
    }

    @Test func aFeatureBitWithoutTheCommandsFallsBackToLegacy() async throws {
        let device = FakeDevice { command in
            command.opcode == .leReadLocalSupportedFeatures
                ? .complete(parameters: [0x0B, 0x10, 0, 0, 0, 0, 0, 0]) : FakeController.btvirtLike(command)
        }
        let loop = try EventLoop(name: "radio-test")
        defer { loop.shutdown() }
        let radio = makeRadio(device, loop: loop)
        let task = Task { await radio.run() }
        defer { task.cancel() }
        let info = try await first("up", in: radio.events) { $0.upInfo }
        #expect(!info.usesExtendedAdvertising)
        #expect(info.leFeatures & LEFeature.extendedAdvertising != 0)
    }

    @Test func reportsBecomeSightingsAndBadOnesAreCounted() async throws {
        let device = FakeDevice()
        let loop = try EventLoop(name: "radio-test")
        defer { loop.shutdown() }
        let radio = makeRadio(device, loop: loop)
        let task = Task { await radio.run() }
        defer { task.cancel() }
        _ = try await first("up", in: radio.events) { $0.upInfo }
        let fake = try await first("connection", in: device.connections) { $0 }
        fake.inject(hex("3e0f02010301c101020304c50306ffff7f"))  // lying AD length inside a valid report
        fake.inject(hex("3e1502010301c101020304c50902010605ffffff01027f"))
        let sighting = try await first("sighting", in: radio.events) { $0.sighting }
        #expect(sighting.raw == [0x02, 0x01, 0x06, 0x05, 0xFF, 0xFF, 0xFF, 0x01, 0x02])
        #expect(sighting.rssi == nil)
        #expect(radio.statistics.malformedAdverts == 1)
    }

    @Test func anOutageIsReportedOnceAndStateIsRestoredOnReconnect() async throws {
        let device = FakeDevice(failures: 3)
        let loop = try EventLoop(name: "radio-test")
        defer { loop.shutdown() }
        let radio = makeRadio(device, loop: loop)
        let task = Task { await radio.run() }
        defer { task.cancel() }
        // Three failed attempts before the first success: one `down`, then `up`.
        let downs = Counter()
        _ = try await first("up", in: radio.events) { event -> ControllerInfo? in
            if event.downError != nil { downs.increment() }
            return event.upInfo
        }
        #expect(downs.value == 1)
        #expect(device.attempts == 4)
        let payload: [UInt8] = [0x02, 0x01, 0x06]
        await radio.setAdvertisements([payload])
        await radio.setScanning(true)
        let firstFake = try await first("connection", in: device.connections) { $0 }

        // The controller vanishes, and the next five reconnects fail.
        device.failNext(5)
        let cause = RadioError(kind: .unavailable, device: "fake", operation: "read", message: "the controller closed the connection")
        firstFake.vanish(cause)
        let down = try await first("down", in: radio.events) { $0.downError }
        #expect(down == cause)
        let moreDowns = Counter()
        _ = try await first("up again", in: radio.events) { event -> ControllerInfo? in
            if event.downError != nil { moreDowns.increment() }
            return event.upInfo
        }
        #expect(moreDowns.value == 0)
        #expect(device.attempts == 10)
        // The new controller is reset and gets the scanning and advertisements back.
        let secondFake = try await first("connection", in: device.connections) { $0 }
        let restored = try await commands(secondFake, 12).map(\.opcode)
        #expect(restored.starts(with: [.reset]))
        #expect(restored.contains(.leSetScanEnable))
        #expect(restored.contains(.leSetAdvertisingData))
        #expect(secondFake.log.contains(try .leSetAdvertisingData(payload)))
    }

    @Test func aHardwareErrorResetsTheController() async throws {
        let device = FakeDevice()
        let loop = try EventLoop(name: "radio-test")
        defer { loop.shutdown() }
        let radio = makeRadio(device, loop: loop)
        let task = Task { await radio.run() }
        defer { task.cancel() }
        _ = try await first("up", in: radio.events) { $0.upInfo }
        let fake = try await first("connection", in: device.connections) { $0 }
        fake.inject([0x10, 0x01, 0x42])
        let down = try await first("down", in: radio.events) { $0.downError }
        #expect(down.kind == .controller)
        #expect(down.message.contains("0x42"))
        _ = try await first("up after reset", in: radio.events) { $0.upInfo }
        let next = try await first("new connection", in: device.connections) { $0 }
        #expect(try await FakeControllerWaiting.next(next.sent) == .reset)
    }

    @Test func overlongPayloadsAreRefusedAndCounted() async throws {
        let device = FakeDevice()
        let loop = try EventLoop(name: "radio-test")
        defer { loop.shutdown() }
        let radio = makeRadio(device, loop: loop)
        await radio.setAdvertisements([[UInt8](repeating: 1, count: 32), [0x02, 0x01, 0x06]])
        #expect(radio.statistics.refusedAdvertisements == 1)
        #expect(await radio.advertisements == [[0x02, 0x01, 0x06]])
    }
}
