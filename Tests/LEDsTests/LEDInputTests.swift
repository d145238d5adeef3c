import Foundation
import Logging
import Synchronization
import SystemCall
import Testing
@testable import LEDs

/// A scripted input line: the test sets the level and raises an edge; `waitForEdge` blocks on a
/// condition like the kernel would.
final class FakeEventSource: GPIOEventSource, @unchecked Sendable {
    // NSCondition because the watcher blocks a real thread in waitForEdge, as with libgpiod.
    private let condition = NSCondition()
    private var currentLevel: Bool
    private var edges = 0
    private var released = false
    private var failure: GPIOError?
    /// One entry per `level()` call, so a test can wait until the watcher has read its initial level.
    let reads = EventLog<Bool>()

    init(level: Bool) {
        currentLevel = level
    }

    var description: String { "fake line" }

    var isReleased: Bool { condition.withLock { released } }

    func drive(_ level: Bool) {
        condition.withLock {
            currentLevel = level
            edges += 1
            condition.broadcast()
        }
    }

    func fail(with error: GPIOError) {
        condition.withLock {
            failure = error
            condition.broadcast()
        }
    }

    func waitForEdge(timeout: Duration) throws(GPIOError) -> Bool {
        let deadline = Date().addingTimeInterval(Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18)
        condition.lock()
        defer { condition.unlock() }
        while edges == 0 && failure == nil {
            if !condition.wait(until: deadline) { break }
        }
        if let failure { throw failure }
        guard edges > 0 else { return false }
        edges -= 1
        return true
    }

    func level() throws(GPIOError) -> Bool {
        let level = condition.withLock { currentLevel }
        reads.append(level)
        return level
    }

    func release() {
        condition.withLock { released = true }
    }
}

@Suite struct LEDInputTests {
    private func watcher(_ kind: InputLine.Kind, source: FakeEventSource, requests: EventLog<PowerRequest>, logger: Logger = .quiet) -> InputWatcher {
        InputWatcher(
            name: "power", input: InputLine(offset: 24, kind: kind, activeLow: true, debounce: .milliseconds(5)),
            source: source, logger: logger, pollInterval: .milliseconds(20)) { requests.append($0) }
    }

    @Test func aButtonPressTogglesAndItsReleaseDoesNot() async throws {
        let source = FakeEventSource(level: false)
        let requests = EventLog<PowerRequest>()
        let messages = EventLog<String>()
        let input = watcher(.button, source: source, requests: requests, logger: .capturing(messages))
        input.start()
        _ = try await source.reads.first(1)
        source.drive(true)
        #expect(try await requests.first(1) == [.toggle])
        source.drive(false)
        let logged = try await messages.first(2)
        #expect(logged[1].contains("released"))
        source.drive(true)
        #expect(try await requests.first(2) == [.toggle, .toggle])
        await input.stop()
        #expect(source.isReleased)
    }

    @Test func aPowerLevelLineSetsTheStateFromBootOn() async throws {
        let source = FakeEventSource(level: false)
        let requests = EventLog<PowerRequest>()
        let input = watcher(.powerLevel, source: source, requests: requests)
        input.start()
        #expect(try await requests.first(1) == [.set(.standby)])
        _ = try await source.reads.first(1)
        source.drive(true)
        #expect(try await requests.first(2) == [.set(.standby), .set(.active)])
        await input.stop()
        #expect(source.isReleased)
    }

    @Test func aFailingLineIsLoggedAndReleasedWithoutCrashing() async throws {
        let source = FakeEventSource(level: false)
        let messages = EventLog<String>()
        let input = watcher(.button, source: source, requests: EventLog<PowerRequest>(), logger: .capturing(messages))
        input.start()
        source.fail(with: GPIOError(kind: .chipGone, chip: "pinctrl-rp1", line: 24, call: "gpiod_line_event_wait", errno: Errno(rawValue: ENODEV)))
        let logged = try await messages.first(1)
        #expect(logged[0].contains("pinctrl-rp1"))
        #expect(logged[0].contains("line 24"))
        await input.stop()
        #expect(source.isReleased)
    }

    @Test func stoppingAWatcherThatNeverStartedReleasesItsLine() async {
        let source = FakeEventSource(level: false)
        let input = watcher(.button, source: source, requests: EventLog<PowerRequest>())
        await input.stop()
        input.start()
        #expect(source.isReleased)
    }

    @Test func thePanelStopsItsInputsOnShutdown() async throws {
        let source = FakeEventSource(level: false)
        let input = watcher(.button, source: source, requests: EventLog<PowerRequest>())
        let clock = ManualClock()
        let loop = try EventLoop(name: "panel-loop")
        defer { loop.shutdown() }
        let panel = LEDPanel(output: RecordingLEDOutput(clock: clock), inputs: [input], clock: clock, logger: .quiet, loop: loop)
        await panel.start()
        await panel.shutdown()
        #expect(source.isReleased)
    }
}
