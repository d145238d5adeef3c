import FoundationEssentials
import SystemCall

/// Writes one-line JSON objects for socket events, members in the order added (stable for people and
/// for tests). Small on purpose: events are flat objects of strings, numbers, booleans and nulls.
/// One byte buffer, escaped byte by byte: an event is written once per found, lost or signal change,
/// on the loop that reads the adverts (docs/architecture.md), so it must not cost a string per member.
public struct JSONObjectWriter: Sendable {
    private var bytes: [UInt8] = [UInt8(ascii: "{")]

    public init() {
        // A found iBeacon's event is ~450 bytes: written without growing.
        bytes.reserveCapacity(512)
    }

    public mutating func add(_ key: String, _ value: String?) {
        member(key)
        if let value { Self.appendQuoted(value, to: &bytes) } else { bytes.append(contentsOf: Self.null) }
    }

    public mutating func add(_ key: String, _ value: Int?) {
        member(key)
        if let value { bytes.append(contentsOf: String(value).utf8) } else { bytes.append(contentsOf: Self.null) }
    }

    public mutating func add(_ key: String, _ value: Bool) {
        member(key)
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    /// `value` as printf's `%.<digits>f` (`FixedPoint`), or null.
    public mutating func add(_ key: String, fixed value: Double?, digits: Int) {
        member(key)
        if let value { FixedPoint.append(value, digits: digits, to: &bytes) } else { bytes.append(contentsOf: Self.null) }
    }

    /// `json` must already be valid JSON (a nested object or array).
    public mutating func add(_ key: String, rawJSON json: String) {
        member(key)
        bytes.append(contentsOf: json.utf8)
    }

    /// The object, closed: written once into the string's storage (no array for the closing brace).
    public var string: String {
        bytes.withUnsafeBufferPointer { written in
            String(unsafeUninitializedCapacity: written.count + 1) { text in
                _ = text.initialize(fromContentsOf: written)
                text[written.count] = UInt8(ascii: "}")
                return written.count + 1
            }
        }
    }

    public static func quote(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + 2)
        appendQuoted(text, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    private static let null = Array("null".utf8)

    private mutating func member(_ key: String) {
        if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
        Self.appendQuoted(key, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
    }

    /// `text` as a JSON string. Escaped besides the quote, the backslash and C0: DEL and the C1
    /// controls (NEL splits lines for Python's splitlines()), and the two JavaScript line separators
    /// U+2028 and U+2029, so a consumer's line splitting never cuts an event. Valid UTF-8 in, so a
    /// byte ≥ 0x80 is part of a whole scalar: C1 is C2 80…9F, the separators E2 80 A8/A9.
    static func appendQuoted(_ text: String, to out: inout [UInt8]) {
        // Most texts (member names, topics, timestamps) escape nothing: copied whole.
        let copied = text.utf8.withContiguousStorageIfAvailable { utf8 -> Bool in
            guard !utf8.contains(where: mayEscape) else { return false }
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: utf8)
            out.append(UInt8(ascii: "\""))
            return true
        }
        if copied == true { return }
        out.append(UInt8(ascii: "\""))
        var utf8 = text.utf8.makeIterator()
        var pending: UInt8? = nil
        while let byte = pending ?? utf8.next() {
            pending = nil
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case UInt8(ascii: "\n"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case UInt8(ascii: "\r"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case UInt8(ascii: "\t"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20, 0x7F: appendEscape(UInt32(byte), to: &out)
            case 0xC2:
                guard let next = utf8.next() else { out.append(byte); continue }
                if (0x80...0x9F).contains(next) { appendEscape(UInt32(next), to: &out) } else { out.append(byte); pending = next }
            case 0xE2:
                guard let second = utf8.next() else { out.append(byte); continue }
                guard second == 0x80, let third = utf8.next() else { out.append(byte); pending = second; continue }
                if third == 0xA8 || third == 0xA9 {
                    appendEscape(0x2000 | UInt32(third - 0x80), to: &out)
                } else {
                    out.append(contentsOf: [byte, second])
                    pending = third
                }
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// A byte the loop below may escape: the quote, the backslash, C0, DEL, and the lead bytes of
    /// C1 and of the line separators.
    @inline(__always)
    private static func mayEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == 0x7F || byte == 0xC2 || byte == 0xE2
    }

    /// `\u` and four lowercase hex digits.
    private static func appendEscape(_ value: UInt32, to out: inout [UInt8]) {
        let digits = Array("0123456789abcdef".utf8)
        out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u")])
        for shift in stride(from: 12, through: 0, by: -4) { out.append(digits[Int((value >> UInt32(shift)) & 0xF)]) }
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
    /// Written by hand from the day count (Howard Hinnant's civil-from-days): Foundation's
    /// formatter cost ~30 µs a call, twice per event, on the loop that reads the adverts.
    public static func timestamp(_ date: Date) -> String {
        // From the reference date, as Foundation keeps it: seconds since 1970 would round first.
        let sinceReference = date.timeIntervalSinceReferenceDate
        let seconds = sinceReference.rounded(.down)
        let milliseconds = (Int64(seconds) + 978_307_200) * 1000 + Int64((sinceReference - seconds) * 1000)
        let (days, dayMilliseconds) = milliseconds.quotientAndRemainder(dividingBy: 86_400_000)
        let (day, millisecond) = dayMilliseconds < 0 ? (days - 1, dayMilliseconds + 86_400_000) : (days, dayMilliseconds)
        let shifted = day + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let dayOfMonth = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        var out: [UInt8] = []
        out.reserveCapacity(24)
        func digits(_ value: Int64, _ count: Int) {
            var divisor: Int64 = 1
            for _ in 1..<count { divisor *= 10 }
            var rest = value
            for _ in 0..<count {
                out.append(UInt8(ascii: "0") + UInt8(rest / divisor % 10))
                rest %= divisor
                divisor /= 10
            }
        }
        digits(year, 4); out.append(UInt8(ascii: "-")); digits(month, 2); out.append(UInt8(ascii: "-")); digits(dayOfMonth, 2)
        out.append(UInt8(ascii: "T"))
        digits(millisecond / 3_600_000, 2); out.append(UInt8(ascii: ":"))
        digits(millisecond / 60_000 % 60, 2); out.append(UInt8(ascii: ":"))
        digits(millisecond / 1000 % 60, 2); out.append(UInt8(ascii: "."))
        digits(millisecond % 1000, 3); out.append(UInt8(ascii: "Z"))
        return String(decoding: out, as: UTF8.self)
    }
}
