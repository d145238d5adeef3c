import NearbyProtocol

/// What Home Assistant's subscription states need of the found set (docs/footprint-found.md): per
/// found entry (by the hash of the manager's retain key) the subscriptions it matches and its latest smoothed
/// RSSI and distance; per subscription how many entries match and the nearest one's RSSI and distance,
/// kept as entries come and go. An event costs a look at its own entry's subscriptions; the whole set
/// is walked for a subscription only when the entry holding its nearest value went or moved away.
struct HomeAssistantPresence {
    /// 24 bytes in the table's slot: the matching subscriptions as an index into `groups` (the lists
    /// are few: one per namespace/type or beacon family), the signal without optionals' tag bytes.
    private struct Entry {
        var group: Int32
        var rssi: Double   // NaN: none
        var distance: Double
    }

    /// By the key's 64-bit hash, not the key (a ~70-byte string, 112 B of heap each): two keys with
    /// one hash, a chance of about 10^-12 with a few thousand entries, would count as one entry.
    private var entries: [Int: Entry] = [:]
    /// Distinct lists of subscription indices, and each one's place in `groups`.
    private var groups: [[Int]] = []
    private var groupIDs: [[Int]: Int32] = [:]
    /// Per subscription: how many entries match it, and the strongest RSSI and shortest distance among
    /// them (exact unless `stale`, then recomputed when asked).
    private(set) var matching: [Int]
    private var strongest: [Double]
    private var nearest: [Double]
    private var stale: [Bool]
    /// Entries looked at to recompute a stale subscription, in all (what a flood costs: tests bound it).
    private(set) var walked = 0

    init(subscriptions: Int) {
        matching = Array(repeating: 0, count: subscriptions)
        strongest = Array(repeating: .nan, count: subscriptions)
        nearest = Array(repeating: .nan, count: subscriptions)
        stale = Array(repeating: false, count: subscriptions)
    }

    var count: Int { entries.count }

    func contains(_ key: String) -> Bool { entries[key.hashValue] != nil }

    /// Heap bytes of the per-entry state (`HeapBytes`): the table.
    var allocatedBytes: Int {
        HeapBytes.table(capacity: entries.capacity, keyStride: MemoryLayout<Int>.stride, valueStride: MemoryLayout<Entry>.stride)
    }

    /// A new entry matching the subscriptions `indices`.
    mutating func add(_ key: String, indices: [Int], rssi: Double?, distance: Double?) {
        let group: Int32
        if let known = groupIDs[indices] {
            group = known
        } else {
            group = Int32(groups.count)
            groups.append(indices)
            groupIDs[indices] = group
        }
        let entry = Entry(group: group, rssi: rssi ?? .nan, distance: distance ?? .nan)
        entries[key.hashValue] = entry
        for index in indices {
            matching[index] += 1
            widen(index, with: entry)
        }
    }

    /// The entry's new signal; false when there is no such entry.
    mutating func update(_ key: String, rssi: Double?, distance: Double?) -> Bool {
        guard let old = entries[key.hashValue] else { return false }
        let new = Entry(group: old.group, rssi: rssi ?? .nan, distance: distance ?? .nan)
        entries[key.hashValue] = new
        for index in groups[Int(old.group)] {
            narrow(index, losing: old, keeping: new)
            widen(index, with: new)
        }
        return true
    }

    mutating func remove(_ key: String) {
        guard let old = entries.removeValue(forKey: key.hashValue) else { return }
        for index in groups[Int(old.group)] {
            matching[index] -= 1
            if matching[index] == 0 {
                (strongest[index], nearest[index], stale[index]) = (.nan, .nan, false)
            } else {
                narrow(index, losing: old, keeping: nil)
            }
        }
    }

    /// The strongest smoothed RSSI and shortest distance among the entries matching subscription `index`.
    mutating func nearest(_ index: Int) -> (rssi: Double?, distance: Double?) {
        if stale[index] {
            var (rssi, distance) = (Double.nan, Double.nan)
            walked += entries.count
            for entry in entries.values where groups[Int(entry.group)].contains(index) {
                if !entry.rssi.isNaN, rssi.isNaN || entry.rssi > rssi { rssi = entry.rssi }
                if !entry.distance.isNaN, distance.isNaN || entry.distance < distance { distance = entry.distance }
            }
            (strongest[index], nearest[index], stale[index]) = (rssi, distance, false)
        }
        return (strongest[index].isNaN ? nil : strongest[index], nearest[index].isNaN ? nil : nearest[index])
    }

    private mutating func widen(_ index: Int, with entry: Entry) {
        guard !stale[index] else { return }
        if !entry.rssi.isNaN, strongest[index].isNaN || entry.rssi > strongest[index] { strongest[index] = entry.rssi }
        if !entry.distance.isNaN, nearest[index].isNaN || entry.distance < nearest[index] { nearest[index] = entry.distance }
    }

    /// `old` held subscription `index`'s strongest RSSI or shortest distance and `new` (nil: gone)
    /// no longer does: the value is recomputed when next asked.
    private mutating func narrow(_ index: Int, losing old: Entry, keeping new: Entry?) {
        guard !stale[index] else { return }
        let rssiLost = !old.rssi.isNaN && old.rssi == strongest[index] && !(new.map { $0.rssi >= old.rssi } ?? false)
        let distanceLost = !old.distance.isNaN && old.distance == nearest[index] && !(new.map { $0.distance <= old.distance } ?? false)
        if rssiLost || distanceLost { stale[index] = true }
    }
}
