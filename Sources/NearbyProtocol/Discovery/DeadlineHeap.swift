import FoundationEssentials

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
