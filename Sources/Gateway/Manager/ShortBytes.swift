/// Up to 16 bytes held inline (a beacon id: Eddystone namespace and instance, iBeacon UUID), so a
/// beacon's found-set key is made, hashed and compared without allocating.
struct ShortBytes: Hashable, Sendable {
    private var high: UInt64 = 0
    private var low: UInt64 = 0
    /// One byte, not an `Int`: the key holds two of these (Eddystone UID), and every found entry
    /// holds its key four times (the table's key, the entry's, two heap items): 8 bytes less each.
    private let length: UInt8
    var count: Int { Int(length) }

    /// The first 16 bytes of `bytes`.
    init<C: Collection<UInt8>>(_ bytes: C) {
        var count = 0
        for byte in bytes.prefix(16) {
            if count < 8 { high |= UInt64(byte) << (56 - 8 * count) } else { low |= UInt64(byte) << (56 - 8 * (count - 8)) }
            count += 1
        }
        self.length = UInt8(count)
    }

    var bytes: [UInt8] {
        (0..<count).map { k in UInt8(truncatingIfNeeded: k < 8 ? high >> (56 - 8 * k) : low >> (56 - 8 * (k - 8))) }
    }
}
