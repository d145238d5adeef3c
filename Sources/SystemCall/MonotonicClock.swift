#if canImport(Glibc)
import Glibc
#endif

extension SystemCall {
    /// CLOCK_MONOTONIC in nanoseconds: the clock for deadlines, rate limits and back-off, which never
    /// steps when a Pi without RTC first syncs NTP (Python's time.monotonic_ns() is the same clock,
    /// which the benchmarks rely on).
    public static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
