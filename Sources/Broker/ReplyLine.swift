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

    /// `event(topic:json:retained:)` as bytes, the way the broker queues it. The JSON is walked as
    /// bytes when it is ASCII without CR or LF (what the manager sends: one byte is one Character,
    /// so the rules above apply unchanged); anything else takes the Character path.
    public static func eventBytes(topic: String, json: String, retained: Bool) -> [UInt8] {
        let fast = json.utf8.withContiguousStorageIfAvailable { bytes -> [UInt8]? in
            guard !bytes.contains(where: { $0 >= 0x80 || $0 == 0x0A || $0 == 0x0D }) else { return nil }
            let member: StaticString = retained ? "\"retained\":true" : "\"retained\":false"
            let memberBytes = UnsafeBufferPointer(start: member.utf8Start, count: member.utf8CodeUnitCount)
            var end = bytes.count
            while end > 0, bytes[end - 1] == UInt8(ascii: " ") { end -= 1 }
            var line: [UInt8] = []
            line.reserveCapacity(topic.utf8.count + bytes.count + memberBytes.count + 3)
            line += topic.utf8
            line.append(UInt8(ascii: " "))
            guard end >= 2, bytes[0] == UInt8(ascii: "{"), bytes[end - 1] == UInt8(ascii: "}") else {
                line += bytes   // not an object: as given
                line.append(UInt8(ascii: "\n"))
                return line
            }
            if bytes[1..<(end - 1)].allSatisfy({ $0 == UInt8(ascii: " ") }) {
                line.append(UInt8(ascii: "{"))
            } else {
                line += bytes[0..<(end - 1)]
                line.append(UInt8(ascii: ","))
            }
            line += memberBytes
            line.append(UInt8(ascii: "}"))
            line.append(UInt8(ascii: "\n"))
            return line
        }
        if let fast = fast ?? nil { return fast }
        return Array(event(topic: topic, json: json, retained: retained).utf8)
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
        // CR and LF are always graphemes of their own (or CR LF together), so a byte scan finds
        // them as the Character scan below would, without breaking the text into graphemes.
        guard text.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D }) else { return text }
        return String(text.map { $0 == "\n" || $0 == "\r" || $0 == "\r\n" ? " " : $0 })
    }
}
