/// A level counts once it has held for `hold`: switch contacts bounce for a few milliseconds and
/// each bounce is an edge. Pure, so bounce sequences are unit-tested with exact times.
public struct Debouncer: Sendable, Equatable {
    public let hold: Duration
    /// The last level that held; nil until `reset`.
    public private(set) var stable: Bool?
    private var candidate: Bool?
    private var since: Duration = .zero

    public init(hold: Duration) {
        self.hold = hold
    }

    /// Takes the line's level at start as settled (a button not pressed, a power line as it is).
    public mutating func reset(to level: Bool) {
        stable = level
        candidate = level
    }

    /// Feeds a sample; returns the new stable level when this sample settles a change.
    public mutating func observe(_ level: Bool, at now: Duration) -> Bool? {
        if level != candidate {
            candidate = level
            since = now
        }
        return poll(at: now)
    }

    /// When the pending level will have held long enough; nil if nothing is pending.
    public var deadline: Duration? {
        guard let candidate, candidate != stable else { return nil }
        return since + hold
    }

    private mutating func poll(at now: Duration) -> Bool? {
        guard let candidate, candidate != stable, now - since >= hold else { return nil }
        stable = candidate
        return candidate
    }
}
