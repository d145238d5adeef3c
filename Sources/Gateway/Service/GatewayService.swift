import Broker
import Config
import Glibc
import Logging
import NearbyProtocol
import Radio
import ServiceLifecycle
import UnixSignals

/// `nearby-gateway run`: loads the config and the state, binds the socket, and runs the radio, the
/// speaker/microphone, the LEDs and the message manager until SIGTERM/SIGINT, which stop advertising,
/// darken the LEDs, flush the state and exit 0. SIGHUP re-reads the config.
public struct GatewayService: Service {
    let config: GatewayConfig
    let board: Board
    let logLevel: SharedLogLevel
    let logger: Logger
    private var configPath: String { config.path }

    /// `config` was loaded (and validated) by the caller, so that an invalid one never starts anything.
    public init(config: GatewayConfig, board: Board, logLevel: SharedLogLevel, logger: Logger) {
        self.config = config
        self.board = board
        self.logLevel = logLevel
        self.logger = logger
    }

    public func run() async throws {
        // Trapped before anything starts: a SIGHUP during start-up must not end the process (its
        // default action), only reload once the parts run.
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        let parts = try await GatewayParts.assemble(config: config, board: board, logLevel: logLevel, logger: logger)
        let notifier = SystemdNotifier()

        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await parts.radio?.run() }
            if let radio = parts.radio {
                group.addTask {
                    for await event in radio.events { await parts.manager.handle(event) }
                }
            }
            group.addTask { await parts.runPanel() }
            group.addTask { await parts.runAudio() }
            group.addTask { await parts.runMQTT() }
            group.addTask { await reloadOnHangup(hangups, parts: parts, notifier: notifier) }
            // STATUS= follows the error states from here on: "running" only while none is raised.
            await parts.manager.setStatusSink { notifier.status($0) }
            await parts.manager.start()
            // Served only now, so that an early client never takes the start-up announcement for a change.
            do { try parts.serveSocket() } catch {
                await parts.stop()
                throw error
            }
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
            logger.info("shutting down")
            notifier.stopping()
            await parts.stop()
            group.cancelAll()
        }
        logger.notice("stopped")
    }

    /// SIGHUP: the keys the manager can take are applied; each changed key that needs a restart is
    /// logged and keeps its running value; an invalid file is refused whole. A refused reload raises
    /// `$SYS/error/config` until a good one clears it.
    private func reloadOnHangup(_ hangups: UnixSignalsSequence, parts: GatewayParts, notifier: SystemdNotifier) async {
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
extension GatewayService: CustomStringConvertible {
    public var description: String { "GatewayService(\(config.path))" }
}
