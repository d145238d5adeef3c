/// Chunks of messages still being reassembled, in memory allocated once: `capacity` slots of the largest
/// body any medium carries. Whatever arrives (garbage, half messages, floods of fresh ids) reuses these
/// slots, evicting the oldest, so memory never grows after `init`.
struct PartialTable: Sendable {
    struct Key: Hashable, Sendable {
        var source: SourceID
        var id: UInt64
    }

    struct Slot: Sendable {
        var key: Key?
        var started: ContinuousClock.Instant?
        /// Bit i set = chunk i held.
        var received: UInt16 = 0
        var lastIndex: UInt8 = 0
        /// Length of the last chunk, known once it arrived (0 before).
        var lastLength: UInt8 = 0
        var medium: Medium = .ble
        /// The epoch whose key authenticated the chunks held: all of them must be under the same.
        var epoch: UInt32 = 0
    }

    static let slotBytes = Medium.allCases.map(\.maxBodyBytes).max() ?? 0

    let capacity: Int
    private(set) var slots: [Slot]
    private(set) var storage: [UInt8]
    private var index: [Key: Int]
    private var free: [Int]

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        slots = Array(repeating: Slot(), count: self.capacity)
        storage = Array(repeating: 0, count: self.capacity * Self.slotBytes)
        index = [:]
        index.reserveCapacity(self.capacity)
        free = Array((0..<self.capacity).reversed())
    }

    var count: Int { capacity - free.count }

    func slot(for key: Key) -> Int? { index[key] }

    /// A fresh slot for `key`; when all are taken, the one started longest ago is evicted (returned so
    /// the caller can count it as timed out or evicted).
    mutating func allocate(_ key: Key, medium: Medium, lastIndex: UInt8, epoch: UInt32, now: ContinuousClock.Instant) -> (slot: Int, evicted: Slot?) {
        var evicted: Slot?
        if free.isEmpty {
            var oldest = 0
            for i in 1..<capacity where slots[i].started! < slots[oldest].started! { oldest = i }
            evicted = slots[oldest]
            release(oldest)
        }
        let n = free.removeLast()
        slots[n] = Slot(key: key, started: now, received: 0, lastIndex: lastIndex, lastLength: 0, medium: medium, epoch: epoch)
        index[key] = n
        return (n, evicted)
    }

    mutating func release(_ n: Int) {
        guard let key = slots[n].key else { return }
        index[key] = nil
        slots[n] = Slot()
        free.append(n)
    }

    /// Stores chunk `chunkIndex` (already checked against the slot's capacity).
    mutating func store(_ data: UnsafeBufferPointer<UInt8>, chunk chunkIndex: Int, slot n: Int) {
        let offset = n * Self.slotBytes + chunkIndex * slots[n].medium.chunkCapacity
        storage.withUnsafeMutableBufferPointer { all in
            for i in 0..<data.count { all[offset + i] = data[i] }
        }
        slots[n].received |= 1 << UInt16(chunkIndex)
        if chunkIndex == Int(slots[n].lastIndex) { slots[n].lastLength = UInt8(data.count) }
    }

    /// Whether the held chunk `chunkIndex` has exactly these bytes.
    func holds(_ data: UnsafeBufferPointer<UInt8>, chunk chunkIndex: Int, slot n: Int) -> Bool {
        let slot = slots[n]
        let length = chunkIndex == Int(slot.lastIndex) ? Int(slot.lastLength) : slot.medium.chunkCapacity
        guard length == data.count else { return false }
        let offset = n * Self.slotBytes + chunkIndex * slot.medium.chunkCapacity
        return storage.withUnsafeBufferPointer { all in
            for i in 0..<data.count where all[offset + i] != data[i] { return false }
            return true
        }
    }

    func isComplete(_ n: Int) -> Bool {
        let slot = slots[n]
        let all: UInt16 = slot.lastIndex == 15 ? .max : (1 << (UInt16(slot.lastIndex) + 1)) - 1
        return slot.received == all
    }

    /// The reassembled body of a complete slot.
    func withBody<R>(slot n: Int, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        let slot = slots[n]
        let length = Int(slot.lastIndex) * slot.medium.chunkCapacity + Int(slot.lastLength)
        return storage.withUnsafeBufferPointer { all in
            body(UnsafeBufferPointer(rebasing: all[(n * Self.slotBytes)..<(n * Self.slotBytes + length)]))
        }
    }

    /// Frees every slot started `timeout` or more before `now`; returns how many.
    mutating func expire(now: ContinuousClock.Instant, timeout: Duration) -> Int {
        var expired = 0
        for n in 0..<capacity {
            if let started = slots[n].started, now - started >= timeout {
                release(n)
                expired += 1
            }
        }
        return expired
    }
}
