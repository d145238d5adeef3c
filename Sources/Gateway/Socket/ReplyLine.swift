/// How replies and events are written on the wire. Pure; one place so the broker and the docs agree.
public enum ReplyLine {
    public static let pong = "PONG\n"

    public static func encode(_ reply: SocketReply) -> String {
        switch reply {
        case .ok(nil): "OK\n"
        case .ok(let detail?): detail.isEmpty ? "OK\n" : "OK \(oneLine(detail))\n"
        case .error(let code, let text): error(code, text)
        case .event(let topic, let json): event(topic: topic, json: json, retained: false)
        }
    }

    public static func error(_ code: SocketErrorCode, _ text: String) -> String {
        "ERR \(code.rawValue) \(oneLine(text))\n"
    }

    public static func error(_ error: SocketProtocolError) -> String {
        Self.error(error.code, error.text)
    }

    /// `<topic> <json>` with `"retained":<flag>` added as the object's last member.
    public static func event(topic: String, json: String, retained: Bool) -> String {
        "\(topic) \(withRetained(oneLine(json), retained))\n"
    }

    static func withRetained(_ json: String, _ retained: Bool) -> String {
        let member = "\"retained\":\(retained)"
        var trimmed = Substring(json)
        while let last = trimmed.last, last == " " { trimmed.removeLast() }
        guard trimmed.first == "{", trimmed.last == "}" else { return json }   // not an object: as given
        let body = trimmed.dropFirst().dropLast()
        if body.allSatisfy({ $0 == " " }) { return "{\(member)}" }
        return "\(trimmed.dropLast()),\(member)}"
    }

    /// A reply is one line: newlines in a detail would desynchronise every client that reads lines.
    static func oneLine(_ text: String) -> String {
        guard text.contains(where: { $0 == "\n" || $0 == "\r" || $0 == "\r\n" }) else { return text }
        return String(text.map { $0 == "\n" || $0 == "\r" || $0 == "\r\n" ? " " : $0 })
    }
}
