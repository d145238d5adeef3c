#if canImport(Glibc)
import Glibc
#endif
import SystemCall

/// Unbuffered writes to stdout and stderr with write(2) (what Foundation's `FileHandle` did, without
/// linking Foundation: docs/footprint.md). A closed reader (EPIPE) costs the text, never the process.
enum Console {
    static func out(_ text: String) { write(text, to: STDOUT_FILENO) }
    static func err(_ text: String) { write(text, to: STDERR_FILENO) }

    private static func write(_ text: String, to fd: Int32) {
        var text = text
        text.withUTF8 { bytes in _ = try? SystemCall.writeAll(UnsafeRawBufferPointer(bytes)) { Glibc.write(fd, $0, $1) } }
    }
}
