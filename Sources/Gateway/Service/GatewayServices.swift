import Config
import Logging
import MQTT
import NearbyProtocol
import ServiceLifecycle
import UnixSignals

/// `nearby-gateway run`: the parts, assembled from one config (a part that cannot start refuses the
/// start before anything runs), as the services of one ServiceGroup in start-up order. The group
/// shuts them down in reverse: the manager (off the air, state flushed), the MQTT bridge (after the
/// manager's last events), the audio, the LEDs (dark), and the socket last.
public enum GatewayServices {
    public static func assemble(config: GatewayConfig, board: Board, logLevel: SharedLogLevel,
                                logger: Logger) async throws -> [ServiceGroupConfiguration.ServiceConfiguration] {
        // Trapped before anything starts: a SIGHUP during start-up must not end the process (its
        // default action), only reload once the parts run.
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        let parts = try await GatewayParts.assemble(config: config, board: board, logLevel: logLevel, logger: logger)
        let start = StartSequence()
        var services: [any Service] = [LoopService(parts: parts), SocketService(parts: parts, start: start), PartService.leds(parts), PartService.audio(parts)]
        if let bridge = parts.mqtt { services.append(PartService.mqtt(parts, bridge)) }
        services.append(CoreService(parts: parts, config: config, board: board, hangups: hangups, start: start,
                                    logger: logger))
        // A part that ends or fails on its own shuts the whole gateway down in order, never half of it.
        return services.map {
            .init(service: $0, successTerminationBehavior: .gracefullyShutdownGroup,
                  failureTerminationBehavior: .gracefullyShutdownGroup)
        }
    }
}

/// The two steps of start-up that cross services: the manager has announced the restored state, then
/// the socket serves (and only then is systemd told READY).
struct StartSequence: Sendable {
    let announced = OneShot()
    let serving = OneShot()
}

/// A signal given once by one service and awaited by one other.
struct OneShot: Sendable {
    private let stream: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    init() {
        (stream, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    func fire() {
        continuation.yield()
        continuation.finish()
    }

    /// True once fired; false if the waiting task was cancelled first.
    func wait() async -> Bool {
        for await _ in stream { return true }
        return false
    }
}
