/// Up to 31 bytes held inline (32 bytes, the size of the `ArraySlice` it replaces): a found entry's
/// beacon content.
struct InlineBytes: Sendable {
    /// The bytes, then their count in the last byte.
    private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    static let capacity = 31

    init() {}

    /// Nil when `bytes` are more than `capacity`.
    init?(_ bytes: some Collection<UInt8>) {
        guard bytes.count <= Self.capacity else { return nil }
        withUnsafeMutableBytes(of: &words) { raw in
            var k = 0
            for byte in bytes {
                raw[k] = byte
                k += 1
            }
            raw[Self.capacity] = UInt8(k)
        }
    }

    var bytes: [UInt8] {
        withUnsafeBytes(of: words) { raw in Array(raw[0..<Int(raw[Self.capacity])]) }
    }
}
