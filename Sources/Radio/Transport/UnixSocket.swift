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
        do throws(FailedCall) {
            return try address.connectStream()
        } catch {
            throw RadioError.system(error.call, device: device, errno: error.errno)
        }
    }
}
