import Dispatch
import Glibc
import Logging
import NearbyProtocol
import SystemCall
import Synchronization

/// The UNIX socket broker (docs/socket-protocol.md): on an event loop (the gateway's, shared with
/// the radio and the manager), it polls every client, answers SUB, UNSUB and PING itself and hands
/// PUB, UNPUB, SET and GET to the `BrokerHandler`. `publish` may be called from any thread or actor
/// and never blocks on a client.
public final class SocketBroker: RetainedEventSource {
    public let configuration: SocketBrokerConfiguration
    private let logger: Logger
    private let inbox = BrokerInbox()
    private let loop: EventLoop
    /// Whether the broker made its loop (and ends it with itself) or shares its owner's.
    private let ownsLoop: Bool
    /// Signalled once the broker has closed everything on its loop.
    private let closed = DispatchSemaphore(value: 0)
    private enum Phase { case idle, bound(SocketListener.Listening), running, stopped }
    private let phase = Mutex(Phase.idle)

    /// `loop`: the gateway's event loop; nil gives the broker a loop (a thread) of its own.
    public init(configuration: SocketBrokerConfiguration, logger: Logger, loop: EventLoop? = nil) throws(SocketBrokerError) {
        self.configuration = configuration
        self.logger = logger
        self.loop = loop ?? EventLoop(name: "socket-broker")
        ownsLoop = loop == nil
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

    /// Starts serving on the loop (binding first if `bind` was not called). Events published before
    /// are delivered (and retained) from then on.
    public func start(handler: some BrokerHandler) throws(SocketBrokerError) {
        try phase.withLock { (phase) throws(SocketBrokerError) in
            if case .idle = phase { phase = .bound(try SocketListener.open(configuration, logger: logger)) }
            guard case .bound(let listening) = phase else { throw SocketBrokerError(path: configuration.path, kind: .alreadyStarted) }
            let broker = BrokerLoop(configuration: configuration, listening: listening, inbox: inbox, handler: handler,
                                    loop: loop, logger: logger) { [closed] in closed.signal() }
            do throws(EventLoop.StartFailure) {
                try broker.start()
            } catch {
                throw SocketBrokerError(path: configuration.path, kind: .system(call: error.call, errno: error.errno))
            }
            phase = .running
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

    /// `shutdown` for callers on Swift's shared pool: the wait for the loop runs on a thread of its own.
    public func stop() async {
        await OwnThread.run("socket-stop") { self.shutdown() }
    }

    /// Closes every connection and the socket, removes the socket file, and returns when the loop
    /// has done so (blocking: from an actor or task use `stop`; never on the loop's own thread).
    /// Safe to call more than once, and before `start`.
    public func shutdown() {
        let running: Bool = phase.withLock { phase in
            defer { phase = .stopped }
            switch phase {
            case .running: return true
            case .bound(let listening):
                // Bound but never served (a later part failed to start): no loop to end, just the socket.
                inbox.close()
                close(listening.fd)
                SocketListener.remove(listening, path: configuration.path)
                return false
            case .idle, .stopped:
                inbox.close()
                return false
            }
        }
        if running {
            inbox.requestShutdown()
            closed.wait()
        }
        if ownsLoop { loop.shutdown() }
    }

    deinit {
        if ownsLoop { loop.finish() }
    }
}
