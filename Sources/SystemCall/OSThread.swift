#if canImport(Glibc)
import Glibc
#endif

/// A plain detached OS thread for blocking work (reads, ALSA, fsync): such work must never sit on
/// Swift's cooperative pool, which has only as many threads as cores. Foundation's `Thread` did
/// this before; this is the same pthread without linking Foundation (docs/footprint.md).
public enum OSThread {
    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// Starts `body` on a new detached thread called `name` (its first 15 bytes are what `top -H`
    /// and `/proc/PID/task/*/comm` show). Throws pthread_create's error (EAGAIN: too many threads).
    public static func start(name: String, _ body: @escaping @Sendable () -> Void) throws(Errno) {
        pthread_detach(try spawn(name: name, body).thread)
    }

    /// A thread someone waits for: `join()` returns once its body has returned (a loop's owner
    /// shutting it down, so nothing of it outlives the owner).
    public struct Joinable: Sendable {
        let thread: pthread_t
        /// Waits for the body to return. Call it once, and never from the thread itself.
        public func join() { pthread_join(thread, nil) }
        /// Lets the thread end by itself instead (when the thread itself is the one shutting down).
        public func detach() { pthread_detach(thread) }
    }

    /// Like `start`, but joinable instead of detached.
    public static func spawn(name: String, _ body: @escaping @Sendable () -> Void) throws(Errno) -> Joinable {
        let context = Unmanaged.passRetained(Body { nameThisThread(name); body() }).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { context in
            let body = Unmanaged<Body>.fromOpaque(context!).takeRetainedValue()
            body.run()
            return nil
        }, context)
        guard result == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            throw Errno(rawValue: result)
        }
        return Joinable(thread: thread)
    }

    /// pthread_setname_np is a GNU extension Swift's Glibc module hides; the kernel takes the name
    /// from the thread's own `comm` file as well. A name is a courtesy: failing to set one is ignored.
    private static func nameThisThread(_ name: String) {
        let fd = Descriptor.open("/proc/thread-self/comm", O_WRONLY)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { raw in try? SystemCall.writeAll(raw) { write(fd, $0, $1) } }
    }
}
