/// When one room takes a message from another (docs/behaviour.md, "Rooms across gateways").
public struct RoomRule: Sendable, Equatable {
    /// dB by which a challenger's smoothed RSSI must beat the current room's. Twice the signal events'
    /// 3 dB step: each gateway's reported value lags its smoothed one by less than 3 dB, so two rooms
    /// that hear a message equally never look `margin` apart. No more than that: in the simulated
    /// house (docs/rooms.md) 8 dB left a person who stood 0.3-0.6 m from a wall in the room they had
    /// walked into in the room they had left (the wall and the distance make 4-8 dB) for minutes.
    public var margin: Double
    /// How long a challenger must keep beating the current room before it takes the message.
    public var dwell: Duration
    /// Evidence counts for this long after it was received; live gateways refresh theirs well within it.
    public var expiry: Duration
    /// After (re)connecting, no decision for this long: every live gateway's evidence has arrived by then,
    /// so a gateway never overturns the fleet's decision on the evidence of the first few gateways heard.
    public var settle: Duration

    public init(margin: Double = 6, dwell: Duration = .seconds(5), expiry: Duration = .seconds(20), settle: Duration = .seconds(6)) {
        self.margin = margin
        self.dwell = dwell
        self.expiry = expiry
        self.settle = settle
    }
}

/// What one gateway says about one message: its room, the smoothed RSSI there, and whether it heard
/// the message over audio (near-ultrasound does not pass walls).
public struct RoomEvidence: Sendable, Equatable {
    public var room: String
    public var rssi: Double?
    public var audio: Bool

    public init(room: String, rssi: Double?, audio: Bool) {
        self.room = room
        self.rssi = rssi
        self.audio = audio
    }

    /// Audio beats BLE; then the stronger RSSI (none is weakest).
    func beats(_ other: RoomEvidence, by margin: Double) -> Bool {
        if audio != other.audio { return audio }
        guard let rssi else { return false }
        guard let theirs = other.rssi else { return true }
        return rssi >= theirs + margin
    }

    /// The order of rooms when there is no current one to keep: audio, stronger, then by name, so every
    /// gateway with the same evidence picks the same room.
    static func ranksBefore(_ a: RoomEvidence, _ b: RoomEvidence) -> Bool {
        if a.audio != b.audio { return a.audio }
        if a.rssi != b.rssi { return (a.rssi ?? -.infinity) > (b.rssi ?? -.infinity) }
        return a.room.utf8.lexicographicallyPrecedes(b.room.utf8)
    }
}

/// The room each message is in, from the evidence of every gateway of a fleet. Pure and clock-free:
/// every call takes the instant. Each gateway runs one; they agree because the input is the same
/// (every gateway's evidence through the broker) and the current room is the fleet's (`adopt` takes
/// the decision another gateway published), so a gateway only ever publishes a change the rule makes.
///
/// Bounded: at most `maxKeys` messages and `maxGateways` gateways per message, whatever arrives.
public struct RoomDecider<Key: Hashable & Sendable>: Sendable {
    struct Held: Sendable {
        var evidence: RoomEvidence
        var expires: ContinuousClock.Instant
    }

    struct Track: Sendable {
        var byGateway: [String: Held] = [:]
        var room: String?
        /// The room that beats the current one, and since when.
        var challenger: (room: String, since: ContinuousClock.Instant)?
        /// A change not yet returned by `decide` (adopted decisions are not changes).
        var changed = false
    }

    public let rule: RoomRule
    public let maxKeys: Int
    public let maxGateways: Int
    private(set) var tracks: [Key: Track] = [:]
    /// Until then `decide` decides nothing (`listen`).
    private var settling: ContinuousClock.Instant?

    public init(rule: RoomRule = RoomRule(), maxKeys: Int = 1024, maxGateways: Int = 32) {
        self.rule = rule
        self.maxKeys = max(1, maxKeys)
        self.maxGateways = max(1, maxGateways)
    }

    /// The room `key` is in now, as far as this gateway knows; nil when none.
    public func room(_ key: Key) -> String? { tracks[key]?.room }
    public var count: Int { tracks.count }

    /// (Re)connected at `now`: decisions wait `rule.settle` for the fleet's evidence.
    public mutating func listen(now: ContinuousClock.Instant) {
        settling = now + rule.settle
    }

    /// `gateway` says `evidence` about `key` at `now`; it counts until `now + rule.expiry` unless
    /// renewed. False when refused: too many messages or gateways already.
    @discardableResult
    public mutating func record(_ key: Key, gateway: String, evidence: RoomEvidence, now: ContinuousClock.Instant) -> Bool {
        if tracks[key] == nil {
            guard tracks.count < maxKeys else { return false }
            tracks[key] = Track()
        }
        if tracks[key]!.byGateway[gateway] == nil, tracks[key]!.byGateway.count >= maxGateways { return false }
        tracks[key]!.byGateway[gateway] = Held(evidence: evidence, expires: now + rule.expiry)
        return true
    }

    /// `gateway` no longer has the message (lost it, or stopped).
    public mutating func withdraw(_ key: Key, gateway: String) {
        tracks[key]?.byGateway[gateway] = nil
    }

    /// The fleet's decision for `key` as published on the broker (by this gateway or another): the
    /// current room the rule keeps or replaces.
    public mutating func adopt(_ key: Key, room: String?) {
        if tracks[key] == nil {
            guard room != nil, tracks.count < maxKeys else { return }
            tracks[key] = Track()
        }
        guard tracks[key]!.room != room else { return }
        tracks[key]!.room = room
        tracks[key]!.changed = false
        if tracks[key]!.challenger?.room == room { tracks[key]!.challenger = nil }
    }

    /// The decisions that changed since the last call, as of `now` (none before the settle time).
    public mutating func decide(now: ContinuousClock.Instant) -> [(key: Key, room: String?)] {
        if let settling {
            guard now >= settling else { return [] }
            self.settling = nil
        }
        var changes: [(key: Key, room: String?)] = []
        for key in Array(tracks.keys) {
            var track = tracks[key]!
            track.byGateway = track.byGateway.filter { $0.value.expires > now }
            Self.step(&track, rule: rule, now: now)
            if track.changed {
                track.changed = false
                changes.append((key, track.room))
            }
            tracks[key] = track.byGateway.isEmpty && track.room == nil ? nil : track
        }
        return changes
    }

    /// The earliest instant a decision can change without new input: evidence expiring, a dwell ending.
    public func nextDeadline() -> ContinuousClock.Instant? {
        var earliest = settling
        for track in tracks.values {
            for held in track.byGateway.values { earliest = min(earliest ?? held.expires, held.expires) }
            if let challenger = track.challenger { earliest = min(earliest ?? challenger.since + rule.dwell, challenger.since + rule.dwell) }
        }
        return earliest
    }

    /// One message: each room's best evidence (its gateways' strongest, audio if any heard it), then the rule.
    static func step(_ track: inout Track, rule: RoomRule, now: ContinuousClock.Instant) {
        var rooms: [String: RoomEvidence] = [:]
        for held in track.byGateway.values {
            let evidence = held.evidence
            guard var best = rooms[evidence.room] else { rooms[evidence.room] = evidence; continue }
            best.audio = best.audio || evidence.audio
            if let rssi = evidence.rssi { best.rssi = max(best.rssi ?? rssi, rssi) }
            rooms[evidence.room] = best
        }
        let ranked = rooms.values.sorted(by: RoomEvidence.ranksBefore)
        // No room left, or the current one has no evidence any more (its gateways lost the message or
        // died): the best room at once, there is nothing to be steady about.
        guard let current = track.room.flatMap({ rooms[$0] }) else {
            set(&track, ranked.first?.room)
            return
        }
        guard let challenger = ranked.first(where: { $0.room != current.room }), challenger.beats(current, by: rule.margin) else {
            track.challenger = nil
            return
        }
        // Audio beats BLE at once: a message heard over near-ultrasound is in that room.
        if challenger.audio && !current.audio {
            set(&track, challenger.room)
            return
        }
        if track.challenger?.room != challenger.room { track.challenger = (challenger.room, now) }
        if now - track.challenger!.since >= rule.dwell { set(&track, challenger.room) }
    }

    private static func set(_ track: inout Track, _ room: String?) {
        track.challenger = nil
        guard track.room != room else { return }
        track.room = room
        track.changed = true
    }
}
