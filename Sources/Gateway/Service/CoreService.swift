import Broker
import Config
import Logging
import NearbyProtocol
import Radio
import ServiceLifecycle
import UnixSignals

/// The message manager and the radio it owns, with what follows the manager: systemd's READY, STATUS
/// and watchdog, and SIGHUP's reload. Last in the group, so first to stop: off the air, state
/// flushed, last events sent, before the parts that carry those events stop.
struct CoreService: Service {
    let parts: GatewayParts
    let config: GatewayConfig
    let board: Board
    let hangups: UnixSignalsSequence
    let start: StartSequence
    let logger: Logger

    func run() async throws {
        let notifier = SystemdNotifier()
        await withDiscardingTaskGroup { group in
            if let radio = parts.radio {
                // Each read's sightings go from the read to the found set in one call on the gateway's
                // loop, which the radio and the manager share: no queue, no task, no wake of another
                // thread. Cancelling the radio's task stops the handoff at once.
                let manager = parts.manager
                radio.handSightings { manager.receive($0) }
                group.addTask { await radio.run() }
                // The rest (up, down, quiet) through the radio's queue, on the same loop.
                group.addTask(executorPreference: parts.loop) {
                    for await event in radio.events {
                        if Task.isCancelled { break }
                        await parts.manager.handle(event)
                    }
                }
            }
            group.addTask { await reloadOnHangup(notifier: notifier) }
            // STATUS= follows the error states from here on: "running" only while none is raised.
            await parts.manager.setStatusSink { notifier.status($0) }
            await parts.manager.start()
            start.announced.fire()
            // READY only once the socket serves (SocketService); a failed start shuts the group down,
            // which ends this wait.
            if await cancelWhenGracefulShutdown({ await start.serving.wait() }) {
                notifier.ready(status: await parts.manager.statusText)
                // The watchdog is fed from READY on (systemd expects it only after READY), and only while
                // the manager actor and the broker's loop answer.
                if let interval = notifier.watchdogInterval {
                    let watchdog = Watchdog(interval: interval,
                                            probes: [{ await parts.manager.probe() }, { await parts.broker.probe() }],
                                            ping: { notifier.watchdog() })
                    group.addTask { await watchdog.run() }
                }
                logger.notice("running", metadata: ["board": "\(board.name)", "socket": "\(config.socket.path)"])
                try? await gracefulShutdown()
            }
            logger.info("shutting down")
            notifier.stopping()
            await parts.manager.shutdown()
            logger.debug("stopped", metadata: ["service": "manager"])
            group.cancelAll()
        }
    }

    /// SIGHUP: the keys the manager can take are applied; each changed key that needs a restart is
    /// logged and keeps its running value; an invalid file is refused whole. A refused reload raises
    /// `$SYS/error/config` until a good one clears it.
    private func reloadOnHangup(notifier: SystemdNotifier) async {
        let configPath = config.path
        for await _ in hangups {
            notifier.reloading()
            do {
                let (new, board) = try ConfigLoader.load(path: configPath)
                let settings = try ManagerSettings(config: new, board: board)
                let skipped = config.restartOnlyChanges(to: new)
                for change in skipped { logger.warning("SIGHUP: \(change)") }
                await parts.manager.reload(settings)
                logger.notice("SIGHUP: config reloaded from \(configPath)", metadata: [
                    "applied": "\(GatewayConfig.reloadableKeys.joined(separator: ","))",
                    "need_restart": "\(skipped.isEmpty ? "none" : skipped.map(\.key).joined(separator: ","))",
                ])
                await parts.manager.setError(.config, false, cause: "config reloaded from \(configPath)")
            } catch {
                logger.error("SIGHUP: keeping the running config; \(configPath) is invalid:\n\(error)")
                await parts.manager.setError(.config, true, cause: "SIGHUP: keeping the running config; \(configPath) is invalid: \(error)",
                                             device: configPath)
            }
            notifier.ready(status: await parts.manager.statusText)
        }
    }
}

/// Service lifecycle logs its services by description: name the config file, never its content (the
/// api_key must not reach the log).
extension CoreService: CustomStringConvertible {
    var description: String { "manager(\(config.path))" }
}
