/// A queue of equal pulses, each `width` long and separated by at least `gap`, at most `limit`
/// pending. Times are offsets from the panel's start so that the arithmetic is exact.
struct PulseTrain: Sendable, Equatable {
    let width: Duration
    let gap: Duration
    let limit: Int
    /// Start of each pending pulse, ascending; a pulse stays until its trailing gap has passed so
    /// that the next one still keeps the gap.
    private(set) var starts: [Duration] = []

    init(width: Duration, gap: Duration, limit: Int) {
        self.width = width
        self.gap = gap
        self.limit = limit
    }

    /// Queues one pulse: now, or right after the previous one and its gap. Returns false if dropped.
    @discardableResult
    mutating func add(at now: Duration) -> Bool {
        prune(at: now)
        guard starts.count < limit else { return false }
        let start = starts.last.map { max(now, $0 + width + gap) } ?? now
        starts.append(start)
        return true
    }

    mutating func prune(at now: Duration) {
        starts.removeAll { $0 + width + gap <= now }
    }

    func isActive(at now: Duration) -> Bool {
        starts.contains { $0 <= now && now < $0 + width }
    }

    /// The next instant after `now` at which `isActive` changes.
    func nextChange(after now: Duration) -> Duration? {
        for start in starts {
            if now < start { return start }
            if now < start + width { return start + width }
        }
        return nil
    }
}
