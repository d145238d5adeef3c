import SystemCall

/// Starts an audio thread (SystemCall's `OSThread`: a pthread, not Foundation's `Thread`). When
/// none can be made (pthread_create's EAGAIN: the process is out of threads or memory) the device
/// is reported failed with no retry (`retryIn` infinite) and `false` returned, so the caller marks
/// itself stopped and its next `start` tries again.
func startAudioThread(_ name: String, device: String, onEvent: (AudioEvent) -> Void,
                      _ body: @escaping @Sendable () -> Void) -> Bool {
    do throws(Errno) {
        try OSThread.start(name: name, body)
        return true
    } catch {
        onEvent(.failed(ALSAError(device: device, call: "pthread_create", code: error.rawValue), retryIn: .infinity))
        return false
    }
}
