import Radio

/// Sightings that wait behind an awaited step of the manager (an error state, a new epoch's air, a
/// subscriber beacon's scan window, a found whose panel runs on another executor), in the order
/// they were read.
///
/// The radio hands the manager each read's sightings in one synchronous call on the gateway's loop
/// (`MessageManager.receive`). Most change nothing a client sees and are done in that call. The
/// first that needs an await, and every sighting after it, are taken by one task (`drainAir`) until
/// it has caught up; meanwhile further reads queue here. Bounded like the queue it replaces: beyond
/// `limit` the oldest are dropped and counted (`GET stats`' `radio_dropped.queue`).
struct AirBacklog {
    /// What the task does first: the rest of the sighting that needed the await.
    enum Step {
        /// The clock stepped or the epoch changed before `sighting` was ingested.
        case clock(Sighting, ClockObservation)
        /// The effects of a sighting ingested, and the epoch a peer's message was ahead by, if any.
        case effects(AirEffects, epochAhead: UInt32?)
    }

    let limit: Int
    private var sightings: [Sighting] = []
    private var head = 0
    /// A task is taking the sightings: new ones queue behind it.
    var draining = false
    /// The manager has shut down: nothing more is taken (`MessageManager.shutdown`).
    private(set) var closed = false

    init(limit: Int) { self.limit = limit }

    var count: Int { sightings.count - head }

    /// Queues `more` behind what waits; returns how many were dropped (oldest first) to stay in `limit`.
    mutating func append(contentsOf more: some Collection<Sighting>) -> Int {
        guard !closed else { return 0 }
        sightings.append(contentsOf: more)
        let over = max(0, count - limit)
        head += over
        compact()
        return over
    }

    mutating func popFirst() -> Sighting? {
        guard !closed, head < sightings.count else { return nil }
        let sighting = sightings[head]
        head += 1
        compact()
        return sighting
    }

    /// Drops what waits and refuses the rest.
    mutating func close() {
        closed = true
        sightings = []
        head = 0
    }

    /// Gives back the taken slots; a drained backlog keeps no storage (a flood's 4,096 entries would
    /// otherwise stay allocated: docs/footprint-found.md).
    private mutating func compact() {
        if head == sightings.count {
            sightings = []
            head = 0
        } else if head >= 64, head * 2 >= sightings.count {
            sightings.removeFirst(head)
            head = 0
        }
    }
}
