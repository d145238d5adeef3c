import NearbyProtocol
/// What the broker asks the `BrokerHandler` (the message manager) to do for one client line.
/// SUB, UNSUB and PING never reach the handler: the broker answers them itself.
public enum SocketRequest: Sendable, Equatable {
    /// `PUB <ns>/<type> <base64> [mediums=..] [mode=..]` → `.ok(handle)`.
    case publish(PublishRequest)
    /// `UNPUB <handle>` → `.ok()` or `.error(.notFound, ...)`.
    case unpublish(handle: String)
    /// `SET <key> <value>` → `.ok()`.
    case set(SocketSetting)
    /// `GET <key>` → `.ok(value)`: a word (`granted`, `on`, ...) or one-line JSON (`stats`, `errors`, ...).
    case get(SocketGetKey)
    /// `SUBSCRIBE <ns>/<type|*> [mediums=..] [mode=..]` → `.ok(handle)`: a subscription of this connection.
    case subscribeMessages(SubscribeRequest)
    /// `UNSUBSCRIBE <handle>` → `.ok()` or `.error(.notFound, ...)`.
    case unsubscribeMessages(handle: String)
}

/// A run-time subscription: a `[[subscription]]` without `include`, `led` or `background` (its
/// `lost_after_s` is `radio.lost_after_s`).
public struct SubscribeRequest: Sendable, Equatable {
    public var namespace: String
    /// A type, or "*" for every type of the namespace.
    public var type: String
    public var mediums: Set<Medium>
    public var mode: DiscoveryMode

    public init(namespace: String, type: String, mediums: Set<Medium> = Set(Medium.allCases), mode: DiscoveryMode = .both) {
        self.namespace = namespace
        self.type = type
        self.mediums = mediums
        self.mode = mode
    }
}

public struct PublishRequest: Sendable, Equatable {
    public var message: Message
    public var mediums: Set<Medium>
    public var mode: DiscoveryMode

    public init(message: Message, mediums: Set<Medium> = Set(Medium.allCases), mode: DiscoveryMode = .both) {
        self.message = message
        self.mediums = mediums
        self.mode = mode
    }
}

public enum SocketSetting: Sendable, Equatable {
    case permission(Permission)
    case background(Bool)
    case power(PowerState)
    case debug(Bool)
}

public enum SocketGetKey: String, Sendable, Equatable, CaseIterable {
    case permission, background, power, debug
    case stats          // JSON: uptime, adverts seen, frames dropped by reason, clients, found count
    case errors         // JSON array of the error names currently set
    case publications   // JSON array of the publications (configured and runtime)
    case found          // JSON array of the found messages (the same objects as found events)
    case subscriptions  // JSON array of the subscriptions (configured and runtime)
}

/// The handler's answer to one request; the broker writes it as one line.
public enum SocketReply: Sendable, Equatable {
    /// `OK` or `OK <detail>`; the detail is one line (a newline in it is replaced by a space).
    case ok(String? = nil)
    case error(SocketErrorCode, String)
    /// A reading answered as an event line to the asking client only, e.g. `GET stats` →
    /// `$SYS/stats {json}` (docs/product.md §6).
    case event(topic: String, json: String)
}

/// The fixed set of `ERR` codes (docs/socket-protocol.md lists when each is sent).
public enum SocketErrorCode: String, Sendable, Equatable, CaseIterable {
    case unknownVerb = "unknown-verb"            // the first word is no verb of the protocol
    case missingArgument = "missing-argument"    // the verb needs more words
    case badArgument = "bad-argument"            // an extra word, an unknown key/option, a bad value
    case badFilter = "bad-filter"                // SUB/UNSUB filter breaks MQTT's rules
    case badTopic = "bad-topic"                  // PUB <ns>/<type> is not two valid names
    case badBase64 = "bad-base64"                // PUB content is not canonical base64
    case tooLong = "too-long"                    // the line was over 4096 bytes (it was skipped)
    case badEncoding = "bad-encoding"            // the line holds NUL or is not valid UTF-8
    case tooManyClients = "too-many-clients"     // max_clients reached; the connection is closed after
    case limit = "limit"                         // a per-client bound (subscriptions, publications)
    case notFound = "not-found"                  // UNPUB of an unknown handle, GET of an unset value
    case notPermitted = "not-permitted"          // refused by the gateway's state (e.g. permission)
    case tooLarge = "too-large"                  // content over what the chosen mediums carry
    case unavailable = "unavailable"             // the gateway cannot serve it now (starting, stopping)
}

public struct ClientID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public var description: String { "client-\(rawValue)" }
    public static func < (lhs: ClientID, rhs: ClientID) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Who is on the other end of a connection (SO_PEERCRED at accept time).
public struct ClientInfo: Sendable, Hashable {
    public var id: ClientID
    public var pid: Int32?
    public var uid: UInt32?
    public var gid: UInt32?

    public init(id: ClientID, pid: Int32? = nil, uid: UInt32? = nil, gid: UInt32? = nil) {
        self.id = id
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }
}

/// The message manager's side of the socket. Called from Swift tasks the broker starts; at most one
/// `handle` per client is in flight at a time, so replies to one client keep the order of its lines.
public protocol BrokerHandler: Sendable {
    func handle(_ request: SocketRequest, client: ClientInfo) async -> SocketReply
    /// The connection is gone (closed by the client, by an error or at shutdown): drop its publications.
    func clientDisconnected(_ id: ClientID) async
}
