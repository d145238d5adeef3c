import Glibc
import Logging
import NearbyProtocol
import SystemCall
import Synchronization

/// The UNIX socket broker (docs/socket-protocol.md): one dedicated thread runs a poll(2) loop over
/// every client, answers SUB, UNSUB and PING itself and hands PUB, UNPUB, SET and GET to the
/// `BrokerHandler`. `publish` may be called from any thread or actor and never blocks on a client.
public final class SocketBroker: RetainedEventSource {
    public let configuration: SocketBrokerConfiguration
    private let logger: Logger
    private let inbox: BrokerInbox
    private enum Phase { case idle, bound(SocketListener.Listening), running(OSThread.Joinable), stopped }
    private let phase = Mutex(Phase.idle)

    public init(configuration: SocketBrokerConfiguration, logger: Logger) throws(SocketBrokerError) {
        self.configuration = configuration
        self.logger = logger
        self.inbox = try BrokerInbox(path: configuration.path)
    }

    /// Creates the socket file and listens, without serving yet: a second gateway on the same path
    /// is refused here, first thing at start-up, before it touches any hardware. Clients that connect
    /// before `start` wait in the listen backlog.
    public func bind() throws(SocketBrokerError) {
        try phase.withLock { (phase) throws(SocketBrokerError) in
            guard case .idle = phase else { throw SocketBrokerError(path: configuration.path, kind: .alreadyStarted) }
            phase = .bound(try SocketListener.open(configuration, logger: logger))
        }
    }

    /// Starts the loop thread (binding first if `bind` was not called). Events published before are
    /// delivered (and retained) from then on.
    public func start(handler: some BrokerHandler) throws(SocketBrokerError) {
        try phase.withLock { (phase) throws(SocketBrokerError) in
            if case .idle = phase { phase = .bound(try SocketListener.open(configuration, logger: logger)) }
            guard case .bound(let listening) = phase else { throw SocketBrokerError(path: configuration.path, kind: .alreadyStarted) }
            let (configuration, inbox, logger) = (configuration, inbox, logger)
            do throws(Errno) {
                phase = .running(try OSThread.spawn(name: "socket-broker") {
                    BrokerLoop(configuration: configuration, listening: listening, inbox: inbox, handler: handler, logger: logger).run()
                })
            } catch {
                throw SocketBrokerError(path: configuration.path, kind: .system(call: "pthread_create", errno: error))
            }
        }
    }

    /// Queues `event` for every subscribed client (and keeps or forgets it as `event.retain` says).
    public func publish(_ event: BrokerEvent) {
        inbox.post(.event(event))
    }

    public var statistics: SocketBrokerStatistics { inbox.statistics }

    /// The retained events, read by the loop thread that owns them, in the inbox's order (after
    /// every event published before): the MQTT bridge's replay after a reconnect.
    public func retainedEvents(topics: Set<String>?, answer: @escaping @Sendable ([BrokerEvent]?) -> Void) {
        inbox.post(.retained(topics: topics, answer: answer))
    }

    /// Returns once the loop thread has gone round its loop after this call: what the watchdog asks
    /// before telling systemd the gateway is alive. Never returns while the loop is stuck or gone
    /// (until the caller is cancelled).
    public func probe() async {
        await inbox.probe()
    }

    /// Probes waiting for the loop's next turn: a stopped loop's stay until their callers are cancelled.
    var waitingProbes: Int { inbox.waitingProbes }

    /// `shutdown` for callers on Swift's shared pool: the wait for the loop thread runs on a thread
    /// of its own.
    public func stop() async {
        await OwnThread.run("socket-stop") { self.shutdown() }
    }

    /// Closes every connection and the socket, removes the socket file, and returns when the loop
    /// thread has ended (blocking: from an actor or task use `stop`). Safe to call more than once,
    /// and before `start`.
    public func shutdown() {
        let thread: OSThread.Joinable? = phase.withLock { phase in
            defer { phase = .stopped }
            switch phase {
            case .running(let thread): return thread
            case .bound(let listening):
                // Bound but never served (a later part failed to start): no loop to end, just the socket.
                inbox.close()
                close(listening.fd)
                SocketListener.remove(listening, path: configuration.path)
                return nil
            case .idle, .stopped:
                inbox.close()
                return nil
            }
        }
        guard let thread else { return }
        inbox.requestShutdown()
        thread.join()
    }
}
