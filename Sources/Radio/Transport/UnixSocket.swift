#if canImport(Glibc)
import Glibc
#endif
import SystemCall

/// Connecting to a UNIX stream socket (btvirt's `/tmp/bt-server-le`, or a relay in front of it).
enum UnixSocket {
    static func connect(path: String, device: String) throws(RadioError) -> Int32 {
        let address: UnixAddress
        do throws(UnixAddress.Problem) {
            address = try UnixAddress(path: path)
        } catch {
            throw RadioError(kind: .unavailable, device: device, operation: "connect", message: "\(error)")
        }
        let fd = try syscall("socket(AF_UNIX, SOCK_STREAM)", device: device) {
            socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        do throws(RadioError) {
            try syscall("connect", device: device) { address.connect(fd) }
        } catch {
            Glibc.close(fd)
            throw error
        }
        return fd
    }
}
