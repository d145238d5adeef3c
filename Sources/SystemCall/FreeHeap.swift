#if canImport(Glibc)
import Glibc
#endif

// glibc's malloc_trim(3); Swift's Glibc module does not include <malloc.h>.
@_silgen_name("malloc_trim")
private func glibcMallocTrim(_ pad: Int) -> Int32

extension SystemCall {
    /// Hands the heap's free pages back to the kernel (`malloc_trim(0)`: every arena, and the free
    /// pages inside them, not only the top). glibc keeps what `free` returns for reuse, so after a
    /// large expiry (thousands of found entries) RSS would otherwise stay at its peak. It walks every
    /// arena's free chunks: call it after a large release only, never on a hot path.
    /// Returns whether any memory was released.
    @discardableResult
    public static func releaseFreeHeap() -> Bool {
        glibcMallocTrim(0) != 0
    }

    /// Resident anonymous memory of this process in KiB (`RssAnon` of /proc/self/status): the heap,
    /// stacks and written private pages; nil where there is no such line.
    public static func residentAnonymousKiB() -> Int? {
        guard let status = try? readFile("/proc/self/status") else { return nil }
        let text = String(decoding: status, as: UTF8.self)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("RssAnon:") }) else { return nil }
        return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
    }
}
