import FoundationEssentials
import NearbyProtocol

/// What `nearby-gateway monitor` shows a person: the found messages (one row per topic and content,
/// removed on `lost`) and the latest `$SYS` state. Pure: lines in, text out, time passed in.
///
/// A found event comes once, when an entry is first found, so its `last_seen` is its first sighting;
/// the AGE column (time since last seen) is kept current from `GET found` replies (`refresh`), whose
/// `$SYS/found` lines carry every entry's latest `last_seen`.
public struct MonitorTable: Sendable {
    public struct Row: Sendable, Equatable {
        public var namespace: String
        public var type: String
        public var content: String   // the text, or `base64:...` for binary content
        public var medium: String
        /// The smoothed RSSI (`rssi_avg`, rounded) where the event has one, else the last sighting's.
        public var rssi: Int?
        public var lastSeen: Date
        /// Metres (`distance_m`), when the gateway could estimate them.
        public var distance: Double? = nil
    }

    /// Found rows by topic and content, in the order first found.
    public private(set) var rows: [Row] = []
    private var rowKeys: [String] = []
    /// Latest `$SYS` event per topic (without the `retained` member); errors cleared are removed.
    public private(set) var system: [(topic: String, json: String)] = []

    public init() {}

    /// Splits an event line into its topic and JSON; nil for replies (`OK`, `PONG`, `ERR`).
    public static func event(_ line: String) -> (topic: String, json: String)? {
        guard let space = line.firstIndex(of: " ") else { return nil }
        let topic = String(line[..<space])
        if ["OK", "PONG", "ERR"].contains(topic) { return nil }
        return (topic, String(line[line.index(after: space)...]))
    }

    private struct Sighting: Decodable {
        var namespace: String?
        var type: String?
        var content: String?
        var text: String?
        var medium: String?
        var rssi: Int?
        var rssi_avg: Double?
        var distance_m: Double?
        var last_seen: String?

        var shownRSSI: Int? { rssi_avg.map { Int($0.rounded()) } ?? rssi }
    }

    public mutating func ingest(_ line: String, now: Date) {
        guard let (topic, json) = Self.event(line) else { return }
        if topic.hasPrefix("$SYS/") {
            ingestSystem(topic: topic, json: json)
            return
        }
        let levels = topic.split(separator: "/", maxSplits: 1)
        guard levels.count == 2, levels[0] == "found" || levels[0] == "lost" || levels[0] == "signal",
              let sighting = try? JSONDecoder().decode(Sighting.self, from: Data(json.utf8)) else { return }
        let key = Self.key(sighting)
        let index = rowKeys.firstIndex(of: key)
        if levels[0] == "signal" {
            // A signal event moves an existing row's RSSI and distance; it never adds a row.
            if let index {
                rows[index].rssi = sighting.shownRSSI
                rows[index].distance = sighting.distance_m
            }
            return
        }
        if levels[0] == "lost" {
            if let index {
                rows.remove(at: index)
                rowKeys.remove(at: index)
            }
            return
        }
        let seen = Self.date(sighting.last_seen) ?? now
        let row = Row(namespace: sighting.namespace ?? "", type: sighting.type ?? "",
                      content: sighting.text ?? "base64:" + (sighting.content ?? ""),
                      medium: sighting.medium ?? "", rssi: sighting.shownRSSI, lastSeen: seen, distance: sighting.distance_m)
        if let index {
            rows[index] = row
        } else {
            rows.append(row)
            rowKeys.append(key)
        }
    }

    /// One entry: the same fields in found and lost events and in `GET found`.
    private static func key(_ sighting: Sighting) -> String {
        "\(sighting.namespace ?? "")\u{0}\(sighting.type ?? "")\u{0}\(sighting.content ?? "")"
    }

    private static func date(_ text: String?) -> Date? {
        text.flatMap { try? Date($0, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) }
    }

    /// One line of a `GET found` reply (`$SYS/found {…}`, one per entry, docs/socket-protocol.md):
    /// that row's last sighting, and its RSSI, move on. Rows not listed are left alone (their lost
    /// event is on its way); any other line is ignored.
    public mutating func refresh(_ line: String) {
        guard line.hasPrefix(Self.foundListPrefix),
              let sighting = try? JSONDecoder().decode(Sighting.self, from: Data(line.dropFirst(Self.foundListPrefix.utf8.count).utf8)),
              let index = rowKeys.firstIndex(of: Self.key(sighting)), let seen = Self.date(sighting.last_seen) else { return }
        rows[index].lastSeen = max(rows[index].lastSeen, seen)
        if let rssi = sighting.shownRSSI { rows[index].rssi = rssi }
        if let metres = sighting.distance_m { rows[index].distance = metres }
    }

    /// What each line of a `GET found` reply starts with.
    public static let foundListPrefix = "$SYS/found "

    private mutating func ingestSystem(topic: String, json: String) {
        let cleaned = json.replacing(#","retained":true}"#, with: "}")
            .replacing(#","retained":false}"#, with: "}")
            .replacing(#"{"retained":true}"#, with: "{}")
            .replacing(#"{"retained":false}"#, with: "{}")
        system.removeAll { $0.topic == topic }
        if topic == "$SYS/dropped" || cleaned.contains(#""set":false"#) { return }   // transient, or a cleared error
        system.append((topic, cleaned))
        system.sort { $0.topic < $1.topic }
    }

    /// The whole screen, `width` columns wide.
    public func render(now: Date, width: Int, header: String) -> [String] {
        var lines = [clip(TerminalText.escape(header), width), ""]
        let columns = [("NAMESPACE", 16), ("TYPE", 16), ("CONTENT", max(10, width - 16 - 16 - 8 - 6 - 7 - 7 - 6)), ("MEDIUM", 8), ("RSSI", 6),
                       ("DIST", 7), ("AGE", 7)]
        lines.append(clip(columns.map { pad($0.0, $0.1) }.joined(separator: " "), width))
        for row in rows {
            let cells = [row.namespace, row.type, row.content, row.medium, row.rssi.map(String.init) ?? "-",
                         row.distance.map { Self.metres($0) } ?? "-", Self.age(now.timeIntervalSince(row.lastSeen))]
            lines.append(clip(zip(cells, columns).map { pad($0.0, $0.1.1) }.joined(separator: " "), width))
        }
        if rows.isEmpty { lines.append("(nothing found yet)") }
        if !system.isEmpty {
            lines.append("")
            for entry in system { lines.append(clip(TerminalText.escape("\(entry.topic) \(entry.json)"), width)) }
        }
        return lines
    }

    /// One line per event for a log or a pipe (when stdout is not a terminal); control characters
    /// of the content (and anything else) escaped, since a pipe often ends in a terminal.
    public static func plainLine(_ line: String) -> String? {
        guard let (topic, json) = event(line) else { return nil }
        guard !topic.hasPrefix("$SYS/"), let sighting = try? JSONDecoder().decode(Sighting.self, from: Data(json.utf8)) else {
            return TerminalText.escape("\(topic) \(json)")
        }
        let content = sighting.text.map { "\"\($0)\"" } ?? "base64:" + (sighting.content ?? "")
        return TerminalText.escape("\(topic) \(content) medium=\(sighting.medium ?? "-") rssi=\(sighting.shownRSSI.map(String.init) ?? "-")"
            + (sighting.distance_m.map { " distance=" + metres($0) } ?? ""))
    }

    /// "0.8m", "12m": a tenth of a metre means nothing past 10 m (docs/behaviour.md).
    static func metres(_ value: Double) -> String {
        value < 10 ? "\((value * 10).rounded() / 10)m" : "\(Int(value.rounded()))m"
    }

    static func age(_ seconds: TimeInterval) -> String {
        let whole = max(0, Int(seconds))
        if whole < 60 { return "\(whole)s" }
        if whole < 3600 { return "\(whole / 60)m\(whole % 60)s" }
        return "\(whole / 3600)h\(whole % 3600 / 60)m"
    }

    private func pad(_ text: String, _ width: Int) -> String {
        // Escaped before the width is counted, so a cell's escapes never push the columns out.
        let printable = TerminalText.escape(text)
        if printable.count > width { return String(printable.prefix(width - 1)) + "…" }
        return printable + String(repeating: " ", count: width - printable.count)
    }

    private func clip(_ line: String, _ width: Int) -> String {
        line.count > width ? String(line.prefix(width)) : line
    }
}
