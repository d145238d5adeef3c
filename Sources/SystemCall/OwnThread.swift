
/// Blocking work (fsync on an SD card, waiting for a thread to end) on a thread of its own, awaited
/// by the caller. Swift's cooperative pool has one thread per core (two here, four on a Pi): one of
/// them blocked stalls every actor and task of the process, the socket's replies included.
public enum OwnThread {
    public static func run<T: Sendable, E: Error>(_ name: String, _ body: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        let result: Result<T, E> = await withCheckedContinuation { continuation in
            let work: @Sendable () -> Void = {
                do throws(E) {
                    continuation.resume(returning: .success(try body()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
            // No thread to be had (EAGAIN): the work still has to happen (a save, a shutdown), so it
            // runs here and stalls one pool thread for its length rather than being lost.
            do throws(Errno) { try OSThread.start(name: name, work) } catch { work() }
        }
        return try result.get()
    }
}
