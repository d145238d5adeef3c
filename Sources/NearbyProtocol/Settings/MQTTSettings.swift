/// `[mqtt]`: the optional bridge to the house's MQTT broker (docs/mqtt.md). Absent = no bridge at all.
/// Here rather than in MQTT because two modules share it: Config reads and checks it (the URL, the room
/// name, each problem with its line), and the bridge runs on it; neither imports the other.
public struct MQTTSettings: Sendable, Equatable {
    public enum Transport: Sendable, Equatable {
        case tcp(host: String, port: Int)
        /// mqtts://: TLS, verified against `caFile`.
        case tls(host: String, port: Int)
        /// unix:///path: a local broker's UNIX socket.
        case unix(path: String)
    }

    /// The URL as written, for log lines and errors (it never holds the password).
    public var url: String
    public var transport: Transport
    public var clientID: String
    public var username: String?
    /// From `password` or read from `password_file` at start.
    public var password: String?
    public var passwordFile: String?
    public var caFile: String?
    /// Every topic is `<prefix>/<socket topic>`.
    public var prefix: String
    public var qos: Int
    public var keepaliveS: Int
    /// Events kept while the broker is unreachable; beyond it the oldest are dropped (and counted).
    public var queue: Int
    /// Longest wait between two connection attempts (the wait doubles from 1 s up to it).
    public var reconnectMaxS: Int
    /// Home Assistant discovery on/off, and its topic prefix.
    public var discovery: Bool
    public var discoveryPrefix: String
    /// Commands on `<prefix>/cmd` (answered on `<prefix>/cmd/reply`); off = a read-only bridge.
    public var commands: Bool = false
    /// This gateway's room: with it, the gateway shares its evidence of each found message with the
    /// fleet and publishes the room each message is in (docs/mqtt.md, "Rooms"). nil = no rooms.
    public var room: String?
    /// The topic prefix every gateway of the fleet shares for evidence and room decisions.
    public var fleet: String = "nearby/fleet"

    /// `<prefix>/status`: `online` while connected, `offline` (the last will) otherwise.
    public var availabilityTopic: String { "\(prefix)/status" }

    public init(url: String, transport: Transport, clientID: String = "nearby-gateway", username: String? = nil,
                password: String? = nil, passwordFile: String? = nil, caFile: String? = nil, prefix: String = "nearby",
                qos: Int = 0, keepaliveS: Int = 60, queue: Int = 1000, reconnectMaxS: Int = 60,
                discovery: Bool = true, discoveryPrefix: String = "homeassistant") {
        self.url = url
        self.transport = transport
        self.clientID = clientID
        self.username = username
        self.password = password
        self.passwordFile = passwordFile
        self.caFile = caFile
        self.prefix = prefix
        self.qos = qos
        self.keepaliveS = keepaliveS
        self.queue = queue
        self.reconnectMaxS = reconnectMaxS
        self.discovery = discovery
        self.discoveryPrefix = discoveryPrefix
    }

    /// Why `room` cannot be a room name (1…64 bytes of UTF-8, no control character), or nil. Also the
    /// check of the room names other gateways send: they are outside input.
    public static func roomProblem(_ room: String) -> String? {
        if room.isEmpty || room.utf8.count > 64 { return "must be 1 to 64 bytes" }
        if room.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0 == "\u{2028}" || $0 == "\u{2029}" }) {
            return "must not contain control characters"
        }
        return nil
    }

    /// `mqtt://host[:port]`, `mqtts://host[:port]` or `unix:///path`; nil with the reason otherwise.
    public static func transport(parsing url: String) -> Result<Transport, URLProblem> {
        if url.hasPrefix("unix://") {
            let path = String(url.dropFirst("unix://".count))
            guard path.hasPrefix("/"), path.count > 1 else { return .failure(URLProblem("unix:// needs an absolute socket path, e.g. unix:///run/mosquitto/mosquitto.sock")) }
            return .success(.unix(path: path))
        }
        let schemes: [(String, Int, Bool)] = [("mqtt://", 1883, false), ("mqtts://", 8883, true)]
        guard let (scheme, defaultPort, tls) = schemes.first(where: { url.hasPrefix($0.0) }) else {
            return .failure(URLProblem("must start with mqtt://, mqtts:// or unix://"))
        }
        var rest = Substring(url.dropFirst(scheme.count))
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.contains("@") else { return .failure(URLProblem("put the user name and password in username and password_file, not in the URL")) }
        guard !rest.contains("/") else { return .failure(URLProblem("has a path; a broker URL is scheme://host[:port]")) }
        var host = rest, port = defaultPort
        if rest.hasPrefix("[") {   // [IPv6]:port
            guard let close = rest.firstIndex(of: "]") else { return .failure(URLProblem("unclosed [ in the host")) }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":"), let value = Int(after.dropFirst()) else { return .failure(URLProblem("bad port after ]")) }
                port = value
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            guard let value = Int(rest[rest.index(after: colon)...]) else { return .failure(URLProblem("\"\(rest[rest.index(after: colon)...])\" is not a port number")) }
            port = value
        }
        guard !host.isEmpty else { return .failure(URLProblem("has no host")) }
        guard (1...65535).contains(port) else { return .failure(URLProblem("port \(port) is out of range 1…65535")) }
        return .success(tls ? .tls(host: String(host), port: port) : .tcp(host: String(host), port: port))
    }

    public struct URLProblem: Error, Equatable {
        public let message: String
        init(_ message: String) { self.message = message }
    }
}

/// Printed anywhere (logs, errors), the settings never show the password.
extension MQTTSettings: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String {
        "MQTTSettings(\(url), client_id \(clientID), prefix \(prefix), user \(username ?? "none"), password \(password == nil ? "none" : "<redacted>"))"
    }

    public var debugDescription: String { description }
}
