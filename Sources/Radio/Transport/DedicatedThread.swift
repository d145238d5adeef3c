import SystemCall

/// A plain OS thread for blocking reads: they must not sit on Swift's cooperative pool, which has
/// only as many threads as cores (two here). The thread itself is SystemCall's `OSThread`.
enum DedicatedThread {
    static func start(device: String, _ body: @escaping @Sendable () -> Void) throws(RadioError) {
        do throws(Errno) {
            try OSThread.start(name: "hci-read", body)
        } catch {
            throw RadioError.system("pthread_create", device: device, errno: error.rawValue)
        }
    }
}
