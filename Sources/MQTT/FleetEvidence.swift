import FoundationEssentials
import NearbyProtocol
import SystemCall

/// The fleet's topics and payloads (docs/mqtt.md, "Rooms"), written and read without I/O. What other
/// gateways publish is outside input: every payload is checked (size, JSON, room name, numbers) and
/// refused with a reason, never trusted.
enum FleetEvidence {
    /// Payloads longer than this are refused unread (ours are ~150 bytes).
    static let maxPayload = 1024
    /// A message's topic levels after `evidence/<gateway>/` or `room/` (a beacon's have up to 4).
    static let maxLevels = 8

    /// `{"gateway":…,"room":…,"rssi_avg":…,"audio":…,"at":…}`: `at` is when the gateway last said it
    /// still has the message (a refresh, or a found or signal event).
    static func payload(gateway: String, evidence: RoomEvidence, at date: Date) -> String {
        var json = JSONObjectWriter()
        json.add("gateway", gateway)
        json.add("room", evidence.room)
        json.add("rssi_avg", rawJSON: evidence.rssi.map { String(cFormat: "%.1f", $0) } ?? "null")
        json.add("audio", evidence.audio)
        json.add("at", SightingEvent.timestamp(date))
        return json.string
    }

    /// The decision: `{"room":"kitchen"}`, or `{"room":null}` when no gateway has the message. Only the
    /// room, so every gateway that publishes a decision publishes the very same bytes.
    static func decision(_ room: String?) -> String {
        var json = JSONObjectWriter()
        json.add("room", room)
        return json.string
    }

    enum Parsed: Equatable {
        /// Evidence of `gateway` for the message `key` (nil evidence: withdrawn, an empty payload).
        case evidence(key: String, gateway: String, RoomEvidence?)
        /// The fleet's decision for `key`.
        case decision(key: String, room: String?)
        case refused(String)
        /// Not a fleet topic (nothing to say).
        case ignored
    }

    /// What a message on `<fleet>/evidence/…` or `<fleet>/room/…` says. Evidence whose `at` is older
    /// than `maxAge` by this gateway's clock is refused: a dead gateway's retained evidence, found on
    /// the broker by a gateway started later. An `at` in the future is taken (clocks differ).
    static func parse(topic: String, payload: [UInt8], fleet: String, now date: Date, maxAge: Duration) -> Parsed {
        guard topic.hasPrefix(fleet + "/") else { return .ignored }
        let rest = topic.dropFirst(fleet.count + 1)
        guard payload.count <= maxPayload else { return .refused("payload of \(payload.count) bytes (at most \(maxPayload))") }
        if rest.hasPrefix("room/") {
            let key = String(rest.dropFirst("room/".count))
            guard keyIsValid(key) else { return .refused("bad message topic") }
            if payload.isEmpty { return .decision(key: key, room: nil) }
            guard let wire = try? JSONDecoder().decode(DecisionWire.self, from: Data(payload)) else { return .refused("not a decision's JSON") }
            if let room = wire.room, let problem = MQTTSettings.roomProblem(room) { return .refused("room \(problem)") }
            return .decision(key: key, room: wire.room)
        }
        guard rest.hasPrefix("evidence/") else { return .ignored }
        let levels = rest.dropFirst("evidence/".count)
        guard let slash = levels.firstIndex(of: "/") else { return .refused("no message in the topic") }
        let gateway = String(levels[..<slash]), key = String(levels[levels.index(after: slash)...])
        guard !gateway.isEmpty, gateway.utf8.count <= 92, keyIsValid(key) else { return .refused("bad gateway or message topic") }
        if payload.isEmpty { return .evidence(key: key, gateway: gateway, nil) }
        guard let wire = try? JSONDecoder().decode(EvidenceWire.self, from: Data(payload)) else { return .refused("not evidence's JSON") }
        if let problem = MQTTSettings.roomProblem(wire.room) { return .refused("room \(problem)") }
        if let rssi = wire.rssi_avg, !(rssi.isFinite && (-130...30).contains(rssi)) { return .refused("rssi_avg \(rssi) out of range -130…30") }
        guard let at = try? Date(wire.at, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) else {
            return .refused("at \(wire.at.prefix(40)) is not an ISO 8601 time")
        }
        let age = date.timeIntervalSince(at)
        if age > Double(maxAge.components.seconds) { return .refused("stale: at is \(Int(age)) s old") }
        return .evidence(key: key, gateway: gateway, RoomEvidence(room: wire.room, rssi: wire.rssi_avg, audio: wire.audio))
    }

    /// A message's topic levels: not empty, no empty level, no wildcard, bounded.
    static func keyIsValid(_ key: String) -> Bool {
        !key.isEmpty && key.utf8.count <= 512 && !key.contains("+") && !key.contains("#")
            && !key.split(separator: "/", omittingEmptySubsequences: false).contains(where: \.isEmpty)
            && key.split(separator: "/").count <= maxLevels
    }

    private struct EvidenceWire: Decodable {
        var room: String
        var rssi_avg: Double?
        var audio: Bool
        var at: String
    }

    private struct DecisionWire: Decodable {
        var room: String?
    }

    /// A stable 32-bit FNV-1a of `text`, hex: the same on every gateway (Swift's `Hasher` is seeded per
    /// process), so every gateway names a message's Home Assistant entity alike.
    static func stableHash(_ text: String) -> String {
        var hash: UInt32 = 0x811C_9DC5
        for byte in text.utf8 { hash = (hash ^ UInt32(byte)) &* 0x0100_0193 }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 8 - hex.count) + hex
    }
}
