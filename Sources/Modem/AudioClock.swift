#if canImport(Glibc)
import Glibc
#endif

/// The time the audio threads pace themselves by, in seconds from an arbitrary origin. It must never
/// step: a Pi has no RTC, and its wall clock jumps when NTP first syncs after boot — a beacon due
/// "in 10 s" by the wall clock would then be due in a year, or at once.
protocol AudioClock: Sendable {
    func now() -> Double
}

/// CLOCK_MONOTONIC: the clock `ConditionBox` waits on, so deadlines and waits agree.
struct MonotonicClock: AudioClock {
    func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
    }
}
