import Broker
import Config
import Glibc
import LEDs
import Logging
import Modem
import MQTT
import NearbyProtocol
import Radio
import SystemCall

/// Everything `run` starts, built from one config, in the order that keeps start-up honest: state
/// restored before anything goes on the air, socket bound before the radio starts, and a clear error
/// (never a half-started gateway) when a part can't start.
struct GatewayParts: Sendable {
    /// The gateway's event loop: the thread of the radio and the manager (docs/architecture.md,
    /// "Concurrency"); `LoopService` ends it after every other part has stopped.
    let loop: EventLoop
    let manager: MessageManager
    let radio: Radio?
    let broker: SocketBroker
    /// nil without `[mqtt]`: no bridge, no thread, no connection.
    let mqtt: MQTTBridge?
    let panel: LEDPanel
    let audio: AudioBridge
    /// Power requests from the board's input line, applied like `SET power`.
    let powerRequests: AsyncStream<PowerRequest>
    /// What the speaker and microphone threads report.
    let audioEvents: AsyncStream<(AudioEvent, AudioBridge.AudioSide)>
    let logger: Logger

    static func assemble(config: GatewayConfig, board: Board, logLevel: SharedLogLevel, logger: Logger) async throws -> GatewayParts {
        // 1. State, before anything else: it decides what may go on the air.
        let stateFile = StateFile(path: config.state.path)
        try stateFile.createDirectory()
        let (state, problem) = stateFile.load(defaults: config.state.defaults)
        if let problem { logger.error("state file: \(problem); using the defaults") }
        logger.info("state restored", metadata: ["background_mode": "\(state.backgroundMode)",
                                                  "permission": "\(state.permission.rawValue)", "power": "\(state.power.rawValue)"])

        // 2. The socket, bound now: a second gateway on the same path is refused here, before it
        // touches the GPIO lines, the sound card or the radio that the first one holds.
        let broker = try SocketBroker(configuration: config.socketConfiguration, logger: logger.labelled("socket"))
        try broker.bind()
        do {
            return try await assembleHardware(config: config, board: board, state: state, problem: problem, stateFile: stateFile,
                                              broker: broker, logLevel: logLevel, logger: logger)
        } catch {
            await broker.stop()   // the socket file goes with the failed start
            throw error
        }
    }

    /// Starts the gateway's event loop; without its thread (the wake-up pipe or pthread_create
    /// failing) the start is refused, naming the call and errno. `wakePipe`: a test makes it fail.
    static func startLoop(
        wakePipe: () throws(Errno) -> WakePipe = { () throws(Errno) in try WakePipe() }
    ) throws(RadioError) -> EventLoop {
        do throws(EventLoop.StartFailure) {
            return try EventLoop(name: "gateway", wakePipe: wakePipe)
        } catch {
            throw RadioError.system(error.call, device: "event loop gateway", errno: error.errno)
        }
    }

    private static func assembleHardware(
        config: GatewayConfig, board: Board, state: GatewayState, problem: StateFileProblem?, stateFile: StateFile,
        broker: SocketBroker, logLevel: SharedLogLevel, logger: Logger
    ) async throws -> GatewayParts {

        // The MQTT bridge, only with `[mqtt]`; its thread starts (and connects) once the manager exists.
        let mqtt = try config.mqtt.map { settings throws in
            try MQTTBridge(settings: settings, password: try MQTTPassword.read(settings), subscriptions: config.bridgedSubscriptions,
                           model: board.name, logger: logger.labelled("mqtt"), retainedSource: broker)
        }
        let events = EventFanOut(sinks: [broker] + (mqtt.map { [$0] } ?? []))

        // 3. The gateway's event loop, the executor of the panel, the radio and the manager. A later
        // step that refuses the start (a missing LED chip) stops it again: no thread outlives a refusal.
        let loop = try startLoop()
        do {
            return try await assembleOnLoop(loop, config: config, board: board, state: state, problem: problem,
                                            stateFile: stateFile, broker: broker, mqtt: mqtt, events: events,
                                            logLevel: logLevel, logger: logger)
        } catch {
            loop.shutdown()
            throw error
        }
    }

    private static func assembleOnLoop(
        _ loop: EventLoop, config: GatewayConfig, board: Board, state: GatewayState, problem: StateFileProblem?,
        stateFile: StateFile, broker: SocketBroker, mqtt: MQTTBridge?, events: EventFanOut,
        logLevel: SharedLogLevel, logger: Logger
    ) async throws -> GatewayParts {

        // The front panel: a configured chip that is missing refuses the start (naming chip and errno).
        let (powerRequests, powerContinuation) = AsyncStream<PowerRequest>.makeStream(bufferingPolicy: .bufferingNewest(8))
        let panel = try LEDPanel.open(
            layout: board.ledLayout(enabled: config.leds.enabled), logger: logger.labelled("leds"), loop: loop,
            sink: { [events] name, on in
                var json = JSONObjectWriter()
                json.add("led", name)
                json.add("state", on ? "on" : "off")
                events.publish(BrokerEvent(topic: "$SYS/led/\(name)", json: json.string, retain: .set("$SYS/led/\(name)")))
            },
            onPower: { powerContinuation.yield($0) })

        // 4. Speaker and microphone: their threads open the devices only when there is something to do.
        let (audioEvents, audioContinuation) = AsyncStream<(AudioEvent, AudioBridge.AudioSide)>.makeStream(
            bufferingPolicy: .bufferingNewest(256))
        let audio = try AudioBridge(settings: config.audio, events: { audioContinuation.yield(($0, $1)) },
                                    logger: logger.labelled("audio"))

        // 5. The radio (connects in `run`, reconnecting by itself) and the manager that owns it all,
        // both on the gateway's loop: a sighting reaches the manager on the thread that read it.
        let settings = try ManagerSettings(config: config, board: board)
        let radio = Radio(device: try RadioDevice(parsing: config.radio.device, exclusive: config.radio.exclusive),
                          configuration: config.radioConfiguration, logger: logger.labelled("radio"), loop: loop)
        let manager = MessageManager(settings: settings, state: state, stateFile: stateFile, air: radio, audio: audio,
                                     events: events, panel: panel, logLevel: logLevel, logger: logger.labelled("manager"),
                                     loop: loop)
        if let problem {
            // Consent was withheld (StateFile.load): say so where the box's UI listens, until a save succeeds.
            await manager.setError(.state, true, cause: "\(problem)", device: problem.path)
        }
        if let mqtt {
            await manager.setMQTTStatistics { mqtt.statistics }
            try mqtt.start()
        }
        return GatewayParts(loop: loop, manager: manager, radio: radio, broker: broker, mqtt: mqtt, panel: panel, audio: audio,
                            powerRequests: powerRequests, audioEvents: audioEvents, logger: logger)
    }

    /// Starts serving the socket. Called once the manager has announced the restored state: a client
    /// that connected earlier waits in the listen backlog, and its SUB's replay carries the start-up
    /// announcements as retained values, never as events (docs/socket-protocol.md, "Start-up").
    func serveSocket() throws(SocketBrokerError) {
        try broker.start(handler: ManagerHandler(manager: manager, broker: broker))
    }

    /// Runs the panel's patterns and applies the power input's requests until cancelled.
    func runPanel() async {
        await panel.start()
        for await request in powerRequests {
            do {
                switch request {
                case .toggle: try await manager.update { $0.power = $0.power == .active ? .standby : .active }
                case .set(let power): try await manager.update { $0.power = power }
                }
            } catch {
                logger.error("power input: state not saved, nothing changed: \(error)")
            }
        }
    }

    /// The bridge's connection changes become `$SYS/error/mqtt`, set and cleared, in order; its
    /// commands are answered like a socket client's, and what a connection published ends with it.
    func runMQTT() async {
        guard let mqtt else { return }
        var connection: UInt64?
        for await change in mqtt.changes {
            switch change {
            case .connected(let number):
                connection = number
                await manager.setError(.mqtt, false, cause: "connected to \(mqtt.settings.url)")
            case .command(let line, let number):
                let client = ClientInfo(id: ClientID(rawValue: MQTTBridge.commandClientBase + number))
                if let reply = await answer(line, client: client) { mqtt.reply(reply) }
            case .disconnected(let error):
                if let number = connection { await manager.clientGone(Int(MQTTBridge.commandClientBase + number)) }
                connection = nil
                let code: Int32? = if case .errno(let code) = error.kind { code.rawValue } else { nil }
                await manager.setError(.mqtt, true, cause: "\(error)", device: mqtt.settings.url, errno: code)
            }
        }
    }

    /// A command line received over MQTT, answered as the socket would (SUB and UNSUB are the socket's).
    private func answer(_ line: [UInt8], client: ClientInfo) async -> String? {
        let reply: String
        do {
            switch try SocketCommand.parse(line) {
            case nil: return nil
            case .ping: reply = ReplyLine.pong
            case .subscribe, .unsubscribe:
                reply = ReplyLine.error(.badArgument, "SUB and UNSUB belong to the socket; subscribe on the MQTT broker instead")
            case .request(let request):
                reply = ReplyLine.encode(await manager.handle(request, client: client, clients: broker.statistics.clients))
            }
        } catch {
            reply = ReplyLine.error(error)
        }
        return String(reply.dropLast())   // without the socket's newline
    }

    func runAudio() async {
        for await (event, side) in audioEvents { await manager.handle(event, side: side) }
    }
}

extension Logger {
    /// The same logger, its lines tagged with the part of the gateway they come from.
    func labelled(_ component: String) -> Logger {
        var logger = self
        logger[metadataKey: "part"] = "\(component)"
        return logger
    }
}

extension Radio: AirInterface {}
extension SocketBroker: EventSink {}

/// The broker's requests, answered by the manager.
struct ManagerHandler: BrokerHandler {
    let manager: MessageManager
    let broker: SocketBroker

    func handle(_ request: SocketRequest, client: ClientInfo) async -> SocketReply {
        await manager.handle(request, client: client, clients: broker.statistics.clients)
    }

    func clientDisconnected(_ id: ClientID) async {
        await manager.clientGone(Int(id.rawValue))
    }
}
