import Config
import LEDs
import Logging
import NearbyProtocol
import Radio
import Synchronization
import SystemCall
import Testing
import TestSupport
@testable import Gateway

/// The radio hands the manager each read's sightings in one call on the gateway's loop
/// (`MessageManager.receive`): repeats are done in that call, and so are founds while the panel runs
/// on that loop; what needs an await (a found whose panel is elsewhere) and what follows it go to
/// one task, in order, through a bounded backlog.
@Suite struct SightingHandoffTests {
    final class Recorder: EventSink {
        let topics: AsyncStream<String>
        private let sink: AsyncStream<String>.Continuation
        private let published = Mutex<[String]>([])
        init() { (topics, sink) = AsyncStream.makeStream() }
        func publish(_ event: BrokerEvent) {
            published.withLock { $0.append(event.topic) }
            sink.yield(event.topic)
        }
        var all: [String] { published.withLock { $0 } }
    }

    /// The LED changes a simulated panel wrote.
    final class LEDRecorder: Sendable {
        private let changes = Mutex<[String]>([])
        func record(_ name: String, _ on: Bool) { changes.withLock { $0.append("\(name) \(on ? "on" : "off")") } }
        var all: [String] { changes.withLock { $0 } }
    }

    /// A simulated panel on `loop`: the manager's (as GatewayParts wires it), or another.
    static func panel(_ loop: EventLoop, _ leds: LEDRecorder) -> LEDPanel {
        let logger = Logger(label: "handoff-leds") { _ in SwiftLogNoOpLogHandler() }
        return LEDPanel(output: SimLEDOutput(ledNames: ["found"], logger: logger, sink: leds.record), logger: logger, loop: loop)
    }

    static func manager(_ loop: EventLoop, _ events: Recorder, panel: LEDPanel? = nil) -> MessageManager {
        // Lost after an hour: under qemu-aarch64 the test took 73 s, and FoundMemoryTests' 30 s lost
        // the beacons between its steps and found them again (4 founds, not 2).
        var beacons = FoundMemoryTests.beacons
        beacons.lostAfter = .seconds(3600)
        let settings = ManagerSettings(codec: FrameFixture.codec, publications: [], subscriptions: [beacons])
        // Never written: nothing here changes the state.
        let folder = "/tmp/handoff-\(UInt64.random(in: 0...UInt64.max))"
        return MessageManager(
            settings: settings, state: GatewayState(), stateFile: StateFile(path: folder + "/state.json"), air: nil, audio: nil,
            events: events, panel: panel, logLevel: SharedLogLevel(.info), logger: Logger(label: "handoff") { _ in SwiftLogNoOpLogHandler() },
            loop: loop)
    }

    /// Runs `body` on the loop, as the radio's read does, and returns its result.
    static func onLoop<T: Sendable>(_ loop: EventLoop, _ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { done in loop.execute { done.resume(returning: body()) } }
    }

    @Test func foundsAndTheirLEDsAreDoneInTheCallWhenThePanelRunsOnTheLoop() async throws {
        let loop = try EventLoop(name: "handoff-manager")
        defer { loop.shutdown() }
        let events = Recorder(), leds = LEDRecorder()
        let panel = Self.panel(loop, leds)
        let manager = Self.manager(loop, events, panel: panel)
        let now = ContinuousClock.now
        // Beacon 1 is new, repeats, then beacon 2 is new: one read, with no task left behind it.
        let read = [1, 1, 1, 2].map { FoundMemoryTests.sighting($0, at: now) }
        let (dropped, founds, lit, draining) = await Self.onLoop(loop) {
            let dropped = manager.receive(read)
            // Still in the radio's call: what a task would do later is done already.
            let draining = manager.assumeIsolated { $0.airBacklog.draining }
            return (dropped, events.all.filter { $0.hasPrefix("found/") }, leds.all, draining)
        }
        #expect(dropped == 0 && !draining)
        #expect(founds.count == 2 && founds[0] != founds[1])
        #expect(lit.first == "found on", "the first found lights the found LED in the same call")
        #expect(await manager.foundCount == 2)
        // Known beacons only: the whole read is ingested in the call, nothing left for a task.
        let later = ContinuousClock.now
        let repeats = (0..<100).map { FoundMemoryTests.sighting(1 + $0 % 2, at: later) }
        let (droppedNow, left, drainingNow) = await Self.onLoop(loop) {
            let dropped = manager.receive(repeats)
            return manager.assumeIsolated { (dropped, $0.airBacklog.count, $0.airBacklog.draining) }
        }
        #expect(droppedNow == 0 && left == 0 && !drainingNow)
        #expect(events.all.filter { $0.hasPrefix("found/") }.count == 2)
    }

    @Test func foundsGoThroughTheTaskInOrderWhenThePanelIsElsewhere() async throws {
        let loop = try EventLoop(name: "handoff-manager")
        defer { loop.shutdown() }
        let panelLoop = try EventLoop(name: "handoff-panel")
        defer { panelLoop.shutdown() }
        let events = Recorder(), leds = LEDRecorder()
        // The panel on another loop: a found's LEDs need an await.
        let manager = Self.manager(loop, events, panel: Self.panel(panelLoop, leds))
        let now = ContinuousClock.now
        let read = [1, 1, 1, 2].map { FoundMemoryTests.sighting($0, at: now) }
        let (dropped, draining) = await Self.onLoop(loop) {
            let dropped = manager.receive(read)
            return (dropped, manager.assumeIsolated { $0.airBacklog.draining })
        }
        #expect(dropped == 0 && draining)
        var topics: [String] = []
        for await topic in events.topics where topic.hasPrefix("found/") {
            topics.append(topic)
            if topics.count == 2 { break }
        }
        #expect(topics.count == 2 && topics[0] != topics[1])
        #expect(await manager.foundCount == 2)
    }

    @Test func theBacklogIsBoundedDropsTheOldestAndClosesForGood() {
        let now = ContinuousClock.now
        var backlog = AirBacklog(limit: 3)
        #expect(backlog.append(contentsOf: (0..<5).map { FoundMemoryTests.sighting($0, at: now) }) == 2)
        #expect(backlog.count == 3)
        #expect(backlog.popFirst()?.raw == FoundMemoryTests.sighting(2, at: now).raw)
        backlog.close()
        #expect(backlog.popFirst() == nil)
        #expect(backlog.append(contentsOf: [FoundMemoryTests.sighting(9, at: now)]) == 0 && backlog.count == 0)
    }
}
