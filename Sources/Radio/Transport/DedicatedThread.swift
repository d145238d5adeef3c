#if canImport(Glibc)
import Glibc
#endif

/// A plain OS thread for blocking reads: they must not sit on Swift's cooperative pool, which has
/// only as many threads as cores (two here).
enum DedicatedThread {
    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    static func start(device: String, _ body: @escaping @Sendable () -> Void) throws(RadioError) {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { context in
            let body = Unmanaged<Body>.fromOpaque(context!).takeRetainedValue()
            body.run()
            return nil
        }, context)
        guard result == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            // pthread_create returns the error instead of setting errno.
            throw RadioError.system("pthread_create", device: device, errno: result)
        }
        pthread_detach(thread)
    }
}
