import FoundationEssentials

/// The found set of one owner: found on the first sighting, lost when not seen for its `lostAfter`.
/// Each entry carries a `Detail` of its owner's choosing (the message manager keeps what its events
/// say about the entry there, so one lookup serves both).
///
/// Pure and clock-free: every call takes the instant (`ContinuousClock`, for deadlines) and, where the
/// JSON needs it, the wall-clock date. `nextDeadline()` tells the owner when the next entry can be lost,
/// so it sleeps until then instead of polling; deadlines sit in a min-heap that is corrected lazily
/// (a sighting only moves an entry's deadline later, so a stale heap top is simply re-filed).
///
/// Bounded: at most `limit` entries. Unauthenticated sightings (beacons: anyone can send random ids)
/// are `protected: false`; when the set is full a new entry takes the place of the least recently
/// seen unprotected one, and only when there is none does an unprotected sighting get refused or a
/// protected one take the place of the least recently seen protected entry. So a flood of fake
/// beacons can never push out an authenticated message, and memory stays flat whatever is on the air.
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
        /// The RSSIs seen through a first-order low-pass with time constant `rssiTimeConstant`
        /// (nil until one was): docs/behaviour.md, "Signal strength and distance".
        public var smoothedRSSI: Double?
        /// The smoothed RSSI clients were last told (found or signal event), and when.
        public var reportedRSSI: Double?
        public var reportedInstant: ContinuousClock.Instant
        public var sightings: Int
        /// Evicted only when no unprotected entry is left (authenticated messages).
        public var protected: Bool

        public var deadline: ContinuousClock.Instant { lastSeenInstant + lostAfter }
    }

    public enum Sighting: Sendable {
        case found(Entry)
        case updated(Entry)
    }

    /// What `record` did with a sighting.
    public enum Admission: Sendable {
        /// An entry already in the set was refreshed.
        case refreshed
        /// Refreshed, and its smoothed RSSI moved `signal.threshold` or more from the value last
        /// reported, at least `signal.minimumInterval` after that report: the owner tells its clients.
        case signalMoved(Entry)
        /// A new entry; `evicted` is the one whose place it took when the set was full.
        case added(Entry, evicted: Entry?)
        /// The set is full of protected entries and this unprotected sighting was not kept.
        case refused
    }

    /// The most entries the set holds.
    public let limit: Int
    /// Entries that made room for newer ones, and unprotected sightings refused for lack of room.
    public private(set) var evicted = 0
    public private(set) var refused = 0

    /// When a smoothed RSSI is worth telling clients about again.
    public struct SignalRule: Sendable {
        /// dB between the value last reported and the smoothed value now.
        public var threshold: Double
        /// At most one signal report per entry in this time.
        public var minimumInterval: Duration

        public init(threshold: Double = 3, minimumInterval: Duration = .seconds(1)) {
            self.threshold = threshold
            self.minimumInterval = minimumInterval
        }
    }

    /// The time constant of the RSSI low-pass: a step reaches 63 % in this time, 90 % in 2.3×.
    public let rssiTimeConstant: Duration
    public let signal: SignalRule
    /// Dense, in no particular order once entries were removed (the last one fills the gap), with
    /// `index` from key to position: a dictionary of whole entries has twice as many slots as entries
    /// (docs/footprint-found.md), this one only twice as many small ones.
    public private(set) var entries: [Entry] = []
    private var index: [Key: Int32] = [:]
    private var heap = DeadlineHeap<Key>()
    /// Least recently seen first, one heap per standing ([unprotected, protected]); corrected lazily
    /// like `heap` (a sighting only moves `lastSeenInstant` later).
    private var byLastSeen = [DeadlineHeap<Key>(), DeadlineHeap<Key>()]
    private var protectedCount = 0

    public init(rssiTimeConstant: Duration = .seconds(2), signal: SignalRule = SignalRule(), limit: Int = .max) {
        self.rssiTimeConstant = max(rssiTimeConstant, .milliseconds(1))
        self.signal = signal
        self.limit = max(1, limit)
    }

    public var count: Int { entries.count }
    public var keys: some Collection<Key> { entries.lazy.map(\.key) }
    /// Items in the deadline heap, stale ones included (bounded: see `compactDeadlinesIfStale`).
    var pendingDeadlines: Int { heap.count }
    public subscript(key: Key) -> Entry? { index[key].map { entries[Int($0)] } }

    /// Heap bytes the set's own containers take (`HeapBytes`); what keys and details hold outside
    /// themselves is `outOfLine`'s to count (the owner knows their types).
    public func allocatedBytes(outOfLine: (Entry) -> Int = { _ in 0 }) -> Int {
        let heaps = [heap, byLastSeen[0], byLastSeen[1]].reduce(0) { $0 + $1.allocatedBytes }
        return HeapBytes.array(capacity: entries.capacity, of: Entry.self)
            + HeapBytes.table(capacity: index.capacity, keyStride: MemoryLayout<Key>.stride, valueStride: MemoryLayout<Int32>.stride)
            + heaps + HeapBytes.array(capacity: byLastSeen.capacity, of: DeadlineHeap<Key>.self)
            + entries.reduce(0) { $0 + outOfLine($1) }
    }

    /// Records a sighting of `key`. The entry's `lostAfter` becomes the one given (the latest
    /// subscription setting wins), and its detail the one given.
    @discardableResult
    public mutating func saw(_ key: Key, detail: Detail, rssi: Int?, lostAfter: Duration, now: ContinuousClock.Instant,
                             date: Date, protected: Bool = true) -> Sighting? {
        switch record(key, detail: detail, rssi: rssi, lostAfter: lostAfter, now: now, date: date, protected: protected) {
        case .added(let entry, _): .found(entry)
        case .refreshed, .signalMoved: .updated(self[key]!)
        case .refused: nil
        }
    }

    /// `saw` for the hot path: nothing is copied when an existing entry is refreshed. One hash lookup
    /// for a refresh; an entry is updated in place.
    public mutating func record(_ key: Key, detail: Detail, rssi: Int?, lostAfter: Duration, now: ContinuousClock.Instant,
                                date: Date, protected: Bool = true) -> Admission {
        if let position = index[key].map(Int.init) {
            let (tau, rule) = (rssiTimeConstant, signal)
            if let earlier = Self.update(&entries[position], detail: detail, rssi: rssi, lostAfter: lostAfter, now: now,
                                         date: date, timeConstant: tau) {
                heap.push(earlier, key)
            }
            guard rssi != nil, Self.signalMoved(&entries[position], rule: rule, now: now) else { return .refreshed }
            return .signalMoved(entries[position])
        }
        var evicted: Entry?
        if entries.count >= limit {
            let unprotectedLeft = entries.count > protectedCount
            guard unprotectedLeft || protected else {
                refused += 1
                return .refused
            }
            evicted = evictLeastRecentlySeen(protected: !unprotectedLeft)
        }
        let entry = Entry(key: key, detail: detail, firstSeen: date, lastSeen: date, lastSeenInstant: now, lostAfter: lostAfter,
                          rssi: rssi, smoothedRSSI: rssi.map(Double.init), reportedRSSI: rssi.map(Double.init), reportedInstant: now,
                          sightings: 1, protected: protected)
        index[key] = Int32(entries.count)
        entries.append(entry)
        if protected { protectedCount += 1 }
        heap.push(entry.deadline, key)
        compactDeadlinesIfStale()
        let standing = protected ? 1 : 0
        byLastSeen[standing].push(now, key)
        compactIfStale(standing)
        return .added(entry, evicted: evicted)
    }

    /// Removes the least recently seen entry of that standing (there is one: the caller counted).
    private mutating func evictLeastRecentlySeen(protected: Bool) -> Entry? {
        let standing = protected ? 1 : 0
        while let (seen, key) = byLastSeen[standing].pop() {
            guard let entry = self[key], entry.protected == protected else { continue }
            if entry.lastSeenInstant > seen {
                byLastSeen[standing].push(entry.lastSeenInstant, key)
                continue
            }
            evicted += 1
            return take(key)
        }
        return nil
    }

    /// Keys lost, removed or evicted stay in `byLastSeen` until popped: rebuild it from the live
    /// entries when stale items pass half of those, so it stays within 1.5 times the set's size.
    private mutating func compactIfStale(_ standing: Int) {
        let live = standing == 1 ? protectedCount : entries.count - protectedCount
        guard byLastSeen[standing].count > Self.compactionBound(live) else { return }
        byLastSeen[standing] = rebuiltByLastSeen(standing)
    }

    /// Evicted and removed keys keep their deadline item until it comes up (up to `lostAfter`, a day
    /// at most): rebuild the heap from the live entries when stale items pass half of them. A flood
    /// of fresh beacons evicts one entry per sighting; with the bound at twice the set the heaps'
    /// arrays grew to four times its size (their capacity doubles), more than the entries themselves.
    private mutating func compactDeadlinesIfStale() {
        guard heap.count > Self.compactionBound(entries.count) else { return }
        heap = rebuiltDeadlines()
    }

    /// Items a heap may hold for `live` entries before it is rebuilt; rebuilt heaps reserve exactly
    /// this, so they never grow between two rebuilds.
    private static func compactionBound(_ live: Int) -> Int { live + live / 2 + 64 }

    private func rebuiltDeadlines() -> DeadlineHeap<Key> {
        var rebuilt = DeadlineHeap<Key>(capacity: Self.compactionBound(entries.count) + 1)
        for entry in entries { rebuilt.push(entry.deadline, entry.key) }
        return rebuilt
    }

    private func rebuiltByLastSeen(_ standing: Int) -> DeadlineHeap<Key> {
        let live = standing == 1 ? protectedCount : entries.count - protectedCount
        var rebuilt = DeadlineHeap<Key>(capacity: Self.compactionBound(live) + 1)
        for entry in entries where entry.protected == (standing == 1) { rebuilt.push(entry.lastSeenInstant, entry.key) }
        return rebuilt
    }

    /// Dictionaries and arrays keep their capacity when emptied: after a large expiry (a flood of
    /// beacons gone), the table and the heaps are rebuilt at the size of what is left, so the memory
    /// can go back (docs/footprint-found.md). Returns whether it shrank anything.
    private mutating func shrinkIfSparse() -> Bool {
        guard index.capacity > 4 * max(entries.count, 64) else { return false }
        var shrunk = [Key: Int32](minimumCapacity: entries.count)
        for (position, entry) in entries.enumerated() { shrunk[entry.key] = Int32(position) }
        index = shrunk
        var compact: [Entry] = []   // a copy with the capacity of its count (`Array(entries)` would share the buffer)
        compact.reserveCapacity(entries.count)
        compact.append(contentsOf: entries)
        entries = compact
        heap = rebuiltDeadlines()
        byLastSeen = [rebuiltByLastSeen(0), rebuiltByLastSeen(1)]
        return true
    }

    /// Removes `key` from the set and its counts (its heap items are skipped when they come up).
    private mutating func take(_ key: Key) -> Entry? {
        guard let position = index.removeValue(forKey: key).map(Int.init) else { return nil }
        let last = entries.count - 1
        if position != last {
            entries.swapAt(position, last)
            index[entries[position].key] = Int32(position)
        }
        let entry = entries.removeLast()
        if entry.protected { protectedCount -= 1 }
        return entry
    }

    /// Refreshes `entry`; returns its new deadline when that moved earlier (the heap must learn of it).
    private static func update(_ entry: inout Entry, detail: Detail, rssi: Int?, lostAfter: Duration, now: ContinuousClock.Instant,
                               date: Date, timeConstant: Duration) -> ContinuousClock.Instant? {
        let previousDeadline = entry.deadline
        let elapsed = now - entry.lastSeenInstant
        entry.detail = detail
        entry.lastSeen = date
        entry.lastSeenInstant = max(entry.lastSeenInstant, now)
        entry.lostAfter = lostAfter
        entry.rssi = rssi
        if let rssi {
            entry.smoothedRSSI = entry.smoothedRSSI.map { $0 + RSSIFilter.weight(elapsed: elapsed, timeConstant: timeConstant) * (Double(rssi) - $0) }
                ?? Double(rssi)
        }
        entry.sightings += 1
        // A shorter lostAfter can move the deadline earlier: only then must the heap learn of it.
        return entry.deadline < previousDeadline ? entry.deadline : nil
    }

    /// Whether `entry`'s smoothed RSSI is to be reported now; if so it becomes the reported value.
    private static func signalMoved(_ entry: inout Entry, rule: SignalRule, now: ContinuousClock.Instant) -> Bool {
        guard let smoothed = entry.smoothedRSSI else { return false }
        // The first RSSI of an entry found without one (an audio sighting first) is a move.
        let moved = entry.reportedRSSI.map { abs(smoothed - $0) >= rule.threshold } ?? true
        guard moved, now - entry.reportedInstant >= rule.minimumInterval else { return false }
        entry.reportedRSSI = smoothed
        entry.reportedInstant = now
        return true
    }

    /// The earliest instant at which an entry can be lost (nil when nothing is found).
    public mutating func nextDeadline() -> ContinuousClock.Instant? {
        while let (deadline, key) = heap.top {
            guard let entry = self[key] else { heap.pop(); continue }
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
            if let entry = take(key) { lost.append(entry) }
        }
        if !lost.isEmpty { _ = shrinkIfSparse() }
        return lost
    }

    /// Forgets `key` without a lost event (its subscription went away); returns the entry if it was found.
    @discardableResult
    public mutating func remove(_ key: Key) -> Entry? {
        take(key)   // its heap items are skipped when they come up
    }

    public mutating func removeAll() {
        entries.removeAll()
        index.removeAll()
        protectedCount = 0
        heap = DeadlineHeap()
        byLastSeen = [DeadlineHeap(), DeadlineHeap()]
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
    public mutating func saw(_ key: Key, rssi: Int?, lostAfter: Duration, now: ContinuousClock.Instant, date: Date,
                             protected: Bool = true) -> Sighting? {
        saw(key, detail: NoDetail(), rssi: rssi, lostAfter: lostAfter, now: now, date: date, protected: protected)
    }
}

/// A binary min-heap of (deadline, key).
struct DeadlineHeap<Key: Sendable>: Sendable {
    private var items: [(ContinuousClock.Instant, Key)] = []

    init() {}

    /// Room for `capacity` items before the array grows.
    init(capacity: Int) { items.reserveCapacity(capacity) }

    var top: (ContinuousClock.Instant, Key)? { items.first }
    var allocatedBytes: Int { HeapBytes.array(capacity: items.capacity, of: (ContinuousClock.Instant, Key).self) }
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
