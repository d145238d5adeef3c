#if canImport(Glibc)
import Glibc
#endif

/// Unbuffered writes to stdout and stderr with write(2) (what Foundation's `FileHandle` did, without
/// linking Foundation: docs/footprint.md). A closed reader (EPIPE) costs the text, never the process.
public enum Console {
    public static func out(_ text: String) { _ = try? SystemCall.writeAll(text, to: STDOUT_FILENO) }
    public static func err(_ text: String) { _ = try? SystemCall.writeAll(text, to: STDERR_FILENO) }
}
