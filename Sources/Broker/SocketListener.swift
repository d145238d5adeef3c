#if canImport(Glibc)
import Glibc
#endif
import Logging
import SystemCall

/// Creates the listening socket at the configured path: parent folder, stale-file replacement, mode
/// and group. Pure set-up; the broker's loop owns the descriptor afterwards.
enum SocketListener {
    struct Listening {
        var fd: Int32
        var device: UInt64   // st_dev/st_ino of the socket file we bound, so shutdown removes only ours
        var inode: UInt64
    }

    static func open(_ configuration: SocketBrokerConfiguration, logger: Logger) throws(SocketBrokerError) -> Listening {
        let path = configuration.path
        guard let address = try? UnixAddress(path: path) else { throw SocketBrokerError(path: path, kind: .pathTooLong) }
        try createParent(of: path)
        try removeStale(path, address: address, logger: logger)
        let fd = try Posix.call("socket", path: path) { Descriptor.socket(AF_UNIX, SOCK_STREAM, nonBlocking: true) }
        do throws(SocketBrokerError) {
            do throws(SocketBrokerError) {
                try Posix.call("bind", path: path) { address.bind(fd) }
            } catch where error.errno == EADDRINUSE {
                // Another process bound it between our check and our bind.
                throw SocketBrokerError(path: path, kind: .alreadyRunning)
            }
            do throws(SocketBrokerError) {
                // AT_SYMLINK_NOFOLLOW: if someone swapped the file for a symlink, fail instead of
                // changing the mode of whatever it points to.
                try Posix.call("fchmodat", path: path) { fchmodat(AT_FDCWD, path, mode_t(configuration.mode), AT_SYMLINK_NOFOLLOW) }
                if !configuration.group.isEmpty {
                    let gid = try groupID(configuration.group, path: path)
                    try Posix.call("lchown", path: path) { lchown(path, uid_t.max, gid) }
                }
                try Posix.call("listen", path: path) { listen(fd, 128) }
                var info = stat()
                try Posix.call("lstat", path: path) { lstat(path, &info) }
                return Listening(fd: fd, device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
            } catch {
                unlink(path)
                throw error
            }
        } catch {
            close(fd)
            throw error
        }
    }

    /// Removes the socket file at shutdown if it is still the one we created.
    static func remove(_ listening: Listening, path: String) {
        var info = stat()
        guard lstat(path, &info) == 0, UInt64(info.st_dev) == listening.device, UInt64(info.st_ino) == listening.inode else { return }
        unlink(path)
    }

    private static func createParent(of path: String) throws(SocketBrokerError) {
        var components = path.split(separator: "/", omittingEmptySubsequences: false).dropLast()
        guard !components.isEmpty else { return }
        var current = path.hasPrefix("/") ? "" : "."
        if path.hasPrefix("/") { components = components.dropFirst() }
        for component in components where !component.isEmpty {
            current += "/" + component
            do throws(Errno) {
                try SystemCall.retrying { mkdir(current, 0o755) }
            } catch where error != .exists {
                throw SocketBrokerError(path: path, kind: .system(call: "mkdir \(current)", errno: error))
            } catch {}
        }
    }

    /// A socket file left by a crashed gateway refuses connections: replace it. One that answers
    /// belongs to a running gateway: refuse to start.
    private static func removeStale(_ path: String, address: UnixAddress, logger: Logger) throws(SocketBrokerError) {
        var info = stat()
        do throws(Errno) {
            try SystemCall.retrying { lstat(path, &info) }
        } catch where error.rawValue == ENOENT {
            return
        } catch {
            throw SocketBrokerError(path: path, kind: .system(call: "lstat", errno: error))
        }
        switch info.st_mode & S_IFMT {
        case S_IFLNK: throw SocketBrokerError(path: path, kind: .symbolicLink)
        case S_IFSOCK: break
        default: throw SocketBrokerError(path: path, kind: .notASocket)
        }
        let probe = try Posix.call("socket", path: path) { Descriptor.socket(AF_UNIX, SOCK_STREAM) }
        defer { close(probe) }
        switch Result(catching: { () throws(Errno) in try SystemCall.retrying { address.connect(probe) } }) {
        case .success: throw SocketBrokerError(path: path, kind: .alreadyRunning)
        case .failure(let error) where error.rawValue == ECONNREFUSED: break
        case .failure(let error): throw SocketBrokerError(path: path, kind: .system(call: "connect", errno: error))
        }
        logger.notice("replacing a stale socket file left by a gateway that is gone", metadata: ["path": "\(path)"])
        try Posix.call("unlink", path: path) { unlink(path) }
    }

    private static func groupID(_ name: String, path: String) throws(SocketBrokerError) -> gid_t {
        var group = group()
        var result: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 16 * 1024)
        let code = getgrnam_r(name, &group, &buffer, buffer.count, &result)
        if code != 0 { throw SocketBrokerError(path: path, kind: .system(call: "getgrnam_r \(name)", errno: Errno(rawValue: code))) }
        guard result != nil else {
            if let numeric = gid_t(name) { return numeric }
            throw SocketBrokerError(path: path, kind: .unknownGroup(name))
        }
        return group.gr_gid
    }
}
