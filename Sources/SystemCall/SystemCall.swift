#if canImport(Glibc)
import Glibc
#endif

/// An errno value (swift-system's `Errno`, the part this project uses): what a failed call left in
/// `errno`, with its text for messages. Callers wrap it in their own typed error naming the call and
/// the device, file or socket.
public struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The calling thread's errno, now.
    public static var current: Errno { Errno(rawValue: errno) }

    public static let interrupted = Errno(rawValue: EINTR)
    public static let wouldBlock = Errno(rawValue: EAGAIN)
    public static let exists = Errno(rawValue: EEXIST)

    /// "No space left on device (errno 28)".
    public var description: String { "\(String(cString: strerror(rawValue))) (errno \(rawValue))" }
}

/// The system-call patterns of this project, each written once (swift-system's `retryOnInterrupt`,
/// swift-nio's `syscall(blocking:)`). Nothing else loops on EINTR or reads `errno` after a call.
public enum SystemCall {
    /// What a non-blocking read, write, send or accept did.
    public enum IOOutcome: Equatable, Sendable {
        case done(Int)
        case wouldBlock
    }

    /// A call that returns -1 and sets errno on failure (open, socket, bind, poll, fsync, mkdir...):
    /// EINTR is retried, any other errno thrown. errno is cleared before each try: a library call
    /// (libgpiod v1) may return -1 from a path that does not set it, which then throws errno 0
    /// rather than a stale one.
    @discardableResult
    public static func retrying<T: FixedWidthInteger>(_ call: () -> T) throws(Errno) -> T {
        while true {
            errno = 0
            let result = call()
            if result != -1 { return result }
            let code = Errno.current
            if code == .interrupted { continue }
            throw code
        }
    }

    /// A library call that returns NULL and sets errno on failure (mosquitto_new, libgpiod's chip
    /// and line lookups): the pointer, or the errno thrown (cleared first, as in `retrying`).
    public static func nonNull<T>(_ call: () -> T?) throws(Errno) -> T {
        errno = 0
        guard let result = call() else { throw Errno.current }
        return result
    }

    /// Non-blocking I/O (read, send, accept): EINTR is retried, EAGAIN/EWOULDBLOCK is `.wouldBlock`,
    /// any other errno thrown.
    public static func nonBlocking(_ call: () -> Int) throws(Errno) -> IOOutcome {
        while true {
            let result = call()
            if result >= 0 { return .done(result) }
            let code = Errno.current
            if code == .interrupted { continue }
            if code == .wouldBlock || code.rawValue == EWOULDBLOCK { return .wouldBlock }
            throw code
        }
    }

    /// Writes all of `bytes` through `write` (write(2), or send(2) with its flags), resuming after
    /// partial writes and EINTR. Returns how many bytes were written: all of them, or fewer when the
    /// descriptor is non-blocking and full (EAGAIN). Any other errno is thrown.
    @discardableResult
    public static func writeAll(_ bytes: UnsafeRawBufferPointer,
                                _ write: (UnsafeRawPointer, Int) -> Int) throws(Errno) -> Int {
        guard let base = bytes.baseAddress else { return 0 }
        var offset = 0
        while offset < bytes.count {
            switch try nonBlocking({ write(base + offset, bytes.count - offset) }) {
            case .done(let written): offset += written
            case .wouldBlock: return offset
            }
        }
        return offset
    }

    /// `text`'s UTF-8 through write(2) to `fd` (stdout, stderr, a log), as `writeAll` above.
    @discardableResult
    public static func writeAll(_ text: String, to fd: Int32) throws(Errno) -> Int {
        var text = text
        return try text.withUTF8 { bytes in
            Result { () throws(Errno) in try writeAll(UnsafeRawBufferPointer(bytes)) { write(fd, $0, $1) } }
        }.get()
    }

    /// The whole file at `path` (open, read to the end, close), without Foundation's `Data(contentsOf:)`
    /// and its Cocoa errors: a failure is the errno of the call that failed.
    public static func readFile(_ path: String) throws(Errno) -> [UInt8] {
        let fd = try retrying { Descriptor.open(path, O_RDONLY) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let n = try buffer.withUnsafeMutableBytes { raw in
                Result { () throws(Errno) in try retrying { read(fd, raw.baseAddress, raw.count) } }
            }.get()
            if n == 0 { return bytes }
            bytes.append(contentsOf: buffer[0..<n])
        }
    }
}
