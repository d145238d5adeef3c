import ArgumentParser
import Config
import Gateway
import Glibc
import Logging
import NearbyProtocol
import ServiceLifecycle
import SystemCall
import UnixSignals

struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the gateway.",
        discussion: """
            Publishes and subscribes as the config says, serves the socket, drives the LEDs. SIGTERM or \
            SIGINT stop it cleanly (off the air, LEDs dark, state flushed, exit 0); SIGHUP re-reads the \
            config and keeps the running one if the new one is invalid.
            """
    )

    @Option(name: .long, help: "The configuration file.")
    var config = "/etc/nearby-gateway/gateway.toml"

    @Option(name: .long, help: "Log level (trace, debug, info, notice, warning, error); overrides log_level in the config.")
    var logLevel: Logger.Level?

    func run() async throws {
        // A closed log stream or socket peer must be an EPIPE error where it happens, never the
        // death of the gateway (SIGPIPE's default action).
        signal(SIGPIPE, SIG_IGN)
        let (gatewayConfig, board): (GatewayConfig, Board)
        do {
            (gatewayConfig, board) = try ConfigLoader.load(path: config)
        } catch {
            let problems = "\(error)".split(separator: "\n", omittingEmptySubsequences: false).map { TerminalText.escape(String($0)) }
            Console.err("nearby-gateway: not starting, \(TerminalText.escape(config)) is invalid:\n\(problems.joined(separator: "\n"))\n")
            throw ExitCode(2)
        }
        let level = SharedLogLevel(logLevel ?? gatewayConfig.logLevel, commandLine: logLevel)
        LoggingSystem.bootstrap { label in GatewayLogHandler(label: label, level: level) }
        let logger = Logger(label: "nearby-gateway")
        if let weakness = APIKeyStrength.weakness(gatewayConfig.apiKey) {
            logger.warning("api_key \(weakness); make a strong one with `nearby-gateway key` and put it in every gateway's config")
        }

        defer { GatewayLogHandler.flushSuppressed() }
        do {
            let services = try await GatewayServices.assemble(config: gatewayConfig, board: board, logLevel: level, logger: logger)
            var groupConfiguration = ServiceGroupConfiguration(services: services, gracefulShutdownSignals: [.sigterm, .sigint],
                                                               logger: logger)
            // docs/product.md §10: exit within 2 s of SIGTERM, whatever a part is doing.
            groupConfiguration.maximumGracefulShutdownDuration = .milliseconds(1500)
            try await ServiceGroup(configuration: groupConfiguration).run()
            logger.notice("stopped")
        } catch {
            logger.critical("stopped: \(error)")
            throw ExitCode(1)
        }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
