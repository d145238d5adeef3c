#if canImport(Glibc)
import Glibc
#endif

/// The kernel's view of the wall clock: synchronised (NTP or another discipline says it is right) or
/// not. A Pi without RTC boots unsynchronised, at its last shutdown's time or at 1970, and stays so
/// until NTP syncs; a box with no network never does. Read with adjtimex(2) (modes 0: read only).
public enum KernelClock: Equatable, Sendable {
    case synchronised
    /// STA_UNSYNC: adjtimex returned TIME_ERROR.
    case unsynchronised
    /// adjtimex failed: EPERM under systemd's ProtectClock= (its seccomp filter denies the whole
    /// @clock group, reads included), ENOSYS where it does not exist.
    case unknown(Errno)

    /// Glibc's Swift module leaves out <sys/timex.h>, so adjtimex is looked up by name and called
    /// with a zeroed `struct timex` (208 bytes on 64-bit glibc; a larger buffer is harmless): only
    /// `modes` (its first field, 0 = change nothing) is read by the kernel, and only the return
    /// value (the clock state) is used.
    public static func read() -> KernelClock {
        typealias AdjTimeX = @convention(c) (UnsafeMutableRawPointer) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "adjtimex") else { return .unknown(Errno(rawValue: ENOSYS)) }
        let adjtimex = unsafeBitCast(symbol, to: AdjTimeX.self)
        var timex = [UInt64](repeating: 0, count: 64)
        do {
            let state = try SystemCall.retrying { timex.withUnsafeMutableBytes { adjtimex($0.baseAddress!) } }
            return state == timeError ? .unsynchronised : .synchronised
        } catch {
            return .unknown(error)
        }
    }

    /// TIME_ERROR from <sys/timex.h>: the clock is not synchronised.
    static let timeError: Int32 = 5
}
