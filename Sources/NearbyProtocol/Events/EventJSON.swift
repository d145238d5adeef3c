import FoundationEssentials

/// Writes one-line JSON objects for socket events, members in the order added (stable for people and
/// for tests). Small on purpose: events are flat objects of strings, numbers, booleans and nulls.
public struct JSONObjectWriter: Sendable {
    private var members: [String] = []

    public init() {}

    public mutating func add(_ key: String, _ value: String?) {
        members.append("\(Self.quote(key)):\(value.map(Self.quote) ?? "null")")
    }

    public mutating func add(_ key: String, _ value: Int?) {
        members.append("\(Self.quote(key)):\(value.map { String($0) } ?? "null")")
    }

    public mutating func add(_ key: String, _ value: Bool) {
        members.append("\(Self.quote(key)):\(value)")
    }

    /// `json` must already be valid JSON (a nested object or array).
    public mutating func add(_ key: String, rawJSON json: String) {
        members.append("\(Self.quote(key)):\(json)")
    }

    public var string: String { "{" + members.joined(separator: ",") + "}" }

    public static func quote(_ text: String) -> String {
        var out = "\""
        out.reserveCapacity(text.utf8.count + 2)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar == "\u{2028}" || scalar == "\u{2029}":
                out += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count) + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

/// The documented found/lost event (docs/socket-protocol.md), so the manager and the docs agree.
public enum SightingEvent {
    public static func topic(_ kind: Kind, namespace: String, type: String) -> String {
        "\(kind.rawValue)/\(namespace)/\(type)"
    }

    public enum Kind: String, Sendable { case found, lost }

    /// `extra` members (beacon fields such as `url` or `tlm`) come after the standard ones.
    public static func json(
        message: Message, medium: Medium, rssi: Int?, firstSeen: Date, lastSeen: Date,
        extra: (inout JSONObjectWriter) -> Void = { _ in }
    ) -> String {
        var writer = JSONObjectWriter()
        writer.add("namespace", message.namespace)
        writer.add("type", message.type)
        writer.add("content", Base64.encode(message.content))
        writer.add("text", String(validating: message.content, as: UTF8.self))
        writer.add("medium", medium.rawValue)
        writer.add("rssi", rssi)
        writer.add("first_seen", timestamp(firstSeen))
        writer.add("last_seen", timestamp(lastSeen))
        extra(&writer)
        return writer.string
    }

    /// ISO 8601 in UTC with milliseconds, e.g. `2025-01-31T12:00:00.250Z`.
    public static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}
