import Broker
import LEDs
import MQTT
import Logging
import ServiceLifecycle
import SystemCall

/// The socket: served once the manager has announced the restored state (so that an early client,
/// waiting in the listen backlog, never takes the start-up announcements for changes), closed last.
struct SocketService: Service, CustomStringConvertible {
    let parts: GatewayParts
    let start: StartSequence
    var description: String { "socket" }

    func run() async throws {
        defer { parts.logger.debug("stopped", metadata: ["service": "socket"]) }
        guard await cancelWhenGracefulShutdown({ await start.announced.wait() }) else {
            await parts.broker.stop()
            return
        }
        do {
            try parts.serveSocket()
        } catch {
            await parts.broker.stop()   // the socket file goes with the failed start
            throw error
        }
        start.serving.fire()
        try? await gracefulShutdown()
        await parts.broker.stop()
    }
}

/// A part that forwards what it reports until shutdown, then stops: the LEDs (the panel's patterns
/// and the power input; stopping darkens them), the speaker and microphone (their threads stop),
/// the MQTT bridge (with `[mqtt]` only; it says `offline` and joins its thread).
struct PartService: Service, CustomStringConvertible {
    let description: String
    let logger: Logger
    let forward: @Sendable () async -> Void
    let stop: @Sendable () async -> Void

    func run() async throws {
        await cancelWhenGracefulShutdown { await forward() }
        await stop()
        logger.debug("stopped", metadata: ["service": "\(description)"])
    }

    static func leds(_ parts: GatewayParts) -> PartService {
        PartService(description: "leds", logger: parts.logger, forward: parts.runPanel, stop: parts.panel.shutdown)
    }

    static func audio(_ parts: GatewayParts) -> PartService {
        PartService(description: "audio", logger: parts.logger, forward: parts.runAudio, stop: parts.audio.stop)
    }

    /// Stopped after the manager, so that the broker gets the manager's last events, then `offline`.
    static func mqtt(_ parts: GatewayParts, _ bridge: MQTTBridge) -> PartService {
        PartService(description: "mqtt", logger: parts.logger, forward: parts.runMQTT, stop: bridge.stop)
    }
}

/// The gateway's event loop: first in the group, so stopped last, after every part that runs on it
/// has stopped. Joining its thread blocks, so that happens on a thread of its own.
struct LoopService: Service, CustomStringConvertible {
    let parts: GatewayParts
    var description: String { "loop" }

    func run() async throws {
        try? await gracefulShutdown()
        await OwnThread.run("loop-stop") { [loop = parts.loop] in loop.shutdown() }
        parts.logger.debug("stopped", metadata: ["service": "loop"])
    }
}
