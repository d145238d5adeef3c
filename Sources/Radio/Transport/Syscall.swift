import SystemCall

/// Runs a call returning -1 on failure through `SystemCall.retrying` (EINTR retried) and turns any
/// other failure into a `RadioError` naming the call and the device.
@discardableResult
func syscall<T: FixedWidthInteger>(_ operation: String, device: String, _ body: () -> T) throws(RadioError) -> T {
    do {
        return try SystemCall.retrying(body)
    } catch {
        throw RadioError.system(operation, device: device, errno: error)
    }
}
