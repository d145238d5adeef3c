import CSocket
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
            throw SocketBrokerError(path: path, kind: .system(call: name, errno: error.rawValue))
        }
    }

    /// For non-blocking I/O (read, send, accept): EAGAIN is `.wouldBlock`.
    static func io(_ name: String, path: String, _ body: () -> Int) throws(SocketBrokerError) -> IOResult {
        do {
            return try SystemCall.nonBlocking(body)
        } catch {
            throw SocketBrokerError(path: path, kind: .system(call: name, errno: error.rawValue))
        }
    }

    static func errorText(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    /// `sockaddr_un` for `path`, or nil when the path does not fit `sun_path` (with its NUL).
    static func unixAddress(_ path: String) -> sockaddr_un? {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard !bytes.isEmpty, bytes.count < capacity, !bytes.contains(0) else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }

    static func connect(_ fd: Int32, _ address: sockaddr_un) -> Int32 {
        var address = address
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
    }

    static func bind(_ fd: Int32, _ address: sockaddr_un) -> Int32 {
        var address = address
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
    }

    /// poll(2) with a timeout in nanoseconds (nil: wait forever): ppoll, because poll's own timeout
    /// is whole milliseconds, too coarse for the broker's write coalescing. Returns poll's result;
    /// -1 sets errno.
    static func poll(_ fds: inout [pollfd], timeoutNanoseconds: UInt64?) -> Int32 {
        let count = nfds_t(fds.count)
        return fds.withUnsafeMutableBufferPointer { fds in
            guard let timeoutNanoseconds else { return nearby_ppoll(fds.baseAddress, count, nil) }
            var timeout = timespec(tv_sec: Int(timeoutNanoseconds / 1_000_000_000), tv_nsec: Int(timeoutNanoseconds % 1_000_000_000))
            return nearby_ppoll(fds.baseAddress, count, &timeout)
        }
    }

    /// accept(2) of a connection that is already non-blocking and close-on-exec (accept4).
    static func acceptNonBlocking(_ fd: Int32) -> Int32 { nearby_accept_nonblocking(fd) }

    /// The connected peer's pid, uid and gid (SO_PEERCRED).
    struct PeerCredentials {
        var pid: pid_t
        var uid: uid_t
        var gid: gid_t
    }

    static func peerCredentials(_ fd: Int32) -> PeerCredentials? {
        var credentials = nearby_peer_credentials()
        guard nearby_peer_credentials(fd, &credentials) == 0 else { return nil }
        return PeerCredentials(pid: credentials.pid, uid: credentials.uid, gid: credentials.gid)
    }
}

/// Why the broker could not start or a connection could not be made: the path, and the call with
/// its errno, or a named condition.
public struct SocketBrokerError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: Equatable, Sendable {
        case system(call: String, errno: Int32)
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

    public var errno: Int32? {
        if case .system(_, let code) = kind { return code }
        return nil
    }

    public var description: String {
        switch kind {
        case .system(let call, let code):
            "socket \(path): \(call) failed: \(Posix.errorText(code)) (errno \(code))"
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
