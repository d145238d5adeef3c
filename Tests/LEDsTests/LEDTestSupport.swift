import Foundation
import Logging
import Synchronization
import TestSupport
import Testing
@testable import LEDs

/// A clock that moves only when the test says so; sleepers wake in `advance`.
final class ManualClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var nextID = 0
        var sleepers: [Int: Sleeper] = [:]
    }

    private let state = Mutex(State())

    var now: Instant { state.withLock { $0.now } }
    var minimumResolution: Duration { .zero }
    var elapsed: Duration { now.offset }
    var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let immediate: Result<Void, any Error>? = state.withLock { state in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if deadline <= state.now { return .success(()) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return nil
                }
                if let immediate { continuation.resume(with: immediate) }
            }
        } onCancel: {
            let sleeper = state.withLock { $0.sleepers.removeValue(forKey: id) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    func advance(by duration: Duration) {
        let due = state.withLock { state -> [Sleeper] in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let due = state.sleepers.filter { $0.value.deadline <= now }
            for id in due.keys { state.sleepers.removeValue(forKey: id) }
            return Array(due.values)
        }
        for sleeper in due { sleeper.continuation.resume() }
    }
}

/// An append-only log that tests can wait on ("wait for the expected event with a deadline").
final class EventLog<Element: Sendable>: Sendable {
    private struct State {
        var items: [Element] = []
        var waiters: [Int: (count: Int, continuation: CheckedContinuation<Void, Never>)] = [:]
        var nextID = 0
    }

    private let state = Mutex(State())

    var items: [Element] { state.withLock { $0.items } }

    func append(_ item: Element) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.items.append(item)
            let ready = state.waiters.filter { $0.value.count <= state.items.count }
            for id in ready.keys { state.waiters.removeValue(forKey: id) }
            return ready.values.map(\.continuation)
        }
        for continuation in ready { continuation.resume() }
    }

    /// The first `count` items, once there are that many; fails after `timeout` of real time.
    func first(_ count: Int, timeout: Duration = .seconds(10)) async throws -> [Element] {
        try await withDeadline(timeout, waitingFor: { "\(count) events, have \(self.items)" }) {
            await self.waitFor(count)
            return Array(self.items.prefix(count))
        }
    }

    private func waitFor(_ count: Int) async {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let done = state.withLock { state -> Bool in
                    if state.items.count >= count || Task.isCancelled { return true }
                    state.waiters[id] = (count, continuation)
                    return false
                }
                if done { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.continuation.resume()
        }
    }
}

/// One LED change as an output saw it, stamped with the manual clock.
struct LEDChange: Sendable, Hashable, CustomStringConvertible {
    var at: Duration
    var led: String
    var on: Bool

    init(_ at: Duration, _ led: String, _ on: Bool) {
        self.at = at
        self.led = led
        self.on = on
    }

    var description: String { "\(at) \(led) \(on ? "on" : "off")" }
}

/// A fake `LEDOutput` recording every write with the time it happened.
final class RecordingLEDOutput: LEDOutput {
    let ledNames: Set<String>
    let log = EventLog<LEDChange>()
    private let clock: ManualClock
    private let released = Mutex(0)
    private let failure: GPIOError?

    init(_ names: Set<String> = ["status", "found", "lost", "error"], clock: ManualClock, failing failure: GPIOError? = nil) {
        ledNames = names
        self.clock = clock
        self.failure = failure
    }

    var releaseCount: Int { released.withLock { $0 } }

    func set(_ led: String, on: Bool) throws(GPIOError) {
        if let failure { throw failure }
        log.append(LEDChange(clock.elapsed, led, on))
    }

    func releaseAll() {
        released.withLock { $0 += 1 }
    }
}

/// A fake `LEDLine` for the GPIO output's bookkeeping.
final class FakeLEDLine: LEDLine {
    private let state = Mutex<(values: [Bool], released: Bool)>(([], false))
    var values: [Bool] { state.withLock { $0.values } }
    var isReleased: Bool { state.withLock { $0.released } }

    func set(_ on: Bool) throws(GPIOError) {
        state.withLock { $0.values.append(on) }
    }

    func release() {
        state.withLock { $0.released = true }
    }
}

/// Collects log messages so tests can check the one line that explains simulated LEDs.
struct CapturingLogHandler: LogHandler {
    let messages: EventLog<String>
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        messages.append("\(event.level): \(event.message)")
    }
}

extension Logger {
    static func capturing(_ messages: EventLog<String>) -> Logger {
        Logger(label: "test") { _ in CapturingLogHandler(messages: messages) }
    }

    static let quiet = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
}
