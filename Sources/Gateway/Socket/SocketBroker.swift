import Dispatch
import Foundation
import Logging
import Synchronization

/// The UNIX socket broker (docs/socket-protocol.md): one dedicated thread runs a poll(2) loop over
/// every client, answers SUB, UNSUB and PING itself and hands PUB, UNPUB, SET and GET to the
/// `BrokerHandler`. `publish` may be called from any thread or actor and never blocks on a client.
public final class SocketBroker: Sendable {
    public let configuration: SocketBrokerConfiguration
    private let logger: Logger
    private let inbox: BrokerInbox
    private enum Phase { case idle, running(DispatchSemaphore), stopped }
    private let phase = Mutex(Phase.idle)

    public init(configuration: SocketBrokerConfiguration, logger: Logger) throws(SocketBrokerError) {
        self.configuration = configuration
        self.logger = logger
        self.inbox = try BrokerInbox(path: configuration.path)
    }

    /// Creates the socket file and starts the loop thread. Events published before are delivered
    /// (and retained) from then on.
    public func start(handler: some BrokerHandler) throws(SocketBrokerError) {
        try phase.withLock { (phase) throws(SocketBrokerError) in
            guard case .idle = phase else { throw SocketBrokerError(path: configuration.path, kind: .alreadyStarted) }
            let listening = try SocketListener.open(configuration, logger: logger)
            let finished = DispatchSemaphore(value: 0)
            let (configuration, inbox, logger) = (configuration, inbox, logger)
            let thread = Thread {
                BrokerLoop(configuration: configuration, listening: listening, inbox: inbox, handler: handler, logger: logger).run()
                finished.signal()
            }
            thread.name = "socket-broker"
            thread.start()
            phase = .running(finished)
        }
    }

    /// Queues `event` for every subscribed client (and keeps or forgets it as `event.retain` says).
    public func publish(_ event: BrokerEvent) {
        inbox.post(.event(event))
    }

    public var statistics: SocketBrokerStatistics { inbox.statistics }

    /// Closes every connection and the socket, removes the socket file, and returns when the loop
    /// thread has ended. Safe to call more than once, and before `start`.
    public func shutdown() {
        let finished: DispatchSemaphore? = phase.withLock { phase in
            defer { phase = .stopped }
            if case .running(let finished) = phase { return finished }
            return nil
        }
        guard let finished else { return }
        inbox.requestShutdown()
        finished.wait()
    }
}
