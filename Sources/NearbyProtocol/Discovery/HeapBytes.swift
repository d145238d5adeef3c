/// Bytes of heap a standard-library container takes, from its capacity and element sizes: what the
/// found set and the retained store count as their own (docs/footprint-found.md).
/// A model of the Swift runtime's and glibc's layouts (x86-64 and arm64), so a test can bound it
/// exactly whatever else the process does; printed beside the resident memory in `FoundMemoryTests`.
public enum HeapBytes {
    /// glibc's chunk for a request: 8 bytes of header, 16-byte granules, at least 32.
    public static func chunk(_ requested: Int) -> Int { max(32, (requested + 8 + 15) & ~15) }

    /// An array's buffer: object header, count and capacity (32 bytes), then the elements.
    public static func array<Element>(capacity: Int, of: Element.Type) -> Int {
        capacity == 0 ? 0 : chunk(32 + capacity * MemoryLayout<Element>.stride)
    }

    /// A native set or dictionary: a header (~64 bytes), an occupancy bitmap, then keys and values
    /// in a power of two of buckets filled to at most 3/4 (`capacity` is that 3/4).
    public static func table(capacity: Int, keyStride: Int, valueStride: Int = 0) -> Int {
        guard capacity > 0 else { return 0 }
        var buckets = 1
        while buckets * 3 / 4 < capacity { buckets *= 2 }
        return chunk(64 + (buckets + 63) / 64 * 8 + buckets * (keyStride + valueStride))
    }

    /// A native string's storage (header 32, the UTF-8, a terminating NUL); small strings (up to 15
    /// bytes) are held in the `String` value itself.
    public static func string(_ string: String) -> Int {
        let count = string.utf8.count
        return count <= 15 ? 0 : chunk(32 + count + 1)
    }
}
