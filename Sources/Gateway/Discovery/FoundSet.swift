import Foundation

/// The found set of one owner: found on the first sighting, lost when not seen for its `lostAfter`.
/// Each entry carries a `Detail` of its owner's choosing (the message manager keeps what its events
/// say about the entry there, so one lookup serves both).
///
/// Pure and clock-free: every call takes the instant (`ContinuousClock`, for deadlines) and, where the
/// JSON needs it, the wall-clock date. `nextDeadline()` tells the owner when the next entry can be lost,
/// so it sleeps until then instead of polling; deadlines sit in a min-heap that is corrected lazily
/// (a sighting only moves an entry's deadline later, so a stale heap top is simply re-filed).
public struct FoundSet<Key: Hashable & Sendable, Detail: Sendable>: Sendable {
    public struct Entry: Sendable {
        public var key: Key
        /// What the latest sighting said about the entry.
        public var detail: Detail
        public var firstSeen: Date
        public var lastSeen: Date
        public var lastSeenInstant: ContinuousClock.Instant
        public var lostAfter: Duration
        /// The RSSI of the last sighting (nil when it had none, e.g. audio or btvirt's 127).
        public var rssi: Int?
        /// Exponentially weighted moving average of the RSSIs seen (nil until one was).
        public var smoothedRSSI: Double?
        public var sightings: Int

        public var deadline: ContinuousClock.Instant { lastSeenInstant + lostAfter }
    }

    public enum Sighting: Sendable {
        case found(Entry)
        case updated(Entry)
    }

    /// Weight of a new RSSI in the average (0…1].
    public let smoothing: Double
    public private(set) var entries: [Key: Entry] = [:]
    private var heap = DeadlineHeap<Key>()

    public init(smoothing: Double = 0.25) {
        self.smoothing = min(1, max(0.01, smoothing))
    }

    public var count: Int { entries.count }
    public subscript(key: Key) -> Entry? { entries[key] }

    /// Records a sighting of `key`. The entry's `lostAfter` becomes the one given (the latest
    /// subscription setting wins), and its detail the one given.
    @discardableResult
    public mutating func saw(_ key: Key, detail: Detail, rssi: Int?, lostAfter: Duration, now: ContinuousClock.Instant,
                             date: Date) -> Sighting {
        if let entry = record(key, detail: detail, rssi: rssi, lostAfter: lostAfter, now: now, date: date) { return .found(entry) }
        return .updated(entries[key]!)
    }

    /// `saw` for the hot path: the new entry when `key` was not in the set, nil (and nothing copied)
    /// when an existing entry was refreshed. One hash lookup either way; an entry is updated in place.
    public mutating func record(_ key: Key, detail: Detail, rssi: Int?, lostAfter: Duration, now: ContinuousClock.Instant,
                                date: Date) -> Entry? {
        if let index = entries.index(forKey: key) {
            let smoothing = smoothing
            if let earlier = Self.update(&entries.values[index], detail: detail, rssi: rssi, lostAfter: lostAfter, now: now,
                                         date: date, smoothing: smoothing) {
                heap.push(earlier, key)
            }
            return nil
        }
        let entry = Entry(key: key, detail: detail, firstSeen: date, lastSeen: date, lastSeenInstant: now, lostAfter: lostAfter,
                          rssi: rssi, smoothedRSSI: rssi.map(Double.init), sightings: 1)
        entries[key] = entry
        heap.push(entry.deadline, key)
        return entry
    }

    /// Refreshes `entry`; returns its new deadline when that moved earlier (the heap must learn of it).
    private static func update(_ entry: inout Entry, detail: Detail, rssi: Int?, lostAfter: Duration, now: ContinuousClock.Instant,
                               date: Date, smoothing: Double) -> ContinuousClock.Instant? {
        let previousDeadline = entry.deadline
        entry.detail = detail
        entry.lastSeen = date
        entry.lastSeenInstant = max(entry.lastSeenInstant, now)
        entry.lostAfter = lostAfter
        entry.rssi = rssi
        if let rssi { entry.smoothedRSSI = entry.smoothedRSSI.map { $0 + smoothing * (Double(rssi) - $0) } ?? Double(rssi) }
        entry.sightings += 1
        // A shorter lostAfter can move the deadline earlier: only then must the heap learn of it.
        return entry.deadline < previousDeadline ? entry.deadline : nil
    }

    /// The earliest instant at which an entry can be lost (nil when nothing is found).
    public mutating func nextDeadline() -> ContinuousClock.Instant? {
        while let (deadline, key) = heap.top {
            guard let entry = entries[key] else { heap.pop(); continue }
            if entry.deadline == deadline { return deadline }
            heap.pop()
            // Re-file under its real deadline unless another heap item already carries it.
            if entry.deadline > deadline { heap.push(entry.deadline, key) }
        }
        return nil
    }

    /// Removes and returns every entry not seen for its `lostAfter` as of `now` (oldest deadline first).
    public mutating func expire(now: ContinuousClock.Instant) -> [Entry] {
        var lost: [Entry] = []
        while let deadline = nextDeadline(), deadline <= now, let (_, key) = heap.pop() {
            if let entry = entries.removeValue(forKey: key) { lost.append(entry) }
        }
        return lost
    }

    /// Forgets `key` without a lost event (its subscription went away); returns the entry if it was found.
    @discardableResult
    public mutating func remove(_ key: Key) -> Entry? {
        entries.removeValue(forKey: key)   // its heap item is skipped when it comes up
    }

    public mutating func removeAll() {
        entries.removeAll()
        heap = DeadlineHeap()
    }
}

extension FoundSet.Entry: Equatable where Detail: Equatable {}
extension FoundSet.Sighting: Equatable where Detail: Equatable {}

/// The detail of a found set that keeps none.
public struct NoDetail: Sendable, Hashable {
    public init() {}
}

/// A found set without details.
public typealias FoundTracker<Key: Hashable & Sendable> = FoundSet<Key, NoDetail>

extension FoundSet where Detail == NoDetail {
    @discardableResult
    public mutating func saw(_ key: Key, rssi: Int?, lostAfter: Duration, now: ContinuousClock.Instant, date: Date) -> Sighting {
        saw(key, detail: NoDetail(), rssi: rssi, lostAfter: lostAfter, now: now, date: date)
    }
}

/// A binary min-heap of (deadline, key).
struct DeadlineHeap<Key: Sendable>: Sendable {
    private var items: [(ContinuousClock.Instant, Key)] = []

    var top: (ContinuousClock.Instant, Key)? { items.first }
    var count: Int { items.count }

    mutating func push(_ deadline: ContinuousClock.Instant, _ key: Key) {
        items.append((deadline, key))
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard items[child].0 < items[parent].0 else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    @discardableResult
    mutating func pop() -> (ContinuousClock.Instant, Key)? {
        guard !items.isEmpty else { return nil }
        items.swapAt(0, items.count - 1)
        let top = items.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < items.count, items[left].0 < items[smallest].0 { smallest = left }
            if right < items.count, items[right].0 < items[smallest].0 { smallest = right }
            guard smallest != parent else { break }
            items.swapAt(parent, smallest)
            parent = smallest
        }
        return top
    }
}
