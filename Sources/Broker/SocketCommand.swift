import NearbyProtocol
/// One client line, parsed. Pure: no I/O, every failure is a `SocketProtocolError` with its ERR code.
public enum SocketCommand: Sendable, Equatable {
    case subscribe(TopicFilter)
    case unsubscribe(TopicFilter)
    case ping
    case request(SocketRequest)

    /// Parses one line without its terminator. Returns nil for a blank line (ignored, no reply), so a
    /// person typing into `socat` can press Enter safely.
    public static func parse(_ line: some Collection<UInt8>) throws(SocketProtocolError) -> SocketCommand? {
        if line.contains(0) { throw SocketProtocolError(.badEncoding, "the line contains NUL") }
        guard let text = String(validating: line, as: UTF8.self) else {
            throw SocketProtocolError(.badEncoding, "the line is not valid UTF-8")
        }
        return try parse(text)
    }

    public static func parse(_ text: String) throws(SocketProtocolError) -> SocketCommand? {
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard let verb = words.first else { return nil }
        let arguments = Array(words.dropFirst())
        switch verb.uppercased() {
        case "PING":
            try expect(arguments, count: 0, usage: "PING")
            return .ping
        case "SUB":
            try expect(arguments, count: 1, usage: "SUB <filter>")
            return .subscribe(try filter(arguments[0]))
        case "UNSUB":
            try expect(arguments, count: 1, usage: "UNSUB <filter>")
            return .unsubscribe(try filter(arguments[0]))
        case "PUB":
            return .request(.publish(try PublishParser.parse(arguments)))
        case "UNPUB":
            try expect(arguments, count: 1, usage: "UNPUB <handle>")
            return .request(.unpublish(handle: try handle(arguments[0])))
        case "SUBSCRIBE":
            return .request(.subscribeMessages(try PublishParser.subscription(arguments)))
        case "UNSUBSCRIBE":
            try expect(arguments, count: 1, usage: "UNSUBSCRIBE <handle>")
            return .request(.unsubscribeMessages(handle: try handle(arguments[0])))
        case "SET":
            try expect(arguments, count: 2, usage: "SET permission|background|power|debug <value>")
            return .request(.set(try setting(key: arguments[0], value: arguments[1])))
        case "GET":
            try expect(arguments, count: 1, usage: "GET <key>")
            guard let key = SocketGetKey(rawValue: arguments[0].lowercased()) else {
                throw SocketProtocolError(.badArgument, "unknown key '\(arguments[0])'; keys: \(SocketGetKey.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return .request(.get(key))
        default:
            throw SocketProtocolError(.unknownVerb, "unknown verb '\(verb.prefix(32))'; verbs: SUB UNSUB PUB UNPUB SUBSCRIBE UNSUBSCRIBE SET GET PING")
        }
    }

    static func expect(_ arguments: [Substring], count: Int, usage: String) throws(SocketProtocolError) {
        if arguments.count < count { throw SocketProtocolError(.missingArgument, "usage: \(usage)") }
        if arguments.count > count { throw SocketProtocolError(.badArgument, "too many arguments; usage: \(usage)") }
    }

    private static func filter(_ word: Substring) throws(SocketProtocolError) -> TopicFilter {
        do {
            return try TopicFilter(parsing: String(word))
        } catch {
            throw SocketProtocolError(.badFilter, "\(error)")
        }
    }

    /// Handles are the manager's words; the bound keeps a hostile line from becoming a huge key.
    private static func handle(_ word: Substring) throws(SocketProtocolError) -> String {
        guard word.utf8.count <= 64 else { throw SocketProtocolError(.badArgument, "a handle is at most 64 bytes") }
        return String(word)
    }

    private static func setting(key: Substring, value: Substring) throws(SocketProtocolError) -> SocketSetting {
        let lowered = value.lowercased()
        switch key.lowercased() {
        case "permission":
            guard let permission = Permission(rawValue: lowered) else {
                throw SocketProtocolError(.badArgument, "permission is granted, denied or undecided")
            }
            return .permission(permission)
        case "power":
            guard let power = PowerState(rawValue: lowered) else {
                throw SocketProtocolError(.badArgument, "power is active or standby")
            }
            return .power(power)
        case "background":
            return .background(try onOff(lowered, key: "background"))
        case "debug":
            return .debug(try onOff(lowered, key: "debug"))
        default:
            throw SocketProtocolError(.badArgument, "unknown key '\(key.prefix(32))'; keys: permission, background, power, debug")
        }
    }

    private static func onOff(_ value: String, key: String) throws(SocketProtocolError) -> Bool {
        switch value {
        case "on", "true": return true
        case "off", "false": return false
        default: throw SocketProtocolError(.badArgument, "\(key) is on or off")
        }
    }
}

/// `PUB <ns>/<type> <base64> [mediums=ble,audio] [mode=broadcast|scan|both]`.
enum PublishParser {
    static let usage = "PUB <namespace>/<type> <base64> [mediums=ble,audio] [mode=broadcast|scan|both]"

    static func parse(_ arguments: [Substring]) throws(SocketProtocolError) -> PublishRequest {
        guard arguments.count >= 2 else { throw SocketProtocolError(.missingArgument, "usage: \(usage)") }
        let (namespace, type) = try names(arguments[0])
        guard let content = Base64.decode(arguments[1]) else {
            throw SocketProtocolError(.badBase64, "content is not canonical base64 (RFC 4648 standard alphabet)")
        }
        var request = PublishRequest(message: Message(namespace: namespace, type: type, content: content))
        try options(arguments.dropFirst(2), usage: usage, mediums: &request.mediums, mode: &request.mode)
        return request
    }

    static let subscribeUsage = "SUBSCRIBE <namespace>/<type|*> [mediums=ble,audio] [mode=broadcast|scan|both]"

    /// `SUBSCRIBE`: the same names (a type may be `*`, as in `[[subscription]]`) and options as PUB.
    static func subscription(_ arguments: [Substring]) throws(SocketProtocolError) -> SubscribeRequest {
        guard let topic = arguments.first else { throw SocketProtocolError(.missingArgument, "usage: \(subscribeUsage)") }
        let wildcard = topic.hasSuffix("/*") && topic.filter { $0 == "/" }.count == 1
        // As in [[subscription]]: "*" matches types; as a namespace `names` refuses it.
        let (namespace, type) = try names(wildcard ? Substring(String(topic.dropLast()) + "any") : topic)
        var request = SubscribeRequest(namespace: namespace, type: wildcard ? "*" : type)
        try options(arguments.dropFirst(), usage: subscribeUsage, mediums: &request.mediums, mode: &request.mode)
        return request
    }

    private static func options(_ arguments: ArraySlice<Substring>, usage: String, mediums requested: inout Set<Medium>,
                                mode requestedMode: inout DiscoveryMode) throws(SocketProtocolError) {
        var seen: Set<Substring> = []
        for option in arguments {
            guard let equals = option.firstIndex(of: "=") else {
                throw SocketProtocolError(.badArgument, "expected key=value, got '\(option.prefix(32))'; usage: \(usage)")
            }
            let key = option[..<equals], value = option[option.index(after: equals)...]
            guard seen.insert(key).inserted else { throw SocketProtocolError(.badArgument, "'\(key.prefix(32))' given twice") }
            switch key {
            case "mediums": requested = try mediums(value)
            case "mode":
                guard let mode = DiscoveryMode(rawValue: String(value)) else {
                    throw SocketProtocolError(.badArgument, "mode is broadcast, scan or both")
                }
                requestedMode = mode
            default:
                throw SocketProtocolError(.badArgument, "unknown option '\(key.prefix(32))'; options: mediums, mode")
            }
        }
    }

    private static func mediums(_ value: Substring) throws(SocketProtocolError) -> Set<Medium> {
        var result: Set<Medium> = []
        for name in value.split(separator: ",", omittingEmptySubsequences: false) {
            guard let medium = Medium(rawValue: String(name)) else {
                throw SocketProtocolError(.badArgument, "mediums is a comma-separated list of ble, audio")
            }
            guard result.insert(medium).inserted else {
                throw SocketProtocolError(.badArgument, "mediums lists \(medium.rawValue) twice")
            }
        }
        return result
    }

    /// Namespace and type become topic levels (`found/<ns>/<type>`), so they must be valid levels.
    static func names(_ word: Substring) throws(SocketProtocolError) -> (String, String) {
        let parts = word.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 else {
            throw SocketProtocolError(.badTopic, "expected <namespace>/<type> with exactly one '/'")
        }
        for (part, name) in [(parts[0], "namespace"), (parts[1], "type")] {
            // The config's rule (check-config), so PUB accepts exactly what a [[publication]] may hold.
            if let problem = Message.nameProblem(String(part), isNamespace: name == "namespace") {
                throw SocketProtocolError(.badTopic, "the \(name) \(problem)")
            }
        }
        return (String(parts[0]), String(parts[1]))
    }
}

public struct SocketProtocolError: Error, Equatable, Sendable, CustomStringConvertible {
    public var code: SocketErrorCode
    public var text: String

    public init(_ code: SocketErrorCode, _ text: String) {
        self.code = code
        self.text = text
    }

    public var description: String { "\(code.rawValue) \(text)" }
}
