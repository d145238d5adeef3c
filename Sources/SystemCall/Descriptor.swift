import CSocket
#if canImport(Glibc)
import Glibc
#endif

/// Every descriptor the project opens, opened close-on-exec in the same call (`SOCK_CLOEXEC`,
/// `O_CLOEXEC`, pipe2, accept4): a separate `fcntl(FD_CLOEXEC)` afterwards leaves a window in which a
/// fork+exec on another thread inherits it. Each returns what the call returns (-1 sets errno), for
/// `SystemCall.retrying` or a module's own wrapper that names the device. The only Swift file that
/// imports `CSocket`, the GNU calls Swift's Glibc module hides.
public enum Descriptor {
    /// socket(2) of `type` (`SOCK_STREAM`, `SOCK_DGRAM`), close-on-exec, non-blocking when asked.
    public static func socket(_ domain: Int32, _ type: __socket_type, nonBlocking: Bool = false) -> Int32 {
        let flags = Int32(SOCK_CLOEXEC.rawValue) | (nonBlocking ? Int32(SOCK_NONBLOCK.rawValue) : 0)
        return Glibc.socket(domain, Int32(type.rawValue) | flags, 0)
    }

    /// open(2) with `O_CLOEXEC` added to `flags`.
    public static func open(_ path: String, _ flags: Int32, _ mode: mode_t = 0) -> Int32 {
        Glibc.open(path, flags | O_CLOEXEC, mode)
    }

    /// pipe2(2): both ends close-on-exec, and non-blocking when asked.
    public static func pipe(_ ends: inout [Int32], nonBlocking: Bool) -> Int32 {
        precondition(ends.count == 2)
        return ends.withUnsafeMutableBufferPointer { nearby_pipe_cloexec($0.baseAddress, nonBlocking ? 1 : 0) }
    }

    /// accept4(2): the connection close-on-exec, and non-blocking when asked.
    public static func accept(_ fd: Int32, nonBlocking: Bool) -> Int32 {
        nearby_accept_cloexec(fd, nonBlocking ? 1 : 0)
    }

    /// fcntl(2): adds O_NONBLOCK to the descriptor's status flags, for a descriptor someone else
    /// opened blocking (libbluetooth's hci_open_dev, a connected UNIX socket). Returns 0; -1 sets errno.
    public static func setNonBlocking(_ fd: Int32) -> Int32 {
        let flags = fcntl(fd, F_GETFL)
        guard flags != -1 else { return -1 }
        return flags & O_NONBLOCK != 0 ? 0 : fcntl(fd, F_SETFL, flags | O_NONBLOCK)
    }

    /// ppoll(2) with a timeout in nanoseconds (nil: wait forever) and no signal mask: poll's own
    /// timeout is whole milliseconds. Returns poll's result; -1 sets errno.
    public static func poll(_ fds: inout [pollfd], timeoutNanoseconds: UInt64?) -> Int32 {
        let count = UInt(fds.count)
        return fds.withUnsafeMutableBufferPointer { fds in
            guard let timeoutNanoseconds else { return nearby_ppoll(fds.baseAddress, count, nil) }
            var timeout = timespec(tv_sec: Int(timeoutNanoseconds / 1_000_000_000), tv_nsec: Int(timeoutNanoseconds % 1_000_000_000))
            return nearby_ppoll(fds.baseAddress, count, &timeout)
        }
    }

    /// Asks for a receive queue of at least `bytes`: SO_RCVBUFFORCE first (past net.core.rmem_max;
    /// needs CAP_NET_ADMIN, which the packaged unit grants), SO_RCVBUF otherwise (capped at
    /// rmem_max). Returns the size the kernel now gives (SO_RCVBUF's reading, twice what was asked,
    /// for its own bookkeeping); -1 sets errno.
    public static func growReceiveBuffer(_ fd: Int32, to bytes: Int32) -> Int32 {
        var size = bytes
        let length = socklen_t(MemoryLayout<Int32>.size)
        if setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, length) != 0,
           setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, length) != 0 {
            return -1
        }
        var granted: Int32 = 0
        var grantedLength = length
        return getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &granted, &grantedLength) == 0 ? granted : -1
    }

    /// A connected UNIX socket's peer (SO_PEERCRED).
    public struct PeerCredentials: Sendable, Equatable {
        public var pid: pid_t
        public var uid: uid_t
        public var gid: gid_t
    }

    public static func peerCredentials(_ fd: Int32) -> PeerCredentials? {
        var credentials = nearby_peer_credentials()
        guard nearby_peer_credentials(fd, &credentials) == 0 else { return nil }
        return PeerCredentials(pid: credentials.pid, uid: credentials.uid, gid: credentials.gid)
    }
}

/// The call that failed and its errno, where one helper makes several calls (`UnixAddress.connectStream`).
public struct FailedCall: Error, Equatable, Sendable, CustomStringConvertible {
    public let call: String
    public let errno: Errno

    public init(_ call: String, _ errno: Errno) {
        self.call = call
        self.errno = errno
    }

    public var description: String { "\(call): \(errno)" }
}

extension UnixAddress {
    /// The one UNIX-socket connect: a blocking stream socket (close-on-exec) connected to this
    /// address, or the call that failed (`socket` or `connect`) with its errno.
    public func connectStream() throws(FailedCall) -> Int32 {
        let fd: Int32
        do throws(Errno) { fd = try SystemCall.retrying { Descriptor.socket(AF_UNIX, SOCK_STREAM) } } catch {
            throw FailedCall("socket", error)
        }
        do throws(Errno) { try SystemCall.retrying { connect(fd) } } catch {
            Glibc.close(fd)
            throw FailedCall("connect", error)
        }
        return fd
    }
}
