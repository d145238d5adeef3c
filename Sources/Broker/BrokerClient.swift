import NearbyProtocol

/// One connection's state, owned by the broker's loop thread.
final class BrokerClient {
    let fd: Int32
    let info: ClientInfo
    var framer: LineFramer
    var outgoing: OutgoingQueue
    var subscriptions: [TopicFilter] = []
    /// The handler task answering this client's current request; later lines wait in `framer`.
    var inFlight: Task<Void, Never>?
    /// The client shut down its writing side (EOF): answer what is buffered, then close.
    var readClosed = false
    /// No complete line is waiting in `framer`.
    var inputExhausted = true
    /// Events dropped since the last `$SYS/dropped` report to this client.
    var droppedSinceReport = 0
    /// Listed in the loop's `dirty`: bytes were queued since the last write attempt.
    var isDirty = false

    init(fd: Int32, info: ClientInfo, configuration: SocketBrokerConfiguration) {
        self.fd = fd
        self.info = info
        self.framer = LineFramer(maxLineBytes: SocketBrokerConfiguration.maxLineBytes)
        self.outgoing = OutgoingQueue(limit: configuration.outgoingLimitBytes)
    }

}

/// By identity: the loop's subscription index keys clients by the object, not by fd (fds are reused).
extension BrokerClient: Hashable {
    static func == (lhs: BrokerClient, rhs: BrokerClient) -> Bool { lhs === rhs }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
