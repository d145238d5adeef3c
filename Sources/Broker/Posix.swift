import SystemCall
#if canImport(Glibc)
import Glibc
#endif

/// Every system call of the socket code goes through here (SystemCall's patterns): EINTR is retried,
/// EAGAIN becomes a value, and a failure becomes a `SocketBrokerError` naming the call, the path and
/// the errno.
enum Posix {
    typealias IOResult = SystemCall.IOOutcome

    /// For calls returning -1 on error (socket, bind, listen, fcntl, ...).
    @discardableResult
    static func call(_ name: String, path: String, _ body: () -> Int32) throws(SocketBrokerError) -> Int32 {
        do {
            return try SystemCall.retrying(body)
        } catch {
            throw SocketBrokerError(path: path, kind: .system(call: name, errno: error))
        }
    }

    /// For non-blocking I/O (read, send, accept): EAGAIN is `.wouldBlock`.
    static func io(_ name: String, path: String, _ body: () -> Int) throws(SocketBrokerError) -> IOResult {
        do {
            return try SystemCall.nonBlocking(body)
        } catch {
            throw SocketBrokerError(path: path, kind: .system(call: name, errno: error))
        }
    }

    /// poll(2) with a timeout in nanoseconds (nil: wait forever): ppoll, because poll's own timeout
    /// is whole milliseconds, too coarse for the broker's write coalescing.
    static func poll(_ fds: inout [pollfd], timeoutNanoseconds: UInt64?) -> Int32 {
        Descriptor.poll(&fds, timeoutNanoseconds: timeoutNanoseconds)
    }

    /// accept(2) of a connection that is already non-blocking and close-on-exec (accept4).
    static func acceptNonBlocking(_ fd: Int32) -> Int32 { Descriptor.accept(fd, nonBlocking: true) }

    typealias PeerCredentials = Descriptor.PeerCredentials

    static func peerCredentials(_ fd: Int32) -> PeerCredentials? { Descriptor.peerCredentials(fd) }
}

/// Why the broker could not start or a connection could not be made: the path, and the call with
/// its errno, or a named condition.
public struct SocketBrokerError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: Equatable, Sendable {
        case system(call: String, errno: Errno)
        /// Another gateway answers on the path.
        case alreadyRunning
        /// The path is a symbolic link; the broker never follows one.
        case symbolicLink
        /// Something other than a socket is at the path; the broker does not delete it.
        case notASocket
        /// Longer than `sun_path` allows (107 bytes).
        case pathTooLong
        case unknownGroup(String)
        case alreadyStarted
    }

    public var path: String
    public var kind: Kind

    public init(path: String, kind: Kind) {
        self.path = path
        self.kind = kind
    }

    /// The errno value of a failed call, for `$SYS/error`'s `errno` member and comparisons.
    public var errno: Int32? {
        if case .system(_, let code) = kind { return code.rawValue }
        return nil
    }

    public var description: String {
        switch kind {
        case .system(let call, let code):
            "socket \(path): \(call) failed: \(code)"
        case .alreadyRunning:
            "socket \(path): another gateway is running and answers on it; stop it or choose another socket.path"
        case .symbolicLink:
            "socket \(path): is a symbolic link; refusing to follow it"
        case .notASocket:
            "socket \(path): exists and is not a socket; refusing to replace it"
        case .pathTooLong:
            "socket \(path): path is longer than the 107 bytes a UNIX socket address holds"
        case .unknownGroup(let group):
            "socket \(path): group '\(group)' does not exist"
        case .alreadyStarted:
            "socket \(path): the broker was already started"
        }
    }
}
