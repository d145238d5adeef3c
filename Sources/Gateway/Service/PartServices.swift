import Broker
import LEDs
import MQTT
import Logging
import ServiceLifecycle

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

/// The front panel's patterns and the power input, until shutdown darkens the LEDs.
struct PanelService: Service, CustomStringConvertible {
    let parts: GatewayParts
    var description: String { "leds" }

    func run() async throws {
        await cancelWhenGracefulShutdown { await parts.runPanel() }
        await parts.panel.shutdown()
        parts.logger.debug("stopped", metadata: ["service": "leds"])
    }
}

/// The speaker's and microphone's threads and what they report.
struct AudioService: Service, CustomStringConvertible {
    let parts: GatewayParts
    var description: String { "audio" }

    func run() async throws {
        await cancelWhenGracefulShutdown { await parts.runAudio() }
        await parts.audio.stop()
        parts.logger.debug("stopped", metadata: ["service": "audio"])
    }
}

/// The MQTT bridge (with `[mqtt]` only). Stopped after the manager, so that the broker gets the
/// manager's last events, then `offline`.
struct MQTTService: Service, CustomStringConvertible {
    let parts: GatewayParts
    var description: String { "mqtt" }

    func run() async throws {
        await cancelWhenGracefulShutdown { await parts.runMQTT() }
        await parts.mqtt?.stop()
        parts.logger.debug("stopped", metadata: ["service": "mqtt"])
    }
}
