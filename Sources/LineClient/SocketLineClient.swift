#if canImport(Glibc)
import Glibc
#endif
import NearbyProtocol
import Synchronization
import SystemCall

/// A blocking line client of the gateway socket: what `monitor` and the tests use. Each call blocks
/// the calling thread (run it on its own thread, not on Swift's cooperative pool).
public final class SocketLineClient: Sendable {
    public let path: String
    public let fd: Int32
    private let framer = Mutex(LineFramer(maxLineBytes: 1 << 20))
    private let closed = Atomic<Bool>(false)

    /// Connects; the error names the path and says what ENOENT, ECONNREFUSED and EACCES mean here.
    public init(path: String) throws(SocketClientError) {
        self.path = path
        guard let address = try? UnixAddress(path: path) else { throw SocketClientError(path: path, call: "connect", errno: Errno(rawValue: ENAMETOOLONG)) }
        do throws(FailedCall) { fd = try address.connectStream() } catch {
            throw SocketClientError(path: path, call: error.call, errno: error.errno)
        }
    }

    deinit { close() }

    public func close() {
        if !closed.exchange(true, ordering: .acquiringAndReleasing) { Glibc.close(fd) }
    }

    /// Writes all of `bytes`.
    public func send(_ bytes: [UInt8]) throws(SocketClientError) {
        let fd = fd
        let outcome = bytes.withUnsafeBytes { raw in
            Result { () throws(Errno) in try SystemCall.writeAll(raw) { Glibc.send(fd, $0, $1, Int32(MSG_NOSIGNAL)) } }
        }
        if case .failure(let error) = outcome { throw SocketClientError(path: path, call: "send", errno: error) }
    }

    public func send(line: String) throws(SocketClientError) {
        try send(Array((line + "\n").utf8))
    }

    /// Closes the writing side only (what `socat` does at the end of its input).
    public func shutdownWriting() {
        _ = Glibc.shutdown(fd, Int32(SHUT_WR))
    }

    /// The next line (without its newline), nil when `timeout` passed first. Throws `.endOfStream`
    /// (errno nil) when the gateway closed the connection.
    public func readLine(timeout: Duration?) throws(SocketClientError) -> String? {
        let deadline = timeout.map { ContinuousClock.now + $0 }
        while true {
            if let line = framer.withLock({ $0.next() }) {
                if case .line(let bytes) = line { return String(decoding: bytes, as: UTF8.self) }
                continue
            }
            var wait: Int32 = -1
            if let deadline {
                let left = ContinuousClock.now.duration(to: deadline)
                if left <= .zero { return nil }
                let (seconds, attoseconds) = left.components
                wait = Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
            }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready: Int32
            do throws(Errno) { ready = try SystemCall.retrying { poll(&descriptor, 1, wait) } } catch {
                throw SocketClientError(path: path, call: "poll", errno: error)
            }
            if ready == 0 { continue }
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            let outcome: SystemCall.IOOutcome
            do throws(Errno) { outcome = try SystemCall.nonBlocking { Glibc.read(fd, &buffer, buffer.count) } } catch {
                throw SocketClientError(path: path, call: "read", errno: error)
            }
            guard case .done(let count) = outcome else { continue }
            if count == 0 { throw SocketClientError(path: path, call: "read", errno: nil) }
            framer.withLock { $0.append(buffer[0..<count]) }
        }
    }
}

public struct SocketClientError: Error, Equatable, Sendable, CustomStringConvertible {
    public var path: String
    public var call: String
    /// nil when the gateway closed the connection.
    public var errno: Errno?

    public var isEndOfStream: Bool { errno == nil }

    public var description: String {
        switch errno?.rawValue {
        case nil: "the gateway closed the connection on \(path)"
        case ENOENT: "no gateway socket at \(path) (\(call): ENOENT): is the gateway running? (--socket PATH to use another)"
        case ECONNREFUSED: "nothing listens on \(path) (\(call): ECONNREFUSED): the gateway is not running"
        case EACCES: "permission denied on \(path) (\(call): EACCES): join the socket's group or run as its owner"
        case ENAMETOOLONG: "socket path \(path) is too long for a UNIX socket address (\(call): ENAMETOOLONG)"
        case let code?: "\(call) on \(path) failed: \(Errno(rawValue: code))"
        }
    }
}
