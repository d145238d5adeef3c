/// The found set's index from key to position in its entries: an open-addressing table of positions
/// only (4 bytes a slot), the keys being the entries' own. A `[Key: Int32]` kept a copy of each key in
/// its slots: 8,192 slots × 28 bytes for the default 4,096 entries, against 8,192 × 4 here
/// (docs/footprint-found.md). Linear probing, at most half full, deletion by backward shift (no
/// tombstones, so a flood's evictions never lengthen the probes).
///
/// The caller passes its entries' keys (`keyAt`) and a key's hash: a probe can then match a key the
/// caller has not built (`FoundSet.record(hash:matching:…)`: a message's boxed key allocates).
struct PositionIndex: Sendable {
    private static let empty: Int32 = -1
    private var slots: [Int32] = []
    private(set) var count = 0

    var allocatedBytes: Int { HeapBytes.array(capacity: slots.capacity, of: Int32.self) }

    /// The position of the key `matches` accepts, whose hash is `hash`.
    func position(hash: Int, matches: (Int) -> Bool) -> Int? {
        guard !slots.isEmpty else { return nil }
        let mask = slots.count - 1
        var slot = hash & mask
        while slots[slot] != Self.empty {
            if matches(Int(slots[slot])) { return Int(slots[slot]) }
            slot = (slot + 1) & mask
        }
        return nil
    }

    /// Files `position` under `hash` (the key is not in the table); `hashAt` gives the hash of the
    /// key at a position, for a growth.
    mutating func insert(_ position: Int, hash: Int, hashAt: (Int) -> Int) {
        if (count + 1) * 2 > slots.count { rebuild(minimumCount: count + 1, hashAt: hashAt) }
        let mask = slots.count - 1
        var slot = hash & mask
        while slots[slot] != Self.empty { slot = (slot + 1) & mask }
        slots[slot] = Int32(position)
        count += 1
    }

    /// Removes `position` (filed under `hash`).
    mutating func remove(_ position: Int, hash: Int, hashAt: (Int) -> Int) {
        guard var hole = slot(of: position, hash: hash) else { return }
        let mask = slots.count - 1
        var next = hole
        while true {
            next = (next + 1) & mask
            guard slots[next] != Self.empty else { break }
            let home = hashAt(Int(slots[next])) & mask
            // The item at `next` may move into the hole unless its home lies cyclically in (hole, next].
            let stays = hole <= next ? (hole < home && home <= next) : (hole < home || home <= next)
            if !stays {
                slots[hole] = slots[next]
                hole = next
            }
        }
        slots[hole] = Self.empty
        count -= 1
    }

    /// The key filed at `old` (under `hash`) is now at `new`.
    mutating func move(_ old: Int, to new: Int, hash: Int) {
        if let slot = slot(of: old, hash: hash) { slots[slot] = Int32(new) }
    }

    /// Rebuilt with room for `minimumCount` positions, `0..<count` being filed (their hashes by `hashAt`).
    mutating func rebuild(minimumCount: Int, hashAt: (Int) -> Int) {
        var size = 16
        while size < 2 * minimumCount { size *= 2 }
        var rebuilt = [Int32](repeating: Self.empty, count: size)
        for position in 0..<count {
            var slot = hashAt(position) & (size - 1)
            while rebuilt[slot] != Self.empty { slot = (slot + 1) & (size - 1) }
            rebuilt[slot] = Int32(position)
        }
        slots = rebuilt
    }

    /// Sized for `count` positions when the table is more than four times that (a large expiry).
    mutating func shrinkIfSparse(hashAt: (Int) -> Int) -> Bool {
        guard slots.count > 8 * max(count, 64) else { return false }
        rebuild(minimumCount: count, hashAt: hashAt)
        return true
    }

    mutating func removeAll() {
        slots = []
        count = 0
    }

    private func slot(of position: Int, hash: Int) -> Int? {
        guard !slots.isEmpty else { return nil }
        let mask = slots.count - 1
        var slot = hash & mask
        while slots[slot] != Self.empty {
            if slots[slot] == Int32(position) { return slot }
            slot = (slot + 1) & mask
        }
        return nil
    }
}
