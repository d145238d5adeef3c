import Config
import NearbyProtocol
/// Identifies a publication in `OK <handle>` / `UNPUB <handle>` and in logs.
public struct PublicationID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public var description: String { "p\(rawValue)" }
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }

    public init?(_ text: some StringProtocol) {
        guard text.first == "p", let value = Int(text.dropFirst()), value > 0 else { return nil }
        rawValue = value
    }
}

/// A message being published, from the config or from a socket client's `PUB`.
struct Publication: Sendable {
    var id: PublicationID
    var message: Message
    var mediums: Set<Medium>
    var mode: DiscoveryMode
    var background: Bool
    /// `ttl_s` from the config; runtime publications live until UNPUB or their client disconnects.
    var expiry: ContinuousClock.Instant?
    /// The socket client that owns a runtime publication; nil for the config's.
    var owner: Int?
}

/// What the gateway listens for (a `[[subscription]]`).
struct Subscription: Sendable {
    var namespace: String
    /// A type, or "*" for every type in the namespace.
    var type: String
    var mediums: Set<Medium>
    var mode: DiscoveryMode
    var background: Bool
    var lostAfter: Duration
    var include: Set<BeaconFilter>
    /// Identities by name (`include = ["identity/<name>"]`); `include` holding `.identity` takes them all.
    var identities: Set<String> = []
    var led: String?
    /// A run-time subscription (`SUBSCRIBE`): its handle number and its connection; nil for the config's.
    var handle: Int? = nil
    var owner: Int? = nil

    func includes(identity name: String) -> Bool {
        include.contains(.identity) || identities.contains(name)
    }

    func matches(_ message: Message) -> Bool {
        message.namespace == namespace && (type == "*" || type == message.type)
    }
}
