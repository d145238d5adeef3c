/// The `[socket]` section of the config, plus the broker's bounds (defaults documented in
/// docs/socket-protocol.md).
public struct SocketBrokerConfiguration: Sendable, Equatable {
    public var path: String
    /// Permission bits of the socket file (connecting needs write permission).
    public var mode: UInt32
    /// Group owning the socket file; empty keeps the gateway's own group. A name or a numeric gid.
    public var group: String
    public var maxClients: Int
    /// Per-client bound on queued outgoing bytes before events are dropped.
    public var outgoingLimitBytes: Int
    public var maxSubscriptionsPerClient: Int
    /// Unparsed input kept per client while a command is in flight.
    public var inputLimitBytes: Int
    /// Under a stream of events, writes to a client are at most this often: events arriving within
    /// the window go out together in one `send` (one wake-up of the client, not one per event). An
    /// event after a quiet spell goes out at once; replies are never held.
    public var writeCoalescingNanoseconds: UInt64

    public static let defaultPath = "/run/nearby-gateway/gateway.sock"
    public static let maxLineBytes = 4096

    public init(
        path: String = defaultPath, mode: UInt32 = 0o660, group: String = "", maxClients: Int = 64,
        outgoingLimitBytes: Int = 256 * 1024, maxSubscriptionsPerClient: Int = 256, inputLimitBytes: Int = 64 * 1024,
        writeCoalescingNanoseconds: UInt64 = 500_000
    ) {
        self.path = path
        self.mode = mode
        self.group = group
        self.maxClients = maxClients
        self.outgoingLimitBytes = outgoingLimitBytes
        self.maxSubscriptionsPerClient = maxSubscriptionsPerClient
        self.inputLimitBytes = inputLimitBytes
        self.writeCoalescingNanoseconds = writeCoalescingNanoseconds
    }
}

/// A snapshot of the broker's counters, for `GET stats`.
public struct SocketBrokerStatistics: Sendable, Equatable {
    public var clients = 0
    public var clientsAccepted = 0
    public var clientsRefused = 0
    public var eventsPublished = 0
    public var eventsDelivered = 0
    /// Events dropped because a client's queue was full, summed over clients.
    public var eventsDropped = 0
    public var retained = 0

    public init() {}
}
