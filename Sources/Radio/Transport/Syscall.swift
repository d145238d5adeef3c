#if canImport(Glibc)
import Glibc
#endif

/// The one place that reads errno: runs a call returning -1 on failure, retries EINTR, and turns
/// any other failure into a `RadioError` naming the call and the device.
@discardableResult
func syscall<T: FixedWidthInteger>(_ operation: String, device: String, _ body: () -> T) throws(RadioError) -> T {
    while true {
        let result = body()
        if result != -1 { return result }
        let code = errno
        if code == EINTR { continue }
        throw RadioError.system(operation, device: device, errno: code)
    }
}
