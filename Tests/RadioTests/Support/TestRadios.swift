import Logging
import Synchronization
import SystemCall

@testable import Radio

/// btvirt's LE server on /tmp: the private air's that scripts/test runs the unit tests in (scripts/private-air).
let sharedAir = RadioDevice.h4(path: "/tmp/bt-server-le")

/// Random bytes so a test recognises its own adverts on the shared air.
func uniqueBytes(_ count: Int) -> [UInt8] {
    var generator = SystemRandomNumberGenerator()
    return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
}

let quietLogger = Logger(label: "radio-test") { _ in SwiftLogNoOpLogHandler() }

/// Runs `body` with running radios that have come up, each on a loop of its own as each gateway's
/// radio is; stops them afterwards.
func withRadios(
    _ count: Int, device: RadioDevice = sharedAir, configuration: RadioConfiguration = RadioConfiguration(),
    _ body: ([Radio]) async throws -> Void
) async throws {
    let loops = try (0..<count).map { try EventLoop(name: "radio-\($0)") }
    defer { loops.forEach { $0.shutdown() } }
    let radios = loops.map { Radio(device: device, configuration: configuration, logger: quietLogger, loop: $0) }
    let tasks = radios.map { radio in Task { await radio.run() } }
    defer { tasks.forEach { $0.cancel() } }
    for radio in radios {
        // A `down` first means there is no controller at all (no btvirt on /tmp: the tests were not run in
        // `scripts/private-air`): fail at once with its cause instead of waiting out the deadline.
        let outcome = try await first("controller up on \(device)", in: radio.events) { event -> Result<ControllerInfo, RadioError>? in
            if let info = event.upInfo { return .success(info) }
            return event.downError.map { .failure($0) }
        }
        if case .failure(let error) = outcome {
            throw NoController(device: device, cause: error)
        }
    }
    try await body(radios)
}

/// A log handler that hands every message to a stream, so tests can wait for what the radio
/// logs (e.g. each failed reconnect) instead of sleeping.
struct StreamLogHandler: LogHandler {
    let sink: AsyncStream<String>.Continuation
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        sink.yield(event.message.description)
    }
}

struct NoController: Error, CustomStringConvertible {
    var device: RadioDevice
    var cause: RadioError
    var description: String { "no controller at \(device) (is btvirt running? run the tests in scripts/private-air): \(cause)" }
}

final class Counter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
