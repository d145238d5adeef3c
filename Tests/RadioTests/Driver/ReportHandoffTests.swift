import Synchronization
import SystemCall
import TestSupport
import Testing

@testable import Radio

#if canImport(Glibc)
import Glibc
#endif

/// A read's advertising reports go from the transport to the radio's owner in one call on the loop
/// (docs/architecture.md, "Concurrency"): no queue and no task resumption per report.
@Suite struct ReportHandoffTests {
    /// One LE Advertising Report event (one report), as H4: `RadioLogicTests`' well-formed report.
    static let reportPacket: [UInt8] = [0x04] + hex("3e1502010301c101020304c50902010605ffffff01027f")

    @Test func aReadsReportsReachTheControllersHandlerInOneCallOnTheLoop() async throws {
        var fds: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        let loop = try EventLoop(name: "handoff-test")
        defer { loop.shutdown() }
        let transport = try FileDescriptorTransport(fd: fds[0], device: "pair", loop: loop)
        let (calls, call) = AsyncStream<(events: Int, reports: Int, onLoop: Bool)>.makeStream()
        let controller = HCIController(transport: transport, commandTimeout: .seconds(60), loop: loop) { batch in
            call.yield((batch.count, batch.reduce(0) { $0 + $1.count }, loop.isCurrent))
        }
        let pump = Task(executorPreference: loop) { try await controller.run() }
        defer {
            pump.cancel()
            transport.close()
            Glibc.close(fds[1])
        }
        // The pump's first turn, queued on the loop before this, has made the transport hand reads over.
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in loop.execute { done.resume() } }
        let events = 10
        let bytes = Array((0..<events).map { _ in Self.reportPacket }.joined())
        #expect(bytes.withUnsafeBytes { Glibc.write(fds[1], $0.baseAddress!, $0.count) } == bytes.count)
        let handed = try await first("the reports", in: calls) { $0 }
        #expect(handed.events == events)
        #expect(handed.reports == events)
        #expect(handed.onLoop)
    }

    @Test func theRadioHandsSightingsToItsHandlerAndCountsWhatItDropped() async throws {
        let device = RadioLogicTests.FakeDevice()
        let loop = try EventLoop(name: "handoff-test")
        defer { loop.shutdown() }
        let radio = RadioLogicTests().makeRadio(device, loop: loop)
        let (batches, batch) = AsyncStream<[Sighting]>.makeStream()
        let calls = Mutex(0)
        radio.handSightings { sightings in
            batch.yield(sightings)
            // The first call says it had no room for two sightings.
            return calls.withLock { calls in
                calls += 1
                return calls == 1 ? 2 : 0
            }
        }
        let task = Task { await radio.run() }
        defer { task.cancel() }
        _ = try await first("up", in: radio.events) { $0.upInfo }
        let fake = try await first("connection", in: device.connections) { $0 }
        fake.inject(Array(Self.reportPacket.dropFirst()))
        fake.inject(Array(Self.reportPacket.dropFirst()))
        var raws: [[UInt8]] = []
        for await sightings in batches {
            raws += sightings.map(\.raw)
            if raws.count == 2 { break }
        }
        #expect(raws == Array(repeating: [0x02, 0x01, 0x06, 0x05, 0xFF, 0xFF, 0xFF, 0x01, 0x02], count: 2))
        // Recorded on the loop after the first call returned, before the second call.
        #expect(radio.statistics.overflowed == 2)
    }
}
