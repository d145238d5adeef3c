#if canImport(Glibc)
import Glibc
#endif

/// Connecting to a UNIX stream socket (btvirt's `/tmp/bt-server-le`, or a relay in front of it).
enum UnixSocket {
    static func connect(path: String, device: String) throws(RadioError) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        let pathBytes = Array(path.utf8)
        guard pathBytes.count < capacity else {
            throw RadioError(
                kind: .unavailable, device: device, operation: "connect",
                message: "socket path is \(pathBytes.count) bytes, at most \(capacity - 1) fit")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: pathBytes)
        }
        let fd = try syscall("socket(AF_UNIX, SOCK_STREAM)", device: device) {
            socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        do throws(RadioError) {
            try syscall("connect", device: device) {
                withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                    }
                }
            }
        } catch {
            Glibc.close(fd)
            throw error
        }
        return fd
    }
}
