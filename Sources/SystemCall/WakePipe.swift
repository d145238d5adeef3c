#if canImport(Glibc)
import Glibc
#endif

/// How another thread wakes a thread blocked in poll(2): a pipe, both ends non-blocking and
/// close-on-exec (eventfd is not visible to Swift's Glibc module). The loop polls `fd` for POLLIN
/// and calls `drain` when it wakes; `wake` writes one byte. Owns both descriptors: they close with it.
public struct WakePipe: ~Copyable, Sendable {
    /// The end the loop polls.
    public let fd: Int32
    private let writeEnd: Int32

    /// pipe2(2), both ends non-blocking and close-on-exec from the start; its errno.
    public init() throws(Errno) {
        var ends: [Int32] = [-1, -1]
        try SystemCall.retrying { Descriptor.pipe(&ends, nonBlocking: true) }
        (fd, writeEnd) = (ends[0], ends[1])
    }

    deinit {
        close(fd)
        close(writeEnd)
    }

    /// Makes `fd` readable. A full pipe (EAGAIN) is already readable, so the byte is not needed.
    public func wake() {
        var one: UInt8 = 1
        _ = write(writeEnd, &one, 1)
    }

    /// Empties the pipe (the loop, once woken), so the next poll blocks until the next `wake`.
    public func drain() {
        var bytes = (UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        while withUnsafeMutableBytes(of: &bytes, { read(fd, $0.baseAddress, $0.count) }) > 0 {}
    }
}
